import FeliCa

// ISO/IEC 7816-4 APDUs: what a PC/SC reader carries. Shared by the PC/SC transport (reader
// side) and the virtual card for vpcd (card side), so both sides read the same layouts.

/// Command APDU: `CLA INS P1 P2 [Lc data] [Le]`, short or extended length.
///
/// Short: `Lc` and `Le` are one byte each (`Le` 00 = 256). Extended: `Lc` is `00 hi lo`,
/// `Le` is `hi lo` after a body or `00 hi lo` alone (`Le` 0000 = 65536). Sony's RC-S300
/// documentation, and the programs that follow it, write `Le` after an extended body as
/// three bytes `00 hi lo` (``Length/extendedWithThreeByteLe``).
public struct CommandAPDU: Hashable, Sendable, CustomStringConvertible {
    /// Which length form ``encode()`` writes.
    public enum Length: Hashable, Sendable {
        /// Short, unless the data or `Le` need the extended form.
        case shortestFitting
        /// Extended even when short would do: a reply longer than 256 bytes needs it.
        case extended
        /// Extended, with `Le` as `00 hi lo` after the body (Sony's INS `50` exchange).
        case extendedWithThreeByteLe
    }

    public var cla: UInt8
    public var ins: UInt8
    public var p1: UInt8
    public var p2: UInt8
    /// The command data (`Lc` bytes); empty when the APDU carries none.
    public var data: [UInt8]
    /// Bytes expected back, nil when the APDU has no `Le` field.
    public var le: Int?
    /// The length form written.
    public var length: Length

    public init(cla: UInt8, ins: UInt8, p1: UInt8, p2: UInt8, data: [UInt8] = [], le: Int? = nil, length: Length = .shortestFitting) {
        self.cla = cla
        self.ins = ins
        self.p1 = p1
        self.p2 = p2
        self.data = data
        self.le = le
        self.length = length
    }

    /// Whether the data or `Le` do not fit a short APDU.
    public var needsExtendedLength: Bool { data.count > 255 || (le ?? 0) > 256 }

    /// Whether ``encode()`` writes the extended-length form.
    public var isExtended: Bool { length != .shortestFitting || needsExtendedLength }

    /// ``length`` as written: `.shortestFitting` that needs the extended form is `.extended`.
    private var lengthOnWire: Length { length == .shortestFitting && needsExtendedLength ? .extended : length }

    /// Equal when they encode to the same bytes.
    public static func == (a: CommandAPDU, b: CommandAPDU) -> Bool {
        a.cla == b.cla && a.ins == b.ins && a.p1 == b.p1 && a.p2 == b.p2 && a.data == b.data && a.le == b.le
            && a.lengthOnWire == b.lengthOnWire
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(encode())
    }

    /// The wire form in ``length``'s form. Data beyond 65535 bytes cannot be expressed;
    /// callers keep within FeliCa's 255-byte frames.
    public func encode() -> [UInt8] {
        var out: [UInt8] = [cla, ins, p1, p2]
        out.reserveCapacity(4 + data.count + 5)
        let extended = isExtended
        if !data.isEmpty {
            if extended {
                out += [0, UInt8(truncatingIfNeeded: data.count >> 8), UInt8(truncatingIfNeeded: data.count)]
            } else {
                out.append(UInt8(data.count))
            }
            out += data
        }
        if let le {
            if extended {
                if data.isEmpty || length == .extendedWithThreeByteLe { out.append(0) }
                let v = le >= 65536 ? 0 : le
                out += [UInt8(truncatingIfNeeded: v >> 8), UInt8(truncatingIfNeeded: v)]
            } else {
                out.append(le >= 256 ? 0 : UInt8(le))
            }
        }
        return out
    }

