import FeliCa
import FeliCaCards
import FeliCaEmulators
import FeliCaSimulation
import FeliCaTrace
import Synchronization
import Testing

/// A session that moves to 424 kbps: the trace says at which rate each exchange ran, the
/// listings show the switch, and a replay holds the code to the same rates.
@Suite struct BitRateTraceTests {
    func recordHistory(to path: String) async throws -> CardReport {
        let card = try VirtualCard.named("suica")
        let link = VirtualTransport(card: card, name: "virtual:suica", bitRates: [.kbps212, .kbps424])
        let recorder = try TraceRecorder(wrapping: link, path: path)
        let report = try await CardReader(depth: .history).read(CardSession(transport: recorder))
        await recorder.close()
        return report
    }

    @Test func exchangesAfterTheSwitchAreRecordedAt424() async throws {
        let dir = try Support.scratch()
        defer { Support.cleanUp(dir) }
        let path = dir + "/history.jsonl"
        _ = try await recordHistory(to: path)
        let trace = try Trace.load(path: path)
        // Polling (system code), Polling (communication performance), then the reads.
        #expect(trace.exchanges.count >= 3)
        #expect(trace.exchanges[0].bitRate == .kbps212)
        #expect(trace.exchanges[1].bitRate == .kbps212)
        #expect(PacketDescription.command(trace.exchanges[1].tx).contains("communication performance"))
        #expect(trace.exchanges.dropFirst(2).allSatisfy { $0.bitRate == .kbps424 })
        let lines = try Support.text(path).split(separator: "\n")
        #expect(!lines[1].contains("\"rate\"") && !lines[2].contains("\"rate\""))
        #expect(lines.dropFirst(3).allSatisfy { $0.hasSuffix(",\"rate\":424}") })

        let listing = trace.listing()
        #expect(listing.contains("⇄  bit rate 212 → 424 kbps"))
        #expect(listing.components(separatedBy: "⇄").count == 2)
        #expect(trace.jsonListing().split(separator: "\n").dropFirst(2).allSatisfy { $0.contains("\"rate\":424") })
    }

    @Test func replayFollowsTheRecordedRates() async throws {
        let dir = try Support.scratch()
        defer { Support.cleanUp(dir) }
        let path = dir + "/history.jsonl"
        let live = try await recordHistory(to: path)
        let replay = try TraceReplay.load(path)
        #expect(replay.bitRates == [.kbps212, .kbps424])
        #expect(replay.bitRate == .kbps212)
        let replayed = try await CardReader(depth: .history).read(CardSession(transport: replay))
        try replay.assertFullyConsumed()
        #expect(replayed.purses == live.purses)

        // The same code that stays at 212 kbps diverges at the first exchange recorded at 424.
        let again = try TraceReplay.load(path)
        var reader = CardReader(depth: .history)
        reader.usesFastestBitRate = false
        await #expect {
            _ = try await reader.read(CardSession(transport: again))
        } throws: { error in
            guard let e = error as? FeliCaError else { return false }
            return e.code == .transportFailure && e.replayError?.code == .divergence
        }
    }

    @Test func aReplayRecordedAt212OffersNoOtherRate() async throws {
        let replay = try TraceReplay.load(Support.tracesDirectory + "/suica-history.jsonl")
        #expect(replay.bitRates == [.kbps212])
        await #expect(throws: FeliCaError.self) { try await replay.switchBitRate(to: .kbps424) }
    }

    @Test func aBadRateIsNamedWithItsLine() throws {
        let text = """
            {"format":"felica-trace/1"}
            {"t":0,"tx":"0600ffff0100","rx":null,"error":"timeout","rate":300}

            """
        #expect {
            _ = try Trace.parse(text, source: "t.jsonl")
        } throws: { ($0 as? FeliCaError)?.reason == "t.jsonl line 2: \"rate\" must be 212 or 424 (kbps), found 300" }
    }

    @Test func theHeaderKeepsTheLinkLatencyAndTheReplayReportsIt() throws {
        let text = "{\"format\":\"felica-trace/1\",\"device\":\"usb\",\"linkLatency\":0.0082}\n"
        let trace = try Trace.parse(text)
        #expect(trace.linkLatency == 0.0082)
        #expect(trace.headerLine() == "{\"format\":\"felica-trace/1\",\"device\":\"usb\",\"linkLatency\":0.0082}")
        #expect(TraceReplay(trace, name: "r").linkLatency == .microseconds(8200))
        #expect(TraceReplay(Trace(), name: "r").linkLatency == .zero)
        #expect(throws: FeliCaError.self) { try Trace.parse("{\"format\":\"felica-trace/1\",\"linkLatency\":-1}\n") }
    }

    @Test func liveTraceTellsOfTheSwitch() async throws {
        let lines = Mutex<[String]>([])
        let link = VirtualTransport(card: try VirtualCard.named("suica"), name: "virtual:suica", bitRates: [.kbps212, .kbps424])
        let live = LiveTrace(wrapping: link) { line in lines.withLock { $0.append(line) } }
        let session = CardSession(transport: live)
        let first = try await session.detect()
        #expect(try await session.useFastestBitRate(for: first) == .kbps424)
        #expect(link.bitRate == .kbps424)
        #expect(lines.withLock { $0 }.last?.contains("⇄  bit rate 212 → 424 kbps") == true)
    }
}
