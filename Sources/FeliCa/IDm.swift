/// Manufacture ID of one system on a card (8 bytes). Treat as opaque: each system of a
/// multi-system card answers with its own IDm.
public struct IDm: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The 8 bytes read big-endian.
    public var rawValue: UInt64

    public init(rawValue: UInt64) { self.rawValue = rawValue }

    /// From exactly 8 bytes.
    public init(bytes: some Collection<UInt8>) throws(FeliCaError) {
        guard bytes.count == 8 else {
            throw FeliCaError(.invalidArgument, "IDm must be 8 bytes, got \(bytes.count)")
        }
        var v: UInt64 = 0
        for b in bytes { v = v << 8 | UInt64(b) }
        rawValue = v
    }

    /// From 16 hex digits.
    public init(hex: String) throws(FeliCaError) {
        guard let b = Hex.decode(hex), b.count == 8 else {
            throw FeliCaError(.invalidArgument, "IDm must be 16 hex digits, got \"\(hex)\"")
        }
        try self.init(bytes: b)
    }

    public var bytes: [UInt8] { (0..<8).map { UInt8(truncatingIfNeeded: rawValue >> UInt64(56 - 8 * $0)) } }
    /// Bytes 0-1: the manufacturer code.
    public var manufacturerCode: UInt16 { UInt16(truncatingIfNeeded: rawValue >> 48) }
    public var hex: String { Hex.encode(bytes) }
    public var description: String { hex }
    public static func < (a: IDm, b: IDm) -> Bool { a.rawValue < b.rawValue }
}

/// Manufacture parameters (8 bytes): ROM type, IC type and six response-time parameters.
public struct PMm: Hashable, Sendable, CustomStringConvertible {
    /// The 8 bytes read big-endian.
    public var rawValue: UInt64

    public init(rawValue: UInt64) { self.rawValue = rawValue }

    public init(bytes: some Collection<UInt8>) throws(FeliCaError) {
        guard bytes.count == 8 else {
            throw FeliCaError(.invalidArgument, "PMm must be 8 bytes, got \(bytes.count)")
        }
        var v: UInt64 = 0
        for b in bytes { v = v << 8 | UInt64(b) }
        rawValue = v
    }

    public init(hex: String) throws(FeliCaError) {
        guard let b = Hex.decode(hex), b.count == 8 else {
            throw FeliCaError(.invalidArgument, "PMm must be 16 hex digits, got \"\(hex)\"")
        }
        try self.init(bytes: b)
    }

    /// Byte `i` (0-7).
    public subscript(byte i: Int) -> UInt8 { UInt8(truncatingIfNeeded: rawValue >> UInt64(56 - 8 * i)) }
    public var bytes: [UInt8] { (0..<8).map { self[byte: $0] } }
    /// Byte 0: ROM type.
    public var romType: UInt8 { self[byte: 0] }
    /// Byte 1: IC type, looked up in ``ICType``.
    public var icCode: UInt8 { self[byte: 1] }
    public var ic: ICType { ICType(code: icCode) }
    public var hex: String { Hex.encode(bytes) }
    public var description: String { hex }
}

/// A 2-byte system code (big-endian on the wire). `FF` in either byte is a Polling wildcard.
public struct SystemCode: Hashable, Sendable, Comparable, CustomStringConvertible, ExpressibleByIntegerLiteral {
    public var rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }
    public init(_ rawValue: UInt16) { self.rawValue = rawValue }
    public init(integerLiteral value: UInt16) { rawValue = value }

    /// From 4 hex digits (`0003`, `FE00`, optional `0x`).
    public init?(hex: String) {
        var s = Substring(hex)
        if s.hasPrefix("0x") || s.hasPrefix("0X") { s = s.dropFirst(2) }
        guard s.utf8.count == 4, let b = Hex.decode(s), b.count == 2 else { return nil }
        rawValue = UInt16(b[0]) << 8 | UInt16(b[1])
    }

    /// `FFFF`: any system; the card answers with its first.
    public static let wildcard = SystemCode(0xFFFF)
    /// Transit IC common format (Suica, PASMO, ICOCA ...).
    public static let transit = SystemCode(0x0003)
    /// Common area (Edy, nanaco, WAON ...).
    public static let common = SystemCode(0xFE00)
    /// NFC Forum Type 3 Tag.
    public static let ndef = SystemCode(0x12FC)
    /// FeliCa Lite-S.
    public static let liteS = SystemCode(0x88B4)

    /// Whether a Polling request for `pattern` (with per-byte `FF` wildcards) selects this system.
    public func matches(_ pattern: SystemCode) -> Bool {
        let hi = pattern.rawValue >> 8, lo = pattern.rawValue & 0xFF
        return (hi == 0xFF || hi == rawValue >> 8) && (lo == 0xFF || lo == rawValue & 0xFF)
    }

    /// Whether either byte is a wildcard.
    public var isWildcard: Bool { rawValue >> 8 == 0xFF || rawValue & 0xFF == 0xFF }

    public var bytes: [UInt8] { [UInt8(rawValue >> 8), UInt8(rawValue & 0xFF)] }
    /// Lowercase, 4 digits, as in card images and JSON.
    public var hex: String { Hex.encode(bytes) }
    public var description: String { Hex.encode(bytes, uppercase: true) }
    public static func < (a: SystemCode, b: SystemCode) -> Bool { a.rawValue < b.rawValue }

    /// A short name for well-known codes (Docs/protocol.md, "Well-known system codes").
    public var knownName: String? {
        switch rawValue {
        case 0x0003: "transit IC"
        case 0xFE00: "common area"
        case 0x12FC: "NDEF"
        case 0x88B4: "FeliCa Lite-S"
        case 0x8008: "Octopus"
        case 0x8005: "Shenzhen Tong"
        case 0x80DE: "IruCa"
        case 0x8592: "PASPY"
        case 0x865E: "SAPICA"
        case 0x86A7, 0x927A: "transit (extra)"
        case 0x8B61: "Edy (extra)"
        default: nil
        }
    }
}
