import FeliCa
import FeliCaJSON
import FeliCaEmulators
import FeliCaSimulation
import FeliCaTrace
import TestSupport
import Testing
import FeliCaCards

/// Recording a real session against the virtual card, then replaying it.
@Suite struct RecordReplayTests {
    @Test func recordingThenReplayGivesTheSameCard() async throws {
        let dir = try Support.scratch()
        defer { Support.cleanUp(dir) }
        let path = dir + "/suica.jsonl"
        let live = try await Support.recordDump(card: "suica", to: path)

        let trace = try Trace.load(path: path)
        #expect(trace.device == "virtual:suica")
        #expect(trace.started.map { TraceFileProbe.isISO8601UTC($0) } == true)
        let written = lines(try Support.text(path))
        #expect(trace.exchanges.count == written.count - 1)
        #expect(trace.exchanges.first.map { PacketDescription.command($0.tx) } == "Polling system=FFFF request=system code slots=1")

        let replay = try TraceReplay.load(path)
        #expect(replay.name == "replay:\(path)")
        let replayed = try await CardImage.read(using: CardSession(transport: replay))
        try replay.assertFullyConsumed()
        #expect(replayed.jsonText() == live.jsonText())
        #expect(replay.consumed == trace.exchanges.count)
    }

    @Test func everyExchangeIsOnDiskBeforeItReturns() async throws {
        let dir = try Support.scratch()
        defer { Support.cleanUp(dir) }
        let path = dir + "/live.jsonl"
        let card = try VirtualCard.named("suica")
        let recorder = try TraceRecorder(wrapping: VirtualTransport(card: card, name: "virtual:suica"), path: path)
        #expect(try lineCount(path) == 1)  // the header, before any exchange
        let session = CardSession(transport: recorder)
        let target = try await session.detect()
        #expect(try lineCount(path) == 2)
        _ = try await session.systemCodes(of: target)
        #expect(try lineCount(path) == 3)
        // Never closed, as after a crash: what is on disk already parses as a whole trace.
        let partial = try Trace.load(path: path)
        #expect(partial.exchanges.count == 2)
        #expect(recorder.exchangeCount == 2)
    }

    @Test func failuresAreRecordedAndReplayedWithTheirCode() async throws {
        let dir = try Support.scratch()
        defer { Support.cleanUp(dir) }
        let path = dir + "/pulled.jsonl"
        let card = try VirtualCard.named("suica")
        card.removeAfter(exchanges: 1)  // the card leaves after answering Polling
        let recorder = try TraceRecorder(wrapping: VirtualTransport(card: card, name: "virtual:suica"), path: path)
        var options = CardSession.Options()
        options.retries = 0
        let session = CardSession(transport: recorder, options: options)
        let target = try await session.detect()
        let recordedError = await thrownError {
            try await session.read(service: 0x008B, blocks: 0..<1, from: target)
        }
        #expect(recordedError != nil, "expected a FeliCaError")
        await recorder.close()

        let text = try Support.text(path)
        let last = try JSONValue.parse(String(lines(text).last!))
        #expect(last["rx"] == .null)
        #expect(last["error"] == .string("timeout"))
        #expect(last["elapsed"]?.doubleValue != nil)
        #expect(last["timeout"]?.doubleValue != nil)

        let replay = try TraceReplay.load(path)
        let replaySession = CardSession(transport: replay, options: options)
        #expect(try await replaySession.detect() == target)
        let replayedError = await thrownError {
            try await replaySession.read(service: 0x008B, blocks: 0..<1, from: target)
        }
        #expect(replayedError != nil, "expected a FeliCaError")
        #expect(replayedError?.code == recordedError?.code)
        #expect(replayedError?.reason.contains("exchange 2 (recorded)") == true)
        try replay.assertFullyConsumed()
    }

