import FeliCa
import FeliCaCards
import FeliCaSecurity
import FeliCaSimulation
import Testing

/// The Lite-S card key's Triple-DES (OpenSSL's libcrypto) against published vectors, and the
/// virtual card answering writes, MACs and the mutual authentication as a tag does.
@Suite("FeliCa Lite-S: card key, MACs, writes")
struct LiteSTests {
    static func bytes(_ hex: String) -> [UInt8] { Hex.decode(hex.filter { $0 != " " })! }

    /// nfcpy tests/test_tag_tt3_sony.py, TestFelicaLite.test_generate_mac: data 00..1F,
    /// key 00..0F, IV 00..07; the MAC, and the MAC with the key's halves swapped.
    @Test func generateMACVectors() throws {
        let key = Array(0..<16).map(UInt8.init), data = Array(0..<32).map(UInt8.init)
        let plain = try LiteMAC.generate(data, key: key, iv: Array(0..<8).map(UInt8.init))
        let flipped = try LiteMAC.generate(data, key: Array(key[8..<16] + key[0..<8]), iv: Array(0..<8).map(UInt8.init))
        #expect(Hex.encode(plain) == "0b1268d7a4ac6932")
        #expect(Hex.encode(flipped) == "18cdd33c0fb25dd7")
    }

    /// nfcpy tests/test_tag_tt3_sony.py, TestFelicaLiteS.test_protect_ndef_tag_readonly: key
    /// "0123456789abcdef", RC 00..0F (written as 07..00 0F..08); the tag's MAC over its ID block
    /// 0102030405060708 00…, the MAC_A of the STATE write (WCNT 00FEFF), and the MAC over
    /// STATE 01 00… read back.
    @Test func nfcpyAuthenticationVectors() throws {
        let key = try LiteCardKey(bytes: Array("0123456789abcdef".utf8))
        let mac = try LiteMAC(key: key, challenge: Array(0..<16).map(UInt8.init))
        #expect(mac.rcBlock == Self.bytes("07060504 03020100 0f0e0d0c 0b0a0908"))
        #expect(key.ckBlock == Self.bytes("37363534 33323130 66656463 62613938"))
        let id = Self.bytes("01020304 05060708") + [UInt8](repeating: 0, count: 8)
        let idMAC = try mac.mac(id)
        #expect(Hex.encode(idMAC) == "91aec5b6d9b3b12d")
        let state: [UInt8] = [0x01] + [UInt8](repeating: 0, count: 15)
        let block = try mac.writeMACABlock(wcnt: [0x00, 0xFE, 0xFF], block: 0x92, data: state)
        #expect(block == Self.bytes("17c19e3b bdc3e8bd 00feff00 00000000"))
        let stateMAC = try mac.mac(state)
        #expect(Hex.encode(stateMAC) == "bd73eb7294a00279")
    }

    /// nfcpy tests/test_tag_tt3_sony.py, TestFelicaLite.test_authenticate: the same key and
    /// RC, an ID block of zeros, MAC cc97f1b97b8bbc79.
    @Test func nfcpyLiteAuthenticateVector() throws {
        let mac = try LiteMAC(key: LiteCardKey(bytes: Array("0123456789abcdef".utf8)), challenge: Array(0..<16).map(UInt8.init))
        let zeroMAC = try mac.mac([UInt8](repeating: 0, count: 16))
        #expect(Hex.encode(zeroMAC) == "cc97f1b97b8bbc79")
    }

    static func liteS(key: [UInt8]?) -> (CardSession, VirtualCard) {
        var image = SampleCards.liteS
        image.cardKey = key
        let card = VirtualCard(image: image)
        return (CardSession(transport: VirtualTransport(card: card, name: "virtual:lite-s")), card)
    }

    static let key = Array("FeliCa-Lite-Key!".utf8)

    @Test func mutualAuthenticationWithTheRightKeyOnly() async throws {
        let (session, _) = Self.liteS(key: Self.key)
        let target = try await session.detect()
        let good = try await LiteAuthentication.verify(key: LiteCardKey(bytes: Self.key), session: session, target: target)
        #expect(good.outcome == .mutual)
        #expect(Array(good.idBlock.prefix(8)) == target.idm.bytes)
        let bad = try await LiteAuthentication.verify(key: LiteCardKey(bytes: Array(Self.key.reversed())), session: session, target: target)
        #expect(bad.outcome == .internalFailed)
    }

