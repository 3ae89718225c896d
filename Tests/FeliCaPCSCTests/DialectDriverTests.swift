import FeliCa
import FeliCaReaderCodecs
@testable import FeliCaPCSC
import FeliCaEmulators
import FeliCaSimulation
import Synchronization
import Testing
import FeliCaCards

/// The reader firmware stand-in, in memory: APDU bytes go through the same encoders and
/// parsers as over pcscd, only without the daemon.
final class InMemoryReader: Sendable {
    private let responder: Mutex<VPCDResponder>
    /// Every APDU sent, for checking what went over the wire.
    let log = Mutex<[[UInt8]]>([])

    init(card: VirtualCard, dialect: PCSCDialect, getResponse: Bool = false, quirks: VPCDResponder.Quirks = .init()) {
        responder = Mutex(VPCDResponder(dialect: dialect, idm: card.systems[0].idm, pmm: card.systems[0].pmm,
                                        getResponse: getResponse, quirks: quirks) { card.respond(to: $0) })
    }

    var transmit: PCSCDialectDriver.Transmit {
        { (apdu: CommandAPDU) throws(FeliCaError) -> ResponseAPDU in
            let wire = apdu.encode()
            self.log.withLock { $0.append(wire) }
            let reply = self.responder.withLock { $0.respond(to: wire) }
            return try ResponseAPDU.decode(reply[...])
        }
    }
}

/// A transport over the driver and the in-memory reader.
final class InMemoryPCSCTransport: Transport {
    let name: String
    let reader: InMemoryReader
    let driver: PCSCDialectDriver
    var linkLatency: Duration { .zero }
    var longestReply: Int? { driver.longestReply }

    init(reader: InMemoryReader, dialect: PCSCDialect) throws(FeliCaError) {
        self.name = "memory:\(dialect)"
        self.reader = reader
        self.driver = PCSCDialectDriver(dialect: dialect)
        _ = try driver.probe(reader.transmit)
    }

    func exchange(_ packet: [UInt8], timeout: Duration) async throws(FeliCaError) -> [UInt8] {
        try driver.exchange(packet, timeout: timeout, reader.transmit)
    }

    func close() async { driver.end(reader.transmit) }
}

@Suite("Dialect driver against the reader stand-in")
struct DialectDriverTests {
    struct Setup: Sendable, CustomStringConvertible {
        var dialect: PCSCDialect
        var getResponse = false
        var description: String { "\(dialect)\(getResponse ? " with 61 xx" : "")" }
    }

    static let setups = [
        Setup(dialect: .acr122u), Setup(dialect: .acr122u, getResponse: true),
        Setup(dialect: .part3), Setup(dialect: .sony), Setup(dialect: .raw),
    ]

    @Test("a whole card reads the same as through the virtual device", arguments: setups)
    func dumpMatchesVirtual(_ s: Setup) async throws {
        let expected = try await CardImage.read(using: CardSession(transport: VirtualTransport(card: try VirtualCard.named("suica"), name: "virtual:suica")))
        let reader = InMemoryReader(card: try VirtualCard.named("suica"), dialect: s.dialect, getResponse: s.getResponse)
        let transport = try InMemoryPCSCTransport(reader: reader, dialect: s.dialect)
        let image = try await CardImage.read(using: CardSession(transport: transport))
        await transport.close()
        #expect(image.jsonText() == expected.jsonText())
        if s.getResponse {
            #expect(reader.log.withLock { $0.contains { $0.starts(with: [0xFF, 0xC0, 0x00, 0x00]) } })
        }
    }

