import FeliCa
import FeliCaJSON
import FeliCaEmulators
import FeliCaSimulation
import Foundation
import Testing
import FeliCaCards

/// Cards that lack an optional command (Request Block Information, Search Service Code,
/// Request Response) still give a dump, without that information and with a note.
@Suite("Cards ignoring optional commands")
struct OptionalCommandTests {
    static func suica(ignoring: Set<CommandCode>) -> CardImage {
        var image = SampleCards.suica
        image.ignores = ignoring
        return image
    }

    @Test("the image keeps what the card ignores; a bad name is an error at its path")
    func json() throws {
        let image = Self.suica(ignoring: [.requestBlockInformation, .requestResponse])
        let text = image.jsonText()
        #expect(try JSONValue.parse(text)["ignores"] == .array([.string("request-response"), .string("request-block-information")]))
        #expect(try CardImage(json: JSONValue.parse(text)).ignores == [.requestBlockInformation, .requestResponse])
        let bad = text.replacing("\"request-response\"", with: "\"reqest-response\"")
        #expect(throws: FeliCaError(.badInput, "")) { try CardImage(json: JSONValue.parse(bad)) }
    }

    @Test("the virtual card stays silent to an ignored command")
    func silent() async throws {
        let card = VirtualCard(image: Self.suica(ignoring: [.requestBlockInformation]))
        let idm = card.systems[0].idm
        let blockInformation = try RequestBlockInformationCommand(idm: idm, nodes: [NodeCode(0x008B)]).encode()
        #expect(card.respond(to: blockInformation) == nil)
        #expect(card.respond(to: RequestResponseCommand(idm: idm).encode()) != nil)
    }

    @Test("a card that ignores Request Response is still present while it answers Polling")
    func presence() async throws {
        let card = VirtualCard(image: Self.suica(ignoring: [.requestResponse]))
        let session = CardSession(transport: VirtualTransport(card: card, name: "virtual:ignoring"))
        let first = try await session.detect()
        #expect(try await session.isPresent(first))
        card.isPresent = false
        #expect(try await session.isPresent(first) == false)
    }

    @Test("a dump completes without the ignored command's information, with a note", arguments: [
        Set<CommandCode>([.requestBlockInformation]), [.searchServiceCode], [.requestBlockInformation, .searchServiceCode, .requestResponse],
    ])
    func dump(_ ignored: Set<CommandCode>) async throws {
        let full = try await CardImage.read(using: CardSession(transport: VirtualTransport(card: VirtualCard(image: SampleCards.suica), name: "virtual:suica")))
        let card = VirtualCard(image: Self.suica(ignoring: ignored))
        let image = try await CardImage.read(using: CardSession(transport: VirtualTransport(card: card, name: "virtual:ignoring")))
        let notes = (image.extra["notes"]?.arrayValue ?? []).compactMap(\.stringValue)
        #expect(notes.contains { $0.contains("Request Block Information") } == ignored.contains(.requestBlockInformation))
        #expect(notes.contains { $0.contains("Search Service Code") } == ignored.contains(.searchServiceCode))
        // Every block readable without a key is still there.
        #expect(image.systems.count == full.systems.count)
        for (s, f) in zip(image.systems, full.systems) {
            for service in f.services where service.code.isReadableWithoutKey && !(service.blocks ?? []).isEmpty {
                #expect(s.services.first { $0.code == service.code }?.blocks == service.blocks, "service \(service.code)")
            }
        }
    }
}
