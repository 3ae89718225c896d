import FeliCa
import FeliCaCards
import FeliCaEmulators
import FeliCaSimulation
import FeliCaTrace
import TestSupport
import Testing

/// A reader that will not forward Polling (or Request System Code) and reports the card's
/// IDm and PMm itself, as some PC/SC readers do: the virtual card behind it.
final class RefusingReader: Transport {
    let card: VirtualCard
    let inner: VirtualTransport
    var name: String { "refusing:" + inner.name }
    var linkLatency: Duration { .zero }

    init(_ name: String) throws {
        card = try VirtualCard.named(name)
        inner = VirtualTransport(card: card, name: "virtual:\(name)")
    }

    func exchange(_ packet: [UInt8], timeout: Duration) async throws(FeliCaError) -> [UInt8] {
        if packet.count >= 2, [CommandCode.polling.rawValue, CommandCode.requestSystemCode.rawValue].contains(packet[1]) {
            throw FeliCaError(.refused, "the reader will not forward this command")
        }
        return try await inner.exchange(packet, timeout: timeout)
    }

    func readerReportedIdentity() async throws(FeliCaError) -> (idm: IDm, pmm: PMm)? {
        (card.systems[0].idm, card.systems[0].pmm)
    }

    func close() async { await inner.close() }
}

/// Traces of sessions that asked the reader, not the card, which card it found.
@Suite struct ReaderIdentityTraceTests {
    static let text = """
        {"format":"felica-trace/1","device":"pcsc"}
        {"t":0.1,"tx":"0600ffff0100","rx":null,"error":"refused","reason":"the reader will not forward Polling","timeout":0.02,"elapsed":0.003}
        {"t":0.11,"readerIdentity":{"idm":"0101120312345678","pmm":"100b4b428485d0ff"},"elapsed":0.002}
        {"t":0.12,"tx":"0a040101120312345678","rx":null,"error":"timeout","reason":"no answer"}
        {"t":0.13,"readerIdentity":null,"error":"cardGone","reason":"the card left"}
        {"t":0.14,"readerIdentity":null}

        """

    @Test func parsesPlacesAndWritesBackTheReadersReports() throws {
        let trace = try Trace.parse(Self.text)
        #expect(trace.exchanges.count == 2)
        #expect(trace.readerIdentities.map(\.after) == [1, 2, 2])
        #expect(trace.readerIdentities.map(\.line) == [3, 5, 6])
        let expectedIDm = try IDm(hex: "0101120312345678"), expectedPMm = try PMm(hex: "100b4b428485d0ff")
        #expect(trace.readerIdentities[0].idm == expectedIDm)
        #expect(trace.readerIdentities[0].pmm == expectedPMm)
        #expect(trace.readerIdentities[1].error?.code == .cardGone)
        #expect(trace.readerIdentities[2].idm == nil && trace.readerIdentities[2].error == nil)
        #expect(trace.exchanges[0].error?.code == .refused)
        // Written back in the same order, and read again to the same trace.
        let again = try Trace.parse(trace.jsonLines())
        #expect(again.exchanges.map(\.tx) == trace.exchanges.map(\.tx))
        #expect(again.readerIdentities.map(\.after) == [1, 2, 2])
        #expect(again.jsonLines() == trace.jsonLines())
        let kinds = lines(trace.jsonLines()).dropFirst().map { $0.contains("\"readerIdentity\"") ? "r" : "x" }
        #expect(kinds == ["x", "r", "x", "r", "r"])
    }

