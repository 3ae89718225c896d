import FeliCa
import FeliCaCards
import FeliCaSimulation
import Testing

/// A session on a fresh virtual card.
func session(_ image: CardImage) -> CardSession {
    CardSession(transport: VirtualTransport(card: VirtualCard(image: image), name: "virtual:test"))
}

func sample(_ name: String) throws -> CardImage {
    try #require(SampleCards.image(named: name))
}

/// Exchange budgets on the built-in cards (issue 6): nfcpy reads one block per command and
/// the iOS libraries one service per command; we batch.
@Test(arguments: [
    ("suica", CardReader.Depth.balance, 3),
    ("suica", .history, 5),
    ("wallet", .balance, 6),
    ("wallet", .history, 10),
    ("edy", .balance, 4),
    ("nanaco", .history, 4),
    ("waon", .history, 4),
])
func exchangeBudget(card: String, depth: CardReader.Depth, budget: Int) async throws {
    let s = session(try sample(card))
    let report = try await CardReader(depth: depth).read(s)
    let used = await s.exchangeCount
    #expect(used <= budget, "\(card) \(depth): \(used) exchanges, budget \(budget)")
    #expect(!report.purses.isEmpty)
    print("exchanges \(card) \(depth): \(used)")
}

@Test func walletShowsFourPurses() async throws {
    let report = try await CardReader(depth: .history).read(session(try sample("wallet")))
    #expect(report.purses.map(\.profile) == [.transitIC, .edy, .nanaco, .waon])
    #expect(report.purses.map(\.balance) == [3_020, 2_480, 5_128, 1_850])
    for p in report.purses {
        #expect(p.issues.isEmpty, "\(p.profile): \(p.issues)")
        #expect(p.notes.isEmpty, "\(p.profile): \(p.notes)")
        #expect(!(p.history ?? []).isEmpty)
    }
}

@Test(arguments: [("edy", PurseProfile.edy), ("nanaco", .nanaco), ("waon", .waon), ("suica", .transitIC)])
func singleProfileCards(card: String, profile: PurseProfile) async throws {
    let report = try await CardReader(depth: .history).read(session(try sample(card)))
    #expect(report.purses.map(\.profile) == [profile])
}

@Test func suicaHistoryEndToEnd() async throws {
    let report = try await CardReader(depth: .history).read(session(try sample("suica")))
    let p = try #require(report.purses.first)
    #expect(p.balance == 1_234)
    #expect(p.notes.isEmpty)
    let t = p.transactions
    #expect(t.count == 9)
    #expect(t.map(\.amount) == [-200, -150, -210, 1_000, -406, -200, 1_000, -230, nil])
    #expect(t[1].date.iso == "2026-11-27T12:34:00+09:00")
    #expect(t[2].transit?.bus?.stop == 0x0103)
    #expect(t[7].transit?.paidPartlyInCash == true)
    #expect(t[7].transit?.entry?.area == 2)
    #expect(t[7].transit?.exit?.area == 2)
    let log = try #require(p.transit?.gateLog)
    #expect(log.count == 2)
    #expect(p.transit?.pendingEntry == nil)
    #expect(report.notes.contains { $0.contains("FE00") })
}

@Test func waonRingWrapsOnCard() async throws {
    let report = try await CardReader(depth: .history).read(session(try sample("waon")))
    let p = try #require(report.purses.first)
    #expect(p.transactions.map(\.sequence) == [0x0001, 0x0000, 0xFFFF])
    #expect(p.transactions.map(\.amount) == [-650, 2_000, -1_200])
    #expect(p.points == 321)
    #expect(p.number == "6900 0012 3456 7890")
}

/// A common area whose Edy balance exists only behind a key: reported as needing a key,
/// never as an empty purse; the readable services still show.
@Test func keyProtectedServiceIsReported() async throws {
    var image = try sample("edy")
    image.systems[0].services = image.systems[0].services.map { s in
        s.code == Edy.historyService ? CardImage.Service(code: 0x170E, keyVersion: 0x0123, blockCount: 6) : s
    }
    let report = try await CardReader(depth: .history).read(session(image))
    let p = try #require(report.purses.first)
    #expect(p.balance == 2_480)
    #expect(p.history == nil)
    #expect(p.issues == [ServiceIssue(service: Edy.historyService, content: "history", problem: .needsKey(keyVersion: 0x0123))])
}

