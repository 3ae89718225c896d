import FeliCa

/// One frame of Sony's Port-100 host interface (the chip inside the RC-S380), as it travels
/// over USB bulk endpoints in either direction.
///
/// Layouts (length little-endian; every information frame uses the extended form):
///
///     information  00 00 FF FF FF LENl LENh LCS PAYLOAD(LEN) DCS 00   LENl+LENh+LCS ≡ 0, ΣPAYLOAD+DCS ≡ 0
///                  PAYLOAD = D6 CMD DATA… (host to chip) | D7 CMD+1 DATA… (chip to host)
///     ACK          00 00 FF 00 FF 00
///     error        00 00 FF 01 FF 7F 81 00                            (the chip could not parse a frame)
public enum Port100Frame: Hashable, Sendable {
    /// The receiver took the frame; from the host while a command runs: "abort it".
    case ack
    /// The chip refuses a frame it could not parse.
    case error
    /// A host-to-chip frame (`D6`): command code and parameters.
    case command(Port100Command)
    /// A chip-to-host frame (`D7`): response code (command code + 1) and data.
    case response(Port100Response)

    /// First payload byte of host-to-chip frames.
    public static let hostToChip: UInt8 = 0xD6
    /// First payload byte of chip-to-host frames.
    public static let chipToHost: UInt8 = 0xD7
    /// Payload byte of the error frame.
    public static let errorCode: UInt8 = 0x7F
    /// Largest payload the 16-bit length field can describe.
    public static let maximumPayload = 0xFFFF

    /// The frame on the wire.
    public func encode() -> [UInt8] {
        switch self {
        case .ack: return [0x00, 0x00, 0xFF, 0x00, 0xFF, 0x00]
        case .error: return [0x00, 0x00, 0xFF, 0x01, 0xFF, 0x7F, 0x81, 0x00]
        case .command(let c): return Self.information([Self.hostToChip, c.code] + c.data)
        case .response(let r): return Self.information([Self.chipToHost, r.code] + r.data)
        }
    }

    /// An extended information frame around `payload` (at most ``maximumPayload`` bytes;
    /// longer payloads are cut, which no command of the chip comes near).
    public static func information(_ payload: [UInt8]) -> [UInt8] {
        let body = payload.prefix(maximumPayload)
        let lo = UInt8(truncatingIfNeeded: body.count), hi = UInt8(truncatingIfNeeded: body.count >> 8)
        var out: [UInt8] = [0x00, 0x00, 0xFF, 0xFF, 0xFF, lo, hi, 0 &- (lo &+ hi)]
        out.reserveCapacity(body.count + 10)
        out += body
        out.append(checksum(body))
        out.append(0x00)
        return out
    }

    /// DCS: the byte that makes the payload and DCS sum to 0 (mod 256).
    public static func checksum(_ payload: some Sequence<UInt8>) -> UInt8 {
        var sum: UInt8 = 0
        for b in payload { sum &+= b }
        return 0 &- sum
    }

    /// Decodes exactly one frame: `bytes` holds the frame and nothing else.
    public static func decode(_ bytes: ArraySlice<UInt8>) throws(FeliCaError) -> Port100Frame {
        let (frame, used) = try parse(bytes)
        if used < bytes.count {
            throw FeliCaError(.trailingBytes, "Port-100 frame: \(bytes.count - used) unexpected byte\(bytes.count - used == 1 ? "" : "s") after the postamble")
        }
        return frame
    }

