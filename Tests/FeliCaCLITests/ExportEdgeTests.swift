import Foundation
import Testing

// The edges of outputs and exports: an output never overwrites an input, an incomplete
// export says so in the file, totals are per card and purse, and a day keeps the card's order.

/// A fresh scratch directory.
func scratchDirectory(_ name: String) throws -> URL {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("\(name)-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    return dir
}

/// Runs `felica` in `dir`.
func felica(_ args: [String], in dir: URL) throws -> RunResult {
    try runFelica(args, directory: dir)
}

// MARK: - An output never overwrites an input

/// Each command line names one file as input and output, or as two outputs, by the same
/// path or through a link; each is refused (64) before anything is written.
@Test(arguments: [
    (["trace", "export", "--pcap", "t.jsonl", "t.jsonl"], "--pcap t.jsonl would overwrite the trace to export"),
    (["trace", "export", "--pcap", "link.jsonl", "t.jsonl"], "(the same file)"),
    (["trace", "export", "--pcap", "./t.jsonl", "t.jsonl"], "(the same file)"),
    (["dump", "--device", "virtual:suica", "--output", "new.txt", "--trace", "new.txt"], "--trace new.txt and --output new.txt are the same file"),
    (["dump", "--device", "virtual:suica", "--output", "t.jsonl", "--trace", "link.jsonl"], "are the same file"),
    (["balance", "--device", "replay:t.jsonl", "--trace", "t.jsonl"], "would overwrite the trace --device replays"),
    (["dump", "--device", "virtual:card.json", "--output", "card.json"], "would overwrite the card image --device serves"),
    (["history", "--device", "virtual:suica", "--stations", "stations.csv", "--trace", "stations.csv"], "would overwrite the station table"),
    (["log", "add", "--device", "virtual:suica", "--db", "t.jsonl", "--trace", "t.jsonl"], "are the same file"),
    (["watch", "--device", "virtual:card.json", "--save", "--db", "card.json", "--count", "1"], "would overwrite the card image"),
    (["bench", "order", "--device", "replay:t.jsonl", "--trace", "link.jsonl"], "would overwrite the trace --device replays"),
] as [([String], String)])
func anOutputNeverOverwritesAnInput(_ args: [String], _ message: String) throws {
    let dir = try scratchDirectory("clash")
    defer { try? FileManager.default.removeItem(at: dir) }
    let made = try felica(["balance", "--device", "virtual:suica", "--trace", "t.jsonl"], in: dir)
    #expect(made.status == 0, "\(made.stderr)")
    let image = try felica(["dump", "--json", "--device", "virtual:suica", "--output", "card.json"], in: dir)
    #expect(image.status == 0, "\(image.stderr)")
    try FileManager.default.createSymbolicLink(atPath: dir.appendingPathComponent("link.jsonl").path, withDestinationPath: "t.jsonl")
    try "0,37,10,Shinjuku\n".write(to: dir.appendingPathComponent("stations.csv"), atomically: true, encoding: .utf8)
    let names = ["t.jsonl", "card.json", "stations.csv"]
    let before = try names.map { try Data(contentsOf: dir.appendingPathComponent($0)) }
    let r = try felica(args, in: dir)
    #expect(r.status == 64, "\(args): exit \(r.status): \(r.stderr)")
    #expect(r.stderr.contains(message), "\(args): \(r.stderr)")
    #expect(r.stdout.isEmpty)
    let after = try names.map { try Data(contentsOf: dir.appendingPathComponent($0)) }
    #expect(before == after, "\(args) changed an input")
    let listing = try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted()
    #expect(listing == ["card.json", "link.jsonl", "stations.csv", "t.jsonl"], "\(args) wrote \(listing)")
}

/// Writing to a device file twice replaces nothing: /dev/null as both outputs is fine.
@Test func devicesAreNoFilesToProtect() throws {
    let r = try run(["dump", "--device", "virtual:suica", "--output", "/dev/null", "--trace", "/dev/null"])
    #expect(r.status == 0, "\(r.stderr)")
}

// MARK: - Incomplete exports say so in the file

/// A card image of the Suica sample whose records are 30 numbers later: read after the
/// first, it leaves a gap of 21 records.
func laterSuica(in dir: URL) throws -> String {
    let dump = try felica(["dump", "--json", "--device", "virtual:suica"], in: dir)
    var card = try #require(try JSONSerialization.jsonObject(with: Data(dump.stdout.utf8)) as? [String: Any])
    var systems = try #require(card["systems"] as? [[String: Any]])
    var services = try #require(systems[0]["services"] as? [[String: Any]])
    let k = try #require(services.firstIndex { $0["code"] as? String == "090f" })
    let blocks = try #require(services[k]["blocks"] as? [String])
    services[k]["blocks"] = blocks.map { hex -> String in
        var b = stride(from: 0, to: hex.count, by: 2).map { UInt8(hex.dropFirst($0).prefix(2), radix: 16)! }
        guard b.contains(where: { $0 != 0 }) else { return hex }
        let seq = (Int(b[13]) << 8 | Int(b[14])) + 30
        b[13] = UInt8(seq >> 8); b[14] = UInt8(seq & 0xFF)
        return b.map { String(format: "%02x", $0) }.joined()
    }
    systems[0]["services"] = services
    card["systems"] = systems
    let path = dir.appendingPathComponent("later.json").path
    try JSONSerialization.data(withJSONObject: card).write(to: URL(fileURLWithPath: path))
    return path
}

@Test func anExportAfterAGapMarksItInTheFileAndExitsOne() throws {
    let dir = try scratchDirectory("gap")
    defer { try? FileManager.default.removeItem(at: dir) }
    let later = try laterSuica(in: dir)
    #expect(try felica(["log", "add", "--device", "virtual:suica", "--db", "h.sqlite3"], in: dir).status == 0)
    #expect(try felica(["log", "add", "--device", "virtual:" + later, "--db", "h.sqlite3"], in: dir).status == 0)
    let r = try felica(["log", "export", "--csv", "--summary", "--db", "h.sqlite3"], in: dir)
    #expect(r.status == 1, "\(r.stderr)")
    let rows = r.stdout.split(separator: "\n").map(String.init)
    let gap = try #require(rows.first { $0.contains(",gap,") }, "\(r.stdout)")
    #expect(gap.hasPrefix("2025-12-01,,gap,,,,,,0101120312345678,transit-ic,incomplete: 21 records missing between sequence 161 and 183"), "\(gap)")
    // Where the records went missing: just before the first record read after them (sequence 183).
    let at = try #require(rows.firstIndex(of: gap))
    #expect(rows[at + 1].contains(",183,0101120312345678,"), "\(rows[at + 1])")
    #expect(rows.contains { $0.hasPrefix("2025-12,,month total,,,,,,0101120312345678,transit-ic,incomplete: ") && $0.contains("21 records missing") }, "\(r.stdout)")
    #expect(r.stderr.contains("the export is incomplete"), "\(r.stderr)")
    let allowed = try felica(["log", "export", "--csv", "--allow-incomplete", "--db", "h.sqlite3"], in: dir)
    #expect(allowed.status == 0, "\(allowed.stderr)")
    #expect(allowed.stdout.contains(",gap,"))
    // A period before the gap's records is complete.
    let before = try felica(["log", "export", "--csv", "--to", "2025-11", "--db", "h.sqlite3"], in: dir)
    #expect(before.status == 0 && !before.stdout.contains(",gap,"), "\(before.stdout) \(before.stderr)")
    // log show lists the gap with the days on either side.
    let shown = try felica(["log", "show", "--json", "--db", "h.sqlite3"], in: dir)
    #expect(shown.stdout.contains(#""missing":21,"afterDate":"2026-11-27","beforeDate":"2025-12-01""#), "\(shown.stdout)")
}

@Test func historyCSVMarksARecordThatDidNotDecode() throws {
    let r = try run(["history", "--csv", "--summary", "--device", "virtual:" + fixture("suica-malformed.json")])
    #expect(r.status == 1, "\(r.stderr)")
    #expect(r.stdout.contains(",,not decoded,,,,,,0101120312345678,transit-ic,incomplete: slot 2: history record date: month 13 is outside 1-12"), "\(r.stdout)")
    #expect(r.stdout.contains("2026-11,,month total,,,,,,0101120312345678,transit-ic,incomplete: not decoded: slot 2"), "\(r.stdout)")
    #expect(try run(["history", "--csv", "--allow-incomplete", "--device", "virtual:" + fixture("suica-malformed.json")]).status == 0)
}

@Test func historyCSVMarksAPurseThatCouldNotBeRead() throws {
    let dir = try scratchDirectory("unreadable")
    defer { try? FileManager.default.removeItem(at: dir) }
    let dump = try felica(["dump", "--json", "--device", "virtual:suica"], in: dir)
    var card = try #require(try JSONSerialization.jsonObject(with: Data(dump.stdout.utf8)) as? [String: Any])
    var systems = try #require(card["systems"] as? [[String: Any]])
    systems[0]["services"] = (systems[0]["services"] as? [[String: Any]])?.filter { $0["code"] as? String != "090f" }
    card["systems"] = systems
    let path = dir.appendingPathComponent("no-history.json")
    try JSONSerialization.data(withJSONObject: card).write(to: path)
    let r = try felica(["history", "--csv", "--device", "virtual:" + path.path], in: dir)
    #expect(r.status == 1, "\(r.stderr)")
    #expect(r.stdout == "date,time,type,from,to,amount,balance,sequence,card,purse,detail\n"
                       + ",,unreadable,,,,,,0101120312345678,transit-ic,incomplete: history (service 090F) is not on the card\n", "\(r.stdout)")
}

