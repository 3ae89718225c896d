import FeliCa
import FeliCaSimulation
import Testing

/// One system with a key-version service, a writable service, a cyclic one and an area:
/// enough for every command to get a telling answer.
private func sendImage() -> CardImage {
    let block = { (b: UInt8) in [UInt8](repeating: b, count: 16) }
    return CardImage(systems: [
        CardImage.System(code: 0x0003, idm: IDm(rawValue: 0x0101_0000_0000_0001),
                         areas: [CardImage.Area(code: 0x0000, end: 0xFFFE)],
                         services: [
                             .init(code: 0x0009, blocks: [block(0), block(0)]),
                             .init(code: 0x090F, blocks: [block(0xA0), block(0xA1), block(0xA2)]),
                             .init(code: 0x1808, keyVersion: 0x0100, blockCount: 3),
                         ]),
    ])
}

/// A session on a fresh virtual card of ``sendImage()``, and the card's system found by Polling.
private func sendSession(timing: AirTiming.BitRate? = nil) async throws -> (CardSession, VirtualCard, Target) {
    let card = VirtualCard(image: sendImage())
    let session = CardSession(transport: VirtualTransport(card: card, name: "virtual:send", timing: timing))
    return (session, card, try await session.detect())
}

/// Sends `command` through ``CardSession/send(_:to:retries:)``: one exchange, the expected
/// answer, and no longer than the command says a reply can be.
private func expectSend<C: CardCommand>(_ command: C, answers expected: C.Response, on session: CardSession, to target: Target,
                                        sourceLocation: SourceLocation = #_sourceLocation) async throws {
    let before = await session.exchangeCount
    let response = try await session.send(command, to: target)
    #expect(response == expected, sourceLocation: sourceLocation)
    #expect(await session.exchangeCount - before == 1, sourceLocation: sourceLocation)
    #expect(response.encode().count <= command.longestResponse, sourceLocation: sourceLocation)
    #expect(response.idm == target.idm, sourceLocation: sourceLocation)
}

/// Every command the codec knows, through the one generic send, at once and with the
/// card's own timing (which the session's timeouts must cover).
@Test("every command through the generic send", arguments: CommandCode.allCases, [nil, AirTiming.BitRate.kbps212])
func everyCommandThroughSend(_ code: CommandCode, timing: AirTiming.BitRate?) async throws {
    let (s, _, t) = try await sendSession(timing: timing)
    let idm = t.idm
    switch code {
    case .polling:
        try await expectSend(PollingCommand(systemCode: 0x0003, requestCode: .systemCode), answers: PollingResponse(idm: idm, pmm: t.pmm, requestData: 0x0003), on: s, to: t)
    case .requestService:
        try await expectSend(try RequestServiceCommand(idm: idm, nodes: [0x0009, 0x1808, 0x4444]), answers: RequestServiceResponse(idm: idm, keyVersions: [0, 0x0100, nil]), on: s, to: t)
    case .requestResponse:
        try await expectSend(RequestResponseCommand(idm: idm), answers: RequestResponseResponse(idm: idm, mode: 0), on: s, to: t)
    case .readWithoutEncryption:
        let data = [UInt8](repeating: 0xA0, count: 16) + [UInt8](repeating: 0xA2, count: 16)
        try await expectSend(try ReadWithoutEncryptionCommand(idm: idm, service: 0x090F, blocks: [0, 2]),
                             answers: ReadWithoutEncryptionResponse(idm: idm, status: .success, data: data[...]), on: s, to: t)
    case .writeWithoutEncryption:
        let data = [UInt8](repeating: 0x5A, count: 16)
        let write = try WriteWithoutEncryptionCommand(idm: idm, services: [0x0009], blocks: [try BlockListElement(serviceIndex: 0, block: 1)], data: data)
        try await expectSend(write, answers: WriteWithoutEncryptionResponse(idm: idm, status: .success), on: s, to: t)
        #expect(try await s.read(service: 0x0009, blocks: 1..<2, from: t) == [data])
    case .searchServiceCode:
        try await expectSend(SearchServiceCodeCommand(idm: idm, index: 0), answers: SearchServiceCodeResponse(idm: idm, node: .area(0x0000, end: 0xFFFE)), on: s, to: t)
        try await expectSend(SearchServiceCodeCommand(idm: idm, index: 2), answers: SearchServiceCodeResponse(idm: idm, node: .service(0x090F)), on: s, to: t)
        try await expectSend(SearchServiceCodeCommand(idm: idm, index: 4), answers: SearchServiceCodeResponse(idm: idm, node: nil), on: s, to: t)
    case .requestSystemCode:
        try await expectSend(RequestSystemCodeCommand(idm: idm), answers: RequestSystemCodeResponse(idm: idm, systemCodes: [0x0003]), on: s, to: t)
    case .requestBlockInformation:
        try await expectSend(try RequestBlockInformationCommand(idm: idm, nodes: [0x090F, 0x1808]), answers: RequestBlockInformationResponse(idm: idm, blockCounts: [3, 3]), on: s, to: t)
    case .requestSpecificationVersion:
        let expected = RequestSpecificationVersionResponse(idm: idm, status: .success, versionData: [0x00, 0x00, 0x01, 0x00])
        try await expectSend(RequestSpecificationVersionCommand(idm: idm), answers: expected, on: s, to: t)
        #expect(try await s.send(RequestSpecificationVersionCommand(idm: idm), to: t).basicVersion == 0x0100)
    case .resetMode:
        try await expectSend(ResetModeCommand(idm: idm), answers: ResetModeResponse(idm: idm, status: .success), on: s, to: t)
    }
}

