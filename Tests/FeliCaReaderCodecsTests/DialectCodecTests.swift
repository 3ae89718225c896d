import FeliCa
import FeliCaReaderCodecs
import Testing

/// A Polling for the wildcard with system code request, and a card's answer.
let pollingPacket = bytes("06 00 FF FF 01 00")
let pollingReply = bytes("14 01 01 01 12 03 12 34 56 78 10 0B 4B 42 84 85 D0 FF 00 03")

@Suite("PC/SC Part 3 transparent exchange")
struct TransparentExchangeTests {
    struct FormVector: Sendable, CustomStringConvertible {
        var name: String
        var apdu: CommandAPDU
        var wire: String
        var description: String { name }
    }

    /// The forms public programs send, byte for byte. A 100 ms timer is 100000 µs =
    /// 0x000186A0, little-endian `A0 86 01 00`.
    static let forms: [FormVector] = [
        // Sony's RC-S300 documentation and its users (felica-rs, pasorich and the published
        // logs): the exchange as an extended APDU, the transceive length as `82 hi lo`, and
        // the `00 00 00` trailer.
        FormVector(name: "Sony exchange, extended (Sony's documented form)",
                   apdu: TransparentExchange.exchange(pollingPacket, timeout: .milliseconds(100), .sony),
                   wire: "FF 50 00 01 00 00 11 5F 46 04 A0 86 01 00 95 82 00 06 06 00 FF FF 01 00 00 00 00"),
        FormVector(name: "Sony start session, Le 00", apdu: TransparentExchange.startSession(.sony), wire: "FF 50 00 00 02 81 00 00"),
        FormVector(name: "Sony end session, Le 00", apdu: TransparentExchange.endSession(.sony), wire: "FF 50 00 00 02 82 00 00"),
        FormVector(name: "Sony switch protocol to FeliCa, Le 00", apdu: TransparentExchange.switchToFeliCa(.sony), wire: "FF 50 00 02 04 8F 02 03 00 00"),
        // A reader that takes no extended APDUs: the same objects in a short APDU, Le 00.
        FormVector(name: "Sony exchange, short (fallback)",
                   apdu: TransparentExchange.exchange(pollingPacket, timeout: .milliseconds(100), .sony, form: .short),
                   wire: "FF 50 00 01 0F 5F 46 04 A0 86 01 00 95 06 06 00 FF FF 01 00 00"),
        // PC/SC Part 3 as the programs reaching an RC-S300 through pcscd send it
        // (ikubaku/pcsc-sample): session and switch closed with Le 00, exchange without Le.
        FormVector(name: "Part 3 start session, Le 00", apdu: TransparentExchange.startSession(), wire: "FF C2 00 00 02 81 00 00"),
        FormVector(name: "Part 3 end session, Le 00", apdu: TransparentExchange.endSession(), wire: "FF C2 00 00 02 82 00 00"),
        FormVector(name: "Part 3 switch protocol to FeliCa, Le 00", apdu: TransparentExchange.switchToFeliCa(), wire: "FF C2 00 02 04 8F 02 03 00 00"),
        FormVector(name: "Part 3 exchange, short, no Le",
                   apdu: TransparentExchange.exchange(pollingPacket, timeout: .milliseconds(100)),
                   wire: "FF C2 00 01 0F 5F 46 04 A0 86 01 00 95 06 06 00 FF FF 01 00"),
        // A reply that can outgrow 256 bytes: ISO 7816-4 extended Lc and Le 00 00.
        FormVector(name: "Part 3 exchange, extended",
                   apdu: TransparentExchange.exchange(pollingPacket, timeout: .milliseconds(100), form: .extended),
                   wire: "FF C2 00 01 00 00 0F 5F 46 04 A0 86 01 00 95 06 06 00 FF FF 01 00 00 00"),
    ]

    @Test("each dialect sends the public forms byte for byte", arguments: forms)
    func publicForms(_ v: FormVector) throws {
        #expect(v.apdu.encode() == bytes(v.wire))
        // The reader side reads them back: same APDU, same objects.
        let decoded = try CommandAPDU.decode(bytes(v.wire)[...])
        #expect(decoded == v.apdu)
        #expect(try TransparentExchange.Request.decode(decoded).objects == TransparentExchange.Request.decode(v.apdu).objects)
    }