// MARK: - Totals per card and purse; the purse in log show

@Test func summaryTotalsEachCardAndPurse() throws {
    let dir = try scratchDirectory("totals")
    defer { try? FileManager.default.removeItem(at: dir) }
    for card in ["wallet", "suica"] {
        #expect(try felica(["log", "add", "--device", "virtual:" + card, "--db", "h.sqlite3"], in: dir).status == 0)
    }
    // The wallet's oldest transit record has no known amount: its total says so, exit 1.
    let r = try felica(["log", "export", "--csv", "--summary", "--from", "2026-11", "--to", "2026-11", "--db", "h.sqlite3"], in: dir)
    #expect(r.status == 1, "\(r.stderr)")
    let totals = r.stdout.split(separator: "\n").filter { $0.contains(",month total,") }
    #expect(totals == [
        "2026-11,,month total,,,,,,0101120312345678,transit-ic,,816,1000,150",
        "2026-11,,month total,,,,,,01142e0102030405,edy,,0,3000,700",
        "2026-11,,month total,,,,,,01142e0102030405,nanaco,,0,5000,372",
        "2026-11,,month total,,,,,,01142e0102030405,transit-ic,incomplete: the amount of the purchase on 2026-11-02 (sequence 513) is unknown,406,3000,0",
        "2026-11,,month total,,,,,,01142e0102030405,waon,,0,2000,1850",
    ], "\(totals)")
    let edy = try felica(["log", "show", "--purse", "edy", "--db", "h.sqlite3"], in: dir)
    let lines = edy.stdout.split(separator: "\n")
    #expect(lines.first?.hasPrefix("DATE              CARD              PURSE       TYPE") == true, "\(edy.stdout)")
    #expect(lines.count > 1 && lines.dropFirst().allSatisfy { $0.contains("  edy  ") }, "\(edy.stdout)")
    let none = try felica(["log", "show", "--purse", "edy", "--idm", "0101120312345678", "--db", "h.sqlite3"], in: dir)
    #expect(none.stdout.hasPrefix("No records kept for card 0101120312345678 in purse edy"), "\(none.stdout)")
    let bad = try felica(["log", "show", "--purse", "suica", "--db", "h.sqlite3"], in: dir)
    #expect(bad.status == 64 && bad.stderr.contains("'suica' is not one of transit-ic, edy, nanaco, waon"), "\(bad.stderr)")
}

