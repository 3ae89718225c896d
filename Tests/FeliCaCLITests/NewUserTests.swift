import Foundation
import Testing

// What a new user met trying every command on the installed package, through the built
// binary: paths that are not UTF-8, totals that leave a record out, partial readings,
// stdout that carried notes, and messages that misled.

/// Runs a shell line in `dir` with the built executables on PATH (for bytes that a Swift
/// `String` argument cannot carry).
private func shell(_ line: String, in dir: URL) throws -> RunResult {
    try runProgram("/bin/sh", ["-c", line], directory: dir)
}

/// The names in `dir`, as bytes shown by `ls -b` (escapes for bytes that are not printable).
private func listing(_ dir: URL) throws -> String {
    try runProgram("/bin/ls", ["-b", dir.path]).stdout
}

// MARK: - Paths that are not UTF-8 are refused, never changed

/// A path holding a Latin-1 byte (`caf\xE9`) would reach the system changed (U+FFFD) if
/// decoded with replacement: every way a path comes in is refused with exit 64, the bytes
/// shown, and nothing is created under another name.
@Test(arguments: [
    "felica dump --device virtual:suica --output \"$(printf 'caf\\351.json')\"",
    "felica dump --device virtual:suica --json -o \"$(printf 'd\\351/out.json')\"",
    "felica balance --device \"virtual:$(printf 'caf\\351.json')\"",
    "felica log add --device virtual:suica --db \"$(printf 'h\\351/history.sqlite3')\"",
    "felica history --device virtual:suica --stations \"$(printf 'st\\351.csv')\"",
    "felica balance --device virtual:suica --trace \"$(printf 't\\351.jsonl')\"",
    "felica-sim pn532 --card suica --link \"$(printf 'tty\\351')\"",
])
func aPathThatIsNotUTF8IsRefused(_ line: String) throws {
    let dir = try scratchDirectory("latin1")
    defer { try? FileManager.default.removeItem(at: dir) }
    let r = try shell(line, in: dir)
    #expect(r.status == 64, "\(line): exit \(r.status): \(r.stderr)")
    #expect(r.stderr.hasPrefix("Error: argument "), "\(r.stderr)")
    #expect(r.stderr.contains("\\xE9") && r.stderr.contains("is not valid UTF-8"), "\(r.stderr)")
    let left = try listing(dir)
    #expect(left.isEmpty, "\(line) created \(left)")
}

/// The same path in UTF-8 is used as given.
@Test func aUTF8PathIsUsedByteForByte() throws {
    let dir = try scratchDirectory("utf8")
    defer { try? FileManager.default.removeItem(at: dir) }
    let r = try shell("felica dump --device virtual:suica --json --output \"$(printf 'caf\\303\\251.json')\"", in: dir)
    #expect(r.status == 0, "\(r.stderr)")
    let names = try listing(dir)
    #expect(names == "café.json\n", "\(names)")
}

/// HOME (the default history database's place) is a path too.
@Test func aHomeThatIsNotUTF8IsRefused() throws {
    let dir = try scratchDirectory("latin1-home")
    defer { try? FileManager.default.removeItem(at: dir) }
    let r = try shell("XDG_DATA_HOME= HOME=\"$PWD/$(printf 'h\\351')\" felica log add --device virtual:suica", in: dir)
    #expect(r.status == 64, "\(r.stderr)")
    #expect(r.stderr.contains("HOME") && r.stderr.contains("\\xE9"), "\(r.stderr)")
    let left = try listing(dir)
    #expect(left.isEmpty, "\(left)")
}

// MARK: - A total that leaves a record out says so