@Suite("the generic send's retries")
struct SendRetryTests {
    @Test("a repeatable command is sent again after silence, as often as the options say")
    func repeatable() async throws {
        let (s, card, t) = try await sendSession()
        card.isPresent = false
        let before = await s.exchangeCount
        await #expect(throws: FeliCaError.timeout) { try await s.send(RequestSystemCodeCommand(idm: t.idm), to: t) }
        #expect(await s.exchangeCount - before == 1 + s.options.retries)
        await #expect(throws: FeliCaError.timeout) { try await s.send(RequestSystemCodeCommand(idm: t.idm), to: t, retries: 0) }
        #expect(await s.exchangeCount - before == 2 + s.options.retries)
    }

    @Test("a write is sent once, whatever the caller asks; the session calls a lost reply ambiguous")
    func write() async throws {
        let (s, card, t) = try await sendSession()
        card.isPresent = false
        let write = try WriteWithoutEncryptionCommand(idm: t.idm, services: [0x0009], blocks: [try BlockListElement(serviceIndex: 0, block: 0)],
                                                      data: [UInt8](repeating: 1, count: 16))
        let before = await s.exchangeCount
        await #expect(throws: FeliCaError.timeout) { try await s.send(write, to: t, retries: 5) }
        #expect(await s.exchangeCount - before == 1)
        await #expect(throws: FeliCaError(.ambiguousWrite, "")) {
            try await s.write(service: 0x0009, blocks: [(block: 0, data: [UInt8](repeating: 1, count: 16))], to: t)
        }
        #expect(await s.exchangeCount - before == 2)
    }

    @Test("silence to Polling: send throws a timeout after its retries, poll answers nil after one exchange")
    func polling() async throws {
        let (s, card, t) = try await sendSession()
        card.isPresent = false
        let before = await s.exchangeCount
        await #expect(throws: FeliCaError.timeout) { try await s.send(PollingCommand(systemCode: 0x0003), to: t) }
        #expect(await s.exchangeCount - before == 1 + s.options.retries)
        #expect(try await s.poll(systemCode: 0x0003) == nil)
        #expect(await s.exchangeCount - before == 2 + s.options.retries)
    }

    @Test("a card that left answers no presence check: Request Response once, then Polling")
    func presence() async throws {
        let (s, card, t) = try await sendSession()
        #expect(try await s.isPresent(t))
        card.isPresent = false
        let before = await s.exchangeCount
        #expect(try await !s.isPresent(t))
        #expect(await s.exchangeCount - before == 2)
    }
}

/// LEN is what ``CardCommand/frameLength`` and ``CardResponse/frameLength`` say, for
/// every vector (the encoders reserve exactly that).
@Test(arguments: commandVectors)
func commandFrameLengthIsLEN(_ v: CommandVector) {
    #expect(v.command.command.frameLength == v.bytes.count)
    #expect(Int(v.bytes[0]) == v.bytes.count)
}

@Test(arguments: responseVectors)
func responseFrameLengthIsLEN(_ v: ResponseVector) {
    #expect(v.decoded.response.frameLength == v.bytes.count)
    #expect(v.decoded.encode() == v.bytes)
}
