import FeliCaEmulators
import FeliCaSimulation
import FeliCaTrace
import Foundation
import TestSupport
import Testing
import FeliCaCards

/// `--trace` and `replay:` through the built `felica` executable (golden: a replay prints
/// exactly what the recorded run printed).
@Suite struct CLIReplayTests {
    /// Runs the built `felica`.
    static func felica(_ arguments: [String]) throws -> RunResult { try runFelica(arguments) }

    /// The card commands this build has (`history` arrives with the card profiles).
    static let commands: [String] = ["poll", "dump", "balance", "history", "ndef"].filter { (try? felica(["help", $0]).status) == 0 }

    static let runs: [(card: String, command: String, json: Bool)] =
        SampleCards.names.flatMap { card in commands.flatMap { cmd in [(card, cmd, false), (card, cmd, true)] } }

    @Test(arguments: runs)
    func replayPrintsExactlyWhatTheRecordedRunPrinted(card: String, command: String, json: Bool) throws {
        let dir = try Support.scratch()
        defer { Support.cleanUp(dir) }
        let trace = dir + "/t.jsonl"
        let extra = json ? ["--json"] : []
        let live = try Self.felica([command, "--device", "virtual:\(card)", "--trace", trace] + extra)
        let replayed = try Self.felica([command, "--device", "replay:\(trace)"] + extra)
        #expect(replayed.stdout == live.stdout)
        #expect(replayed.status == live.status, "\(replayed.stderr)")
        #expect(!live.stdout.isEmpty || live.status != 0)
        #expect(try Trace.load(path: trace).device == "virtual:\(card)")
    }

    /// The committed traces still replay to what the live sample card prints; when this
    /// fails after an intended change to a session, run scripts/record-traces.sh.
    @Test(arguments: CommittedTraceTests.files)
    func committedTracesReplayLikeTheLiveCard(file: String) throws {
        let base = String(file.dropLast(".jsonl".count))
        let dash = try #require(base.lastIndex(of: "-"))
        let card = String(base[..<dash]), command = String(base[base.index(after: dash)...])
        try #require(Self.commands.contains(command), "\(file): this build has no `felica \(command)`")
        let live = try Self.felica([command, "--device", "virtual:\(card)"])
        let replayed = try Self.felica([command, "--device", "replay:\(Support.tracesDirectory)/\(file)"])
        #expect(replayed.stdout == live.stdout, "\(file): \(replayed.stderr) — re-record with scripts/record-traces.sh if the session changed on purpose")
        #expect(replayed.status == live.status)
    }

    /// A trace of one command replayed for `balance` stops at the first exchange that
    /// differs, with exit 1 and nothing on stdout.
    @Test func anotherCommandsTraceDiverges() throws {
        let dir = try Support.scratch()
        defer { Support.cleanUp(dir) }
        let trace = dir + "/t.jsonl"
        let source = Self.commands.contains("history") ? "history" : "dump"
        let recorded = try Self.felica([source, "--device", "virtual:suica", "--trace", trace])
        #expect(recorded.status == 0)
        let r = try Self.felica(["balance", "--device", "replay:\(trace)"])
        #expect(r.status == 1)
        #expect(r.stdout.isEmpty)
        #expect(r.stderr.hasPrefix("Error: replay:\(trace): exchange "))
        #expect(r.stderr.contains("differs from the recording"))
        #expect(r.stderr.contains("^^ first difference at byte "))
    }

    @Test func damagedTracesNameTheLineAndLenientReplayUsesWhatIsLeft() throws {
        let dir = try Support.scratch()
        defer { Support.cleanUp(dir) }
        let good = dir + "/good.jsonl", cut = dir + "/cut.jsonl"
        #expect(try Self.felica(["dump", "--device", "virtual:suica", "--trace", good]).status == 0)
        let text = try Support.text(good)
        let keep = lines(text).prefix(4).map { $0 + "\n" }.joined()  // header and 3 exchanges
        try Support.write(keep + lines(text)[4].prefix(20), to: cut)

        let strict = try Self.felica(["dump", "--device", "replay:\(cut)"])
        #expect(strict.status == 1)
        #expect(strict.stderr.hasPrefix("Error: \(cut) line 5, column "))
        #expect(strict.stderr.contains("the line is cut off"))

        let lenient = try Self.felica(["dump", "--device", "replay:\(cut)?lenient"])
        #expect(lenient.status == 1)
        #expect(lenient.stderr.hasPrefix("warning: \(cut) line 5"))
        #expect(lenient.stderr.contains("replaying the 3 exchanges before the damage"))
        #expect(lenient.stderr.contains("exchange 4 (Search Service Code"))
        #expect(lenient.stderr.contains("the trace ends after 3 exchanges; the lenient replay stopped at the damage"))

        let unknown = try Self.felica(["dump", "--device", "replay:\(cut)?fast"])
        #expect(unknown.status == 64)
        #expect(unknown.stderr.contains("device option 'fast' is not known to replay devices (they take: lenient)"), "\(unknown.stderr)")
    }

    @Test func traceShowListsAndExportWritesAPcap() throws {
        let dir = try Support.scratch()
        defer { Support.cleanUp(dir) }
        let path = Support.tracesDirectory + "/suica-dump.jsonl"
        let show = try Self.felica(["trace", "show", path])
        #expect(show.status == 0)
        let loaded = try Trace.load(path: path)
        #expect(show.stdout == loaded.listing())
        let export = try Self.felica(["trace", "export", path, "--pcap", dir + "/t.pcap", "--format", "pcap"])
        #expect(export.status == 0)
        let frames = Pcap.export(try Trace.load(path: path)).frames
        #expect(export.stderr == "wrote \(frames) frames to \(dir)/t.pcap (pcap)\n")
        let pcap = Data(Pcap.export(try Trace.load(path: path)).bytes)
        #expect(try Data(contentsOf: URL(fileURLWithPath: dir + "/t.pcap")) == pcap)
        #expect(try Self.felica(["trace", "export", path]).status == 64)
        let missing = try Self.felica(["trace", "show", dir + "/none.jsonl"])
        #expect(missing.status == 1)
        #expect(missing.stderr == "Error: cannot open trace \(dir)/none.jsonl: No such file or directory\n")
    }

    @Test func aTraceFileThatCannotBeCreatedStopsTheCommand() throws {
        let r = try Self.felica(["poll", "--device", "virtual:suica", "--trace", "/nonexistent-dir/t.jsonl"])
        #expect(r.status == 1)
        #expect(r.stdout.isEmpty)
        #expect(r.stderr == "Error: cannot create /nonexistent-dir/t.jsonl: No such file or directory\n")
    }
}
