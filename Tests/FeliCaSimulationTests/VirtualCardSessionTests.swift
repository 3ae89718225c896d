import FeliCa
import FeliCaEmulators
import FeliCaSimulation
import Testing

func session(_ image: CardImage) -> (CardSession, VirtualCard) {
    let card = VirtualCard(image: image)
    return (CardSession(transport: VirtualTransport(card: card, name: "virtual:test")), card)
}

@Test func detectsFirstSystemAndListsAll() async throws {
    let (s, _) = session(twoSystemImage())
    let t = try await s.detect()
    #expect(t.systemCode == 0x0003)
    #expect(try await s.systemCodes(of: t) == [0x0003, 0xFE00])
    let fe = try #require(try await s.select(0xFE00))
    #expect(fe.idm == IDm(rawValue: 0x1101_0000_0000_0001))
    #expect(try await s.select(0x12FC) == nil)
    #expect(try await s.select(0xFEFF)?.systemCode == 0xFE00)
}

@Test func pollingRequestCodes() async throws {
    let (s, _) = session(twoSystemImage())
    #expect(try await s.poll(requestCode: .none)?.requestData == nil)
    #expect(try await s.poll(requestCode: .systemCode)?.requestData == 0x0003)
    #expect(try await s.poll(requestCode: .communicationPerformance)?.requestData == 0x0083)
    #expect(try await s.poll(systemCode: 0x0003, timeSlot: .sixteen) != nil)
}

@Test func searchServiceCodeWalksAreasAndServicesInOrder() async throws {
    let (s, _) = session(twoSystemImage())
    let fe = try #require(try await s.select(0xFE00))
    #expect(try await s.nodes(of: fe) == [.area(0x0000, end: 0xFFFE), .area(0x1100, end: 0x11FF), .service(0x110B), .service(0x1317)])
}

@Test func keyVersionsAndBlockCounts() async throws {
    let (s, _) = session(twoSystemImage())
    let t = try await s.detect()
    #expect(try await s.keyVersions(of: [0x008B, 0x1808, 0x4444, 0x0000], in: t) == [0, 0x0100, nil, 0])
    #expect(try await s.blockCounts(of: [0x090F, 0x1808], in: t) == [20, 3])
}

@Test func requestServiceBatchesThirtyTwoNodes() async throws {
    let (s, _) = session(twoSystemImage())
    let t = try await s.detect()
    let before = await s.exchangeCount
    let versions = try await s.keyVersions(of: Array(repeating: 0x008B, count: 70), in: t)
    #expect(versions.count == 70)
    #expect(await s.exchangeCount - before == 3)
}

@Test func readBatchesSeveralServicesIntoFewCommands() async throws {
    let (s, _) = session(twoSystemImage())
    let t = try await s.detect()
    let before = await s.exchangeCount
    let r = try await s.read([BlockRequest(service: 0x008B, blocks: 0..<1), BlockRequest(service: 0x090F, blocks: 0..<20)], from: t)
    #expect(await s.exchangeCount - before == 2)  // 21 blocks: 15 + 6
    #expect(r[0] == [[UInt8](repeating: 0x8B, count: 16)])
    #expect(r[1].count == 20)
    #expect(r[1][19] == [UInt8](repeating: 19, count: 16))
}

@Test func sessionLearnsASmallerReadLimit() async throws {
    let (s, _) = session(twoSystemImage(maxBlocks: 8))
    let t = try await s.detect()
    let before = await s.exchangeCount
    let r = try await s.read(service: 0x090F, blocks: 0..<20, from: t)
    #expect(r.count == 20)
    // 15 refused (A2), 12 refused, then 8 + 8 + 4.
    #expect(await s.exchangeCount - before == 5)
    #expect(await s.readLimit(for: t) == 8)
    let again = await s.exchangeCount
    _ = try await s.read(service: 0x090F, blocks: 0..<16, from: t)
    #expect(await s.exchangeCount - again == 2)  // remembered: no refused batch this time
}

