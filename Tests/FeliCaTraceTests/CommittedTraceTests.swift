import FeliCa
import FeliCaCards
import FeliCaEmulators
import FeliCaNDEF
import FeliCaSimulation
import FeliCaTrace
import Foundation
import Testing

/// The traces under Tests/Traces (recorded by scripts/record-traces.sh from the sample
/// cards). When the commands a session sends change on purpose, re-record them.
@Suite struct CommittedTraceTests {
    static let files: [String] = {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: Support.tracesDirectory)) ?? []
        return names.filter { $0.hasSuffix(".jsonl") }.sorted()
    }()

    @Test func theSampleCardsHaveTraces() {
        for card in SampleCards.names {
            #expect(Self.files.contains("\(card)-dump.jsonl"), "no committed dump trace of \(card): run scripts/record-traces.sh")
        }
    }

    @Test(arguments: files)
    func everyPacketDecodes(file: String) throws {
        let trace = try Trace.load(path: Support.tracesDirectory + "/" + file)
        #expect(!trace.exchanges.isEmpty)
        #expect(trace.device?.hasPrefix("virtual:") == true)
        for (i, e) in trace.exchanges.enumerated() {
            let command = try Command.decode(e.tx[...])
            if let rx = e.rx {
                #expect(throws: Never.self, "\(file) exchange \(i + 1)") { try Response.decode(rx[...], expecting: command.idm) }
            }
        }
    }

    /// Each dump trace replays through `CardImage.read` to the same image a live read of
    /// the sample card gives, using every recorded exchange.
    /// The dump traces (a closure in `@Test(arguments:)` crashes Swift 6.0's compiler).
    static let dumpFiles = files.filter { $0.hasSuffix("-dump.jsonl") }

    @Test(arguments: dumpFiles)
    func dumpTracesReplayToTheLiveCard(file: String) async throws {
        let card = String(file.dropLast("-dump.jsonl".count))
        let replay = try TraceReplay.load(Support.tracesDirectory + "/" + file)
        let replayed = try await CardImage.read(using: CardSession(transport: replay))
        try replay.assertFullyConsumed()
        let live = try await CardImage.read(using: CardSession(transport: VirtualTransport(card: try VirtualCard.named(card), name: "virtual:\(card)")))
        #expect(replayed.jsonText() == live.jsonText())
    }
}

/// The NDEF message of the Lite-S sample, replayed from its committed trace: the same tag as
/// a live read, from exactly the recorded exchanges.
@Test func theNDEFTraceReplaysToTheLiveTag() async throws {
    let replay = try TraceReplay.load(Support.tracesDirectory + "/lite-s-ndef.jsonl")
    let replayed = try await NDEFTag.read(using: CardSession(transport: replay))
    try replay.assertFullyConsumed()
    let live = try await NDEFTag.read(using: CardSession(transport: VirtualTransport(card: try VirtualCard.named("lite-s"), name: "virtual:lite-s")))
    #expect(replayed == live)
    #expect(replayed.records.count == 3)
}

/// The card profiles replayed from the committed balance and history traces: the same
/// report as a live read of the sample card, from exactly the recorded exchanges.
@Suite struct ProfileReplayTests {
    static let cases: [(file: String, card: String, depth: CardReader.Depth)] = CommittedTraceTests.files.compactMap { file in
        let base = file.dropLast(".jsonl".count)
        guard let dash = base.lastIndex(of: "-") else { return nil }
        let card = String(base[..<dash])
        switch base[base.index(after: dash)...] {
        case "balance": return (file, card, .balance)
        case "history": return (file, card, .history)
        default: return nil
        }
    }

    @Test func everySampleCardHasBalanceAndHistoryTraces() {
        for card in SampleCards.purseNames {
            #expect(Self.cases.contains { $0.card == card && $0.depth == .balance }, "no \(card)-balance.jsonl: run scripts/record-traces.sh")
            #expect(Self.cases.contains { $0.card == card && $0.depth == .history }, "no \(card)-history.jsonl: run scripts/record-traces.sh")
        }
    }

    @Test(arguments: cases)
    func profilesReadTheSameReportFromTheTrace(file: String, card: String, depth: CardReader.Depth) async throws {
        let replay = try TraceReplay.load(Support.tracesDirectory + "/" + file)
        let replayed = try await CardReader(depth: depth).read(CardSession(transport: replay))
        try replay.assertFullyConsumed()
        let live = try await CardReader(depth: depth).read(
            CardSession(transport: VirtualTransport(card: try VirtualCard.named(card), name: "virtual:\(card)")))
        #expect(replayed == live)
        #expect(!replayed.purses.isEmpty)
        if depth == .history {
            #expect(replayed.purses.allSatisfy { $0.history != nil || !$0.profile.hasHistory })
        }
    }
}
