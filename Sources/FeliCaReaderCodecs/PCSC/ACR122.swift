import FeliCa

/// ACR122U-style pseudo-APDUs: PN532 commands wrapped in `FF 00 00 00 Lc D4 <command> ...`,
/// answered with `D5 <command+1> ... 90 00` (or `61 xx`, fetched with `FF C0 00 00 xx`).
///
/// FeliCa packets travel whole, LEN byte included:
/// - InDataExchange: `D4 40 01 <packet>` → `D5 41 <status> <packet>`
/// - InCommunicateThru: `D4 42 <packet>` → `D5 43 <status> <packet>`
/// - Polling via InListPassiveTarget: `D4 4A 01 <BrTy> <00 SC SC RC TSN>` →
///   `D5 4B <NbTg> [<Tg> <Polling response with LEN>]`
///
/// PN532 status byte: low six bits are the error code (`00` ok, `01` the card did not answer).
public enum ACR122 {
    /// PN532 command codes used here.
    public enum Command: UInt8, Hashable, Sendable {
        case inDataExchange = 0x40
        case inCommunicateThru = 0x42
        case inListPassiveTarget = 0x4A
    }

    /// Host-to-chip and chip-to-host frame identifiers.
    public static let hostToChip: UInt8 = 0xD4
    public static let chipToHost: UInt8 = 0xD5
    /// InListPassiveTarget baud-rate/type: FeliCa at 212 and 424 kbps.
    public static let feliCa212: UInt8 = 0x01
    public static let feliCa424: UInt8 = 0x02

    /// `FF 00 00 00 Lc D4 <command> <parameters>`.
    public static func wrap(_ command: Command, _ parameters: [UInt8]) -> CommandAPDU {
        CommandAPDU(cla: 0xFF, ins: 0x00, p1: 0x00, p2: 0x00, data: [hostToChip, command.rawValue] + parameters)
    }

    /// InDataExchange with target 1.
    public static func dataExchange(_ packet: [UInt8]) -> CommandAPDU { wrap(.inDataExchange, [0x01] + packet) }

    /// InCommunicateThru.
    public static func communicateThru(_ packet: [UInt8]) -> CommandAPDU { wrap(.inCommunicateThru, packet) }

    /// InListPassiveTarget for one FeliCa target: the Polling packet without its LEN byte.
    public static func listPassiveTarget(polling packet: [UInt8], bitRate: UInt8 = feliCa212) -> CommandAPDU {
        wrap(.inListPassiveTarget, [0x01, bitRate] + packet.dropFirst())
    }

    /// GET RESPONSE `FF C0 00 00 xx`: fetches what a `61 xx` status announced.
    public static func getResponse(_ count: Int) -> CommandAPDU {
        CommandAPDU(cla: 0xFF, ins: 0xC0, p1: 0x00, p2: 0x00, le: count)
    }

    /// Whether `apdu` is GET RESPONSE (`FF C0 00 00 xx`).
    public static func isGetResponse(_ apdu: CommandAPDU) -> Bool {
        apdu.cla == 0xFF && apdu.ins == 0xC0 && apdu.p1 == 0 && apdu.p2 == 0 && apdu.data.isEmpty
    }

    // MARK: Reader side: replies

    /// The PN532 payload after `D5 <command+1>`; throws on another frame or a failing status word.
    public static func unwrap(_ response: ResponseAPDU, for command: Command) throws(FeliCaError) -> ArraySlice<UInt8> {
        guard response.status.isSuccess else {
            throw FeliCaError(.status, "ACR122 \(name(command)): reader answered \(response.status)")
        }
        var r = ByteReader(response.data[...], frame: "ACR122 \(name(command)) reply")
        let tfi = try r.readUInt8("frame identifier D5")
        guard tfi == chipToHost else {
            throw FeliCaError(.unexpectedResponse, "ACR122 \(name(command)) reply: starts with \(Hex.encode([tfi], uppercase: true)), expected D5")
        }
        let code = try r.readUInt8("response code")
        guard code == command.rawValue + 1 else {
            throw FeliCaError(.unexpectedResponse, "ACR122 \(name(command)) reply: response code \(Hex.encode([code], uppercase: true)), expected \(Hex.encode([command.rawValue + 1], uppercase: true))")
        }
        return r.readRest()
    }

    /// The card's packet from an InDataExchange or InCommunicateThru reply; PN532 status 01
    /// (no answer) throws `.timeout`, other errors `.transmission`.
    public static func packet(from response: ResponseAPDU, for command: Command) throws(FeliCaError) -> [UInt8] {
        var r = ByteReader(try unwrap(response, for: command), frame: "ACR122 \(name(command)) reply")
        let status = try r.readUInt8("PN532 status")
        try check(status, command)
        return try checkedPacket(r.readRest(), frame: "ACR122 \(name(command)) reply")
    }

    /// The Polling response packet (with LEN) from an InListPassiveTarget reply; no target
    /// throws `.timeout`, like a Polling no card answers.
    public static func pollingResponse(from response: ResponseAPDU) throws(FeliCaError) -> [UInt8] {
        var r = ByteReader(try unwrap(response, for: .inListPassiveTarget), frame: "ACR122 InListPassiveTarget reply")
        let count = try r.readUInt8("number of targets")
        guard count > 0 else {
            throw FeliCaError(.timeout, "no FeliCa card answered Polling (InListPassiveTarget found no target)")
        }
        _ = try r.readUInt8("target number")
        let len = try r.readUInt8("Polling response LEN")
        guard len >= 2 else {
            throw FeliCaError(.badLength, "ACR122 InListPassiveTarget reply: Polling response LEN is \(len)")
        }
        let rest = try r.readBytes(Int(len) - 1, "Polling response (LEN \(len))")
        if count == 1 { try r.finish() }
        return [len] + rest
    }