    @Test func writesGoThrough0009OneBlockAndReadBackThrough000B() async throws {
        let (session, card) = Self.liteS(key: nil)
        let target = try await session.detect()
        let data = Array(0..<16).map(UInt8.init)
        let outcome = try await session.writeConfirmed(service: 0x0009, blocks: [(5, data)], readingThrough: 0x000B, to: target)
        #expect(outcome == .stored)
        #expect(card.image.systems[0].services[0].block(5) == data)
        // Two blocks in one command: the chip takes one (or one and MAC_A).
        await #expect(throws: FeliCaError(.status, "")) {
            try await session.write(service: 0x0009, blocks: [(5, data), (6, data)], to: target)
        }
        // 000B is read-only; D_ID is read-only; MC is locked in the sample (byte 2 is 00).
        for (service, block) in [(ServiceCode(0x000B), 5), (0x0009, 0x83), (0x0009, 0x88)] {
            do throws(FeliCaError) {
                try await session.write(service: service, blocks: [(block, data)], to: target)
                Issue.record("\(service) block \(block): written")
            } catch {
                #expect(error.code == .status, "\(error)")
                #expect(error.statusFlags?.isSuccess == false)
            }
        }
        #expect(card.image.systems[0].services[0].block(0x88) == FeliCaLite.MemoryConfiguration.block(answersNDEF: true))
    }

    @Test func readOnlyUserBlocksRefuseWrites() async throws {
        var image = SampleCards.liteS
        // S_PAD0-2 writable only (MC bytes 0-1 = 0007).
        image.systems[0].services[0].blocksAt[0x88] = [0x07, 0x00, 0x00, 0x01] + [UInt8](repeating: 0, count: 12)
        let card = VirtualCard(image: image)
        let session = CardSession(transport: VirtualTransport(card: card, name: "virtual:lite-s"))
        let target = try await session.detect()
        let before = card.image.systems[0].services[0].block(3)
        await #expect(throws: FeliCaError(.status, "")) {
            try await session.write(service: 0x0009, blocks: [(3, [UInt8](repeating: 0xEE, count: 16))], to: target)
        }
        #expect(card.image.systems[0].services[0].block(3) == before)
        let outcome = try await session.writeConfirmed(service: 0x0009, blocks: [(2, [UInt8](repeating: 0xEE, count: 16))], readingThrough: 0x000B, to: target)
        #expect(outcome == .stored)
    }

    /// MC bytes 8-9: block 4 takes a write only with MAC_A; bytes 6-7: block 5 reads only with
    /// MAC_A after mutual authentication.
    @Test func macRequiredBlocks() async throws {
        var image = SampleCards.liteS
        image.cardKey = Self.key
        var mc = FeliCaLite.MemoryConfiguration.block(answersNDEF: true)
        mc[8] = 0x10  // block 4: write with MAC_A
        mc[6] = 0x20  // block 5: read with MAC_A
        image.systems[0].services[0].blocksAt[0x88] = mc
        let card = VirtualCard(image: image)
        let session = CardSession(transport: VirtualTransport(card: card, name: "virtual:lite-s"))
        let target = try await session.detect()
        let data = [UInt8](repeating: 0x5A, count: 16)
        await #expect(throws: FeliCaError(.status, "")) {
            try await session.write(service: 0x0009, blocks: [(4, data)], to: target)
        }
        await #expect(throws: FeliCaError(.status, "")) {
            _ = try await session.read(service: 0x000B, blocks: 5..<6, from: target)
        }
        let auth = try await LiteAuthentication.verify(key: LiteCardKey(bytes: Self.key), session: session, target: target)
        #expect(auth.outcome == .mutual)
        let wcnt = Array(try await session.read(service: 0x000B, blocks: 0x90..<0x91, from: target)[0].prefix(3))
        let maca = try auth.mac.writeMACABlock(wcnt: wcnt, block: 4, data: data)
        try await session.write(service: 0x0009, blocks: [(4, data), (0x91, maca)], to: target)
        #expect(card.image.systems[0].services[0].block(4) == data)
        // A MAC_A under a stale write counter is refused.
        await #expect(throws: FeliCaError(.status, "")) {
            try await session.write(service: 0x0009, blocks: [(4, data), (0x91, maca)], to: target)
        }
        let (blocks, ok) = try await LiteAuthentication.readChecked(blocks: [5], mac: auth.mac, session: session, target: target)
        #expect(ok)
        #expect(blocks == [card.image.systems[0].services[0].block(5)!])
    }
}