    @Test func recorderRefusesAFileItCannotWrite() async throws {
        let card = try VirtualCard.named("suica")
        #expect(throws: FeliCaError.badInputCode) {
            try TraceRecorder(wrapping: VirtualTransport(card: card, name: "virtual:suica"), path: "/nonexistent-dir/t.jsonl")
        }
        // /dev/full accepts the open and fails the first write (ENOSPC), like a full disk.
        let error = thrownError {
            try TraceRecorder(wrapping: VirtualTransport(card: card, name: "virtual:suica"), path: "/dev/full")
        }
        #expect(error != nil, "expected a FeliCaError")
        #expect(error?.reason.contains("/dev/full") == true)
        #expect(error?.reason.contains("No space left") == true)
    }

    @Test func aRecordingOfAReplayIsTheSameTrace() async throws {
        let dir = try Support.scratch()
        defer { Support.cleanUp(dir) }
        let first = dir + "/first.jsonl", second = dir + "/second.jsonl"
        _ = try await Support.recordDump(card: "suica", to: first)
        let replay = try TraceReplay.load(first)
        let recorder = try TraceRecorder(wrapping: replay, path: second)
        _ = try await CardImage.read(using: CardSession(transport: recorder))
        await recorder.close()
        let a = try Trace.load(path: first), b = try Trace.load(path: second)
        #expect(b.device == "replay:\(first)")
        #expect(a.exchanges.map(\.tx) == b.exchanges.map(\.tx))
        #expect(a.exchanges.map(\.rx) == b.exchanges.map(\.rx))
    }
}

/// Divergence, exhaustion and the consumed check, on hand-made traces.
@Suite struct ReplayFailureTests {
    static let idm = "0101120312345678"
    static let poll = "0600ffff0100"
    static let pollReply = "1401\(idm)100b4b428485d0ff0003"
    static let readBalance = "1006\(idm)018b00018000"
    static let trace = """
        {"format":"felica-trace/1","device":"virtual:suica","started":"2026-11-29T10:00:00Z"}
        {"t":0,"tx":"\(poll)","rx":"\(pollReply)","timeout":0.0068,"elapsed":0.0001}
        {"t":0.001,"tx":"\(readBalance)","rx":"1d07\(idm)000001\(String(repeating: "00", count: 16))","timeout":0.01,"elapsed":0.0002}

        """

    func replay() throws -> TraceReplay { TraceReplay(try Trace.parse(Self.trace, source: "t.jsonl"), name: "replay:t.jsonl") }

    /// (what the code sends second, the byte the caret must point at, words of the message).
    static let divergences: [(sent: String, byte: Int, words: [String])] = [
        // Another service in the same command: service list differs at byte 11.
        ("1006\(idm)010f09018000", 11, ["first difference at byte 11", "services=[090F]", "services=[008B]"]),
        // Another IDm: byte 2 onwards.
        ("1006" + "0101120312345679" + "018b00018000", 9, ["first difference at byte 9"]),
        // A longer command (two blocks instead of one): LEN differs, the mark goes to the
        // block count, the first difference after it.
        ("1206\(idm)018b000280008001", 13, ["first difference at byte 13 (LEN differs too: expected 16 bytes, actual 18)", "blocks=0…1"]),
        // Not a command the codec knows.
        ("03ff00", 1, ["undecodable command", "first difference at byte 1 (LEN differs too"]),
        // The same command cut short: the rest is missing.
        ("1006\(idm)018b0001", 14, ["the code sent 2 fewer byte(s)"]),
    ]

    @Test(arguments: divergences)
    func divergenceNamesTheExchangeAndMarksTheFirstDifferingByte(sent: String, byte: Int, words: [String]) async throws {
        let replay = try replay()
        _ = try await replay.exchange(Hex.decode(Self.poll)!, timeout: .milliseconds(10))
        let error = await thrownError {
            try await replay.exchange(Hex.decode(sent)!, timeout: .milliseconds(10))
        }
        #expect(error != nil, "expected a FeliCaError")
        let e = try #require(error)
        #expect(e.code == .divergence)
        #expect(e.reason.contains("replay:t.jsonl: exchange 2 (line 3) differs from the recording"))
        #expect(e.reason.contains("expected  \(Self.readBalance)"))
        #expect(e.reason.contains("actual    \(sent)"))
        for w in words { #expect(e.reason.contains(w), "\(w) in \(e.reason)") }
        // The caret sits under byte `byte` of the hex lines.
        let reasonLines = e.reason.split(separator: "\n")
        let hexLine = try #require(reasonLines.first { $0.hasPrefix("  actual    \(sent.prefix(2))") })
        let caretLine = try #require(reasonLines.last)
        let hexStart = hexLine.distance(from: hexLine.startIndex, to: hexLine.range(of: sent)!.lowerBound)
        let caret = caretLine.distance(from: caretLine.startIndex, to: caretLine.firstIndex(of: "^")!)
        #expect(caret == hexStart + 2 * byte)
        // The replay stays failed: later calls and the final check report the same divergence.
        await #expect(throws: FeliCaError(.divergence, "")) {
            try await replay.exchange(Hex.decode(Self.readBalance)!, timeout: .milliseconds(10))
        }
        #expect(throws: FeliCaError(.divergence, "")) { try replay.assertFullyConsumed() }
    }