    @Test("a packet too long for a short Lc makes the exchange extended")
    func longPacket() {
        let packet = [UInt8](repeating: 0x11, count: 250)
        let apdu = TransparentExchange.exchange(packet, timeout: .milliseconds(1), form: .short)
        #expect(apdu.isExtended)
        // Timer (7) + `95 81 FA` + 250 bytes = 0x0104.
        #expect(Array(apdu.encode()[4..<7]) == [0x00, 0x01, 0x04])
    }

    @Test("a short reply holds a 14-block read, not a 15-block one")
    func shortReplyBudget() {
        #expect(TransparentExchange.longestPacketInShortReply == 241)
        // A 15-block read reply (253 bytes) in the objects a reader wraps it in: 268 bytes.
        #expect(253 + TransparentExchange.replyOverhead(packetLength: 253) == 268)
        #expect(13 + 16 * 14 <= TransparentExchange.longestPacketInShortReply)
    }

    @Test("timer value is microseconds, little-endian, capped", arguments: [
        (Duration.microseconds(1), "01 00 00 00"),
        (Duration.milliseconds(36), "A0 8C 00 00"),
        (Duration.seconds(5000), "FF FF FF FF"),
        (Duration.zero, "00 00 00 00"),
    ])
    func timer(_ d: Duration, _ hex: String) {
        #expect(TransparentExchange.timerValue(d) == bytes(hex))
    }

    struct ReplyVector: Sendable, CustomStringConvertible {
        var name: String
        var wire: String
        var packet: [UInt8]?
        var error: FeliCaError.Code?
        var description: String { name }
    }

    static let replies: [ReplyVector] = [
        ReplyVector(name: "C0 then 97 (Docs/pcsc.md)", wire: "C0 03 00 90 00 97 14 " + Hex.encode(pollingReply) + " 90 00", packet: pollingReply),
        ReplyVector(name: "Sony order: C0 92 96 97", wire: "C0 03 00 90 00 92 01 00 96 02 00 00 97 14 " + Hex.encode(pollingReply) + " 90 00", packet: pollingReply),
        ReplyVector(name: "97 before C0, unknown tag DF 01 skipped", wire: "97 14 " + Hex.encode(pollingReply) + " DF 01 02 AA BB C0 03 00 90 00 90 00", packet: pollingReply),
        ReplyVector(name: "no response from the card", wire: "C0 03 01 64 01 90 00", error: .timeout),
        ReplyVector(name: "no 97 object", wire: "C0 03 00 90 00 90 00", error: .timeout),
        ReplyVector(name: "failing data object", wire: "C0 03 02 6F 00 90 00", error: .transmission),
        ReplyVector(name: "command refused by the reader (published RC-S300/P log)", wire: "C0 03 01 6A 80 90 00", error: .refused),
        ReplyVector(name: "reader rejects the command", wire: "6D 00", error: .status),
        ReplyVector(name: "status object of the wrong size", wire: "C0 02 90 00 90 00", error: .invalidField),
        ReplyVector(name: "card packet LEN too large", wire: "C0 03 00 90 00 97 02 07 01 90 00", error: .truncated),
        ReplyVector(name: "card packet LEN too small", wire: "C0 03 00 90 00 97 03 02 01 00 90 00", error: .trailingBytes),
        ReplyVector(name: "object cut short", wire: "C0 03 00 90 00 97 14 01 90 00", error: .truncated),
    ]

    @Test("parses replies generally", arguments: replies)
    func reply(_ v: ReplyVector) throws {
        let response = try ResponseAPDU.decode(bytes(v.wire)[...])
        if let code = v.error {
            #expect(throws: FeliCaError(code, "")) { try TransparentExchange.packet(from: response) }
        } else {
            #expect(try TransparentExchange.packet(from: response) == v.packet)
        }
    }

    @Test("every strict prefix of a reply's objects fails: cut inside an object is truncated, at a boundary no 97 means no answer",
          arguments: 0..<(12 + 2 + 20))
    func prefixes(_ n: Int) throws {
        let objects = bytes("C0 03 00 90 00 92 01 00 96 02 00 00 97 14") + pollingReply
        let response = ResponseAPDU(data: Array(objects[..<n]))
        let expected: FeliCaError.Code = [0, 5, 8, 12].contains(n) ? .timeout : .truncated
        #expect(throws: FeliCaError(expected, "")) { try TransparentExchange.packet(from: response) }
    }

