import FeliCa

/// One frame of the PN532 host interface (PN532 user manual §6.2), as it travels over the
/// serial line in either direction.
///
/// Layouts (the leading preamble `00` is optional on input and always written on output):
///
///     normal       00 00 FF LEN LCS TFI DATA(LEN-1) DCS 00     LEN+LCS ≡ 0, TFI+ΣDATA+DCS ≡ 0
///     extended     00 00 FF FF FF LENm LENl LCS TFI DATA DCS 00 LENm+LENl+LCS ≡ 0
///     ACK          00 00 FF 00 FF 00
///     NACK         00 00 FF FF 00 00
///     error        00 00 FF 01 FF 7F 81 00                     (application-level error)
public enum PN532Frame: Hashable, Sendable {
    /// The receiver got a frame (or, from the host, "abort the running command").
    case ack
    /// "Send your last frame again".
    case nack
    /// The chip could not run the command (syntax error, unknown command).
    case applicationError
    /// A host-to-chip frame (TFI `D4`): command code, then parameters.
    case command([UInt8])
    /// A chip-to-host frame (TFI `D5`): response code (command code + 1), then data.
    case response([UInt8])

    /// Frame identifier of host-to-chip frames.
    public static let hostToChip: UInt8 = 0xD4
    /// Frame identifier of chip-to-host frames.
    public static let chipToHost: UInt8 = 0xD5
    /// Frame identifier of the application-level error frame.
    public static let errorTFI: UInt8 = 0x7F
    /// Largest TFI + data a normal frame carries; longer payloads need an extended frame.
    public static let normalFrameLimit = 255

    /// The frame on the wire. Information frames longer than a normal frame allows are
    /// written as extended frames; `extended` forces the extended layout.
    public func encode(extended: Bool = false) -> [UInt8] {
        switch self {
        case .ack: return [0x00, 0x00, 0xFF, 0x00, 0xFF, 0x00]
        case .nack: return [0x00, 0x00, 0xFF, 0xFF, 0x00, 0x00]
        case .applicationError: return Self.information(tfi: Self.errorTFI, data: [], extended: extended)
        case .command(let data): return Self.information(tfi: Self.hostToChip, data: data, extended: extended)
        case .response(let data): return Self.information(tfi: Self.chipToHost, data: data, extended: extended)
        }
    }

    private static func information(tfi: UInt8, data: [UInt8], extended: Bool) -> [UInt8] {
        let len = data.count + 1
        var out: [UInt8] = [0x00, 0x00, 0xFF]
        out.reserveCapacity(len + 10)
        if extended || len > normalFrameLimit {
            let hi = UInt8(truncatingIfNeeded: len >> 8), lo = UInt8(truncatingIfNeeded: len)
            out += [0xFF, 0xFF, hi, lo, 0 &- (hi &+ lo)]
        } else {
            out += [UInt8(len), 0 &- UInt8(len)]
        }
        out.append(tfi)
        out += data
        out.append(checksum(tfi: tfi, data[...]))
        out.append(0x00)
        return out
    }

    /// DCS: the byte that makes TFI + data + DCS ≡ 0 (mod 256).
    static func checksum(tfi: UInt8, _ data: ArraySlice<UInt8>) -> UInt8 {
        var sum = tfi
        for b in data { sum &+= b }
        return 0 &- sum
    }

    /// Decodes exactly one frame: `bytes` holds the frame (preamble optional) and nothing else.
    public static func decode(_ bytes: ArraySlice<UInt8>) throws(FeliCaError) -> PN532Frame {
        // A preamble 00 is followed by the start code's own 00.
        let start = bytes.starts(with: [0x00, 0x00]) ? bytes.dropFirst() : bytes
        let (frame, used) = try parse(start)
        if used < start.count {
            throw FeliCaError(.trailingBytes, "PN532 frame: \(start.count - used) unexpected byte\(start.count - used == 1 ? "" : "s") after the postamble")
        }
        return frame
    }