/// The Suica's oldest record has no known amount (its previous balance is not on the
/// card): the month total that leaves it out says `incomplete`, and the exit status is 1
/// unless --allow-incomplete, in `history --csv --summary` and `log export --summary`.
@Test func aTotalLeavingOutAnUnknownAmountIsIncomplete() throws {
    let dir = try scratchDirectory("unknown-amount")
    defer { try? FileManager.default.removeItem(at: dir) }
    let note = "incomplete: the amount of the charge on 2025-12-01 (sequence 153) is unknown"
    let history = try felica(["history", "--csv", "--summary", "--device", "virtual:suica"], in: dir)
    #expect(history.status == 1, "\(history.stderr)")
    #expect(history.stdout.contains("2025-12,,month total,,,,,,0101120312345678,transit-ic,\(note),230,1000,0\n"), "\(history.stdout)")
    #expect(history.stderr.contains("the 2025-12 total leaves it out"), "\(history.stderr)")
    let allowed = try felica(["history", "--csv", "--summary", "--allow-incomplete", "--device", "virtual:suica"], in: dir)
    #expect(allowed.status == 0 && allowed.stdout == history.stdout, "\(allowed.stderr)")
    // Without totals nothing is added up: the rows are all there.
    let step1 = try felica(["history", "--csv", "--device", "virtual:suica"], in: dir)
    #expect(step1.status == 0, "\(step1.stderr)")

    let step2 = try felica(["log", "add", "--device", "virtual:suica", "--db", "h.sqlite3"], in: dir)
    #expect(step2.status == 0, "\(step2.stderr)")
    let export = try felica(["log", "export", "--summary", "--db", "h.sqlite3"], in: dir)
    #expect(export.status == 1, "\(export.stderr)")
    #expect(export.stdout.contains(",month total,,,,,,0101120312345678,transit-ic,\(note),"), "\(export.stdout)")
    let step3 = try felica(["log", "export", "--summary", "--allow-incomplete", "--db", "h.sqlite3"], in: dir)
    #expect(step3.status == 0, "\(step3.stderr)")
}

// MARK: - One rule for a partial reading

/// A reading that lacks what the command is for fails (exit 1, said on stderr); a card
/// that simply has none of it does not, and says so.
@Test func aPartialReadingFailsAndACardWithoutHistoryDoesNot() throws {
    let dir = try scratchDirectory("partial")
    defer { try? FileManager.default.removeItem(at: dir) }
    // Octopus keeps no history: history, its CSV and log add all exit 0 and say why.
    let text = try felica(["history", "--device", "virtual:octopus"], in: dir)
    #expect(text.status == 0, "\(text.stderr)")
    #expect(text.stdout.contains("(Octopus cards keep no history readable without a key"), "\(text.stdout)")
    let csv = try felica(["history", "--csv", "--device", "virtual:octopus"], in: dir)
    #expect(csv.status == 0, "\(csv.stderr)")
    #expect(!csv.stdout.contains("unreadable") && csv.stderr.contains("note: Octopus cards keep no history"), "\(csv.stdout)\(csv.stderr)")
    let add = try felica(["log", "add", "--device", "virtual:octopus", "--db", "h.sqlite3"], in: dir)
    #expect(add.status == 0 && add.stderr.contains("note: Octopus cards keep no history"), "\(add.stderr)")

    // An Edy whose history needs a key: history fails, in text, JSON and CSV alike; balance,
    // which has what it is for, does not.
    let keyed = "virtual:" + fixture("edy-history-keyed.json")
    for extra in [[], ["--json"], ["--csv"]] {
        let r = try felica(["history", "--device", keyed] + extra, in: dir)
        #expect(r.status == 1, "\(extra): \(r.stderr)")
        #expect(r.stderr.contains("history (service 170F) needs a key"), "\(extra): \(r.stderr)")
    }
    let step4 = try felica(["balance", "--device", keyed], in: dir)
    #expect(step4.status == 0, "\(step4.stderr)")
}

// MARK: - stdout carries the result only

/// The skipped common area of a transit-card IC (the normal case) is no line of stdout,
/// and neither is an Octopus balance rule; the rule is a note when it tells something
/// (a dump from before the offset changed).
@Test func stdoutHoldsNoNotes() throws {
    let suica = try run(["balance", "--device", "virtual:suica"])
    #expect(suica.stdout == "Transit IC     ¥1,234\n" && suica.stderr.isEmpty, "\(suica.stdout)\(suica.stderr)")
    let octopus = try run(["balance", "--device", "virtual:octopus"])
    #expect(octopus.stdout == "Octopus      HK$50.00\n" && octopus.stderr.isEmpty, "\(octopus.stdout)\(octopus.stderr)")
    // history names the brand; the kind goes with it, as balance shows it.
    let history = try run(["history", "--device", "virtual:suica"])
    #expect(history.stdout.hasPrefix("Suica (Transit IC)     ¥1,234\n"), "\(history.stdout)")
    let issuer = try run(["balance", "--issuer", "--device", "virtual:suica"])
    #expect(issuer.stdout == "Suica (Transit IC)     ¥1,234\n", "\(issuer.stdout)")
}

// MARK: - Messages