    static func check(_ status: UInt8, _ command: Command) throws(FeliCaError) {
        switch status & 0x3F {
        case 0x00: return
        case 0x01: throw FeliCaError(.timeout, "the card did not answer (PN532 status 01, \(name(command)))")
        default:
            throw FeliCaError(.transmission, "reader reported PN532 error \(Hex.encode([status & 0x3F], uppercase: true)) during \(name(command))")
        }
    }

    static func name(_ command: Command) -> String {
        switch command {
        case .inDataExchange: "InDataExchange"
        case .inCommunicateThru: "InCommunicateThru"
        case .inListPassiveTarget: "InListPassiveTarget"
        }
    }

    // MARK: Card side: requests

    /// A PN532 command as the reader receives it inside `FF 00 00 00`.
    public enum Request: Hashable, Sendable {
        case dataExchange(target: UInt8, packet: [UInt8])
        case communicateThru(packet: [UInt8])
        case listPassiveTarget(maxTargets: UInt8, bitRate: UInt8, payload: [UInt8])
        /// Any other PN532 command code with its parameters.
        case other(command: UInt8, parameters: [UInt8])

        /// Whether `apdu` is a direct transmit (`FF 00 00 00 Lc ...`).
        public static func matches(_ apdu: CommandAPDU) -> Bool {
            apdu.cla == 0xFF && apdu.ins == 0x00 && apdu.p1 == 0x00 && apdu.p2 == 0x00 && !apdu.data.isEmpty
        }

        /// Parses the PN532 frame inside a direct transmit.
        public static func decode(_ apdu: CommandAPDU) throws(FeliCaError) -> Request {
            guard matches(apdu) else {
                throw FeliCaError(.unsupported, "ACR122 command: \(apdu) is not a direct transmit FF 00 00 00 Lc …")
            }
            var r = ByteReader(apdu.data[...], frame: "ACR122 command")
            let tfi = try r.readUInt8("frame identifier D4")
            guard tfi == hostToChip else {
                throw FeliCaError(.invalidField, "ACR122 command: starts with \(Hex.encode([tfi], uppercase: true)), expected D4 (a PN532 command)")
            }
            let code = try r.readUInt8("PN532 command code")
            switch Command(rawValue: code) {
            case .inDataExchange:
                let tg = try r.readUInt8("target number")
                return .dataExchange(target: tg, packet: Array(r.readRest()))
            case .inCommunicateThru:
                return .communicateThru(packet: Array(r.readRest()))
            case .inListPassiveTarget:
                let max = try r.readUInt8("maximum targets")
                let br = try r.readUInt8("baud rate and modulation")
                return .listPassiveTarget(maxTargets: max, bitRate: br, payload: Array(r.readRest()))
            case nil:
                return .other(command: code, parameters: Array(r.readRest()))
            }
        }
    }

    /// `D5 <command+1> <payload> 90 00`.
    public static func reply(to command: UInt8, _ payload: [UInt8]) -> ResponseAPDU {
        ResponseAPDU(data: [chipToHost, command &+ 1] + payload, status: .success)
    }
}

/// ACR1252U / ACR3x-style direct transmit: `FF 00 00 00 Lc <packet>` → `<packet> 90 00`.
/// A card that does not answer shows as `63 00`.
public enum DirectTransmit {
    public static func command(_ packet: [UInt8]) -> CommandAPDU {
        CommandAPDU(cla: 0xFF, ins: 0x00, p1: 0x00, p2: 0x00, data: packet)
    }

    /// The card's packet; `63 00` throws `.timeout`, another status word `.status`.
    public static func packet(from response: ResponseAPDU) throws(FeliCaError) -> [UInt8] {
        if response.status == .failed {
            throw FeliCaError(.timeout, "the card did not answer (reader status 63 00)")
        }
        guard response.status.isSuccess else {
            throw FeliCaError(.status, "direct transmit: reader answered \(response.status)")
        }
        return try checkedPacket(response.data[...], frame: "direct transmit reply")
    }
}

/// A FeliCa packet carried inside a reader reply: LEN must match the bytes that came.
func checkedPacket(_ packet: ArraySlice<UInt8>, frame: String) throws(FeliCaError) -> [UInt8] {
    guard let len = packet.first else {
        throw FeliCaError(.truncated, "\(frame): the card's packet is empty (no LEN byte)")
    }
    guard len >= 2 else {
        throw FeliCaError(.badLength, "\(frame): the card's packet has LEN \(len), a packet holds at least LEN and a code")
    }
    if packet.count < Int(len) {
        throw FeliCaError(.truncated, "\(frame): the card's packet has LEN \(len) but only \(packet.count) bytes came")
    }
    if packet.count > Int(len) {
        throw FeliCaError(.trailingBytes, "\(frame): the card's packet has LEN \(len) but \(packet.count) bytes came")
    }
    return Array(packet)
}
