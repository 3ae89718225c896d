import FeliCa

/// Why one block or record of a card could not be decoded. It is kept in the output next
/// to the records that did decode, never thrown past the profile.
public struct CardDataError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What kind of defect; compared by identity.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }
        /// A block is not 16 bytes.
        public static let blockLength = Code("blockLength")
        /// A date or time field holds an impossible value (month 13, day 32, hour 24).
        public static let invalidDate = Code("invalidDate")
        /// A field holds a value the layout does not allow (a BCD digit above 9).
        public static let invalidField = Code("invalidField")
        /// A user-supplied table (stations CSV) is malformed.
        public static let badTable = Code("badTable")
        public var description: String { name }
    }

    /// What kind of defect.
    public var code: Code
    /// What was wrong, naming the field.
    public var reason: String

    public init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    public static func == (a: CardDataError, b: CardDataError) -> Bool { a.code == b.code }
    public func hash(into h: inout Hasher) { h.combine(code) }
    public var description: String { reason }
}

/// Checked access to a 16-byte block; endianness is spelled out at each call.
struct Block {
    let bytes: [UInt8]

    /// Fails with `.blockLength` unless `bytes` holds exactly 16 bytes.
    init(_ bytes: [UInt8], _ what: String) throws(CardDataError) {
        guard bytes.count == 16 else {
            throw CardDataError(.blockLength, "\(what): block has \(bytes.count) bytes, expected 16")
        }
        self.bytes = bytes
    }

    subscript(i: Int) -> UInt8 { bytes[i] }

    func uint16BE(_ i: Int) -> UInt16 { UInt16(bytes[i]) << 8 | UInt16(bytes[i + 1]) }
    func uint16LE(_ i: Int) -> UInt16 { UInt16(bytes[i + 1]) << 8 | UInt16(bytes[i]) }
    func uint24BE(_ i: Int) -> UInt32 { UInt32(bytes[i]) << 16 | UInt32(bytes[i + 1]) << 8 | UInt32(bytes[i + 2]) }
    func uint32BE(_ i: Int) -> UInt32 { UInt32(bytes[i]) << 24 | uint24BE(i + 1) }
    func uint32LE(_ i: Int) -> UInt32 {
        UInt32(bytes[i + 3]) << 24 | UInt32(bytes[i + 2]) << 16 | UInt32(bytes[i + 1]) << 8 | UInt32(bytes[i])
    }
    var isZero: Bool { bytes.allSatisfy { $0 == 0 } }
}

/// Builds a 16-byte block for the encoders.
struct BlockWriter {
    var bytes = [UInt8](repeating: 0, count: 16)

    mutating func put(_ v: UInt8, at i: Int) { bytes[i] = v }
    mutating func put16BE(_ v: UInt16, at i: Int) { bytes[i] = UInt8(v >> 8); bytes[i + 1] = UInt8(v & 0xFF) }
    mutating func put16LE(_ v: UInt16, at i: Int) { bytes[i] = UInt8(v & 0xFF); bytes[i + 1] = UInt8(v >> 8) }
    mutating func put24BE(_ v: UInt32, at i: Int) {
        bytes[i] = UInt8(truncatingIfNeeded: v >> 16); bytes[i + 1] = UInt8(truncatingIfNeeded: v >> 8); bytes[i + 2] = UInt8(truncatingIfNeeded: v)
    }
    mutating func put32BE(_ v: UInt32, at i: Int) { bytes[i] = UInt8(v >> 24); put24BE(v & 0xFF_FFFF, at: i + 1) }
    mutating func put32LE(_ v: UInt32, at i: Int) {
        for k in 0..<4 { bytes[i + k] = UInt8(truncatingIfNeeded: v >> UInt32(8 * k)) }
    }
    /// ORs `v` into bytes `i..<i+3` read as one big-endian 24-bit field (for WAON's
    /// overlapping bit fields).
    mutating func or24BE(_ v: UInt32, at i: Int) {
        bytes[i] |= UInt8(truncatingIfNeeded: v >> 16); bytes[i + 1] |= UInt8(truncatingIfNeeded: v >> 8); bytes[i + 2] |= UInt8(truncatingIfNeeded: v)
    }
}

/// Two hex digits, uppercase, for code numbers in output (`0x16`).
func hexCode(_ v: Int, digits: Int = 2) -> String { "0x" + Hex.digits(v, count: digits, uppercase: true) }