/// Each mistake gets a message that names it, with the right exit status.
@Test(arguments: [
    (["--json", "balance", "--device", "virtual:suica"], 64,
     "Error: option '--json' belongs to 'felica balance': options follow the command's name, as in 'felica balance --json --device virtual:suica'"),
    (["log", "show", "--db", ""], 64, "Error: option '--db' needs a file path, got an empty one"),
    (["log", "add", "--device", "virtual:suica", "--db", ""], 64, "Error: option '--db' needs a file path, got an empty one"),
    (["dump", "--device", "virtual:suica", "--output", ""], 64, "Error: option '--output' needs a file path, got an empty one"),
    (["balance", "--device", "libnfc:pn532_uart:"], 64,
     "Error: --device 'libnfc:pn532_uart:': libnfc's pn532_uart driver needs the port the board is wired to"),
    (["balance", "--device", "libnfc:pn532_uart"], 64,
     "Error: --device 'libnfc:pn532_uart': libnfc's pn532_uart driver needs the port the board is wired to"),
    (["poll", "--system-code", "fe001", "--device", "virtual:suica"], 64,
     "Error: option '--system-code': \"fe001\" is too long for a system code (4 hex digits, e.g. 0003 or fe00)"),
    (["read", "--service", "090f0", "--device", "virtual:suica"], 64,
     "Error: option '--service': \"090f0\" is too long for a service code (4 hex digits, e.g. 090f)"),
    // A file given as the device: which kind reads it.
    (["balance", "--device", "card.json"], 64,
     "Error: --device 'card.json': 'card.json' is not a kind of device (libnfc[:<connstring>], pn532:<port>, pcsc[:<reader>], usb[:<vid>:<pid>|:<bus>:<address>], virtual:<card>, replay:<trace>); a card image is read with virtual:card.json (a trace is replayed with replay:<file>)"),
    (["balance", "--device", "balance.jsonl"], 64,
     "Error: --device 'balance.jsonl': 'balance.jsonl' is not a kind of device (libnfc[:<connstring>], pn532:<port>, pcsc[:<reader>], usb[:<vid>:<pid>|:<bus>:<address>], virtual:<card>, replay:<trace>); a trace is replayed with replay:balance.jsonl"),
    (["balance", "--device", "/dev/ttyUSB0"], 64,
     "Error: --device '/dev/ttyUSB0': '/dev/ttyUSB0' is not a kind of device (libnfc[:<connstring>], pn532:<port>, pcsc[:<reader>], usb[:<vid>:<pid>|:<bus>:<address>], virtual:<card>, replay:<trace>); a PN532 board on a serial port is pn532:/dev/ttyUSB0 (or libnfc:pn532_uart:/dev/ttyUSB0)"),
] as [([String], Int32, String)])
func mistakesAreNamed(_ args: [String], _ status: Int32, _ message: String) throws {
    let r = try run(args)
    #expect(r.status == status, "\(args): exit \(r.status): \(r.stderr)")
    #expect(r.stderr.hasPrefix(message), "\(args): \(r.stderr)")
}

/// `log export` writes CSV with or without --csv, as its usage line shows.
@Test func logExportNeedsNoCSVFlag() throws {
    let dir = try scratchDirectory("export-csv")
    defer { try? FileManager.default.removeItem(at: dir) }
    let step5 = try felica(["log", "add", "--device", "virtual:edy", "--db", "h.sqlite3"], in: dir)
    #expect(step5.status == 0, "\(step5.stderr)")
    let plain = try felica(["log", "export", "--db", "h.sqlite3"], in: dir)
    let csv = try felica(["log", "export", "--csv", "--db", "h.sqlite3"], in: dir)
    #expect(plain.status == 0 && plain.stdout == csv.stdout && plain.stdout.hasPrefix("date,time,type,"), "\(plain.stderr)")
    let step6 = try felica(["log", "export", "--help"], in: dir)
    #expect(step6.stdout.contains("[--csv]"), "\(step6.stderr)")
}

/// A card image given as a trace says what it is and how to use it.
@Test func aCardImageIsNoTrace() throws {
    let dir = try scratchDirectory("image-as-trace")
    defer { try? FileManager.default.removeItem(at: dir) }
    let step7 = try felica(["dump", "--json", "--device", "virtual:suica", "-o", "card.json"], in: dir)
    #expect(step7.status == 0, "\(step7.stderr)")
    let r = try felica(["balance", "--device", "replay:card.json"], in: dir)
    #expect(r.status == 1, "\(r.stderr)")
    #expect(r.stderr.hasPrefix("Error: card.json is a card image (felica-card/1), not a trace: a card image is read with --device virtual:card.json"), "\(r.stderr)")
}

