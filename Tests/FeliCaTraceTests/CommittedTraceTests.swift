import FeliCa
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
    @Test(arguments: files.filter { $0.hasSuffix("-dump.jsonl") })
    func dumpTracesReplayToTheLiveCard(file: String) async throws {
        let card = String(file.dropLast("-dump.jsonl".count))
        let replay = try TraceReplay.load(Support.tracesDirectory + "/" + file)
        let replayed = try await CardImage.read(using: CardSession(transport: replay))
        try replay.assertFullyConsumed()
        let live = try await CardImage.read(using: CardSession(transport: VirtualTransport(card: try VirtualCard.named(card), name: "virtual:\(card)")))
        #expect(replayed.jsonText() == live.jsonText())
    }
}
