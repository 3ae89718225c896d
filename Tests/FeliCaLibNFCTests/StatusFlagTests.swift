import FeliCa
import FeliCaLibNFC
import FeliCaSimulation
import TestSupport
import Testing

/// One malformed (or refused) Read or Write Without Encryption and the status flags a card
/// answers it with. SF2 values: the FeliCa card user's manual's status table (Docs/protocol.md,
/// "Status flags"), as nfcpy's `tt3.py` Type 3 emulation also answers A1, A2 and A3; SF1 is
/// the 1-based element at fault, or FF when the error is not tied to one element.
struct StatusVector: CustomTestStringConvertible, Sendable {
    var name: String
    /// Command code and everything after the IDm (LEN and IDm are added).
    var code: UInt8
    var body: [UInt8]
    var sf1: UInt8
    var sf2: UInt8
    var testDescription: String { name }

    /// The packet addressed to `idm`.
    func packet(_ idm: IDm) -> [UInt8] {
        let idmBytes = (0..<8).map { UInt8(truncatingIfNeeded: idm.rawValue >> (56 - 8 * $0)) }
        return [UInt8(2 + 8 + body.count), code] + idmBytes + body
    }
}

/// Services of the test card (system 0003): 0009 random read-write (2 blocks), 008B
/// random read-only (1 block), 090F cyclic read-only (20 blocks), 1808 needs a key; the
/// card reads at most 8 blocks at once.
private let read: UInt8 = 0x06, write: UInt8 = 0x08
private let data16 = [UInt8](repeating: 0x5A, count: 16)
let statusVectors: [StatusVector] = [
    StatusVector(name: "no services (m = 0)", code: read, body: [0x00, 0x01, 0x80, 0x00], sf1: 0xFF, sf2: 0xA1),
    StatusVector(name: "17 services", code: read, body: [17] + Array(repeating: [0x8B, 0x00], count: 17).flatMap { $0 } + [0x01, 0x80, 0x00], sf1: 0xFF, sf2: 0xA1),
    StatusVector(name: "service list cut short", code: read, body: [0x02, 0x8B, 0x00], sf1: 0xFF, sf2: 0xA1),
    StatusVector(name: "no blocks (n = 0)", code: read, body: [0x01, 0x8B, 0x00, 0x00], sf1: 0xFF, sf2: 0xA2),
    StatusVector(name: "number of blocks missing", code: read, body: [0x01, 0x8B, 0x00], sf1: 0xFF, sf2: 0xA2),
    StatusVector(name: "more blocks than the card reads at once (9 > 8)", code: read,
                 body: [0x01, 0x0F, 0x09, 0x09] + (0..<9).flatMap { [0x80, UInt8($0)] }, sf1: 0xFF, sf2: 0xA2),
    StatusVector(name: "2-byte block list element cut short", code: read, body: [0x01, 0x8B, 0x00, 0x01, 0x80], sf1: 0xFF, sf2: 0xA2),
    StatusVector(name: "3-byte block list element cut short", code: read, body: [0x01, 0x8B, 0x00, 0x01, 0x00, 0x00], sf1: 0xFF, sf2: 0xA2),
    StatusVector(name: "fewer elements than the number of blocks", code: read, body: [0x01, 0x8B, 0x00, 0x02, 0x80, 0x00], sf1: 0xFF, sf2: 0xA2),
    StatusVector(name: "element 1 names service index 1 of a 1-service list", code: read, body: [0x01, 0x8B, 0x00, 0x01, 0x81, 0x00], sf1: 0x01, sf2: 0xA3),
    StatusVector(name: "element 2 names service index 2 of a 2-service list", code: read,
                 body: [0x02, 0x8B, 0x00, 0x0F, 0x09, 0x02, 0x80, 0x00, 0x82, 0x00], sf1: 0x02, sf2: 0xA3),
    StatusVector(name: "a service the card does not hold", code: read, body: [0x01, 0x49, 0x44, 0x01, 0x80, 0x00], sf1: 0x01, sf2: 0xA6),
    StatusVector(name: "an absent service no element names", code: read, body: [0x02, 0x8B, 0x00, 0x49, 0x44, 0x01, 0x80, 0x00], sf1: 0xFF, sf2: 0xA6),
    StatusVector(name: "a service that needs a key", code: read, body: [0x01, 0x08, 0x18, 0x01, 0x80, 0x00], sf1: 0x01, sf2: 0xA5),
    StatusVector(name: "access mode 1 (cashback) on a random service", code: read, body: [0x01, 0x8B, 0x00, 0x01, 0x90, 0x00], sf1: 0x01, sf2: 0xA7),
    StatusVector(name: "block 1 of a 1-block service", code: read, body: [0x01, 0x8B, 0x00, 0x01, 0x80, 0x01], sf1: 0x01, sf2: 0xA8),
    StatusVector(name: "block 256 (3-byte element) of a 20-block service, second element", code: read,
                 body: [0x01, 0x0F, 0x09, 0x02, 0x80, 0x00, 0x00, 0x00, 0x01], sf1: 0x02, sf2: 0xA8),
    StatusVector(name: "write to a read-only service", code: write, body: [0x01, 0x8B, 0x00, 0x01, 0x80, 0x00] + data16, sf1: 0x01, sf2: 0xA4),
    StatusVector(name: "write with 15 data bytes for one block", code: write, body: [0x01, 0x09, 0x00, 0x01, 0x80, 0x00] + data16.dropLast(), sf1: 0xFF, sf2: 0xA2),
    StatusVector(name: "write with no services", code: write, body: [0x00, 0x01, 0x80, 0x00] + data16, sf1: 0xFF, sf2: 0xA1),
    StatusVector(name: "write naming service index 3 of a 1-service list", code: write, body: [0x01, 0x09, 0x00, 0x01, 0x83, 0x00] + data16, sf1: 0x01, sf2: 0xA3),
    StatusVector(name: "write to block 2 of a 2-block service", code: write, body: [0x01, 0x09, 0x00, 0x01, 0x80, 0x02] + data16, sf1: 0x01, sf2: 0xA8),
    StatusVector(name: "a well-formed read succeeds", code: read, body: [0x01, 0x8B, 0x00, 0x01, 0x80, 0x00], sf1: 0x00, sf2: 0x00),
    StatusVector(name: "a well-formed write succeeds", code: write, body: [0x01, 0x09, 0x00, 0x01, 0x80, 0x01] + data16, sf1: 0x00, sf2: 0x00),
]