/// One JSON document given as a trace: the library says what it is, felica how traces are made.
@Test func aJSONDocumentIsNoTraceAndFelicaSaysHowOneIsRecorded() throws {
    let dir = try scratchDirectory("json-as-trace")
    defer { try? FileManager.default.removeItem(at: dir) }
    try Data("{\n  \"answer\": 42\n}\n".utf8).write(to: dir.appendingPathComponent("doc.json"))
    let r = try felica(["balance", "--device", "replay:doc.json"], in: dir)
    #expect(r.status == 1, "\(r.stderr)")
    #expect(r.stderr == "Error: doc.json is a JSON document, not a felica-trace/1 trace (one JSON object per line); a trace is recorded with --trace\n", "\(r.stderr)")
}

/// No reader given and none found: the library says so, felica adds the commands that check
/// the readers and the way to try the tool without one.
@Test func noReaderFoundNamesTheCommandsThatHelp() throws {
    let r = try run(["poll"], environment: ["LIBNFC_AUTO_SCAN": "false", "PCSCLITE_CSOCK_NAME": temporaryPath("no-pcscd.comm")])
    // A machine with a USB reader of its own opens it; this one (and CI) has none.
    guard r.status != 0 else { return }
    #expect(r.status == 69, "\(r.stderr)")
    #expect(r.stderr.hasPrefix("Error: no reader found (looked for USB, libnfc and PC/SC readers): plug in a reader."), "\(r.stderr)")
    #expect(r.stderr.contains("Run `felica devices` to check a reader is seen (`felica doctor` explains set-up problems)."), "\(r.stderr)")
    #expect(r.stderr.contains("To try the tool without hardware: felica balance --device virtual:suica"), "\(r.stderr)")
}

/// FELICA_DEVICE is a path too (`virtual:<file>`, `replay:<file>`): refused like an argument
/// that is not UTF-8, with its bytes shown, by a command and by doctor.
@Test func aFelicaDeviceThatIsNotUTF8IsRefused() throws {
    let dir = try scratchDirectory("latin1-device")
    defer { try? FileManager.default.removeItem(at: dir) }
    try Data("{}".utf8).write(to: dir.appendingPathComponent("caf\u{FFFD}.json"))
    let r = try shell("FELICA_DEVICE=\"virtual:$(printf 'caf\\351.json')\" felica balance", in: dir)
    #expect(r.status == 64, "exit \(r.status): \(r.stderr)")
    #expect(r.stderr.contains("FELICA_DEVICE ('virtual:caf\\xE9.json') is not valid UTF-8"), "\(r.stderr)")
    #expect(!r.stderr.contains("\u{FFFD}"), "\(r.stderr)")
    let doctor = try shell("FELICA_DEVICE=\"virtual:$(printf 'caf\\351.json')\" LIBNFC_AUTO_SCAN=false felica doctor --root \"$PWD\" --json", in: dir)
    #expect(doctor.stdout.contains("FELICA_DEVICE ('virtual:caf\\\\xE9.json') is not valid UTF-8"), "\(doctor.stdout)")
}

// MARK: - felica-sim vpcd ends on a signal

/// `felica-sim vpcd` started in the background of a script (where the shell leaves SIGINT
/// ignored) stops on SIGINT and SIGTERM alike: the "stopped" line, exit 0. Nothing listens
/// on port 1, so it is still trying to reach vpcd when the signal comes.
@Test(arguments: ["INT", "TERM"])
func vpcdStopsOnASignalInTheBackground(_ signal: String) throws {
    let dir = try scratchDirectory("vpcd-\(signal)")
    defer { try? FileManager.default.removeItem(at: dir) }
    let r = try shell("felica-sim vpcd --card suica --port 1 --wait 60 2>err & pid=$!; sleep 1.5; kill -\(signal) $pid; wait $pid; echo $?; cat err", in: dir)
    let word = signal == "INT" ? "interrupt" : "terminate"
    #expect(r.stdout.hasPrefix("0\n"), "\(r.stdout)")
    #expect(r.stdout.contains("\nfelica-sim vpcd: stopped (\(word)) after 0 exchanges\n"), "\(r.stdout)")
}