    @Test(arguments: [
        (#"{"readerIdentity":"0101"}"#, #"line 2: "readerIdentity" must be {"idm":…,"pmm":…} or null, found "0101""#),
        (#"{"readerIdentity":{"idm":"0101"}}"#, #"line 2: "readerIdentity" must be {"idm":…,"pmm":…} or null"#),
        (#"{"readerIdentity":{"idm":"0101","pmm":"100b4b428485d0ff"}}"#, "line 2: \"readerIdentity\": the IDm and the PMm are 8 bytes each, found 2 and 8"),
        (#"{"readerIdentity":{"idm":"01zz120312345678","pmm":"100b4b428485d0ff"}}"#, #"line 2: "readerIdentity.idm" is not hex"#),
        (#"{"readerIdentity":null,"tx":"0600ffff0100","rx":null,"error":"timeout"}"#, #"line 2: a line holds either "tx" (an exchange) or "readerIdentity", not both"#),
        (#"{"readerIdentity":null,"error":"nonsense"}"#, #"line 2: "error": unknown error code "nonsense""#),
        (#"{"readerIdentity":{"idm":"0101120312345678","pmm":"100b4b428485d0ff"},"error":"cardGone"}"#, #"line 2: "error" goes with "readerIdentity": null only"#),
    ])
    func damagedReportsNameTheLine(line: String, message: String) throws {
        do {
            _ = try Trace.parse("{\"format\":\"felica-trace/1\"}\n\(line)\n", source: "t.jsonl")
            Issue.record("parsed: \(line)")
        } catch {
            #expect(error.code == .badInput)
            #expect(error.reason.hasPrefix("t.jsonl " + message), "\(error.reason)")
        }
    }

    @Test func listingsShowTheReportsAndTheCaptureLeavesThemOut() throws {
        let trace = try Trace.parse(Self.text)
        let listing = lines(trace.listing())
        #expect(listing.count == 1 + 2 + 1 + 2 + 2)
        #expect(listing[3] == "    0.110000  ⌁  reader reports IDm 0101120312345678 PMm 100b4b428485d0ff  (2.0 ms)")
        #expect(listing[6] == "    0.130000  ⌁  reader asked for the card's IDm and PMm: cardGone: the card left")
        #expect(listing[7] == "    0.140000  ⌁  reader reports no IDm and PMm")
        let json = lines(trace.jsonListing())
        #expect(json.count == 5)
        #expect(json[1] == #"{"readerIdentity":{"idm":"0101120312345678","pmm":"100b4b428485d0ff"},"after":1,"line":3,"t":0.11,"elapsed":0.002}"#)
        #expect(json[3] == #"{"readerIdentity":null,"after":2,"line":5,"t":0.13,"error":"cardGone","reason":"the card left"}"#)
        #expect(json.filter { $0.hasPrefix(#"{"exchange":"#) }.count == 2)
        // Frames are packets: the one response and the two commands; the reports are not packets.
        for format in Pcap.Format.allCases {
            #expect(Pcap.export(trace, format: format).frames == 2)
        }
    }

    @Test func aSessionThroughAReaderThatRefusesPollingReplays() async throws {
        let dir = try Support.scratch()
        defer { Support.cleanUp(dir) }
        let path = dir + "/refusing.jsonl"
        let recorder = try TraceRecorder(wrapping: try RefusingReader("suica"), path: path)
        let live = try await CardReader(depth: .history).read(CardSession(transport: recorder))
        await recorder.close()
        let trace = try Trace.load(path: path)
        #expect(trace.readerIdentities.count == 1)
        #expect(trace.readerIdentities.first?.after == 1)
        #expect(trace.exchanges.first?.error?.code == .refused)

        let replay = try TraceReplay.load(path)
        let replayed = try await CardReader(depth: .history).read(CardSession(transport: replay))
        try replay.assertFullyConsumed()
        #expect(replayed == live)
    }

    @Test func askingTheReaderAtAnotherPointDiverges() async throws {
        let trace = try Trace.parse(Self.text)
        // The code skips the question and sends the next command at once.
        let skipping = TraceReplay(trace, name: "replay:t")
        _ = try? await skipping.exchange([0x06, 0x00, 0xff, 0xff, 0x01, 0x00], timeout: .milliseconds(20))
        do throws(FeliCaError) {
            _ = try await skipping.exchange([0x0a, 0x04, 0x01, 0x01, 0x12, 0x03, 0x12, 0x34, 0x56, 0x78], timeout: .milliseconds(20))
            Issue.record("an exchange was answered where the recording asked the reader")
        } catch {
            #expect(error.replayError?.code == .divergence)
            #expect(error.reason == "replay:t: the recording asked the reader for the card's IDm and PMm (line 3) before exchange 2, but the code sent Request Response IDm=0101120312345678 instead")
        }
        // The code asks the reader before the Polling the recording starts with.
        let early = TraceReplay(trace, name: "replay:t")
        do throws(FeliCaError) {
            _ = try await early.readerReportedIdentity()
            Issue.record("the reader's report was given before its place")
        } catch {
            #expect(error.replayError?.code == .divergence)
            #expect(error.reason == "replay:t: the code asked the reader for the card's IDm and PMm after exchange 0, but the recording has exchange 1 (line 2) there: Polling system=FFFF request=system code slots=1")
        }
        // In order: the report, a recorded failure thrown again, nothing, then the end.
        let inOrder = TraceReplay(trace, name: "replay:t")
        _ = try? await inOrder.exchange([0x06, 0x00, 0xff, 0xff, 0x01, 0x00], timeout: .milliseconds(20))
        let reportedIDm = try IDm(hex: "0101120312345678")
        #expect(try await inOrder.readerReportedIdentity()?.idm == reportedIDm)
        await #expect(throws: FeliCaError(.timeout, "")) {
            try await inOrder.exchange([0x0a, 0x04, 0x01, 0x01, 0x12, 0x03, 0x12, 0x34, 0x56, 0x78], timeout: .milliseconds(20))
        }
        let unused = thrownError { try inOrder.assertFullyConsumed() }
        #expect(unused?.replayError?.code == .divergence)
        await #expect(throws: FeliCaError(.cardGone, "")) { try await inOrder.readerReportedIdentity() }
        #expect(try await inOrder.readerReportedIdentity()?.idm == nil)
        try inOrder.assertFullyConsumed()
        let afterTheEnd = await thrownError { try await inOrder.readerReportedIdentity() }
        #expect(afterTheEnd?.replayError?.code == .divergence)
    }

    @Test func aTraceWithoutReportsRefusesTheQuestion() async throws {
        let replay = try TraceReplay.load(Support.tracesDirectory + "/suica-balance.jsonl")
        let refused = await thrownError { try await replay.readerReportedIdentity() }
        #expect(refused?.code == .transportFailure && refused?.replayError?.code == .divergence)
    }
}

/// The balance of the sample Suica recorded through pcscd and vpcd, the virtual reader
/// refusing Polling and Request System Code (`felica-sim vpcd --dialect sony --refuse
/// polling,request-system-code`, `felica balance --device pcsc --trace …`).
@Suite struct CommittedRefusingReaderTraceTests {
    static let path = Support.root + "/Tests/Dissector/suica-balance-refusing-reader.jsonl"

    @Test func replaysToWhatTheRefusingReaderGivesLive() async throws {
        let trace = try Trace.load(path: Self.path)
        #expect(trace.readerIdentities.map(\.after) == [1])
        let replay = TraceReplay(trace, name: "replay:refusing")
        let replayed = try await CardReader(depth: .balance).read(CardSession(transport: replay))
        try replay.assertFullyConsumed()
        let live = try await CardReader(depth: .balance).read(CardSession(transport: try RefusingReader("suica")))
        #expect(replayed == live)
        #expect(replayed.purses.map(\.balance) == [1234])
    }
}
