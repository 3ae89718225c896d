import Foundation
import Testing

/// Dumps of other tools wherever a card image is accepted, and `dump --format` writing them.
@Suite struct ImportCommandTests {
    /// A Flipper file and a Metrodroid export written by `dump --format` read like the card.
    @Test(arguments: ["flipper", "metrodroid"])
    func exportedDumpsReadLikeTheCard(_ format: String) throws {
        let path = temporaryPath("wallet-\(format).\(format == "flipper" ? "nfc" : "json")")
        let w = try run(["dump", "--device", "virtual:wallet", "--format", format, "-o", path])
        #expect(w.status == 0, "\(w.stderr)")
        for args in [["balance"], ["history", "--json"]] {
            let live = try run(args + ["--device", "virtual:wallet"])
            let imported = try run(args + ["--device", "virtual:" + path])
            #expect(imported.status == 0, "\(imported.stderr)")
            #expect(imported.stdout == live.stdout)
        }
    }

    /// A bare file name ending in .nfc is a file, not a mistyped built-in name.
    @Test func aBareNfcNameIsAFile() throws {
        let dir = temporaryPath("bare")
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let w = try run(["dump", "--device", "virtual:suica", "--format", "flipper", "-o", dir + "/suica.nfc"])
        #expect(w.status == 0)
        let r = try run(program: "/bin/sh", ["-c", "cd '\(dir)' && felica balance --device virtual:suica.nfc"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.hasPrefix("Transit IC     ¥1,234"))
    }

    @Test func aDamagedFileIsNamedWithItsLine() throws {
        let path = temporaryPath("damaged.nfc")
        let w = try run(["dump", "--device", "virtual:suica", "--format", "flipper", "-o", path])
        #expect(w.status == 0)
        var text = try String(contentsOfFile: path, encoding: .utf8)
        text = text.replacingOccurrences(of: "Manufacture parameter: 10 0B", with: "Manufacture parameter: 10 0X")
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        let r = try run(["balance", "--device", "virtual:" + path])
        #expect(r.status == 1)
        #expect(r.stderr.hasPrefix("Error: card image \(path): line 10: Manufacture parameter: "), "\(r.stderr)")
    }

    @Test func jsonAndAnotherFormatContradict() throws {
        let r = try run(["dump", "--device", "virtual:suica", "--json", "--format", "flipper"])
        #expect(r.status == 64)
        #expect(r.stderr.contains("--json and --format flipper contradict each other"))
    }

    /// An Octopus dump scanned in 2016 is decoded with that year's offset (350), and its
    /// scan time is the reading's date in the history database.
    @Test func aMetrodroidScanDateIsTheReadingsDate() throws {
        let path = temporaryPath("octopus-2016.json")
        let export = """
            {"tagId": "01300a1234567890", "scannedAt": {"timeInMillis": 1470000000000, "tz": "Asia/Hong_Kong"},
             "felica": {"pMm": "00114b428485d0ff", "systems": {"32776": {"services": {"279": {"blocksMap": {"0": {"data": "000003e8000000000000000000000000"}}}}}}}}
            """
        try export.write(toFile: path, atomically: true, encoding: .utf8)
        let r = try run(["balance", "--device", "virtual:" + path])
        #expect(r.status == 0, "\(r.stderr)")
        // The rule differs from today's, so a note on stderr says which was used.
        #expect(r.stdout == "Octopus      HK$65.00\n", "\(r.stdout)")
        #expect(r.stderr == "note: Octopus balance rule: offset 350: Octopus readings before 2017-10-01 use offset 350 (read 2016-07-31, the dump's scan date)\n", "\(r.stderr)")
        let j = try run(["balance", "--json", "--device", "virtual:" + path])
        #expect(j.stdout.contains(#""balance":6500,"currency":"HKD","balanceRule":{"offset":350,"readOn":"2016-07-31","source":"scan-date""#), "\(j.stdout)")
        // Today's reading of the same data: offset 500.
        let today = try run(["balance", "--json", "--device", "virtual:octopus"])
        #expect(today.stdout.contains(#""balance":5000,"currency":"HKD","balanceRule":{"offset":500"#), "\(today.stdout)")

        let db = temporaryPath("scan-date.sqlite3")
        try? FileManager.default.removeItem(atPath: db)
        let suica = temporaryPath("suica-scan.json")
        let m = try run(["dump", "--device", "virtual:suica", "--format", "metrodroid", "-o", suica])
        #expect(m.status == 0)
        var text = try String(contentsOfFile: suica, encoding: .utf8)
        let range = try #require(text.range(of: #""timeInMillis" : \d+"#, options: .regularExpression)
                                 ?? text.range(of: #""timeInMillis": \d+"#, options: .regularExpression))
        text.replaceSubrange(range, with: #""timeInMillis": 1470000000000"#)
        try text.write(toFile: suica, atomically: true, encoding: .utf8)
        let add = try run(["log", "add", "--db", db, "--device", "virtual:" + suica])
        #expect(add.status == 0, "\(add.stderr)")
        let q = try run(program: "/usr/bin/sqlite3", [db, "SELECT read_at FROM readings"])
        #expect(q.stdout == "2016-07-31T21:20:00Z\n", "\(q.stdout) \(q.stderr)")
    }

    @Test func theDualCardShowsBothCurrencies() throws {
        let r = try run(["balance", "--device", "virtual:octopus-shenzhen"])
        #expect(r.status == 0)
        #expect(r.stdout.contains("Octopus     -HK$14.40\n"))
        // Today's rule, the only one: nothing to note.
        #expect(r.stdout.contains("Shenzhen Tong   CN¥12.30\n") && !r.stdout.contains("rule") && r.stderr.isEmpty, "\(r.stdout)\(r.stderr)")
        let j = try run(["balance", "--json", "--device", "virtual:octopus-shenzhen"])
        #expect(j.stdout.contains(#""profile":"octopus","system":"8008","balance":-1440,"currency":"HKD""#))
        #expect(j.stdout.contains(#""profile":"shenzhen-tong","system":"8005","balance":1230,"currency":"CNY""#))
    }
}