/// A transit system whose history is key-protected: the first read fails, Request Service
/// sorts it out, the balance is still read.
@Test func transitKeyProtectedHistory() async throws {
    var image = try sample("suica")
    image.systems[0].services = image.systems[0].services.map { s in
        s.code == TransitIC.historyService ? CardImage.Service(code: 0x090C, keyVersion: 0x0001, blockCount: 20) : s
    }
    let report = try await CardReader(depth: .balance).read(session(image))
    let p = try #require(report.purses.first)
    #expect(p.balance == 1_234)
    #expect(p.issues.map(\.problem) == [.needsKey(keyVersion: 0x0001)])
}

/// With probing of a transit card's common area turned on, the Suica's FE00 is probed
/// and holds no purse.
@Test func suicaCommonAreaProbed() async throws {
    var reader = CardReader(depth: .balance)
    reader.probeTransitCardCommonArea = true
    let s = session(try sample("suica"))
    let report = try await reader.read(s)
    #expect(report.purses.map(\.profile) == [.transitIC])
    #expect(await s.exchangeCount == 5)
}

/// Every built-in card decodes cleanly: no malformed record, no issue, no failed
/// cross-check, no date that fell back to the epoch.
@Test(arguments: SampleCards.names)
func sampleCardsDecodeCleanly(_ name: String) async throws {
    let report = try await CardReader(depth: .history).read(session(try sample(name)))
    for p in report.purses {
        #expect(p.issues.isEmpty, "\(name) \(p.profile): \(p.issues)")
        #expect(p.notes.isEmpty, "\(name) \(p.profile): \(p.notes)")
        let history = try #require(p.history)
        #expect(history.count >= 3)
        #expect(history.allSatisfy { $0.transaction != nil })
        #expect(history.allSatisfy { $0.transaction?.date.year != 2000 })
        #expect(p.balance == history.first?.transaction?.balance)
    }
}

/// A card whose history holds fewer blocks than the layout's 20: the batch is refused
/// (block out of range), each service is read alone, the history stops where the card's does.
@Test func shorterHistoryThanTheLayout() async throws {
    var image = try sample("suica")
    image.systems[0].services = image.systems[0].services.map { s in
        s.code == TransitIC.historyService ? CardImage.Service(code: s.code, blocks: Array(s.blocks!.prefix(7))) : s
    }
    let report = try await CardReader(depth: .history).read(session(image))
    let p = try #require(report.purses.first)
    #expect(p.issues.isEmpty, "\(p.issues)")
    #expect(p.transactions.map(\.sequence) == Array((0x9B...0xA1).reversed()))
    #expect(p.transactions.last?.amount == nil)
    #expect(p.transit?.gateLog?.count == 2)
}

/// The transit layout under a regional card's own system code (IruCa 80DE), behind an
/// unrelated first system: found by Request System Code, read through its own IDm.
@Test func regionalTransitSystemCode() async throws {
    let suica = try sample("suica")
    let image = CardImage(pmm: PMm(rawValue: 0x0120_2204_2767_4EFF), systems: [
        CardImage.System(code: 0x12FC, idm: IDm(rawValue: 0x0120_0000_0000_0001), services: [.init(code: 0x000B, blocks: [[UInt8](repeating: 0, count: 16)])]),
        CardImage.System(code: 0x80DE, services: suica.systems[0].services),
    ])
    let s = session(image)
    let report = try await CardReader(depth: .balance).read(s)
    #expect(report.systems == [0x12FC, 0x80DE])
    #expect(report.purses.map(\.profile) == [.transitIC])
    #expect(report.purses.first?.system == 0x80DE)
    #expect(report.purses.first?.balance == 1_234)
    #expect(report.notes == ["system 12FC not probed: no known purse layout lives there"])
}
