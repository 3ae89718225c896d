import Foundation
import Testing

/// The real files of Tests/RealWorld (SOURCES.md there) through the commands a user types.
@Suite struct RealWorldCommandTests {
    func real(_ name: String) -> String {
        packageRoot.appendingPathComponent("Tests/RealWorld/\(name)").path
    }

    /// FareBot's Flipper dumps of a real Suica, PASMO and ICOCA: `felica balance` shows what
    /// the card's balance block (008B bytes 11-12) holds, and `felica history` as many
    /// records as FareBot's FlipperIntegrationTest counts trips.
    @Test(arguments: [("farebot/Suica.nfc", "¥10", 20), ("farebot/PASMO.nfc", "¥0", 11), ("farebot/ICOCA.nfc", "¥175", 20)])
    func flipperTransitDumpsReadThroughTheCLI(_ file: String, _ balance: String, _ records: Int) throws {
        let b = try run(["balance", "--device", "virtual:" + real(file)])
        #expect(b.status == 0, "\(b.stderr)")
        #expect(b.stdout.hasSuffix(" " + balance + "\n") || b.stdout.contains(" " + balance + "\n"), "\(b.stdout)")
        let h = try run(["history", "--json", "--device", "virtual:" + real(file)])
        #expect(h.status == 0, "\(h.stderr)")
        let json = try JSONSerialization.jsonObject(with: Data(h.stdout.utf8)) as? [String: Any]
        let purses = json?["purses"] as? [[String: Any]] ?? []
        let history = purses.first?["transactions"] as? [Any] ?? []
        #expect(history.count == records)
    }

    /// A Metrodroid export of a Lite-S (system 88B4 only, MC SYS_OP = 01): `felica ndef`
    /// finds system 12FC and prints the URI Metrodroid's own test expects.
    @Test func aMetrodroidLiteSExportReadsWithFelicaNDEF() throws {
        let r = try run(["ndef", "--device", "virtual:" + real("metrodroid/felicalitendef.json")])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("URI   https://www.metrodroid.org\n"), "\(r.stdout)")
        let t = try run(["ndef", "--device", "virtual:" + real("metrodroid/felicatxt.json")])
        #expect(t.stdout.contains("[en, UTF-8] Metrodroid\n"), "\(t.stdout)")
    }

    /// Metrodroid's older XML exports (FelicaXmlImportTest: IDm 0101010101010101, system 3)
    /// read through `felica poll`, the PMm being the file's base64 `BTFDRUaCt/8=`.
    @Test(arguments: ["metrodroid/felica-idm.xml", "metrodroid/felica-no-idm.xml"])
    func metrodroidsXMLExportsReadThroughTheCLI(_ file: String) throws {
        let r = try run(["poll", "--device", "virtual:" + real(file)])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("IDm      0101010101010101\n"), "\(r.stdout)")
        #expect(r.stdout.contains("PMm      053143454682b7ff\n"), "\(r.stdout)")
        #expect(r.stdout.contains("Systems  0003 "), "\(r.stdout)")
    }

    /// Metroflip's saved Suica (history only, CRLF): `felica history` lists its 7 records,
    /// the oldest being the card's issue, credited with the 1000 yen it was sold with
    /// (Metroflip: byte 14 = 01 is the card's "birthday"; balance bytes 10-11 = E8 03).
    @Test(arguments: ["metroflip/suica_example.metro", "metroflip/suica_example.nfc"])
    func metroflipsSuicaReadsThroughTheCLI(_ file: String) throws {
        let h = try run(["history", "--json", "--device", "virtual:" + real(file)])
        #expect(h.status == 0, "\(h.stderr)")
        let json = try JSONSerialization.jsonObject(with: Data(h.stdout.utf8)) as? [String: Any]
        let purses = json?["purses"] as? [[String: Any]] ?? []
        let history = purses.first?["transactions"] as? [[String: Any]] ?? []
        #expect(history.count == 7)
        #expect(history.last?["balance"] as? Int == 1000)
        #expect(history.last?["amount"] as? Int == 1000)
    }

    /// The same Suica dump saved on Windows (CRLF) with a byte order mark reads the same.
    @Test func aWindowsSavedDumpReadsTheSame() throws {
        let text = try String(contentsOfFile: real("farebot/Suica.nfc"), encoding: .utf8)
        let path = temporaryPath("Suica-windows.nfc")
        try ("\u{FEFF}" + text.replacingOccurrences(of: "\n", with: "\r\n")).write(toFile: path, atomically: true, encoding: .utf8)
        let original = try run(["history", "--device", "virtual:" + real("farebot/Suica.nfc")])
        let windows = try run(["history", "--device", "virtual:" + path])
        #expect(windows.status == 0, "\(windows.stderr)")
        #expect(windows.stdout == original.stdout)
    }

    /// A real dump cut short names the file and the line whose count is not met.
    @Test func aTruncatedRealDumpNamesFileAndLine() throws {
        let text = try String(contentsOfFile: real("farebot/PASMO.nfc"), encoding: .utf8)
        let path = temporaryPath("PASMO-cut.nfc")
        try text.split(separator: "\n", omittingEmptySubsequences: false).prefix(120).joined(separator: "\n").write(toFile: path, atomically: true, encoding: .utf8)
        let r = try run(["history", "--device", "virtual:" + path])
        #expect(r.status == 1)
        #expect(r.stdout.isEmpty)
        #expect(r.stderr.hasPrefix("Error: card image \(path): line "), "\(r.stderr)")
        #expect(r.stderr.contains("cut short"), "\(r.stderr)")
    }
}