@Test func knownICLimitIsUsedFromTheStart() async throws {
    // FeliCa Lite-S reads 4 blocks at once.
    let (s, _) = session(twoSystemImage(pmm: PMm(rawValue: 0x00F1_0000_0000_0000)))
    let t = try await s.detect()
    #expect(await s.readLimit(for: t) == 4)
}

@Test func keyProtectedServiceSaysItNeedsAKey() async throws {
    let (s, _) = session(twoSystemImage())
    let t = try await s.detect()
    do {
        _ = try await s.read(service: 0x1808, blocks: 0..<1, from: t)
        Issue.record("read a key-protected service")
    } catch {
        #expect(error.code == .status)
        #expect(error.statusFlags?.sf2 == 0xA5)
        #expect(error.reason.contains("needs a key"))
    }
}

@Test(arguments: [
    (ServiceCode(0x4449), 0, UInt8(0xA6)),  // absent service
    (ServiceCode(0x008B), 1, UInt8(0xA8)),  // block out of range
])
func readErrorsCarryStatusFlags(_ service: ServiceCode, _ block: Int, _ sf2: UInt8) async throws {
    let (s, _) = session(twoSystemImage())
    let t = try await s.detect()
    await #expect(throws: FeliCaError(.status, "")) { try await s.read(service: service, blocks: block..<(block + 1), from: t) }
    let reply = try await s.exchange(try ReadWithoutEncryptionCommand(idm: t.idm, service: service, blocks: [block]).encode(), timeout: .seconds(1))
    let r = try ReadWithoutEncryptionResponse.decode(reply[...])
    #expect(r.status == StatusFlags(sf1: 1, sf2: sf2))
}

@Test func writesChangeTheCard() async throws {
    let (s, card) = session(twoSystemImage())
    let t = try await s.detect()
    let data = [UInt8](repeating: 0x5A, count: 16)
    try await s.write(service: 0x0009, blocks: [(1, data)], to: t)
    #expect(try await s.read(service: 0x0009, blocks: 1..<2, from: t) == [data])
    // A cyclic write adds the newest record in block 0; the oldest falls off.
    try await s.write(service: 0x000D, blocks: [(0, data)], to: t)
    #expect(card.image.systems[0].services[1].blocks! == [data, [UInt8](repeating: 1, count: 16), [UInt8](repeating: 2, count: 16)])
    // Read-only services refuse writes.
    await #expect(throws: FeliCaError(.status, "")) { try await s.write(service: 0x008B, blocks: [(0, data)], to: t) }
}

@Test func readsAreRetriedButWritesAreNot() async throws {
    let card = VirtualCard(image: twoSystemImage())
    let lossy = LossyTransport(VirtualTransport(card: card, name: "virtual:test"), drop: [2, 4])
    let s = CardSession(transport: lossy)
    let t = try await s.detect()                                    // exchange 1
    _ = try await s.read(service: 0x008B, blocks: 0..<1, from: t)   // 2 dropped, 3 ok
    #expect(lossy.exchanges == 3)
    do {
        try await s.write(service: 0x0009, blocks: [(0, [UInt8](repeating: 7, count: 16))], to: t)  // 4 dropped
        Issue.record("write reported success")
    } catch {
        #expect(error.code == .ambiguousWrite)
        #expect(error.reason.contains("may or may not"))
    }
    #expect(lossy.exchanges == 4)  // not retried
    // The card did store it: that is why the error is "ambiguous", not "failed".
    #expect(card.image.systems[0].services[0].blocks![0] == [UInt8](repeating: 7, count: 16))
}

