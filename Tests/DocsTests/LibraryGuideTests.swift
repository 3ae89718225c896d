import FeliCa
import FeliCaSimulation
import Foundation
import Testing

// The code of Docs/library.md, compiled and run. Blocks of the guide appear here verbatim
// (SnippetSyncTests checks that); the lines around them set up and check the results.

// MARK: - Write a profile

/// A campus card: the member number in service 0x1A8B block 0 (ASCII), the meal credit in
/// service 0x1A97 block 0 (yen, little-endian, bytes 0-3). Both readable without a key.
struct CampusCard {
    static let system: SystemCode = 0xFE00
    static let memberService: ServiceCode = 0x1A8B
    static let creditService: ServiceCode = 0x1A97

    var memberNumber: String
    var credit: Int

    static func read(_ session: CardSession) async throws(FeliCaError) -> CampusCard {
        guard let card = try await session.select(system) else {
            throw FeliCaError(.noCard, "no card with the common area (FE00) answered")
        }
        let blocks = try await session.read([BlockRequest(service: memberService, blocks: 0..<1),
                                             BlockRequest(service: creditService, blocks: 0..<1)], from: card)
        let number = blocks[0][0].prefix { $0 != 0 }
        let credit = blocks[1][0][0..<4].reversed().reduce(0) { $0 << 8 | Int($1) }
        return CampusCard(memberNumber: String(decoding: number, as: UTF8.self), credit: credit)
    }
}

/// A campus card image: what `felica dump --json` would write from a real one.
func campusCardImage() -> CardImage {
    let member = Array("S1234567".utf8) + Array(repeating: 0, count: 8)
    let credit: [UInt8] = [0xE8, 0x03, 0x00, 0x00] + Array(repeating: 0, count: 12)  // 1000 yen
    return CardImage(systems: [
        CardImage.System(code: 0xFE00, services: [
            CardImage.Service(code: 0x1A8B, blocks: [member]),
            CardImage.Service(code: 0x1A97, blocks: [credit]),
        ]),
    ])
}

@Suite struct LibraryGuideTests {
    @Test func aProfileReadsItsCardFromAVirtualCard() async throws {
        let image = campusCardImage()
        let card = VirtualCard(image: image)
        let session = CardSession(transport: VirtualTransport(card: card, name: "virtual:campus"))
        let campus = try await CampusCard.read(session)
        #expect(campus.memberNumber == "S1234567")
        #expect(campus.credit == 1000)
        #expect(await session.exchangeCount == 2, "one Polling, one batched read")
    }

    @Test func aProfileSaysWhenTheCardIsNotItsKind() async throws {
        let session = CardSession(transport: VirtualTransport(card: try VirtualCard.named("suica"), name: "virtual:suica"))
        await #expect(throws: FeliCaError.self) { try await CampusCard.read(session) }
    }
}