    @Test("card side: parses the command and builds the reply the reader side reads")
    func cardSide() throws {
        let apdu = TransparentExchange.exchange(pollingPacket, timeout: .milliseconds(36), .sony)
        let request = try TransparentExchange.Request.decode(CommandAPDU.decode(apdu.encode()[...]))
        #expect(request.variant == .sony && request.function == .transparentExchange)
        #expect(request.timeout == .milliseconds(36))
        #expect(request.object(TransparentExchange.Tag.transceive)?.value == pollingPacket)
        let reply = TransparentExchange.reply(iccResponse: pollingReply)
        #expect(try TransparentExchange.packet(from: reply) == pollingReply)
        #expect(throws: FeliCaError(.invalidField, "")) {
            try TransparentExchange.Request.decode(CommandAPDU(cla: 0xFF, ins: 0xC2, p1: 0, p2: 9, data: [0x81, 0]))
        }
    }
}

@Suite("ACR122U PN532 pseudo-APDUs")
struct ACR122Tests {
    @Test("commands match Docs/pcsc.md")
    func commands() {
        #expect(ACR122.dataExchange(pollingPacket).encode() == bytes("FF 00 00 00 09 D4 40 01 06 00 FF FF 01 00"))
        #expect(ACR122.communicateThru(pollingPacket).encode() == bytes("FF 00 00 00 08 D4 42 06 00 FF FF 01 00"))
        #expect(ACR122.listPassiveTarget(polling: pollingPacket).encode() == bytes("FF 00 00 00 09 D4 4A 01 01 00 FF FF 01 00"))
        #expect(ACR122.getResponse(0x18).encode() == bytes("FF C0 00 00 18"))
    }

    struct Vector: Sendable, CustomStringConvertible {
        var name: String
        var command: ACR122.Command
        var wire: String
        var packet: [UInt8]?
        var error: FeliCaError.Code?
        var description: String { name }
    }

    static let replies: [Vector] = [
        Vector(name: "InDataExchange ok", command: .inDataExchange, wire: "D5 41 00 " + Hex.encode(pollingReply) + " 90 00", packet: pollingReply),
        Vector(name: "InCommunicateThru ok", command: .inCommunicateThru, wire: "D5 43 00 " + Hex.encode(pollingReply) + " 90 00", packet: pollingReply),
        Vector(name: "InListPassiveTarget, one target", command: .inListPassiveTarget, wire: "D5 4B 01 01 " + Hex.encode(pollingReply) + " 90 00", packet: pollingReply),
        Vector(name: "InDataExchange timeout (status 01)", command: .inDataExchange, wire: "D5 41 01 90 00", error: .timeout),
        Vector(name: "InDataExchange CRC error (status 02)", command: .inDataExchange, wire: "D5 41 02 90 00", error: .transmission),
        Vector(name: "InListPassiveTarget, no target", command: .inListPassiveTarget, wire: "D5 4B 00 90 00", error: .timeout),
        Vector(name: "reader failure 63 00", command: .inDataExchange, wire: "63 00", error: .status),
        Vector(name: "wrong frame identifier", command: .inDataExchange, wire: "D4 41 00 90 00", error: .unexpectedResponse),
        Vector(name: "wrong response code", command: .inDataExchange, wire: "D5 43 00 04 01 00 00 90 00", error: .unexpectedResponse),
        Vector(name: "no status byte", command: .inDataExchange, wire: "D5 41 90 00", error: .truncated),
        Vector(name: "packet LEN beyond the data", command: .inDataExchange, wire: "D5 41 00 14 01 02 90 00", error: .truncated),
        Vector(name: "empty packet", command: .inDataExchange, wire: "D5 41 00 90 00", error: .truncated),
        Vector(name: "InListPassiveTarget Polling cut", command: .inListPassiveTarget, wire: "D5 4B 01 01 14 01 02 90 00", error: .truncated),
        Vector(name: "InListPassiveTarget trailing bytes", command: .inListPassiveTarget, wire: "D5 4B 01 01 " + Hex.encode(pollingReply) + " EE 90 00", error: .trailingBytes),
    ]

