import FeliCa
import FeliCaEmulators
import FeliCaSimulation
import Foundation
import Testing
import FeliCaCards

// `felica ndef` and the Lite-S profile on the command line: the virtual card, and the real
// libnfc stack on the PN532 emulator printing exactly the same.
@Suite("felica ndef", .serialized)
struct NDEFCommandTests {
    @Test func theSampleLiteSPrintsItsRecords() throws {
        let r = try run(["ndef", "--device", "virtual:lite-s"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("Record 1  URI   https://www.example.com/felica\n"))
        #expect(r.stdout.contains("Record 2  Text  [en, UTF-8] Hello from a FeliCa Lite-S\n"))
        #expect(r.stdout.contains("Record 3  Smart Poster  https://github.com/nfcpy/nfcpy\n  title [en] nfcpy\n  action do\n"))
        let j = try run(["ndef", "--device", "virtual:lite-s", "--json"])
        #expect(j.stdout.contains(#""records":[{"tnf":1,"type":"U","uri":"https://www.example.com/felica"},{"tnf":1,"type":"T","language":"en","encoding":"UTF-8","text":"Hello from a FeliCa Lite-S"}"#))
    }

    @Test func aCardWithoutNDEFIsAClearError() throws {
        for card in ["aime", "suica"] {
            let r = try run(["ndef", "--device", "virtual:" + card])
            #expect(r.status == 1)
            #expect(r.stdout.isEmpty)
            #expect(r.stderr.contains("has no NDEF system 12FC"), "\(r.stderr)")
        }
    }

    @Test func aDamagedAttributeBlockNamesItsField() throws {
        var image = SampleCards.liteS
        image.systems[0].services[0].blocks![0][15] ^= 1
        let path = NSTemporaryDirectory() + "ndef-bad-checksum-\(getpid()).json"
        try image.jsonText().write(toFile: path, atomically: true, encoding: .utf8)
        defer { unlink(path) }
        let r = try run(["ndef", "--device", "virtual:" + path])
        #expect(r.status == 1)
        #expect(r.stderr.contains("NDEF attribute block: checksum (bytes 14-15)"), "\(r.stderr)")
    }

    @Test func pollAndDumpNameTheLiteSAndItsIssuer() throws {
        let poll = try run(["poll", "--device", "virtual:aime"])
        #expect(poll.stdout.contains("IC       FeliCa Lite-S (RC-S966) (f1, lite-s)\n"))
        #expect(poll.stdout.contains("ID block IDd 012e5a000c0ffee0  DFC 0078 (SEGA Aime)\n"))
        let json = try run(["poll", "--device", "virtual:aime", "--json"])
        #expect(json.stdout.contains(#""idBlock":{"idd":"012e5a000c0ffee0","dfc":"0078","issuer":"SEGA Aime"}"#))
        let dump = try run(["dump", "--device", "virtual:lite-s"])
        #expect(dump.stdout.contains("    82 ID        012e4c11 22334455 00000000 00000000"))
        #expect(dump.stdout.contains("System 12FC (NDEF)  IDm 012e4c1122334455\n  the same memory as system 88B4 (one IDm)\n"))
    }

    @Test("through libnfc on the PN532 emulator, ndef, poll and dump print what the virtual card prints")
    func throughLibNFC() throws {
        for (card, commands) in [("lite-s", [["ndef"], ["ndef", "--json"], ["poll"], ["dump"]]), ("aime", [["poll", "--json"], ["dump"]])] {
            try withEmulatedDevice(card: try VirtualCard.named(card)) { device in
                for args in commands {
                    let virtual = try run(args + ["--device", "virtual:" + card])
                    let real = try run(args + ["--device", device], environment: ["LIBNFC_LOG_LEVEL": "0"])
                    #expect(real.status == 0, "\(card) \(args): \(real.stderr)")
                    #expect(real.stdout == virtual.stdout, "\(card) \(args)")
                }
                let none = try run(["ndef", "--device", device], environment: ["LIBNFC_LOG_LEVEL": "0"])
                #expect(card == "lite-s" || none.stderr.contains("has no NDEF system 12FC"), "\(none.stderr)")
            }
        }
    }
}

@Test func balanceOnAnNDEFTagPointsAtFelicaNDEF() throws {
    let r = try run(["balance", "--device", "virtual:lite-s"])
    #expect(r.status == 0)
    #expect(r.stdout == "No purse found on the card (systems: 88B4, 12FC).\n")
    #expect(r.stderr.contains("hint: the card is formatted for NDEF; `felica ndef` shows its message"))
    let balance = try run(["balance", "--device", "virtual:aime"])
    #expect(!balance.stderr.contains("hint:"))
}
