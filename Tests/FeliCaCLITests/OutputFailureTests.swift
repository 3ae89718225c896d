import Foundation
import Testing

/// Output that cannot be written is an error: a command whose data went nowhere never
/// exits 0. A reader that goes away (a closed pipe) may end a command quietly.
@Suite struct OutputFailureTests {
    static let suica = ["--device", "virtual:suica"]

    /// Every command that writes output (typed, and in a property: Swift 6.0's type checker
    /// gives up on the list inside `@Test(arguments:)`).
    static let commands: [[String]] = [
        ["balance", "--json"] + suica, ["balance"] + suica, ["history"] + suica, ["history", "--json"] + suica,
        ["poll"] + suica, ["poll", "--json"] + suica, ["dump"] + suica, ["dump", "--json"] + suica,
        ["read", "--service", "090f"] + suica, ["watch", "--count", "1"] + suica, ["watch", "--json", "--count", "1"] + suica,
        ["devices"], ["devices", "--json"], ["order"], ["order", "--json"], ["order", "--plist"],
        ["bench", "order", "--positions", "0-2"], ["bench", "order", "--positions", "0-2", "--json"],
        ["trace", "show", "Tests/Traces/suica-balance.jsonl"],
        ["doctor", "--root", "Tests/FeliCaCLITests/Fixtures/doctor/ready"],
        ["help"], ["poll", "--help"], ["--version"], ["--generate-manual"], ["--generate-completion-script", "bash"],
    ]

    @Test(arguments: commands)
    func aFullDiskFailsTheCommand(_ args: [String]) throws {
        let args = args.map { $0.hasPrefix("Tests/") ? packageRoot.appendingPathComponent($0).path : $0 }
        let r = try run(args, stdout: "/dev/full")
        #expect(r.status != 0, "\(args) exited 0 with its output lost")
        #expect(r.stderr.contains("Error: cannot write the output: No space left on device"), "\(args): \(r.stderr)")
    }

    @Test func dumpNeverReportsAFileItCouldNotWrite() throws {
        let full = try run(["dump", "--output", "/dev/full"] + Self.suica)
        #expect(full.status == 1)
        #expect(full.stderr == "Error: cannot write /dev/full: No space left on device\n", "\(full.stderr)")
        let missing = try run(["dump", "--json", "--output", "/nonexistent-dir/card.json"] + Self.suica)
        #expect(missing.status == 1)
        #expect(missing.stderr.hasPrefix("Error: cannot write /nonexistent-dir/card.json: No such file or directory"), "\(missing.stderr)")
        // The device is still a device: writing to it never replaces it with a file.
        var st = stat()
        #expect(stat("/dev/full", &st) == 0 && (st.st_mode & S_IFMT) == S_IFCHR)
    }

    @Test func filesOtherCommandsWriteToo() throws {
        let trace = packageRoot.appendingPathComponent("Tests/Traces/suica-balance.jsonl").path
        let pcap = try run(["trace", "export", trace, "--pcap", "/dev/full"])
        #expect(pcap.status == 1)
        #expect(pcap.stderr.contains("cannot write /dev/full"), "\(pcap.stderr)")
        let plot = try run(["bench", "order", "--positions", "0-2", "--plot", "/dev/full"])
        #expect(plot.status == 1)
        #expect(plot.stderr.contains("cannot write /dev/full"), "\(plot.stderr)")
    }

    @Test func aClosedPipeEndsQuietly() throws {
        let r = try run(program: "/bin/bash", ["-c", "set -o pipefail; felica history --device virtual:wallet | head -1"])
        #expect(r.stdout.count > 0)
        #expect(r.stderr.isEmpty, "\(r.stderr)")
    }
}

extension OutputFailureTests {
    /// A watch without --count whose output cannot be written stops rather than reading
    /// cards into the void.
    @Test func watchStopsWhenItsOutputFails() throws {
        let r = try run(["watch", "--interval", "0", "--device", "virtual:suica"], stdout: "/dev/full")
        #expect(r.status == 1)
        #expect(r.stderr.contains("Error: cannot write the output: No space left on device"), "\(r.stderr)")
    }
}
