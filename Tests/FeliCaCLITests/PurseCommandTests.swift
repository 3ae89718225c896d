import Foundation
import Testing

let sampleCards = ["suica", "edy", "nanaco", "waon", "wallet"]

/// Golden output of `balance` and `history` (text and JSON) on every built-in card.
@Test(arguments: sampleCards)
func purseGoldens(_ card: String) throws {
    for (args, suffix) in [(["balance"], "balance"), (["balance", "--json"], "balance_json"),
                           (["history"], "history"), (["history", "--json"], "history_json")] {
        let r = try run(args + ["--device", "virtual:\(card)"])
        #expect(r.status == 0, "\(args) \(card): \(r.stderr)")
        #expect(r.stderr.isEmpty, "\(r.stderr)")
        try expectGolden(r.stdout, "\(suffix)_\(card).txt")
    }
}

/// The JSON contract (Docs/cards.md, "What the output promises"): keys, signed amounts, null for the oldest transit
/// record, dates with or without a time.
@Test func historyJSONFollowsTheContract() throws {
    let r = try run(["history", "--json", "--device", "virtual:wallet"])
    let root = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
    #expect(root["idm"] as? String == "01142e0102030405")
    let purses = try #require(root["purses"] as? [[String: Any]])
    #expect(purses.compactMap { $0["profile"] as? String } == ["transit-ic", "edy", "nanaco", "waon"])
    for p in purses {
        #expect(p["currency"] as? String == "JPY")
        #expect(p["balance"] is Int)
        let txs = try #require(p["transactions"] as? [[String: Any]])
        for t in txs {
            for key in ["date", "type", "amount", "balance", "sequence"] { #expect(t[key] != nil, "\(key) missing in \(t)") }
        }
    }
    let transit = try #require(purses[0]["transactions"] as? [[String: Any]])
    #expect(transit.last?["amount"] is NSNull)
    #expect(transit[0]["date"] as? String == "2026-11-28")
    for key in ["console", "process", "entry", "exit"] { #expect(transit[0][key] != nil) }
    let edy = try #require(purses[1]["transactions"] as? [[String: Any]])
    #expect(edy[0]["date"] as? String == "2026-11-28T19:05:33+09:00")
    #expect(edy[0]["amount"] as? Int == -520)
}

/// Malformed records stay in the output with their error, and make the reading incomplete
/// (exit 1, said on stderr); station names come from the CSV.
@Test func malformedRecordsAndStationNames() throws {
    let args = ["history", "--device", "virtual:" + fixture("suica-malformed.json"), "--stations", fixture("stations.csv")]
    let r = try run(args)
    #expect(r.status == 1, "\(r.stderr)")
    #expect(r.stderr == "Error: the reading is incomplete: 1 record of the Suica history did not decode\n", "\(r.stderr)")
    try expectGolden(r.stdout.replacingOccurrences(of: packageRoot.path, with: "<root>"), "history_malformed_stations.txt")
    let j = try run(["history", "--json", "--device", "virtual:" + fixture("suica-malformed.json")])
    #expect(j.stdout.contains(#"{"error":"history record date: month 13 is outside 1-12","slot":2,"raw":"050d000035a10a2b0103300600009f00"}"#))
}

@Test(arguments: [
    (["history", "--stations", "/nonexistent/stations.csv"], "Error: cannot read the station table /nonexistent/stations.csv"),
    (["watch", "--count", "0"], "Error: option '--count': \"0\" is not a positive number"),
] as [([String], String)])
func purseCommandErrors(_ args: [String], _ message: String) throws {
    let r = try run(args + ["--device", "virtual:suica"])
    #expect(r.status != 0)
    #expect(r.stderr.hasPrefix(message), "\(r.stderr)")
}

@Test func badStationTableNamesTheLine() throws {
    let path = temporaryPath("bad-stations.csv")
    try "0,1,2,A\n0,1,x,B\n".write(toFile: path, atomically: true, encoding: .utf8)
    let r = try run(["history", "--device", "virtual:suica", "--stations", path])
    #expect(r.status == 1)
    #expect(r.stderr == "Error: station table \(path):2: station \"x\" is not a number 0-255 (expected area,line,station,name[,line name[,company]])\n")
}

/// A spreadsheet's CRLF export names each station, and overrides the bundled name.
@Test func crlfStationTableNamesEachStation() throws {
    let path = temporaryPath("crlf-stations.csv")
    try "area,line,station,name\r\n0,37,10,Shinjuku\r\n0,37,7,Shibuya\r\n".write(toFile: path, atomically: true, encoding: .utf8)
    let r = try run(["history", "--device", "virtual:suica", "--stations", path])
    #expect(r.status == 0, "\(r.stderr)")
    #expect(r.stdout.contains("ticket gate, fare: Shinjuku → Shibuya\n"), "\(r.stdout)")
    #expect(r.stdout.contains("fare: 東京 → Shinjuku\n"), "\(r.stdout)")
}

/// A file that names nothing (a header only, here with CRLF) is an error, not silence.
@Test func stationTableThatNamesNothingSaysSo() throws {
    let path = temporaryPath("empty-stations.csv")
    try "area,line,station,name\r\n".write(toFile: path, atomically: true, encoding: .utf8)
    let r = try run(["history", "--device", "virtual:suica", "--stations", path])
    #expect(r.status == 1)
    #expect(r.stderr == "Error: station table \(path): names no station (expected area,line,station,name lines)\n")
}

@Test func watchPrintsEachCard() throws {
    let r = try run(["watch", "--count", "1", "--json", "--device", "virtual:wallet"])
    #expect(r.status == 0, "\(r.stderr)")
    let elapsed = #/,"elapsedMs":[0-9.]+\}$/#
    #expect(r.stdout.split(separator: "\n").allSatisfy { $0.contains(elapsed) }, "\(r.stdout)")
    try expectGolden(r.stdout.replacing(#/,"elapsedMs":[0-9.]+/#, with: ""), "watch_count_1_json_wallet.txt")
}

/// `elapsedMs` runs from the Polling that found the card to its line, so it covers at
/// least every card exchange of the read (the cards answer at 212 kbps speed here).
@Test(arguments: ["suica", "wallet"])
func watchElapsedCoversTheRead(_ card: String) throws {
    let trace = temporaryPath("watch-\(card).jsonl")
    let r = try run(["watch", "--count", "1", "--json", "--device", "virtual:\(card)?timing=212", "--trace", trace])
    #expect(r.status == 0, "\(r.stderr)")
    let line = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
    let elapsed = try #require(line["elapsedMs"] as? Double)
    let exchanges = try String(contentsOfFile: trace, encoding: .utf8).split(separator: "\n").dropFirst()
        .compactMap { try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    // The exchanges of the read: from the Polling that found the card on, without any
    // Request Response (the check for the card's leaving).
    let start = try #require(exchanges.lastIndex { ($0["tx"] as? String)?.hasPrefix("0600") == true && $0["rx"] is String })
    let read = exchanges[start...].filter { ($0["tx"] as? String)?.dropFirst(2).hasPrefix("04") == false }
        .compactMap { $0["elapsed"] as? Double }.reduce(0, +) * 1000
    #expect(read > 5)
    #expect(elapsed >= read, "elapsedMs \(elapsed) < the read's exchanges \(read) ms")
}

/// Ctrl-C while watching: the loop ends cleanly (whole cards only, the reader closed), by
/// the signal, as every command ends on it.
@Test(arguments: [SIGINT, SIGTERM])
func watchEndsCleanlyOnSignal(_ sig: Int32) throws {
    let watch = try BackgroundProcess(felica: ["watch", "--device", "virtual:edy"])
    // Wait until the card has been printed, then interrupt.
    watch.until(30) { watch.stdout.contains("\n\n") || !watch.isRunning }
    watch.signal(sig)
    // A lost signal must fail the test, not hang it.
    let (run, timedOut) = watch.finish(within: 10)
    if timedOut { Issue.record("felica watch did not end within 10 s of signal \(sig)") }
    #expect(endedBy(watch, sig), "status \(run.status)")
    let text = run.stdout
    // The virtual card is tapped again after each read: whole cards only, however many.
    let card = "Card 01200312ab34cd56\nEdy            ¥2,480  no. 1901 2345 6789 0123\n\n"
    #expect(!text.isEmpty && text.replacingOccurrences(of: card, with: "").isEmpty, "\(text)")
}

@Test(arguments: ["history", "watch"])
func purseHelp(_ command: String) throws {
    let r = try run([command, "--help"])
    #expect(r.status == 0)
    #expect(r.stdout.hasPrefix("OVERVIEW: "))
    #expect(r.stdout.contains("\nUSAGE: felica \(command)"))
}

/// The Suica's common area is skipped by default: the normal case for a transit-card IC,
/// so text output says nothing of it (JSON carries it in `notProbed`; `-v` notes it on
/// stderr); --all-systems probes it and finds no purse there. A card with no purse at all
/// says why on stderr, the skipped common area among the reasons.
@Test func allSystemsProbesTheTransitCardCommonArea() throws {
    let probed = try run(["balance", "--all-systems", "--device", "virtual:suica"])
    #expect(probed.status == 0)
    #expect(probed.stderr.isEmpty, "\(probed.stderr)")
    #expect(probed.stdout == "Transit IC     ¥1,234\n")
    let skipNote = "note: common area FE00 not probed: the chip is a transit-card IC (PMm IC 0b), whose common area holds no e-money purse (--all-systems probes it)\n"
    let skipped = try run(["balance", "--device", "virtual:suica"])
    #expect(skipped.stdout == "Transit IC     ¥1,234\n")
    #expect(skipped.stderr.isEmpty)
    let verbose = try run(["balance", "-v", "--device", "virtual:suica"])
    #expect(verbose.stdout == "Transit IC     ¥1,234\n")
    #expect(verbose.stderr.hasSuffix(skipNote), "\(verbose.stderr)")
    let history = try run(["history", "--device", "virtual:suica"])
    #expect(!history.stdout.contains("not probed") && history.stderr.isEmpty, "\(history.stdout)\(history.stderr)")
    let json = try run(["balance", "--json", "--device", "virtual:suica"])
    #expect(json.stdout.contains(#""notProbed":[{"system":"fe00","reason":"the chip is a transit-card IC (PMm IC 0b), whose common area holds no e-money purse","listed":false}]"#), "\(json.stdout)")
    let probedJSON = try run(["balance", "--json", "--all-systems", "--device", "virtual:suica"])
    #expect(!probedJSON.stdout.contains("notProbed"))

    let path = temporaryPath("fe00-only-transit-ic.json")
    try #"{"format":"felica-card/1","pmm":"100b4b428485d0ff","systems":[{"code":"0003","services":[]},{"code":"fe00","services":[]}]}"#
        .write(toFile: path, atomically: true, encoding: .utf8)
    let empty = try run(["balance", "--device", "virtual:" + path])
    #expect(empty.status == 0)
    #expect(empty.stdout == "No purse found on the card (systems: 0003, FE00).\n")
    #expect(empty.stderr == "note: system 0003 holds none of the Transit IC services (008B, 090F)\n" + skipNote, "\(empty.stderr)")
}