    /// Parses any of the seven ISO 7816-4 cases; throws on bytes that fit none of them.
    public static func decode(_ bytes: ArraySlice<UInt8>) throws(FeliCaError) -> CommandAPDU {
        var r = ByteReader(bytes, frame: "command APDU")
        let cla = try r.readUInt8("CLA"), ins = try r.readUInt8("INS")
        let p1 = try r.readUInt8("P1"), p2 = try r.readUInt8("P2")
        var apdu = CommandAPDU(cla: cla, ins: ins, p1: p1, p2: p2)
        let body = r.count
        if body == 0 { return apdu }  // case 1
        let first = try r.readUInt8("Lc or Le")
        if body == 1 {  // case 2 short
            apdu.le = first == 0 ? 256 : Int(first)
            return apdu
        }
        if first != 0 {  // case 3 or 4, short
            let lc = Int(first)
            apdu.data = Array(try r.readBytes(lc, "command data (Lc \(lc))"))
            if r.isAtEnd { return apdu }
            let le = try r.readUInt8("Le")
            apdu.le = le == 0 ? 256 : Int(le)
            try r.finish()
            return apdu
        }
        // Extended length: 00 then two bytes.
        let n = Int(try r.readUInt16(.bigEndian, "extended Lc or Le"))
        if r.isAtEnd {  // case 2 extended
            apdu.le = n == 0 ? 65536 : n
            apdu.length = .extended
            return apdu
        }
        guard n > 0 else {
            throw FeliCaError(.invalidField, "command APDU: extended Lc is 0 but \(r.count) bytes follow")
        }
        apdu.data = Array(try r.readBytes(n, "command data (extended Lc \(n))"))
        apdu.length = .extended
        if r.isAtEnd { return apdu }
        if r.count == 3 {
            // Sony's form: Le written as `00 hi lo` after the body.
            guard try r.readUInt8("extended Le") == 0 else {
                throw FeliCaError(.invalidField, "command APDU: a 3-byte extended Le must start with 00")
            }
            apdu.length = .extendedWithThreeByteLe
        }
        let le = Int(try r.readUInt16(.bigEndian, "extended Le"))
        apdu.le = le == 0 ? 65536 : le
        try r.finish()
        return apdu
    }

    public var description: String { Hex.encode(encode(), uppercase: true, separator: " ") }
}

/// Status word `SW1 SW2` closing every response APDU.
public struct StatusWord: Hashable, Sendable, CustomStringConvertible {
    public var sw1: UInt8
    public var sw2: UInt8

    public init(_ sw1: UInt8, _ sw2: UInt8) {
        self.sw1 = sw1
        self.sw2 = sw2
    }

    public init(_ value: UInt16) {
        self.init(UInt8(value >> 8), UInt8(value & 0xFF))
    }

    public var value: UInt16 { UInt16(sw1) << 8 | UInt16(sw2) }

    /// `90 00`: success.
    public static let success = StatusWord(0x90, 0x00)
    /// `63 00`: the operation failed, no further information (readers: the card did not answer).
    public static let failed = StatusWord(0x63, 0x00)
    /// `64 01`: no response from the card (PC/SC Part 3 transparent exchange).
    public static let noResponse = StatusWord(0x64, 0x01)
    /// `67 00`: wrong length.
    public static let wrongLength = StatusWord(0x67, 0x00)
    /// `69 86`: command not allowed in the current state.
    public static let notAllowed = StatusWord(0x69, 0x86)
    /// `6A 80`: incorrect data (an RC-S300 refusing a FeliCa command it will not forward).
    public static let wrongData = StatusWord(0x6A, 0x80)
    /// `6A 81`: function not supported.
    public static let functionNotSupported = StatusWord(0x6A, 0x81)
    /// `6B 00`: wrong P1 P2.
    public static let wrongParameters = StatusWord(0x6B, 0x00)
    /// `6D 00`: instruction not supported.
    public static let insNotSupported = StatusWord(0x6D, 0x00)
    /// `6E 00`: class not supported.
    public static let claNotSupported = StatusWord(0x6E, 0x00)

    public var isSuccess: Bool { self == .success }
    /// `61 xx`: `xx` more bytes wait to be fetched with GET RESPONSE (T=0).
    public var bytesAvailable: Int? { sw1 == 0x61 ? (sw2 == 0 ? 256 : Int(sw2)) : nil }

    /// What the status word means, for messages.
    public var meaning: String {
        switch (sw1, sw2) {
        case (0x90, 0x00): return "success"
        case (0x61, _): return "\(bytesAvailable ?? 0) response bytes available"
        case (0x62, 0x82): return "end of data reached early"
        case (0x63, 0x00): return "operation failed"
        case (0x64, 0x01): return "no response from the card"
        case (0x64, _): return "execution error"
        case (0x67, 0x00): return "wrong length"
        case (0x68, 0x00): return "function in CLA not supported"
        case (0x69, 0x86): return "command not allowed"
        case (0x6A, 0x80): return "incorrect data"
        case (0x6A, 0x81): return "function not supported"
        case (0x6A, 0x82): return "file or application not found"
        case (0x6B, 0x00): return "wrong parameters P1 P2"
        case (0x6C, _): return "wrong Le (\(sw2) available)"
        case (0x6D, 0x00): return "instruction not supported"
        case (0x6E, 0x00): return "class not supported"
        case (0x6F, _): return "no precise diagnosis"
        default: return "unknown status"
        }
    }