    @Test("parses replies", arguments: replies)
    func reply(_ v: Vector) throws {
        let response = try ResponseAPDU.decode(bytes(v.wire)[...])
        let parse = { () throws(FeliCaError) -> [UInt8] in
            v.command == .inListPassiveTarget
                ? try ACR122.pollingResponse(from: response)
                : try ACR122.packet(from: response, for: v.command)
        }
        if let code = v.error {
            #expect(throws: FeliCaError(code, "")) { try parse() }
        } else {
            #expect(try parse() == v.packet)
        }
    }

    @Test("every strict prefix of a reply is truncated", arguments: 0..<(3 + 20))
    func prefixes(_ n: Int) {
        let data = bytes("D5 41 00") + pollingReply
        #expect(throws: FeliCaError.truncated) {
            try ACR122.packet(from: ResponseAPDU(data: Array(data[..<n])), for: .inDataExchange)
        }
        let list = bytes("D5 4B 01 01") + pollingReply
        #expect(throws: FeliCaError.truncated) {
            try ACR122.pollingResponse(from: ResponseAPDU(data: Array(list[..<(n + 1)])))
        }
    }

    @Test("card side: parses PN532 commands inside FF 00 00 00")
    func cardSide() throws {
        #expect(try ACR122.Request.decode(ACR122.dataExchange(pollingPacket)) == .dataExchange(target: 1, packet: pollingPacket))
        #expect(try ACR122.Request.decode(ACR122.listPassiveTarget(polling: pollingPacket))
                == .listPassiveTarget(maxTargets: 1, bitRate: 1, payload: Array(pollingPacket.dropFirst())))
        #expect(try ACR122.Request.decode(ACR122.wrap(.inCommunicateThru, [])) == .communicateThru(packet: []))
        #expect(throws: FeliCaError(.invalidField, "")) { try ACR122.Request.decode(DirectTransmit.command(pollingPacket)) }
        #expect(throws: FeliCaError.truncated) { try ACR122.Request.decode(CommandAPDU(cla: 0xFF, ins: 0, p1: 0, p2: 0, data: [0xD4])) }
    }
}

@Suite("ACR1252U direct transmit")
struct DirectTransmitTests {
    @Test("wraps and unwraps whole packets")
    func roundTrip() throws {
        #expect(DirectTransmit.command(pollingPacket).encode() == bytes("FF 00 00 00 06 06 00 FF FF 01 00"))
        #expect(try DirectTransmit.packet(from: ResponseAPDU(data: pollingReply)) == pollingReply)
        #expect(throws: FeliCaError.timeout) { try DirectTransmit.packet(from: ResponseAPDU(status: .failed)) }
        #expect(throws: FeliCaError(.status, "")) { try DirectTransmit.packet(from: ResponseAPDU(status: .insNotSupported)) }
        #expect(throws: FeliCaError.truncated) { try DirectTransmit.packet(from: ResponseAPDU(data: Array(pollingReply.dropLast()))) }
        #expect(throws: FeliCaError(.badLength, "")) { try DirectTransmit.packet(from: ResponseAPDU(data: [1])) }
    }
}

@Suite("Dialect names")
struct DialectNameTests {
    @Test("guesses from reader names", arguments: [
        ("ACS ACR122U PICC Interface 00 00", PCSCDialect.acr122u),
        ("ACS ACR1252 Dual Reader PICC 00 00", .raw),
        ("SONY FeliCa RC-S300/P 00 00", .part3),
        ("Sony FeliCa Port/PaSoRi 4.0 (RC-S300/S) 00 00", .part3),
    ])
    func guess(_ name: String, _ dialect: PCSCDialect) {
        #expect(PCSCDialect.guess(readerName: name) == dialect)
    }

    @Test("says nothing for readers it does not know")
    func unknown() {
        #expect(PCSCDialect.guess(readerName: "Virtual PCD 00 00") == nil)
        #expect(PCSCDialect(name: "PART3") == .part3)
        #expect(PCSCDialect(name: "nfc") == nil)
    }
}
