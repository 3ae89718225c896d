import FeliCa
import FeliCaJSON
import FeliCaSimulation
import Foundation
import Testing
import FeliCaCards

/// `--redact` and `felica trace redact`: what people share holds no IDm and no card
/// number, and still decodes to the same purses.
@Suite struct RedactCommandTests {
    /// A key of the test's own, so no test writes to the home directory.
    static let env = ["FELICA_REDACT_KEY": "000102030405060708090a0b0c0d0e0f"]

    /// The wallet's identifying values: every system's IDm and the three card numbers.
    static let originals: [String] = {
        let image = SampleCards.wallet
        return image.systems.indices.map { image.idm(ofSystem: $0).hex }
            + ["1901987654321001", "7000654321098765", "6900009876543210"]
    }()

    /// The hex of every original, in either case and spaced as Flipper writes bytes.
    static func leaks(_ text: String) -> [String] {
        let squeezed = text.lowercased().replacingOccurrences(of: " ", with: "")
        return originals.filter { squeezed.contains($0) }
    }

    /// The raw bytes of every original in a binary file.
    static func rawLeaks(_ data: [UInt8]) -> [String] {
        originals.filter { hex in
            let needle = Hex.decode(hex)!
            return data.count >= needle.count && (0...(data.count - needle.count)).contains { Array(data[$0..<($0 + needle.count)]) == needle }
        }
    }

    /// `history --json` with what redaction replaces taken out: the purses' balances,
    /// amounts, dates and stations.
    static func decoded(_ json: String) throws -> JSONValue {
        var purses: [JSONValue] = []
        for p in try JSONValue.parse(json)["purses"]?.arrayValue ?? [] {
            guard let o = p.objectValue else { continue }
            purses.append(.object(JSONObject(o.members.filter { $0.key != "number" }.map { ($0.key, $0.value) })))
        }
        return .array(purses)
    }

    static func mode(_ path: String) throws -> Int {
        (try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int) ?? -1
    }

    /// The done-when: a redacted dump, in each format it is written in, contains no byte
    /// sequence of the original IDm (hex, any case) or card numbers, and decodes to the
    /// same balance, amounts and stations.
    @Test(arguments: ["felica", "flipper", "metrodroid"])
    func aRedactedDumpHidesTheIDmAndDecodesTheSame(_ format: String) throws {
        let path = temporaryPath("wallet-redacted-\(format).\(format == "flipper" ? "nfc" : "json")")
        try? FileManager.default.removeItem(atPath: path)
        let w = try run(["dump", "--device", "virtual:wallet", "--redact", "--format", format, "-o", path], environment: Self.env)
        #expect(w.status == 0, "\(w.stderr)")
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(Self.leaks(text).isEmpty, "\(Self.leaks(text)) in the redacted dump")
        #expect(try Self.mode(path) == 0o600)
        let live = try run(["history", "--device", "virtual:wallet", "--json"])
        let redacted = try run(["history", "--device", "virtual:" + path, "--json"])
        #expect(redacted.status == 0, "\(redacted.stderr)")
        #expect(try Self.decoded(redacted.stdout) == Self.decoded(live.stdout))
        #expect(Self.leaks(redacted.stdout).isEmpty)
        // The numbers are there, as pseudonyms of the same shape.
        let numbers = try JSONValue.parse(redacted.stdout)["purses"]?.arrayValue?.compactMap { $0["number"]?.stringValue } ?? []
        #expect(numbers.count == 3)
        #expect(numbers.allSatisfy { $0.allSatisfy { $0.isNumber || $0 == " " || $0 == "-" } })
    }

    /// The same card gives the same pseudonym in every dump (so dumps line up), another key
    /// another one; balance and history --redact show the pseudonyms too.
    @Test func pseudonymsAreStable() throws {
        let a = try run(["balance", "--device", "virtual:wallet", "--json", "--redact"], environment: Self.env)
        let b = try run(["history", "--device", "virtual:wallet", "--json", "--redact"], environment: Self.env)
        let other = try run(["balance", "--device", "virtual:wallet", "--json", "--redact"],
                            environment: ["FELICA_REDACT_KEY": "ffeeddccbbaa99887766554433221100"])
        let idm = { (s: String) in try JSONValue.parse(s)["idm"]?.stringValue }
        #expect(try idm(a.stdout) == idm(b.stdout))
        #expect(try idm(a.stdout) != idm(other.stdout))
        #expect(try idm(a.stdout) != SampleCards.wallet.idm(ofSystem: 0).hex)
        #expect(Self.leaks(a.stdout + b.stdout + other.stdout).isEmpty)
    }

