import FeliCa
import FeliCaSimulation
import Foundation
import Testing
import FeliCaCards

// `felica write`, `felica ndef write|format|protect` and `felica verify` on the command line:
// refusals before anything is sent, usage errors, the frames of --dry-run, and a write the
// card never answered, settled by reading back.
@Suite("felica write, ndef write, verify")
struct WriteCommandTests {
    static let data = "00112233445566778899aabbccddeeff"

    static func imageFile(_ image: CardImage, _ name: String) throws -> String {
        let path = NSTemporaryDirectory() + "write-\(name)-\(getpid()).json"
        try image.jsonText().write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test func readOnlyKeyedAndAbsentServicesAreRefusedInWords() throws {
        for (service, words) in [("090f", "cyclic read-only, no key: the card refuses every write"),
                                 ("1008", "random read-write, key: writing it needs the service key"),
                                 ("1009", "the card has no service 1009")] {
            let r = try run(["write", "--service", service, "--block", "0", "--data", Self.data, "--device", "virtual:suica"])
            #expect(r.status == 1, "\(service): \(r.stderr)")
            #expect(r.stdout.isEmpty)
            #expect(r.stderr.contains(words) && r.stderr.contains("nothing was sent"), "\(service): \(r.stderr)")
        }
    }

    @Test func dryRunPrintsTheFramesAndOpensNoReader() throws {
        let r = try run(["write", "--service", "0009", "--block", "5", "--data", Self.data + Self.data, "--dry-run", "--device", "usb:999:999"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout == "2008000000000000000001090001800500112233445566778899aabbccddeeff\n2008000000000000000001090001800600112233445566778899aabbccddeeff\n")
    }

    @Test(arguments: [
        (["write", "--service", "0009", "--block", "1", "--block", "2", "--data", data], "give them in pairs"),
        (["write", "--service", "0009", "--block", "1", "--data", "0011"], "whole 16-byte blocks"),
        (["ndef", "write", "--uri", "https://a.example", "--text", "b"], "not several"),
        (["ndef", "write"], "needs what to write"),
        (["ndef", "write", "--title", "x", "--uri", "https://a.example"], "--title goes with --smart-poster"),
        (["ndef", "erase"], "unknown action 'erase'"),
        (["ndef", "--uri", "https://a.example"], "is for ndef write"),
        (["verify", "--card-key", "0011"], "32 hex digits"),
        (["read", "--service", "000b", "--card-key", "00112233445566778899aabbccddeeff"], "--card-key goes with --mac"),
    ])
    func usageErrors(_ args: [String], _ words: String) throws {
        let r = try run(args)
        #expect(r.status == 64, "\(args): \(r.stderr)")
        #expect(r.stderr.contains(words), "\(args): \(r.stderr)")
    }

    @Test func aLiteSWriteIsReadBackAndAnUnansweredOneIsReportedNotDone() throws {
        let ok = try run(["write", "--service", "0009", "--block", "3", "--data", Self.data, "--json", "--device", "virtual:lite-s"])
        #expect(ok.status == 0, "\(ok.stderr)")
        #expect(ok.stdout.contains(#""stored":true"#))
        // A card that never answers writes (as if each was lost on the way): read back, not done, sent once.
        var image = SampleCards.liteS
        image.ignores = [.writeWithoutEncryption]
        let path = try Self.imageFile(image, "deaf")
        defer { unlink(path) }
        let lost = try run(["write", "--service", "0009", "--block", "3", "--data", Self.data, "--device", "virtual:" + path])
        #expect(lost.status == 1)
        #expect(lost.stderr.contains("was lost and reading back shows the old data: the write was not done"), "\(lost.stderr)")
    }

    @Test func ndefWriteThenReadAndTheRoomLeft() throws {
        var image = SampleCards.liteS
        image.systems[0].services[0].blocks![0] = T3TAttributesBlock.readOnly
        let path = try Self.imageFile(image, "ro")
        defer { unlink(path) }
        let ro = try run(["ndef", "write", "--uri", "https://a.example", "--device", "virtual:" + path])
        #expect(ro.status == 1)
        #expect(ro.stderr.contains("read-only"), "\(ro.stderr)")
        let big = try run(["ndef", "write", "--text", String(repeating: "x", count: 300), "--device", "virtual:lite-s"])
        #expect(big.status == 1)
        #expect(big.stderr.contains("the tag holds 208") && big.stderr.contains("too many"), "\(big.stderr)")
        let w = try run(["ndef", "write", "--smart-poster", "https://example.org", "--title", "Example", "--device", "virtual:lite-s"])
        #expect(w.status == 0, "\(w.stderr)")
        #expect(w.stdout.contains("Write commands"))
    }

    @Test func formatAndProtectAskForYes() throws {
        for action in ["format", "protect"] {
            let r = try run(["ndef", action, "--device", "virtual:lite-s"])
            #expect(r.status == 1)
            #expect(r.stderr.contains("cannot be undone") && r.stderr.contains("--yes"), "\(r.stderr)")
        }
        let f = try run(["ndef", "format", "--yes", "--device", "virtual:lite-s"])
        #expect(f.status == 0 && f.stdout.contains("13 blocks (208 bytes)"), "\(f.stderr)")
        let s = try run(["ndef", "format", "--yes", "--device", "virtual:suica"])
        #expect(s.status == 1 && s.stderr.contains("no FeliCa Lite or Lite-S"), "\(s.stderr)")
    }

    @Test func verifyAgreesWithTheImagesKey() throws {
        var image = SampleCards.liteS
        image.cardKey = Array("0123456789abcdef".utf8)
        let path = try Self.imageFile(image, "keyed")
        defer { unlink(path) }
        let keyFile = NSTemporaryDirectory() + "write-key-\(getpid()).txt"
        try "30313233 34353637 38396162 63646566\n".write(toFile: keyFile, atomically: true, encoding: .utf8)
        defer { unlink(keyFile) }
        let good = try run(["verify", "--card-key", "@" + keyFile, "--device", "virtual:" + path])
        #expect(good.status == 0 && good.stdout.contains("holds the card key"), "\(good.stdout) \(good.stderr)")
        let bad = try run(["verify", "--card-key", "30313233343536373839616263646500", "--device", "virtual:" + path, "--json"])
        #expect(bad.status == 1 && bad.stdout.contains(#""holdsKey":false"#), "\(bad.stdout) \(bad.stderr)")
        let suica = try run(["verify", "--card-key", "30313233343536373839616263646566", "--device", "virtual:suica"])
        #expect(suica.status == 1 && suica.stderr.contains("no FeliCa Lite-S"), "\(suica.stderr)")
    }
}

/// An attribute block saying read-only (RWFlag 00), the sample's message length.
enum T3TAttributesBlock {
    static var readOnly: [UInt8] {
        var b = SampleCards.liteS.systems[0].services[0].blocks![0]
        b[10] = 0
        let sum = b[0..<14].reduce(0) { $0 + Int($1) }
        b[14] = UInt8(sum >> 8); b[15] = UInt8(sum & 0xFF)
        return b
    }
}