    @Test("ACR122U polls with InListPassiveTarget; a Polling no card answers is a timeout")
    func acrPolling() throws {
        let card = try VirtualCard.named("suica")
        let reader = InMemoryReader(card: card, dialect: .acr122u)
        let driver = PCSCDialectDriver(dialect: .acr122u)
        let reply = try driver.exchange(pollingPacket, timeout: .milliseconds(10), reader.transmit)
        #expect(try PollingResponse.decode(reply[...]).idm == card.systems[0].idm)
        #expect(reader.log.withLock { $0.last } == ACR122.listPassiveTarget(polling: pollingPacket).encode())
        #expect(throws: FeliCaError.timeout) {
            try driver.exchange(bytes("06 00 AB CD 01 00"), timeout: .milliseconds(10), reader.transmit)
        }
    }

    @Test("ACR122U 61 xx: a reply over 256 bytes comes in two GET RESPONSE rounds")
    func longGetResponse() throws {
        let long = [UInt8(255), 0x07] + [UInt8](repeating: 0xA5, count: 253)
        let responder = Mutex(VPCDResponder(dialect: .acr122u, idm: try IDm(hex: "0101120312345678"), getResponse: true) { _ in long })
        let log = Mutex<[[UInt8]]>([])
        let transmit: PCSCDialectDriver.Transmit = { (apdu: CommandAPDU) throws(FeliCaError) -> ResponseAPDU in
            log.withLock { $0.append(apdu.encode()) }
            return try ResponseAPDU.decode(responder.withLock { $0.respond(to: apdu.encode()) }[...])
        }
        let reply = try PCSCDialectDriver(dialect: .acr122u).exchange(bytes("0A 06 01 01 12 03 12 34 56 78"), timeout: .milliseconds(10), transmit)
        #expect(reply == long)
        #expect(log.withLock { $0.dropFirst() } == [ACR122.getResponse(256).encode(), ACR122.getResponse(2).encode()])
    }

    @Test("Part 3 refuses exchanges before the session is open")
    func part3Session() throws {
        let reader = InMemoryReader(card: try VirtualCard.named("suica"), dialect: .part3)
        #expect(throws: FeliCaError(.transmission, "")) {
            try PCSCDialectDriver(dialect: .part3).exchange(pollingPacket, timeout: .milliseconds(10), reader.transmit)
        }
    }

    @Test("detection finds each dialect from the fallback order", arguments: [PCSCDialect.acr122u, .part3, .sony, .raw])
    func fallback(_ actual: PCSCDialect) throws {
        let reader = InMemoryReader(card: try VirtualCard.named("suica"), dialect: actual)
        let found = try PCSCTransport.settleDialect(reader: "Virtual PCD 00 00", forced: nil, reader.transmit)
        // The stand-in accepts INS C2 and 50 alike, so a Sony reader is found as part3.
        #expect(found.dialect == (actual == .sony ? .part3 : actual))
    }

    @Test("a forced dialect the reader does not speak is a clear error", arguments: [
        (PCSCDialect.acr122u, PCSCDialect.part3), (.acr122u, .raw), (.part3, .acr122u), (.part3, .raw), (.raw, .acr122u), (.raw, .part3),
    ])
    func wrongDialect(_ actual: PCSCDialect, _ forced: PCSCDialect) throws {
        let reader = InMemoryReader(card: try VirtualCard.named("suica"), dialect: actual)
        do {
            _ = try PCSCTransport.settleDialect(reader: "Virtual PCD 00 00", forced: forced, reader.transmit)
            Issue.record("forcing \(forced) on a \(actual) reader succeeded")
        } catch {
            #expect(error.code == .unsupported)
            #expect(error.reason.contains("not speak the \(forced) dialect"))
            #expect(error.reason.contains("another (\(PCSCDialect.names)) may serve"))
            #expect(!error.reason.contains("--"), "a library error names no flag")
        }
    }

    struct QuirkSetup: Sendable, CustomStringConvertible {
        var dialect: PCSCDialect
        var forms: Set<TransparentExchange.Form>
        var cut: Bool
        var description: String { "\(dialect), \(forms.count == 2 ? "both forms" : "\(forms.first!) only")\(cut ? ", cutting long replies" : "")" }
    }

    static let quirkSetups: [QuirkSetup] = [PCSCDialect.part3, .sony].flatMap { d in
        [Set<TransparentExchange.Form>([.short, .extended]), [.short], [.extended]].flatMap { f in
            [false, true].map { QuirkSetup(dialect: d, forms: f, cut: $0) }
        }
    }

    @Test("every APDU form a reader takes or refuses still reads the whole card; no reply to a short APDU outgrows 256 bytes", arguments: quirkSetups)
    func forms(_ q: QuirkSetup) async throws {
        let expected = try await CardImage.read(using: CardSession(transport: VirtualTransport(card: try VirtualCard.named("suica"), name: "virtual:suica")))
        let reader = InMemoryReader(card: try VirtualCard.named("suica"), dialect: q.dialect,
                                    quirks: .init(forms: q.forms, cutsLongReplies: q.cut))
        let transport = try InMemoryPCSCTransport(reader: reader, dialect: q.dialect)
        let image = try await CardImage.read(using: CardSession(transport: transport))
        await transport.close()
        #expect(image.jsonText() == expected.jsonText())
        // What the driver learned is what the reader refused.
        let learned = transport.driver.limits.refusedForms
        #expect(learned.isDisjoint(with: q.forms))
        #expect(transport.longestReply == (q.forms == [.short] ? TransparentExchange.longestPacketInShortReply : nil))
        // Every exchange went in a form the reader takes, bar the one that taught the driver.
        let exchanges = reader.log.withLock { $0 }.compactMap { try? CommandAPDU.decode($0[...]) }.filter { $0.p2 == 0x01 }
        let refusedSent = exchanges.filter { !q.forms.contains($0.isExtended ? .extended : .short) }
        #expect(refusedSent.count <= 1)
        if q.dialect == .sony && q.forms.contains(.extended) {
            #expect(exchanges.allSatisfy { $0.length == .extendedWithThreeByteLe })
        }
    }

    @Test("a reader that refuses Polling is still the right dialect; Get Data gives the IDm and PMm")
    func pollingRefused() throws {
        let card = try VirtualCard.named("suica")
        for dialect in [PCSCDialect.part3, .sony] {
            let reader = InMemoryReader(card: card, dialect: dialect, quirks: .init(refused: [.polling, .requestSystemCode]))
            let driver = try PCSCTransport.settleDialect(reader: "SONY FeliCa RC-S300/P 00 00", forced: dialect, reader.transmit)
            #expect(driver.limits.refusedCommands == [.polling])
            guard case .pollingRefused = try driver.probe(reader.transmit) else {
                Issue.record("\(dialect): Polling was not reported as refused")
                continue
            }
            #expect(try PCSCStorageAPDU.pmm(fromGetData: reader.transmit(PCSCStorageAPDU.getPMm)) == card.systems[0].pmm)
            let rsc = RequestSystemCodeCommand(idm: card.systems[0].idm).encode()
            #expect(throws: FeliCaError(.refused, "")) { try driver.exchange(rsc, timeout: .milliseconds(10), reader.transmit) }
            #expect(driver.limits.refusedCommands == [.polling, .requestSystemCode])
        }
    }

    @Test("Get Data answers the IDm in every dialect", arguments: [PCSCDialect.acr122u, .part3, .raw])
    func getData(_ dialect: PCSCDialect) throws {
        let card = try VirtualCard.named("suica")
        let reader = InMemoryReader(card: card, dialect: dialect)
        #expect(try PCSCStorageAPDU.idm(fromGetUID: reader.transmit(PCSCStorageAPDU.getUID)) == card.systems[0].idm)
    }
}