@Test func removedCardStopsAnswering() async throws {
    let (s, card) = session(twoSystemImage())
    let t = try await s.detect()
    #expect(try await s.isPresent(t))
    card.isPresent = false
    #expect(try await s.isPresent(t) == false)
    await #expect(throws: FeliCaError(.noCard, "")) { try await s.detect() }
    card.isPresent = true
    card.removeAfter(exchanges: 1)
    #expect(try await s.isPresent(t))
    #expect(try await s.isPresent(t) == false)
}

@Test func virtualCardIgnoresOtherIDmsAndGarbage() {
    let card = VirtualCard(image: twoSystemImage())
    #expect(card.respond(to: RequestResponseCommand(idm: IDm(rawValue: 42)).encode()) == nil)
    #expect(card.respond(to: [0x03, 0x99, 0x00]) == nil)
    #expect(card.respond(to: []) == nil)
    #expect(card.respond(to: PollingCommand(systemCode: 0x1234).encode()) == nil)
}

@Test func specificationVersionAndResetMode() async throws {
    let (s, _) = session(twoSystemImage())
    let t = try await s.detect()
    #expect(try await s.specificationVersion(of: t).basicVersion == 0x0100)
    #expect(try await s.resetMode(t).isSuccess)
}

@Test func timingDelaysLikeARealCard() async throws {
    let card = VirtualCard(image: twoSystemImage(pmm: PMm(rawValue: 0x100B_4B42_8485_D0FF)))
    let worst = VirtualCard(image: twoSystemImage(pmm: PMm(rawValue: 0x100B_4B42_8485_D0FF)), timing: .worstCase)
    let read = try ReadWithoutEncryptionCommand(idm: IDm(rawValue: 0x0101_0000_0000_0001), service: 0x008B, blocks: [0]).encode()
    // The PMm bound of a one-block read is 33.8 ms; typical is half of it, worst case all of it.
    #expect(card.reactionTime(to: read) > .milliseconds(16.8) && card.reactionTime(to: read) < .milliseconds(17))
    #expect(worst.reactionTime(to: read) > .milliseconds(33.7) && worst.reactionTime(to: read) < .milliseconds(33.9))
    // Plus about 2.5 ms on the air (26 bytes out, 39 back at 212 kbps).
    let t = card.responseTime(to: read, reply: card.respond(to: read))
    #expect(t > .milliseconds(19.3) && t < .milliseconds(19.6))
    let w = worst.responseTime(to: read, reply: worst.respond(to: read))
    #expect(w > .milliseconds(36) && w < .milliseconds(36.5))
    // Polling answers in slot 0 whatever the model.
    let polling = PollingCommand(systemCode: 0x0003).encode()
    #expect(card.reactionTime(to: polling) == AirTiming.pollingSlotZero && worst.reactionTime(to: polling) == AirTiming.pollingSlotZero)
    let transport = VirtualTransport(card: card, name: "virtual:test", timing: .kbps212)
    let clock = ContinuousClock()
    let start = clock.now
    await #expect(throws: FeliCaError.timeout) { try await transport.exchange(PollingCommand(systemCode: 0x1234).encode(), timeout: .milliseconds(20)) }
    #expect(clock.now - start >= .milliseconds(20))
}

@Test func systemsOfACardWithoutRequestSystemCodeComeFromPolling() async throws {
    // FeliCa Lite-S does not answer Request System Code: the session polls its two codes,
    // without asking (no Request System Code goes out).
    let lite = CardImage(pmm: PMm(rawValue: 0x00F1_0000_0000_0000), systems: [
        CardImage.System(code: 0x88B4, services: [.init(code: 0x000B, blocks: [[UInt8](repeating: 0, count: 16)])]),
        CardImage.System(code: 0x12FC, services: [.init(code: 0x000B, blocks: [[UInt8](repeating: 0, count: 16)])]),
    ])
    let (s, _) = session(lite)
    let t = try await s.detect()
    let before = await s.exchangeCount
    #expect(try await s.systemCodes(of: t) == [0x88B4, 0x12FC])
    #expect(await s.exchangeCount == before + 2)
}