func statusTestCard() -> VirtualCard {
    let block = [UInt8](repeating: 0, count: 16)
    return VirtualCard(image: CardImage(maxBlocksPerRead: 8, systems: [
        CardImage.System(code: 0x0003, idm: IDm(rawValue: 0x0101_0000_0000_0001), services: [
            .init(code: 0x0009, blocks: [block, block]),
            .init(code: 0x008B, blocks: [block]),
            .init(code: 0x090F, blocks: Array(repeating: block, count: 20)),
            .init(code: 0x1808, keyVersion: 0x0100, blockCount: 3),
        ]),
    ]))
}

/// The status flags of a Read or Write Without Encryption reply: LEN code IDm SF1 SF2.
private func flags(_ reply: [UInt8]?) -> [UInt8]? {
    guard let reply, reply.count >= 12 else { return nil }
    return Array(reply[10..<12])
}

@Suite("status flags for malformed and refused block access")
struct StatusFlagTests {
    static let idm = IDm(rawValue: 0x0101_0000_0000_0001)

    @Test("the virtual card answers each with its status pair", arguments: statusVectors)
    func virtualCard(_ v: StatusVector) {
        let reply = statusTestCard().respond(to: v.packet(Self.idm))
        #expect(flags(reply) == [v.sf1, v.sf2])
        if v.sf1 == 0 && v.code == read { #expect(reply?.count == 13 + 16) }
        if v.sf1 != 0 { #expect(reply?.count == 12, "an error reply carries no block count or data") }
    }

    @Test("libnfc through the PN532 emulator gets the same status pair", .serialized, arguments: statusVectors)
    func throughLibNFC(_ v: StatusVector) async throws {
        let reply = try await withEmulatedReader(card: statusTestCard()) { t, _ in
            _ = try await t.exchange(PollingCommand().encode(), timeout: .milliseconds(20))
            return try await t.exchange(v.packet(Self.idm), timeout: .milliseconds(100))
        }
        #expect(flags(reply) == [v.sf1, v.sf2])
    }

    @Test("another IDm, or a LEN that disagrees with the frame, gets no answer at all")
    func silence() {
        let card = statusTestCard()
        let v = statusVectors[0]
        #expect(card.respond(to: v.packet(IDm(rawValue: 0x0101_0000_0000_0002))) == nil)
        var packet = v.packet(Self.idm)
        packet[0] += 1
        #expect(card.respond(to: packet) == nil)
    }
}
