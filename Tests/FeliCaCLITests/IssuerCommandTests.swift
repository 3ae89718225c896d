import FeliCa
import FeliCaSimulation
import Foundation
import Testing
import FeliCaCards

/// The transit brand named on the command line: through the real libnfc stack on the PN532
/// emulator, and from a card image without asking the card.
@Suite struct IssuerCommandTests {
    /// The Suica sample with PASMO's area (and a keyed service in it) in place of Suica's
    /// own service.
    static func pasmo() -> CardImage {
        var image = SampleCards.suica
        image.systems[0].services.removeAll { $0.code == 0x1808 }
        image.systems[0].areas.append(CardImage.Area(code: 0x1CC0, end: 0x1DFF))
        image.systems[0].services.append(.init(code: 0x1CC8, keyVersion: 0x0200, blockCount: 2))
        image.systems[0].services.sort { $0.code < $1.code }
        return image
    }

    /// Request Service commands among the frames `-v` printed.
    static func requestServices(_ stderr: String) -> Int {
        stderr.split(separator: "\n").filter { $0.contains("→  Request Service ") }.count
    }

    @Test func pasmoThroughThePN532Emulator() throws {
        try withEmulatedDevice(card: VirtualCard(image: Self.pasmo())) { device in
            let h = try run(["history", "--device", device, "-v"])
            #expect(h.status == 0, "\(h.stderr)")
            #expect(h.stdout.hasPrefix("PASMO (Transit IC)     ¥1,234\n"), "\(h.stdout)")
            #expect(Self.requestServices(h.stderr) == 1)
            let b = try run(["balance", "--device", device, "--json", "-v"])
            #expect(!b.stdout.contains("\"issuer\""))
            #expect(Self.requestServices(b.stderr) == 0)
            let asked = try run(["balance", "--issuer", "--device", device, "--json", "-v"])
            #expect(asked.stdout.contains("\"profile\":\"transit-ic\",\"issuer\":\"PASMO\""), "\(asked.stdout)")
            #expect(Self.requestServices(asked.stderr) == 1)
        }
    }

    /// From a card image (ours, and the Metrodroid export of it, which lists no areas) the
    /// areas and services it lists decide: no Request Service is sent.
    @Test(arguments: ["felica", "metrodroid"])
    func aCardImageNamesItsBrandUnasked(_ format: String) throws {
        let image = temporaryPath("pasmo-\(format).json")
        try Self.pasmo().jsonText().write(toFile: image, atomically: true, encoding: .utf8)
        var path = image
        if format != "felica" {
            path = temporaryPath("pasmo-exported.\(format).json")
            let w = try run(["dump", "--device", "virtual:" + image, "--format", format, "-o", path])
            #expect(w.status == 0, "\(w.stderr)")
        }
        let h = try run(["history", "--device", "virtual:" + path, "--json", "-v"])
        #expect(h.status == 0, "\(h.stderr)")
        #expect(h.stdout.contains("\"issuer\":\"PASMO\""))
        #expect(Self.requestServices(h.stderr) == 0)
        let tree = try run(["dump", "--device", "virtual:" + path])
        #expect(tree.stdout.contains("System 0003 (transit IC, PASMO)"), "\(tree.stdout)")
    }

    /// A card whose areas match two brands is printed as Transit IC, with no issuer in JSON.
    @Test func twoBrandsStayTransitIC() throws {
        var image = Self.pasmo()
        image.systems[0].services.append(.init(code: 0x1808, keyVersion: 0x0100, blockCount: 3))
        image.systems[0].services.sort { $0.code < $1.code }
        try withEmulatedDevice(card: VirtualCard(image: image)) { device in
            let h = try run(["history", "--device", device])
            #expect(h.stdout.hasPrefix("Transit IC     ¥1,234\n"), "\(h.stdout)")
            let j = try run(["history", "--device", device, "--json"])
            #expect(!j.stdout.contains("\"issuer\""))
        }
    }

    /// The University Co-op purse through the real libnfc stack on the PN532 emulator:
    /// the same as the virtual card, member number redacted with --redact.
    @Test func univCoopThroughThePN532Emulator() throws {
        let virtual = try run(["history", "--device", "virtual:univ-coop", "--json"])
        try withEmulatedDevice(card: try VirtualCard.named("univ-coop")) { device in
            let h = try run(["history", "--device", device, "--json"])
            #expect(h.status == 0, "\(h.stderr)")
            #expect(h.stdout == virtual.stdout)
            #expect(h.stdout.contains("\"profile\":\"univ-coop\""))
            #expect(h.stdout.contains("\"number\":\"117519000272\""))
            let r = try run(["balance", "--device", device, "--json", "--redact"], environment: ["FELICA_REDACT_KEY": "000102030405060708090a0b0c0d0e0f"])
            #expect(r.stdout.contains("\"balance\":803"))
            #expect(!r.stdout.contains("117519000272"))
        }
    }
}