// MARK: - A day keeps the card's order

/// The Suica sample's 27 November holds a purchase at 12:34 (sequence 160) and a fare with
/// no time (161): oldest first, 160 comes first and the balances run 1,434 then 1,234.
@Test func aDayKeepsTheCardsOrder() throws {
    let csv = try run(["history", "--csv", "--device", "virtual:suica"])
    let day = csv.stdout.split(separator: "\n").filter { $0.hasPrefix("2026-11-27") }
    #expect(day.map { $0.split(separator: ",", omittingEmptySubsequences: false)[7] } == ["160", "161"], "\(day)")
    let dir = try scratchDirectory("order")
    defer { try? FileManager.default.removeItem(at: dir) }
    #expect(try felica(["log", "add", "--device", "virtual:suica", "--db", "h.sqlite3"], in: dir).status == 0)
    let export = try felica(["log", "export", "--csv", "--db", "h.sqlite3"], in: dir)
    #expect(export.stdout.split(separator: "\n").filter { $0.hasPrefix("2026-11-27") }.map { $0.split(separator: ",", omittingEmptySubsequences: false)[7] } == ["160", "161"])
    let shown = try felica(["log", "show", "--from", "2026-11-27", "--db", "h.sqlite3"], in: dir)
    #expect(shown.stdout.split(separator: "\n").dropFirst().map { $0.split(separator: " ", omittingEmptySubsequences: true) }
                .map { $0.contains("161") ? 161 : 160 } == [161, 160], "\(shown.stdout)")
}

@Test func aPeriodThatEndsBeforeItBeginsIsAUsageError() throws {
    let dir = try scratchDirectory("period")
    defer { try? FileManager.default.removeItem(at: dir) }
    let r = try felica(["log", "export", "--csv", "--from", "2026-12", "--to", "2026-11", "--db", "h.sqlite3"], in: dir)
    #expect(r.status == 64 && r.stderr.contains("--from 2026-12-01 is after --to 2026-11-30"), "\(r.stderr)")
}