    /// Parses the frame whose start code `00 FF` begins `bytes`; returns it and the number
    /// of bytes it spans (postamble included). Throws `.truncated` when more bytes are
    /// needed, `.badLength` for a length checksum that does not add up, `.transmission`
    /// for a data checksum that does not, `.invalidField` for an unknown frame identifier
    /// or a missing postamble.
    static func parse(_ bytes: ArraySlice<UInt8>) throws(FeliCaError) -> (frame: PN532Frame, count: Int) {
        var r = ByteReader(bytes, frame: "PN532 frame")
        let startCode = try r.readUInt16(.bigEndian, "start code")
        guard startCode == 0x00FF else {
            throw FeliCaError(.invalidField, "PN532 frame: start code is \(Hex.encode([UInt8(startCode >> 8), UInt8(startCode & 0xFF)])), expected 00ff")
        }
        let len8 = try r.readUInt8("LEN")
        let lcs8 = try r.readUInt8("LCS")
        let length: Int
        switch (len8, lcs8) {
        case (0x00, 0xFF):
            try postamble(&r)
            return (.ack, bytes.count - r.count)
        case (0xFF, 0x00):
            try postamble(&r)
            return (.nack, bytes.count - r.count)
        case (0xFF, 0xFF):
            let len16 = try r.readUInt16(.bigEndian, "extended LEN")
            let lcs = try r.readUInt8("extended LCS")
            guard UInt8(len16 >> 8) &+ UInt8(len16 & 0xFF) &+ lcs == 0 else {
                throw FeliCaError(.badLength, "PN532 extended frame: length checksum \(Hex.encode([lcs])) does not match LEN \(len16)")
            }
            length = Int(len16)
        default:
            guard len8 &+ lcs8 == 0 else {
                throw FeliCaError(.badLength, "PN532 frame: length checksum \(Hex.encode([lcs8])) does not match LEN \(len8)")
            }
            length = Int(len8)
        }
        guard length >= 1 else {
            throw FeliCaError(.badLength, "PN532 extended frame: LEN 0 leaves no room for the frame identifier")
        }
        let tfi = try r.readUInt8("TFI")
        let data = try r.readBytes(length - 1, "data")
        let dcs = try r.readUInt8("DCS")
        try postamble(&r)
        guard checksum(tfi: tfi, data) == dcs else {
            throw FeliCaError(.transmission, "PN532 frame: data checksum \(Hex.encode([dcs])) does not match its \(length) bytes (expected \(Hex.encode([checksum(tfi: tfi, data)])))")
        }
        let frame: PN532Frame
        switch tfi {
        case hostToChip: frame = .command(Array(data))
        case chipToHost: frame = .response(Array(data))
        case errorTFI where data.isEmpty: frame = .applicationError
        default:
            throw FeliCaError(.invalidField, "PN532 frame: frame identifier \(Hex.encode([tfi])) is not d4, d5 or 7f")
        }
        return (frame, bytes.count - r.count)
    }

    private static func postamble(_ r: inout ByteReader) throws(FeliCaError) {
        let p = try r.readUInt8("postamble")
        guard p == 0x00 else {
            throw FeliCaError(.invalidField, "PN532 frame: postamble is \(Hex.encode([p])), expected 00")
        }
    }
}

/// Cuts a byte stream into PN532 frames: skips the wake-up preamble (`55 55 00 00 ...`)
/// and any other bytes before a start code, waits for frames that are still arriving, and
/// reports broken frames without losing the ones after them.
public struct PN532FrameParser: Sendable {
    /// What the stream held next.
    public enum Event: Hashable, Sendable {
        case frame(PN532Frame)
        /// A frame whose checksums or layout are wrong; the parser resynchronises after it.
        case invalid(FeliCaError)
    }

    private var stream = FrameStream(preamble: [0x00, 0xFF])
    /// Bytes skipped so far while looking for a start code (wake-up preamble, line noise).
    public var skippedBytes: Int { stream.skippedBytes }

    public init() {}

    /// Bytes received but not yet part of a complete frame.
    public var pendingCount: Int { stream.pendingCount }

    public mutating func append(_ bytes: some Sequence<UInt8>) {
        stream.append(bytes)
    }

    /// The next complete frame or broken frame, or nil when more bytes are needed.
    public mutating func next() -> Event? {
        switch stream.next(PN532Frame.parse) {
        case .success(let frame)?: .frame(frame)
        case .failure(let error)?: .invalid(error)
        case nil: nil
        }
    }

    /// Discards everything buffered (a host flushes its input the same way).
    public mutating func reset() {
        stream.reset()
    }
}