    @Test func runningOutIsExhausted() async throws {
        let replay = try replay()
        _ = try await replay.exchange(Hex.decode(Self.poll)!, timeout: .milliseconds(10))
        _ = try await replay.exchange(Hex.decode(Self.readBalance)!, timeout: .milliseconds(10))
        try replay.assertFullyConsumed()
        let error = await thrownError {
            try await replay.exchange(Hex.decode(Self.poll)!, timeout: .milliseconds(10))
        }
        #expect(error != nil, "expected a FeliCaError")
        #expect(error?.code == .exhausted)
        #expect(error?.reason.contains("exchange 3 (Polling system=FFFF") == true)
        #expect(error?.reason.contains("the trace ends after 2 exchanges") == true)
    }

    @Test func unusedExchangesFailTheConsumedCheck() async throws {
        let replay = try replay()
        _ = try await replay.exchange(Hex.decode(Self.poll)!, timeout: .milliseconds(10))
        let error = thrownError { try replay.assertFullyConsumed() }
        #expect(error != nil, "expected a FeliCaError")
        #expect(error?.code == .divergence)
        #expect(error?.reason.contains("only 1 of 2 recorded exchanges were used") == true)
        #expect(error?.reason.contains("exchange 2 (line 3): Read Without Encryption") == true)
    }

    @Test func aClosedReplayRefusesExchanges() async throws {
        let replay = try replay()
        await replay.close()
        await #expect(throws: FeliCaError(.readerGone, "")) {
            try await replay.exchange(Hex.decode(Self.poll)!, timeout: .milliseconds(10))
        }
    }

    @Test func lenientReplayUsesTheExchangesBeforeTheDamage() async throws {
        let cut = String(Self.trace.dropLast(30))  // the last line ends mid-string
        #expect(throws: FeliCaError.badInputCode) { try Trace.parse(cut, source: "t.jsonl") }
        let trace = try Trace.parse(cut, source: "t.jsonl", lenient: true)
        #expect(trace.exchanges.count == 1)
        #expect(trace.damage?.reason.contains("t.jsonl line 3") == true)
        let replay = TraceReplay(trace, name: "replay:t.jsonl?lenient")
        #expect(try await replay.exchange(Hex.decode(Self.poll)!, timeout: .milliseconds(10)) == Hex.decode(Self.pollReply)!)
        let error = await thrownError {
            try await replay.exchange(Hex.decode(Self.readBalance)!, timeout: .milliseconds(10))
        }
        #expect(error != nil, "expected a FeliCaError")
        #expect(error?.code == .exhausted)
        #expect(error?.reason.contains("the lenient replay stopped at the damage: t.jsonl line 3") == true)
    }
}

extension FeliCaError {
    /// Matches any `.badInput` error.
    static let badInputCode = FeliCaError(.badInput, "bad input")
}

/// Checks on the header's time stamp.
enum TraceFileProbe {
    /// `YYYY-MM-DDTHH:MM:SSZ`.
    static func isISO8601UTC(_ s: String) -> Bool {
        let u = Array(s.utf8)
        guard u.count == 20, u.last == UInt8(ascii: "Z") else { return false }
        for (i, c) in u.dropLast().enumerated() {
            switch i {
            case 4, 7: if c != UInt8(ascii: "-") { return false }
            case 10: if c != UInt8(ascii: "T") { return false }
            case 13, 16: if c != UInt8(ascii: ":") { return false }
            default: if !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains(c) { return false }
            }
        }
        return true
    }
}
