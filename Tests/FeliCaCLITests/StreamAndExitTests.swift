import Foundation
import Testing

// What goes where, and the exit codes and messages a new user meets first.

/// Data on stdout (text and JSON alike), diagnostics on stderr: with stderr thrown away no
/// line of stdout is a `note:` or `warning:`, and the skipped common area, which is part of
/// the result, is in both the text and the JSON.
@Test(arguments: ["suica", "edy", "wallet"])
func stdoutCarriesNoDiagnostics(_ card: String) throws {
    for command in ["balance", "history", "poll", "dump"] {
        let r = try run([command, "--device", "virtual:" + card])
        #expect(r.status == 0, "\(command) \(card): \(r.stderr)")
        let labelled = r.stdout.split(separator: "\n").filter { $0.hasPrefix("note:") || $0.hasPrefix("warning:") || $0.hasPrefix("Error:") }
        #expect(labelled.isEmpty, "\(command) \(card) printed diagnostics on stdout: \(labelled)")
    }
    let text = try run(["balance", "--device", "virtual:" + card]).stdout
    let json = try run(["balance", "--json", "--device", "virtual:" + card]).stdout
    // A skipped common area of a transit-card IC is the normal case: JSON carries it, text
    // says nothing of it on stdout.
    #expect(!text.contains("not probed"), "\(text)")
    #expect(json.contains(#""notProbed":[{"system":"fe00""#) == (card == "suica"), "\(json)")
}

/// Usage errors exit 64 with the usage line: a libnfc driver that does not exist is one
/// (the string can never name a reader), and `felica version` points to `--version`.
@Test(arguments: [
    (["balance", "--device", "libnfc:pn532-uart:/dev/ttyUSB0"], "Error: --device 'libnfc:pn532-uart:/dev/ttyUSB0': libnfc has no driver named 'pn532-uart'"),
    (["version"], "Error: unknown command 'version'; did you mean '--version'?"),
    (["read", "--device", "virtual:suica", "--service", "090f", "--blocks", "0,5-2"], "Error: option '--blocks': the range \"5-2\" runs backwards"),
    (["log", "show", "--from", "2026-11-05", "--to", "2026-11-04", "--db", temporaryPath("never-made.sqlite3")],
     "Error: --from 2026-11-05 is after --to 2026-11-04"),
] as [([String], String)])
func usageErrorsAre64(_ args: [String], _ message: String) throws {
    let environment = ["FELICA_DEVICE": "libnfc:nosuch:/dev/null"]
    let r = try run(args, environment: args.first == "balance" ? [:] : environment)
    #expect(r.status == 64, "\(args): exit \(r.status): \(r.stderr)")
    #expect(r.stderr.hasPrefix(message), "\(r.stderr)")
    #expect(r.stderr.contains("\nUsage: felica"), "\(r.stderr)")
    // FELICA_DEVICE with an unknown driver is refused the same way, naming the variable.
    let env = try run(["balance"], environment: environment)
    #expect(env.status == 64 && env.stderr.contains("FELICA_DEVICE='libnfc:nosuch:/dev/null': libnfc has no driver named 'nosuch'"), "\(env.stderr)")
}

/// A file that cannot be read is named with the reason in plain words, never a framework's
/// error domain and code (it was "NSCocoaErrorDomain error 256" for a directory).
@Test func unreadableFilesSayWhyInPlainWords() throws {
    let notText = temporaryPath("not-text.csv")
    try Data([0xFF, 0xFE, 0x00]).write(to: URL(fileURLWithPath: notText))
    let cases: [([String], String)] = [
        (["history", "--device", "virtual:suica", "--stations", "/tmp"], "Error: cannot read the station table /tmp: Is a directory\n"),
        (["history", "--device", "virtual:suica", "--stations", notText], "Error: cannot read the station table \(notText): not UTF-8 text\n"),
        (["order", "--population", notText], "Error: population \(notText): cannot read it: not UTF-8 text\n"),
    ]
    for (args, message) in cases {
        let r = try run(args)
        #expect(r.status == 1, "\(args): \(r.stderr)")
        #expect(r.stderr == message)
        #expect(!r.stderr.contains("Domain") && !r.stderr.contains("operation could not be completed"))
    }
}

/// felica-sim's help and man page are its own: no example of felica's commands, and its
/// exit status as it is (an emulator stopped by a signal exits 0; rcs380 passes the
/// command's status through).
@Test func felicaSimHelpIsItsOwn() throws {
    let help = try run(["--help"], executable: "felica-sim")
    let helpOfHelp = try run(["help", "help"], executable: "felica-sim")
    let manual = try run(["--generate-manual"], executable: "felica-sim")
    for text in [help.stdout, helpOfHelp.stdout, manual.stdout.replacingOccurrences(of: "\\-", with: "-")] {
        #expect(!text.contains("felica --generate-manual") && !text.contains("trace show"), "\(text)")
    }
    #expect(manual.stdout.contains("rcs380 and rcs956 exit with the status of the command they run"))
    #expect(!manual.stdout.contains("69 no reader"))
    let felicaManual = try run(["--generate-manual"])
    #expect(felicaManual.stdout.contains("69 no reader or no card"))
}

/// What the card did not answer is in the dump itself, in text as in JSON (`notes`), and
/// said on stderr either way.
@Test func aDumpSaysWhatTheCardDidNotAnswerInTextAndJSON() throws {
    let dump = try run(["dump", "--json", "--device", "virtual:suica"])
    var card = try #require(try JSONSerialization.jsonObject(with: Data(dump.stdout.utf8)) as? [String: Any])
    card["ignores"] = ["request-block-information"]
    let path = temporaryPath("ignores-rbi.json")
    try JSONSerialization.data(withJSONObject: card).write(to: URL(fileURLWithPath: path))
    let note = "system 0003: the card did not answer Request Block Information"
    let text = try run(["dump", "--device", "virtual:" + path])
    #expect(text.stdout.contains("\nINCOMPLETE: " + note), "\(text.stdout.prefix(400))")
    let json = try run(["dump", "--json", "--device", "virtual:" + path])
    #expect(json.stdout.contains(note))
    #expect(text.stderr == json.stderr && text.stderr.contains("note: " + note), "\(text.stderr)")
}

/// An output that cannot be created is named as given, not as the temporary file beside it.
@Test func anOutputThatCannotBeMadeIsNamedAsGiven() throws {
    let r = try run(["trace", "export", "--pcap", "/no/such/dir/x.pcapng", fixture("../../Traces/suica-balance.jsonl")])
    #expect(r.status == 1)
    #expect(r.stderr == "Error: cannot create /no/such/dir/x.pcapng: No such file or directory\n", "\(r.stderr)")
}

/// `read --system` of a system the card lacks is no missing card: exit 1, and the systems it has.
@Test func readingASystemTheCardLacksNamesItsSystems() throws {
    let r = try run(["read", "--device", "virtual:suica", "--service", "090f", "--system", "8b61"])
    #expect(r.status == 1, "\(r.stderr)")
    #expect(r.stderr.contains("but it has no system 8B61 matching the Polling: its systems are 0003 (transit IC), FE00 (common area)"), "\(r.stderr)")
}
