import FeliCa
import FeliCaCards
import FeliCaEmulators
import FeliCaSimulation
import Testing

/// A session on a fresh virtual card.
func session(_ image: CardImage) -> CardSession {
    CardSession(transport: VirtualTransport(card: VirtualCard(image: image), name: "virtual:test"))
}

func sample(_ name: String) throws -> CardImage {
    try #require(SampleCards.image(named: name))
}

/// Exchange budgets on the built-in cards: nfcpy reads one block per command and the iOS
/// libraries one service per command; we batch. A Suica (transit-card IC) needs no
/// Request System Code: balance is Polling + 1 read, history Polling + 2 reads + the
/// Request Service that names the transit brand.
@Test(arguments: [
    ("suica", CardReader.Depth.balance, 2),
    ("suica", .history, 4),
    ("wallet", .balance, 6),
    ("wallet", .history, 9),
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
    #expect(report.skippedCommonArea)
    #expect(report.skipped.map(\.system) == [.common])
    #expect(report.skipped.first?.listed == false)
    #expect(!report.systemsListed)
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
    #expect(p.issues == [ServiceIssue(service: Edy.historyService, content: .history, problem: .needsKey(keyVersion: 0x0123))])
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
        guard p.profile.hasHistory else {
            #expect(p.history == nil && (p.balance != nil || (!p.profile.hasBalance && p.number != nil)))
            continue
        }
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

// MARK: - Reading plans

/// Records every exchange so tests can see which blocks were read.
final class RecordingTransport: Transport, @unchecked Sendable {
    let inner: VirtualTransport
    private(set) var exchanges: [(command: [UInt8], reply: [UInt8]?)] = []
    var name: String { inner.name }
    var linkLatency: Duration { .zero }

    /// Commands a reader would not forward: they fail as `.refused` without reaching the card.
    let refusing: Set<UInt8>

    init(_ image: CardImage, refusing: Set<UInt8> = []) {
        inner = VirtualTransport(card: VirtualCard(image: image), name: "virtual:recorded")
        self.refusing = refusing
    }

    func exchange(_ packet: [UInt8], timeout: Duration) async throws(FeliCaError) -> [UInt8] {
        if packet.count >= 2, refusing.contains(packet[1]) {
            exchanges.append((packet, nil))
            throw FeliCaError(.refused, "the reader will not forward command \(packet[1])")
        }
        do {
            let reply = try await inner.exchange(packet, timeout: timeout)
            exchanges.append((packet, reply))
            return reply
        } catch {
            exchanges.append((packet, nil))
            throw error
        }
    }

    func close() async {}

    /// Command codes sent, in order.
    var commands: [UInt8] { exchanges.map { $0.command[1] } }

    /// Every (service, block) a successful Read Without Encryption returned, in order.
    func blocksRead() throws -> [String] {
        var out: [String] = []
        for (command, reply) in exchanges {
            guard case .readWithoutEncryption(let c) = try Command.decode(command[...]), let reply else { continue }
            let r = try ReadWithoutEncryptionResponse.decode(reply[...], expecting: c.idm)
            guard r.status.isSuccess else { continue }
            out += c.blocks.map { "\(c.services[Int($0.serviceIndex)]):\($0.blockNumber)" }
        }
        return out
    }
}

/// A Suica-like card (transit-card IC) without the gate log and pending entry, as some
/// regional cards are: the second batch is refused, Request Service asks about its three
/// services, and only the six history blocks not yet read are read again.
@Test func transitHistoryWithoutOptionalServices() async throws {
    var image = try sample("suica")
    image.systems[0].services.removeAll { [TransitIC.gateLogService, TransitIC.pendingEntryService].contains($0.code) }
    let t = RecordingTransport(image)
    let s = CardSession(transport: t)
    let report = try await CardReader(depth: .history).read(s)
    let p = try #require(report.purses.first)
    #expect(p.issues.isEmpty, "\(p.issues)")
    #expect(p.transactions.count == 9)
    #expect(p.transit?.gateLog == nil)
    #expect(await s.exchangeCount <= 6)
    // Polling, read, refused read, Request Service, read, Request Service naming the brand.
    #expect(t.commands == [0x00, 0x06, 0x06, 0x02, 0x06, 0x02])
    let read = try t.blocksRead()
    #expect(read.count == Set(read).count, "a block was read twice: \(read)")
    #expect(read.count == 21)
}

/// The same card on a reader that will not forward Request Service: the refused batch is
/// not sent again; its services are read one by one at once.
@Test func refusedProbeReadsTheSharesAloneAtOnce() async throws {
    var image = try sample("suica")
    image.systems[0].services.removeAll { [TransitIC.gateLogService, TransitIC.pendingEntryService].contains($0.code) }
    let t = RecordingTransport(image, refusing: [0x02])
    let report = try await CardReader(depth: .history).read(CardSession(transport: t))
    let p = try #require(report.purses.first)
    #expect(p.transactions.count == 9)
    // Polling, read, refused read, refused Request Service, then reads of the shares alone:
    // never the refused batch a second time.
    #expect(Array(t.commands.prefix(4)) == [0x00, 0x06, 0x06, 0x02])
    let refusedBatch = t.exchanges[2].command
    #expect(t.exchanges.filter { $0.command == refusedBatch }.count == 1, "the refused batch was sent again")
}

/// The wanted (service, block) positions of a Suica history read, in reading order.
func suicaHistoryPositions() -> [(service: ServiceCode, block: Int)] {
    TransitIC.layout.reads(at: .history).flatMap { w in (0..<w.historyBlocks).map { (w.service, $0) } }
}

/// Variants of the Suica where the card refuses the history read at one position: the
/// service ends just before that block (or, at block 0, is absent or behind a key).
func refusingVariants(at position: Int) throws -> [(String, CardImage)] {
    let (service, block) = suicaHistoryPositions()[position]
    let base = try sample("suica")
    func edited(_ f: (CardImage.Service) -> CardImage.Service?) -> CardImage {
        var image = base
        image.systems[0].services = image.systems[0].services.compactMap { $0.code == service ? f($0) : $0 }
        return image
    }
    if block > 0 {
        return [("\(service) ends before block \(block)", edited { CardImage.Service(code: $0.code, blocks: Array($0.blocks!.prefix(block))) })]
    }
    return [
        ("\(service) absent", edited { _ in nil }),
        ("\(service) behind a key", edited { CardImage.Service(code: ServiceCode($0.code.rawValue & ~1), keyVersion: 0x0101, blockCount: $0.size) }),
    ]
}

/// A card that refuses at any position of any batch gives the same report as a card that
/// takes one block per command (where every batch is one block), and no block is read twice.
@Test(arguments: 0..<26)
func refusalAtEveryPosition(_ position: Int) async throws {
    #expect(suicaHistoryPositions().count == 26)
    for (what, image) in try refusingVariants(at: position) {
        let t = RecordingTransport(image)
        let batched = try await CardReader(depth: .history).read(CardSession(transport: t))
        var oneByOne = image
        oneByOne.maxBlocksPerRead = 1
        let reference = try await CardReader(depth: .history).read(session(oneByOne))
        #expect(batched.purses == reference.purses, "position \(position), \(what)")
        #expect(!batched.purses.isEmpty, "position \(position), \(what)")
        let read = try t.blocksRead()
        #expect(read.count == Set(read).count, "position \(position), \(what): a block was read twice: \(read)")
        // The balance read in the first batch is still there, whatever was refused later.
        if position > 0 { #expect(batched.purses.first?.balance == 1_234, "position \(position), \(what)") }
    }
}

/// The same at balance depth, on the four-purse phone: every service of every layout
/// absent in turn.
@Test func walletRefusalOfEachService() async throws {
    let base = try sample("wallet")
    for (si, system) in base.systems.enumerated() {
        for service in system.services where PurseLayout.all.contains(where: { $0.services.contains { $0.service == service.code } }) {
            var image = base
            image.systems[si].services.removeAll { $0.code == service.code }
            for depth in [CardReader.Depth.balance, .history] {
                let t = RecordingTransport(image)
                let batched = try await CardReader(depth: depth).read(CardSession(transport: t))
                var oneByOne = image
                oneByOne.maxBlocksPerRead = 1
                let reference = try await CardReader(depth: depth).read(session(oneByOne))
                #expect(batched.purses == reference.purses, "\(service.code) absent, \(depth)")
                let read = try t.blocksRead()
                #expect(read.count == Set(read).count, "\(service.code) absent, \(depth): a block was read twice")
            }
        }
    }
}

/// The planner's batches for the Suica: history is two commands at the frame limit.
@Test func plannerBatches() {
    let wants = TransitIC.layout.reads(at: .history).map { ($0.service, $0.historyBlocks) }
    #expect(ReadPlanner.batches(wants, limit: 15).map(\.count) == [15, 11])
    #expect(ReadPlanner.batches(wants, limit: 8).map(\.count) == [8, 8, 8, 2])
    let balance = TransitIC.layout.reads(at: .balance).map { ($0.service, $0.balanceBlocks) }
    #expect(ReadPlanner.batches(balance, limit: 15).map(\.count) == [2])
}

/// Request System Code is skipped only where the plan does not use it.
@Test func systemListSkippedOnlyOnTransitCardICs() async throws {
    for (name, listed) in [("suica", false), ("wallet", true), ("edy", true)] {
        let t = RecordingTransport(try sample(name))
        let report = try await CardReader(depth: .balance).read(CardSession(transport: t))
        #expect(report.systemsListed == listed, "\(name)")
        #expect(t.commands.contains(0x0C) == listed, "\(name): \(t.commands)")
    }
    var reader = CardReader(depth: .balance)
    reader.probeTransitCardCommonArea = true
    let t = RecordingTransport(try sample("suica"))
    let report = try await reader.read(CardSession(transport: t))
    #expect(report.systems == [.transit, .common])
    #expect(report.skipped.isEmpty)
}

/// The bundled station table is the default: a library user gets names without asking, and
/// opts out with `stations: nil`.
@Test func stationsAreNamedByDefault() async throws {
    let named = try await CardReader(depth: .history).read(session(try sample("suica")))
    let entry = named.purses.first?.transactions.first?.transit?.entry
    #expect(entry?.name == "新宿")
    let bare = try await CardReader(depth: .history, stations: nil).read(session(try sample("suica")))
    let code = bare.purses.first?.transactions.first?.transit?.entry
    #expect(code?.name == nil && code?.line == entry?.line && code?.station == entry?.station)
}