    /// Parses the frame that begins `bytes` (preamble `00 00 FF`); returns it and the number
    /// of bytes it spans. Throws `.truncated` when more bytes are needed, `.badLength` for a
    /// length checksum that does not add up, `.transmission` for a data checksum that does
    /// not, `.invalidField` for a wrong preamble, postamble or frame direction byte.
    public static func parse(_ bytes: ArraySlice<UInt8>) throws(FeliCaError) -> (frame: Port100Frame, count: Int) {
        var r = ByteReader(bytes, frame: "Port-100 frame")
        let preamble = try r.readBytes(3, "preamble")
        guard preamble.elementsEqual([0x00, 0x00, 0xFF]) else {
            throw FeliCaError(.invalidField, "Port-100 frame: starts \(Hex.encode(Array(preamble))), expected 0000ff")
        }
        let a = try r.readUInt8("LEN")
        let b = try r.readUInt8("LCS")
        switch (a, b) {
        case (0x00, 0xFF):
            try postamble(&r)
            return (.ack, bytes.count - r.count)
        case (0x01, 0xFF):
            let code = try r.readUInt8("error code")
            let dcs = try r.readUInt8("DCS")
            guard code == errorCode, dcs == checksum([code]) else {
                throw FeliCaError(.invalidField, "Port-100 frame: short frame \(Hex.encode([code, dcs])) is not the error frame 7f81")
            }
            try postamble(&r)
            return (.error, bytes.count - r.count)
        case (0xFF, 0xFF):
            break
        default:
            throw FeliCaError(.invalidField, "Port-100 frame: length marker \(Hex.encode([a, b])) is not ffff (information), 00ff (ACK) or 01ff (error)")
        }
        let length = try r.readUInt16(.littleEndian, "LEN")
        let lcs = try r.readUInt8("LCS")
        guard UInt8(truncatingIfNeeded: length) &+ UInt8(length >> 8) &+ lcs == 0 else {
            throw FeliCaError(.badLength, "Port-100 frame: length checksum \(Hex.encode([lcs])) does not match LEN \(length)")
        }
        guard length >= 2 else {
            throw FeliCaError(.badLength, "Port-100 frame: LEN \(length) leaves no room for the direction byte and the command code")
        }
        let payload = try r.readBytes(Int(length), "payload")
        let dcs = try r.readUInt8("DCS")
        try postamble(&r)
        guard checksum(payload) == dcs else {
            throw FeliCaError(.transmission, "Port-100 frame: data checksum \(Hex.encode([dcs])) does not match its \(length) bytes (expected \(Hex.encode([checksum(payload)])))")
        }
        let direction = payload[payload.startIndex]
        let code = payload[payload.startIndex + 1]
        let data = Array(payload.dropFirst(2))
        switch direction {
        case hostToChip: return (.command(Port100Command(code: code, data: data)), bytes.count - r.count)
        case chipToHost: return (.response(Port100Response(code: code, data: data)), bytes.count - r.count)
        default:
            throw FeliCaError(.invalidField, "Port-100 frame: direction byte \(Hex.encode([direction])) is not d6 (command) or d7 (response)")
        }
    }

    private static func postamble(_ r: inout ByteReader) throws(FeliCaError) {
        let p = try r.readUInt8("postamble")
        guard p == 0x00 else {
            throw FeliCaError(.invalidField, "Port-100 frame: postamble is \(Hex.encode([p])), expected 00")
        }
    }
}

/// Cuts a byte stream into Port-100 frames: skips bytes before a preamble, waits for frames
/// still arriving, and reports broken frames without losing the ones after them.
public struct Port100FrameParser: Sendable {
    /// What the stream held next.
    public enum Event: Hashable, Sendable {
        case frame(Port100Frame)
        /// A frame whose checksums or layout are wrong; the parser resynchronises after it.
        case invalid(FeliCaError)
    }

    private var stream = FrameStream(preamble: [0x00, 0x00, 0xFF])
    /// Bytes skipped so far while looking for a preamble.
    public var skippedBytes: Int { stream.skippedBytes }

    public init() {}

    /// Bytes received but not yet part of a complete frame.
    public var pendingCount: Int { stream.pendingCount }

    public mutating func append(_ bytes: some Sequence<UInt8>) {
        stream.append(bytes)
    }

    /// The next complete or broken frame, or nil when more bytes are needed.
    public mutating func next() -> Event? {
        switch stream.next(Port100Frame.parse) {
        case .success(let frame)?: .frame(frame)
        case .failure(let error)?: .invalid(error)
        case nil: nil
        }
    }

    /// Discards everything buffered.
    public mutating func reset() {
        stream.reset()
    }
}
