import Foundation
import Testing

/// The command line itself: global options, values, help, suggestions.
@Suite struct CommandLineTests {
    @Test(arguments: [
        ["--verbose", "balance", "--device", "virtual:suica"],
        ["-v", "balance", "--device", "virtual:suica"],
        ["balance", "--device", "virtual:suica", "--verbose"],
        ["balance", "-v", "--device", "virtual:suica"],
    ])
    func globalOptionsGoBeforeOrAfterTheCommand(_ args: [String]) throws {
        let r = try run(args)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.hasPrefix("Transit IC"))
        // Every frame on stderr, decoded as `trace show` lists it.
        #expect(r.stderr.hasPrefix("#1  0.0"), "\(r.stderr)")
        #expect(r.stderr.contains("→  Polling system=FFFF"))
        #expect(r.stderr.contains("←  Read Without Encryption response"))
    }

    @Test func withoutVerboseNoFrames() throws {
        let r = try run(["balance", "--device", "virtual:suica"])
        #expect(r.status == 0)
        #expect(r.stderr.isEmpty, "\(r.stderr)")
    }

    @Test func verboseShowsDoctorsPollsToo() throws {
        let r = try run(["-v", "doctor", "--root", fixture("doctor/ready"), "--device", "virtual:suica"])
        #expect(r.stderr.contains("→  Polling system=FFFF"), "\(r.stderr)")
        #expect(r.stderr.contains("←  Polling response"), "\(r.stderr)")
    }

    @Test func verboseShowsAFailedExchange() throws {
        let r = try run(["-v", "poll", "--system-code", "1234", "--device", "virtual:suica"])
        #expect(r.stderr.contains("→  Polling system=1234"), "\(r.stderr)")
        #expect(r.stderr.contains("✕  timeout"), "\(r.stderr)")
    }

    @Test func aValueOptionNeverTakesTheNextOption() throws {
        let r = try run(["read", "--service", "--device", "virtual:suica"])
        #expect(r.status == 64)
        #expect(r.stderr.hasPrefix("Error: option '--service' needs a value <hex>"), "\(r.stderr)")
        // A value that starts with '-' can still be given with '='; here it is no service code.
        let eq = try run(["read", "--service=-1", "--device", "virtual:suica"])
        #expect(eq.status == 64)
        #expect(eq.stderr.hasPrefix("Error: option '--service': \"-1\" is not a service code"), "\(eq.stderr)")
    }

    @Test func optionAtTheEndWithoutItsValue() throws {
        let r = try run(["poll", "--device"])
        #expect(r.status == 64)
        #expect(r.stderr.hasPrefix("Error: option '--device' needs a value <device>"), "\(r.stderr)")
    }

    @Test func helpHelpExplainsHelp() throws {
        let r = try run(["help", "help"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.hasPrefix("OVERVIEW: Show subcommand help information."))
        #expect(r.stdout.contains("USAGE: felica help [<subcommands> ...]"))
    }

    @Test func helpOfNestedCommandsAndMistakes() throws {
        let helpTraceShow = try run(["help", "trace", "show"]).stdout
        #expect(try run(["trace", "show", "--help"]).stdout == helpTraceShow)
        let bad = try run(["help", "blance"])
        #expect(bad.status == 64)
        #expect(bad.stderr.hasPrefix("Error: unknown command 'blance'; did you mean 'balance'?"), "\(bad.stderr)")
        let help = try run(["help"]).stdout
        #expect(try run(["--help"]).stdout == help)
        #expect(try run(["--help"]).stdout.contains("\n  help                    Show subcommand help information.\n"))
    }

    @Test(arguments: [
        (["blance"], "Error: unknown command 'blance'; did you mean 'balance'?"),
        (["hist"], "Error: unknown command 'hist'; did you mean 'history'?"),
        (["trace", "shwo"], "Error: unknown command 'shwo'; did you mean 'show'?"),
        (["poll", "--jsn"], "Error: unknown option '--jsn'; did you mean '--json'?"),
        (["--verbos", "poll"], "Error: unknown option '--verbos'; did you mean '--verbose'?"),
        (["poll", "--dialect", "sny"], "Error: option '--dialect': 'sny' is not one of acr122u, part3, sony, raw; did you mean 'sony'?"),
        (["order", "--model", "iso"], "Error: option '--model': 'iso' is not one of ios, rf; did you mean 'ios'?"),
        (["bench", "order", "--card", "suca"], "Error: option '--card': no built-in card named 'suca'"),
        (["bench", "order", "--card", "wallte"], "did you mean 'wallet'?"),
        (["poll", "--zzzzzz"], "Error: unknown option '--zzzzzz'\n"),
    ] as [([String], String)])
    func mistakesGetASuggestion(_ args: [String], _ message: String) throws {
        let r = try run(args)
        #expect(r.status == 64)
        #expect(r.stderr.contains(message), "\(r.stderr)")
        #expect(r.stderr.contains("\nUsage: felica"))
    }

    @Test func simCardNamesGetASuggestion() throws {
        let r = try run(["pn532", "--card", "nanac"], executable: "felica-sim")
        #expect(r.status == 64)
        #expect(r.stderr.contains("did you mean 'nanaco'?"), "\(r.stderr)")
    }

    /// The emulator's server names the path it cannot link; felica-sim names the option.
    @Test func aLinkOverAFileIsRefusedNamingTheOption() throws {
        let path = temporaryPath("not-a-link")
        _ = creat(path, 0o600)
        defer { unlink(path) }
        let r = try run(["pn532", "--card", "suica", "--link", path], executable: "felica-sim")
        #expect(r.status != 0)
        #expect(r.stderr.contains("--link \(path): a file of that name exists and is not a symlink"), "\(r.stderr)")
        var st = stat()
        #expect(lstat(path, &st) == 0 && st.st_mode & S_IFMT == S_IFREG)
    }

    /// The MQTT address parser says a password does not go in the address; felica names
    /// the option it goes in.
    @Test func aPasswordInTheMQTTAddressNamesItsOption() throws {
        let r = try run(["watch", "--mqtt", "mqtt://u:pw@host/t"])
        #expect(r.status == 64)
        #expect(r.stderr.contains("a password does not go in the address: give it in a file with --mqtt-password-file"), "\(r.stderr)")
    }

    @Test(arguments: [40, 60, 100, 200])
    func helpIsWrappedToColumns(_ columns: Int) throws {
        for args in [["--help"], ["bench", "order", "--help"], ["order", "--help"], ["poll", "--help"]] {
            let r = try run(args, environment: ["COLUMNS": String(columns)])
            #expect(r.status == 0)
            for line in r.stdout.split(separator: "\n") where line.count > columns {
                // Only a single word longer than the line may stick out.
                #expect(!line.trimmingCharacters(in: .whitespaces).contains(" "), "\(args): \(line.count) > \(columns): \(line)")
            }
        }
    }

    @Test func helpKeepsDescriptionsInTheirColumn() throws {
        let r = try run(["poll", "--help"], environment: ["COLUMNS": "60"])
        let lines = r.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        let start = lines.firstIndex(of: "OPTIONS:")!
        for line in lines[(start + 1)...] where !line.isEmpty {
            // A continuation line starts in the description column (26), as swift-argument-parser's do.
            if !line.hasPrefix("  -") {
                #expect(line.hasPrefix(String(repeating: " ", count: 26)) && !line.hasPrefix(String(repeating: " ", count: 27)), "\(line)")
            }
        }
    }

    @Test func pipedHelpIs80Wide() throws {
        let r = try run(["bench", "order", "--help"])
        #expect(r.stdout.split(separator: "\n").allSatisfy { $0.count <= 80 })
        #expect(r.stdout.split(separator: "\n").contains { $0.count > 70 })
    }
}