    /// `SW 6A81 (function not supported)`.
    public var description: String {
        "SW " + Hex.encode([sw1, sw2], uppercase: true) + " (\(meaning))"
    }
}

/// Response APDU: `[data] SW1 SW2`.
public struct ResponseAPDU: Hashable, Sendable, CustomStringConvertible {
    public var data: [UInt8]
    public var status: StatusWord

    public init(data: [UInt8] = [], status: StatusWord = .success) {
        self.data = data
        self.status = status
    }

    public func encode() -> [UInt8] { data + [status.sw1, status.sw2] }

    /// Splits off the status word; a response shorter than two bytes is truncated.
    public static func decode(_ bytes: ArraySlice<UInt8>) throws(FeliCaError) -> ResponseAPDU {
        guard bytes.count >= 2 else {
            throw FeliCaError(.truncated, "response APDU: \(bytes.count) byte\(bytes.count == 1 ? "" : "s"), needs at least the 2-byte status word")
        }
        let end = bytes.endIndex
        return ResponseAPDU(data: Array(bytes[..<(end - 2)]), status: StatusWord(bytes[end - 2], bytes[end - 1]))
    }

    public var description: String {
        (data.isEmpty ? "" : Hex.encode(data, uppercase: true, separator: " ") + " ") + Hex.encode([status.sw1, status.sw2], uppercase: true, separator: " ")
    }
}

/// PC/SC Part 3 pseudo-APDUs every contactless reader understands (CLA `FF`).
public enum PCSCStorageAPDU {
    /// Get Data, UID: `FF CA 00 00 00`; a FeliCa card answers with its IDm.
    public static let getUID = CommandAPDU(cla: 0xFF, ins: 0xCA, p1: 0x00, p2: 0x00, le: 256)

    /// Get Data, P1 01: `FF CA 01 00 00`; for a FeliCa card, readers that answer it (the
    /// RC-S300 among them) return the PMm.
    public static let getPMm = CommandAPDU(cla: 0xFF, ins: 0xCA, p1: 0x01, p2: 0x00, le: 256)

    /// Whether `apdu` is Get Data P1 01 (`Le` any).
    public static func isGetPMm(_ apdu: CommandAPDU) -> Bool {
        apdu.cla == 0xFF && apdu.ins == 0xCA && apdu.p1 == 0x01 && apdu.p2 == 0x00 && apdu.data.isEmpty
    }

    /// Reads the PMm from a Get Data P1 01 response: 8 data bytes then `90 00`.
    public static func pmm(fromGetData response: ResponseAPDU) throws(FeliCaError) -> PMm {
        try PMm(bytes: eightBytes(response, "Get Data (FF CA 01)", "PMm"))
    }

    /// The 8 data bytes of a successful Get Data response.
    private static func eightBytes(_ response: ResponseAPDU, _ command: String, _ what: String) throws(FeliCaError) -> [UInt8] {
        guard response.status.isSuccess else {
            throw FeliCaError(.status, "\(command) failed: \(response.status)")
        }
        guard response.data.count == 8 else {
            throw FeliCaError(.invalidField, "\(command) returned \(response.data.count) bytes, a FeliCa \(what) has 8")
        }
        return response.data
    }

    /// Whether `apdu` is Get Data asking for the UID (`P1` 00; `Le` any).
    public static func isGetUID(_ apdu: CommandAPDU) -> Bool {
        apdu.cla == 0xFF && apdu.ins == 0xCA && apdu.p1 == 0x00 && apdu.p2 == 0x00 && apdu.data.isEmpty
    }

    /// Reads the IDm from a Get Data response: 8 data bytes then `90 00`.
    public static func idm(fromGetUID response: ResponseAPDU) throws(FeliCaError) -> IDm {
        try IDm(bytes: eightBytes(response, "Get Data (FF CA)", "IDm"))
    }
}