    /// Without FELICA_REDACT_KEY the key is made once, 0600, and kept.
    @Test func theKeyFileIsMadePrivateOnce() throws {
        let config = temporaryPath("redact-config")
        try? FileManager.default.removeItem(atPath: config)
        let first = try run(["poll", "--device", "virtual:suica", "--json", "--redact"], environment: ["XDG_CONFIG_HOME": config])
        #expect(first.status == 0, "\(first.stderr)")
        let key = config + "/felica/redact-key"
        #expect(try Self.mode(key) == 0o600)
        let second = try run(["poll", "--device", "virtual:suica", "--json", "--redact"], environment: ["XDG_CONFIG_HOME": config])
        #expect(first.stdout == second.stdout)
        // The Suica sample's own IDm, in no case.
        #expect(!first.stdout.lowercased().contains("0101120312345678"), "\(first.stdout)")
        #expect(first.stdout.contains("\"idm\""), "\(first.stdout)")
        let bad = try run(["poll", "--device", "virtual:suica", "--redact"], environment: ["FELICA_REDACT_KEY": "1234"])
        #expect(bad.status != 0)
        #expect(bad.stderr.contains("FELICA_REDACT_KEY must be 32 hex digits"), "\(bad.stderr)")
    }

    /// A trace recorded with --redact, and a plain trace redacted afterwards, hold no IDm
    /// or number, and replay to what a redacted reading of the card shows; the export to
    /// pcapng with --redact holds none of their bytes.
    @Test func redactedTracesReplay() throws {
        let plain = temporaryPath("wallet-plain.jsonl"), recorded = temporaryPath("wallet-recorded.jsonl")
        let redacted = temporaryPath("wallet-redacted.jsonl"), pcap = temporaryPath("wallet-redacted.pcapng")
        for f in [plain, recorded, redacted, pcap] { try? FileManager.default.removeItem(atPath: f) }
        let expected = try run(["history", "--device", "virtual:wallet", "--json", "--redact", "--trace", recorded], environment: Self.env)
        #expect(expected.status == 0, "\(expected.stderr)")
        #expect(try run(["history", "--device", "virtual:wallet", "--json", "--trace", plain]).status == 0)
        let plainText = try String(contentsOfFile: plain, encoding: .utf8)
        #expect(!Self.leaks(plainText).isEmpty, "the plain trace holds the IDm")
        let r = try run(["trace", "redact", plain, redacted], environment: Self.env)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try Self.mode(redacted) == 0o600)
        for file in [recorded, redacted] {
            let text = try String(contentsOfFile: file, encoding: .utf8)
            #expect(Self.leaks(text).isEmpty, "\(file): \(Self.leaks(text))")
            let replayed = try run(["history", "--device", "replay:" + file, "--json"])
            #expect(replayed.status == 0, "\(file): \(replayed.stderr)")
            #expect(replayed.stdout == expected.stdout)
        }
        let e = try run(["trace", "export", plain, "--pcap", pcap, "--redact"], environment: Self.env)
        #expect(e.status == 0, "\(e.stderr)")
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: pcap)))
        #expect(Self.rawLeaks(bytes).isEmpty, "\(Self.rawLeaks(bytes)) in the pcapng")
        // The same export without --redact carries them: the check above can fail.
        let unredacted = temporaryPath("wallet-plain.pcapng")
        try? FileManager.default.removeItem(atPath: unredacted)
        #expect(try run(["trace", "export", plain, "--pcap", unredacted]).status == 0)
        let unredactedBytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: unredacted)))
        #expect(!Self.rawLeaks(unredactedBytes).isEmpty)
    }

    /// The output never replaces the input.
    @Test func theOutputIsNeverTheInput() throws {
        let plain = temporaryPath("same.jsonl")
        #expect(try run(["poll", "--device", "virtual:suica", "--trace", plain]).status == 0)
        let before = try String(contentsOfFile: plain, encoding: .utf8)
        let r = try run(["trace", "redact", plain, plain], environment: Self.env)
        #expect(r.status == 64, "\(r.stderr)")
        #expect(try String(contentsOfFile: plain, encoding: .utf8) == before)
    }
}
