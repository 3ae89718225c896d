import FeliCa
import FeliCaJSON
import FeliCaEmulators
import FeliCaSimulation
import Testing
import FeliCaCards

@Test func imageRoundTripsThroughJSON() throws {
    let image = twoSystemImage(maxBlocks: 12)
    let again = try CardImage(jsonText: image.jsonText())
    #expect(again == image)
    #expect(again.jsonText() == image.jsonText())
}

@Test func unknownKeysSurviveARoundTrip() throws {
    let text = """
        {"format":"felica-card/1","comment":"mine","systems":[{"code":"0003","note":1,"services":[
        {"code":"008b","blocks":["000102030405060708090a0b0c0d0e0f"],"label":"attributes"}]}]}
        """
    let image = try CardImage(jsonText: text)
    let out = try JSONValue.parse(image.jsonText())
    #expect(out["comment"] == "mine")
    #expect(out["systems"]?.arrayValue?[0]["note"] == 1)
    #expect(out["systems"]?.arrayValue?[0]["services"]?.arrayValue?[0]["label"] == "attributes")
}

struct BadImage: CustomTestStringConvertible, Sendable {
    let json: String
    let message: String
    var testDescription: String { message }
}

@Test(arguments: [
    BadImage(json: "{", message: "not valid JSON: line 1, column 2"),
    BadImage(json: #"{"systems":[]}"#, message: "$: missing required member \"format\""),
    BadImage(json: #"{"format":"felica-card/2","systems":[]}"#, message: "$.format"),
    BadImage(json: #"{"format":"felica-card/1","systems":[]}"#, message: "$.systems: a card holds at least one system"),
    BadImage(json: #"{"format":"felica-card/1","systems":[{"code":"00g3","services":[]}]}"#, message: "$.systems[0].code: \"00g3\" is not hex"),
    BadImage(json: #"{"format":"felica-card/1","systems":[{"code":"0003","services":[{"code":"008b","blocks":["00"]}]}]}"#,
             message: "$.systems[0].services[0].blocks[0]: \"00\" is too short: expected 16 bytes (32 hex digits), found 2 digits"),
    // Five hex digits are too many, not "not hex".
    BadImage(json: #"{"format":"felica-card/1","systems":[{"code":"fe001","services":[]}]}"#,
             message: "$.systems[0].code: \"fe001\" is too long: expected 2 bytes (4 hex digits), found 5 digits"),
    BadImage(json: #"{"format":"felica-card/1","systems":[{"code":"0003","services":[{"code":"008b","blocks":[]},{"code":"008b","blocks":[]}]}]}"#,
             message: "$.systems[0].services[1].code: duplicate service 008B"),
    BadImage(json: #"{"format":"felica-card/1","systems":[{"code":"0003","services":[]},{"code":"0003","services":[]}]}"#,
             message: "$.systems[1].code: duplicate system 0003"),
    BadImage(json: #"{"format":"felica-card/1","systems":[{"code":"0003","services":[{"code":"008b"}]}]}"#,
             message: "$.systems[0].services[0]: service 008B is readable without a key, so it needs \"blocks\""),
    BadImage(json: #"{"format":"felica-card/1","systems":[{"code":"0003","services":[{"code":"1808","blocks":[]}]}]}"#,
             message: "$.systems[0].services[0].blocks: service 1808 needs a key"),
    BadImage(json: #"{"format":"felica-card/1","maxBlocksPerRead":99,"systems":[{"code":"0003","services":[]}]}"#,
             message: "$.maxBlocksPerRead: expected a whole number 1-15"),
    BadImage(json: #"{"format":"felica-card/1","systems":[{"code":"ffff","services":[]}]}"#,
             message: "$.systems[0].code: FFFF is a Polling wildcard"),
    BadImage(json: #"{"format":"felica-card/1","systems":[{"code":"0003","services":{}}]}"#,
             message: "$.systems[0].services: expected an array, found an object"),
])
func badImagesNameThePath(_ bad: BadImage) {
    do {
        _ = try CardImage(jsonText: bad.json)
        Issue.record("accepted a bad image")
    } catch {
        #expect(error.code == .badInput)
        #expect(error.reason.hasPrefix(bad.message), "\(error.reason)")
    }
}

@Test func dumpingAVirtualCardGivesBackItsImage() async throws {
    let image = twoSystemImage()
    let card = VirtualCard(image: image)
    let s = CardSession(transport: VirtualTransport(card: card, name: "virtual:test"))
    var dumped = try await CardImage.read(using: s)
    #expect(dumped.pmm == CardImage.defaultPMm)
    dumped.pmm = nil
    #expect(dumped == image)
}

@Test func derivedIDmsCarryTheSystemNumber() {
    var image = twoSystemImage()
    image.systems[1].idm = nil
    #expect(image.idm(ofSystem: 1) == IDm(rawValue: 0x1101_0000_0000_0001))
}

@Test func unknownBuiltInNameIsExplained() {
    #expect(throws: FeliCaError.self) { try VirtualCard.named("suika") }
    do { _ = try VirtualCard.named("suika") } catch { #expect(error.reason.contains("built-in")) }
    do { _ = try VirtualCard.named("/nonexistent/card.json") } catch { #expect(error.reason.contains("/nonexistent/card.json")) }
}

@Test func cardPulledAtEveryExchangeGivesAnErrorAndAMarkedPartialDump() async throws {
    let image = twoSystemImage()
    let full = VirtualCard(image: image)
    _ = try await CardImage.read(using: CardSession(transport: VirtualTransport(card: full, name: "virtual:test")))
    let total = full.exchangeCount
    var partials = 0
    for n in 0..<total {
        let card = VirtualCard(image: image)
        card.removeAfter(exchanges: n)
        let s = CardSession(transport: VirtualTransport(card: card, name: "virtual:test"), options: {
            var o = CardSession.Options()
            o.retries = 0
            return o
        }())
        let (dumped, error) = await CardImage.readAllowingPartial(using: s)
        #expect(error != nil, "removal after \(n) exchanges went unnoticed")
        if let dumped {
            partials += 1
            #expect(dumped.extra["partial"]?["error"]?.stringValue == error?.reason)
            #expect(dumped.systems.count < image.systems.count)
            #expect(dumped.systems[0].services == image.systems[0].services)
        }
    }
    #expect(partials > 0)
}

/// A partial dump keeps what the card did not answer where a complete one does: at the top.
@Test func aPartialDumpNotesWhatTheCardDidNotAnswerAtTheTop() async throws {
    var image = twoSystemImage()
    image.ignores = [.requestBlockInformation]
    let full = VirtualCard(image: image)
    let complete = try await CardImage.read(using: CardSession(transport: VirtualTransport(card: full, name: "virtual:test")))
    #expect(complete.extra["notes"] != nil)
    // Pulled while the second system is read: the first is kept, with its note.
    var found = false
    for n in 1..<full.exchangeCount {
        let card = VirtualCard(image: image)
        card.removeAfter(exchanges: n)
        var o = CardSession.Options()
        o.retries = 0
        let (dumped, _) = await CardImage.readAllowingPartial(using: CardSession(transport: VirtualTransport(card: card, name: "virtual:test"), options: o))
        guard let dumped else { continue }
        found = true
        #expect(dumped.extra["notes"] != nil, "after \(n) exchanges")
        #expect(dumped.systems.allSatisfy { $0.extra["notes"] == nil }, "after \(n) exchanges")
    }
    #expect(found)
}