/// Colour on a terminal (a pseudo-terminal from script(1)), none when piped or with NO_COLOR.
@Suite struct ColourTests {
    static let red = "\u{1B}[31m", green = "\u{1B}[32m", yellow = "\u{1B}[33m"

    /// Runs `felica` on a pseudo-terminal; stdout and stderr both arrive on it.
    func onTerminal(_ arguments: [String], environment: [String: String] = [:]) throws -> RunResult {
        let line = (["felica"] + arguments).map { "'\($0)'" }.joined(separator: " ")
        return try run(program: "/usr/bin/script", ["-qec", line, "/dev/null"], environment: environment)
    }

    @Test func doctorVerdictsAreColouredOnATerminalOnly() throws {
        let root = fixture("doctor/blocked")
        let tty = try onTerminal(["doctor", "--root", root])
        #expect(tty.stdout.contains(Self.green + "ok\u{1B}[0m"), "\(tty.stdout)")
        #expect(tty.stdout.contains(Self.red + "problem\u{1B}[0m"), "\(tty.stdout)")
        let piped = try run(["doctor", "--root", root])
        #expect(!piped.stdout.contains("\u{1B}["))
        #expect(piped.stdout.contains("\nproblem  "))
        let noColour = try onTerminal(["doctor", "--root", root], environment: ["NO_COLOR": "1"])
        #expect(!noColour.stdout.contains("\u{1B}["))
    }

    @Test func errorsAreRedOnATerminalOnly() throws {
        let tty = try onTerminal(["poll", "--bogus"])
        #expect(tty.stdout.hasPrefix(Self.red + "Error:\u{1B}[0m unknown option '--bogus'"), "\(tty.stdout)")
        let runtime = try onTerminal(["read", "--service", "1234", "--device", "virtual:suica"])
        #expect(runtime.stdout.contains(Self.red + "Error:\u{1B}[0m "), "\(runtime.stdout)")
        #expect(try run(["poll", "--bogus"]).stderr.hasPrefix("Error: unknown option"))
        #expect(try onTerminal(["poll", "--bogus"], environment: ["NO_COLOR": "1"]).stdout.hasPrefix("Error: unknown option"))
    }
}
