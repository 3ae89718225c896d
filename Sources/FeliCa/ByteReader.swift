/// Byte order of a multi-byte field, always spelled out at the call site.
public enum ByteOrder: Sendable {
    case bigEndian, littleEndian
}

/// A cursor over a frame: every `read` consumes, running short throws `.truncated`
/// with the name of the field that was cut off.
public struct ByteReader: Sendable {
    public private(set) var remaining: ArraySlice<UInt8>
    @usableFromInline let name: FrameName

    /// What is being parsed, for error messages ("Polling response").
    public var frame: String { name.description }

    public init(_ bytes: ArraySlice<UInt8>, frame: String) {
        self.remaining = bytes
        self.name = .text(frame)
    }

    @usableFromInline
    init(_ bytes: ArraySlice<UInt8>, name: FrameName) {
        self.remaining = bytes
        self.name = name
    }

    /// A frame's name, spelled out only when a message needs it: a FeliCa frame is named
    /// by its command code, so decoding one builds no string.
    @usableFromInline
    enum FrameName: Sendable, CustomStringConvertible {
        case text(String)
        case command(CommandCode)
        case response(CommandCode)

        @usableFromInline var description: String {
            switch self {
            case .text(let s): s
            case .command(let c): "\(c) command"
            case .response(let c): "\(c) response"
            }
        }
    }

    public var isAtEnd: Bool { remaining.isEmpty }
    public var count: Int { remaining.count }

    @inline(__always)
    private func short(_ field: String, _ need: Int) -> FeliCaError {
        FeliCaError(.truncated, "\(frame): truncated at \(field) (needs \(need) byte\(need == 1 ? "" : "s"), \(remaining.count) left)")
    }

    public mutating func readUInt8(_ field: String) throws(FeliCaError) -> UInt8 {
        guard let b = remaining.first else { throw short(field, 1) }
        remaining = remaining.dropFirst()
        return b
    }

    public mutating func readUInt16(_ order: ByteOrder, _ field: String) throws(FeliCaError) -> UInt16 {
        guard remaining.count >= 2 else { throw short(field, 2) }
        let i = remaining.startIndex
        let a = UInt16(remaining[i]), b = UInt16(remaining[i + 1])
        remaining = remaining.dropFirst(2)
        return order == .bigEndian ? a << 8 | b : b << 8 | a
    }

    public mutating func readUInt64BigEndian(_ field: String) throws(FeliCaError) -> UInt64 {
        guard remaining.count >= 8 else { throw short(field, 8) }
        var v: UInt64 = 0
        var i = remaining.startIndex
        for _ in 0..<8 { v = v << 8 | UInt64(remaining[i]); i += 1 }
        remaining = remaining.dropFirst(8)
        return v
    }

    public mutating func readBytes(_ n: Int, _ field: String) throws(FeliCaError) -> ArraySlice<UInt8> {
        guard remaining.count >= n else { throw short(field, n) }
        let s = remaining.prefix(n)
        remaining = remaining.dropFirst(n)
        return s
    }

    public mutating func readRest() -> ArraySlice<UInt8> {
        let s = remaining
        remaining = remaining[remaining.endIndex...]
        return s
    }

    /// Throws when bytes are left after the last field.
    public func finish() throws(FeliCaError) {
        guard remaining.isEmpty else {
            throw FeliCaError(.trailingBytes, "\(frame): \(remaining.count) unexpected byte\(remaining.count == 1 ? "" : "s") after the last field")
        }
    }
}

/// Builds a frame: reserves the LEN byte, then fills it in. Every append names its byte
/// order, as every ``ByteReader`` read does.
public struct FrameWriter {
    @usableFromInline var bytes: [UInt8]

    /// A frame with `code` after LEN; `capacity` is the frame's length, LEN included.
    @inlinable
    public init(code: UInt8, capacity: Int) {
        bytes = []
        bytes.reserveCapacity(capacity)
        bytes.append(0)
        bytes.append(code)
    }

    /// Appends one byte.
    @inlinable public mutating func append(_ b: UInt8) { bytes.append(b) }

    /// Appends two bytes in `order`.
    @inlinable
    public mutating func append(_ v: UInt16, _ order: ByteOrder) {
        if order == .bigEndian {
            bytes.append(UInt8(v >> 8)); bytes.append(UInt8(v & 0xFF))
        } else {
            bytes.append(UInt8(v & 0xFF)); bytes.append(UInt8(v >> 8))
        }
    }

    /// Appends eight bytes, most significant first (IDm, PMm).
    @inlinable
    public mutating func appendBigEndian(_ v: UInt64) {
        var shift = 56
        while shift >= 0 { bytes.append(UInt8(truncatingIfNeeded: v >> UInt64(shift))); shift -= 8 }
    }

    /// Appends bytes as they are (block data).
    @inlinable public mutating func append(contentsOf s: some Collection<UInt8>) { bytes.append(contentsOf: s) }

    /// Sets LEN; callers keep frames within 255 bytes by validating their inputs.
    @inlinable
    public mutating func finish() -> [UInt8] {
        bytes[0] = UInt8(truncatingIfNeeded: bytes.count)
        return bytes
    }
}

/// Opens a frame: checks LEN against the frame size and the command/response code.
@usableFromInline
func openFrame(_ packet: ArraySlice<UInt8>, code: UInt8, name: ByteReader.FrameName) throws(FeliCaError) -> ByteReader {
    guard let len = packet.first else {
        throw FeliCaError(.truncated, "\(name): empty frame (no LEN byte)")
    }
    guard len >= 2 else {
        throw FeliCaError(.badLength, "\(name): LEN is \(len), a frame holds at least LEN and a code")
    }
    if packet.count < Int(len) {
        throw FeliCaError(.truncated, "\(name): LEN says \(len) bytes, frame has \(packet.count)")
    }
    if packet.count > Int(len) {
        throw FeliCaError(.trailingBytes, "\(name): LEN says \(len) bytes, frame has \(packet.count)")
    }
    let actual = packet[packet.startIndex + 1]
    guard actual == code else {
        throw FeliCaError(.unexpectedResponse, "\(name): code is \(hexByte(actual)), expected \(hexByte(code))")
    }
    return ByteReader(packet.dropFirst(2), name: name)
}
