import FeliCa
import FeliCaEmulators
import FeliCaSimulation
import Foundation
import TestSupport
import Testing
import FeliCaCards

/// Runs a libnfc example program against a connection string; returns (status, stdout + stderr).
func runLibNFCTool(_ tool: String, _ arguments: [String], device: String) throws -> (Int32, String) {
    let r = try runProgram("/usr/bin/\(tool)", arguments, environment: ["LIBNFC_DEVICE": device])
    return (r.status, r.stdout + r.stderr)
}

@Suite("libnfc's own nfc-list against the PN532 emulator", .serialized)
struct NFCListTests {
    @Test("nfc-list sees the card's IDm, PMm and system code", arguments: [2, 4])
    func nfcListSeesCard(_ types: Int) throws {
        let card = try VirtualCard.named("suica")
        let server = try PN532Server(card: card)
        server.start()
        defer { server.stop() }
        let (status, output) = try runLibNFCTool("nfc-list", ["-t", "\(types)"], device: server.connectionString)
        #expect(status == 0, "\(output)")
        let (code, idm, pmm) = card.systems[0]
        let spaced = { (v: UInt64) in Hex.encode((0..<8).map { UInt8(truncatingIfNeeded: v >> (56 - 8 * UInt64($0))) }, separator: "  ") }
        #expect(output.contains("NFC device: user defined device opened"), "\(output)")
        #expect(output.contains("1 Felica (\(types == 2 ? 212 : 424) kbps) passive target(s) found"), "\(output)")
        #expect(output.contains("ID (NFCID2): \(spaced(idm.rawValue))"), "\(output)")
        #expect(output.contains("Parameter (PAD): \(spaced(pmm.rawValue))"), "\(output)")
        #expect(output.contains("System Code (SC): \(Hex.encode([UInt8(code.rawValue >> 8), UInt8(code.rawValue & 0xFF)], separator: "  "))"), "\(output)")
    }

    @Test("nfc-list with every modulation finds nothing but the FeliCa card, and without a card nothing")
    func nfcListAllTypes() throws {
        let server = try PN532Server(card: try VirtualCard.named("suica"))
        server.start()
        defer { server.stop() }
        let (status, output) = try runLibNFCTool("nfc-list", [], device: server.connectionString)
        #expect(status == 0, "\(output)")
        #expect(output.contains("1 Felica (212 kbps) passive target(s) found"), "\(output)")
        #expect(!output.contains("ISO14443A passive target(s) found"), "\(output)")
        #expect(server.invalidFrames == 0)

        let empty = try PN532Server(card: nil)
        empty.start()
        defer { empty.stop() }
        let (status2, output2) = try runLibNFCTool("nfc-list", ["-t", "6"], device: empty.connectionString)
        #expect(status2 == 0, "\(output2)")
        #expect(output2.contains("opened"), "\(output2)")
        #expect(!output2.contains("passive target(s) found"), "\(output2)")
    }
}
