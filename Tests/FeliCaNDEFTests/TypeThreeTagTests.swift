import FeliCa
import FeliCaCards
import FeliCaJSON
import FeliCaNDEF
import FeliCaSimulation
import Testing

// The Type 3 Tag attribute block (NFC Forum T3T; nfcpy src/nfc/tag/tt3.py) field by field,
// and the tag read through the virtual card.

/// A Lite-S freshly formatted by nfcpy (tomosoft.jp's dump): Ver 1.0, Nbr 4, Nbw 1, Nmaxb 13,
/// read-write, Ln 0, checksum 0023.
let formattedLiteS = bytes("10 04 01 00 0d 00 00 00 00 00 01 00 00 00 00 23")
/// Metrodroid's felicandef.json: Nbr 1, Ln 0x13.
let metrodroidBlock = bytes("10 01 01 00 0d 00 00 00 00 00 01 00 00 13 00 33")

@Test func publishedAttributeBlocksDecode() throws {
    let a = try T3TAttributes(block: formattedLiteS)
    #expect(a.versionText == "1.0")
    #expect(a.nbr == 4 && a.nbw == 1 && a.nmaxb == 13)
    #expect(a.isWritable && a.length == 0)
    #expect(a.block == formattedLiteS)
    let b = try T3TAttributes(block: metrodroidBlock)
    #expect(b.nbr == 1 && b.length == 0x13 && b.messageBlocks == 2)
    #expect(b.block == metrodroidBlock)
}

/// `block` with byte `i` set to `v` and the checksum made right again.
func withField(_ i: Int, _ v: UInt8, of block: [UInt8] = formattedLiteS) -> [UInt8] {
    var b = block
    b[i] = v
    let sum = b[0..<14].reduce(0) { $0 + Int($1) }
    b[14] = UInt8(sum >> 8); b[15] = UInt8(sum & 0xFF)
    return b
}

@Test(arguments: [
    (Array(formattedLiteS.prefix(15) + [0x24]), "checksum (bytes 14-15)"),
    (withField(0, 0x20), "Ver (byte 0)"),
    (withField(1, 0x00), "Nbr (byte 1)"),
    (withField(9, 0x0F), "WriteF (byte 9) is 0F"),
    (withField(9, 0x05), "WriteF (byte 9) is 05"),
    (withField(10, 0x02), "RWFlag (byte 10)"),
    (withField(13, 13 * 16 + 1), "Ln (bytes 11-13)"),
    (withField(4, 0x01, of: withField(13, 0x20)), "past Nmaxb (bytes 3-4), 1 block"),
])
func aBadAttributeBlockNamesItsField(_ block: [UInt8], _ field: String) {
    do {
        _ = try T3TAttributes(block: block)
        Issue.record("accepted \(Hex.encode(block))")
    } catch {
        #expect(error.code == .invalidField)
        #expect(error.reason.contains(field), "\(error.reason)")
    }
}

@Test func anAttributeBlockOfTheWrongSizeIsAnError() {
    #expect(throws: FeliCaError(.badLength, "")) { try T3TAttributes(block: Array(formattedLiteS.prefix(15))) }
}

func virtualSession(_ image: CardImage) -> (CardSession, VirtualCard) {
    let card = VirtualCard(image: image)
    return (CardSession(transport: VirtualTransport(card: card, name: "virtual:test")), card)
}

@Test func theSampleLiteSGivesItsRecordsReadingNbrBlocksAtATime() async throws {
    let (session, _) = virtualSession(SampleCards.liteS)
    let tag = try await NDEFTag.read(using: session)
    #expect(tag.attributes.nbr == 4)
    #expect(tag.message == SampleCards.liteSMessage)
    #expect(tag.attributes.messageBlocks == 7)
    // Polling 12FC, block 0, blocks 1-4, blocks 5-7.
    #expect(await session.exchangeCount == 4)
    let kinds = try tag.records.map { r throws(FeliCaError) in try NDEFContent(r) }
    guard case .uri(let u) = kinds[0], case .text(let t) = kinds[1], case .smartPoster(let sp) = kinds[2] else {
        Issue.record("records: \(kinds)"); return
    }
    #expect(u.uri == "https://www.example.com/felica")
    #expect(t.language == "en" && t.text == "Hello from a FeliCa Lite-S")
    #expect(sp.uri == "https://github.com/nfcpy/nfcpy" && sp.actionName == "do")
    let json = NDEFRendering.json(tag)
    #expect(json["records"]?.arrayValue?.count == 3)
    #expect(json["records"]?.arrayValue?[0].serialized() == #"{"tnf":1,"type":"U","uri":"https://www.example.com/felica"}"#)
    #expect(NDEFRendering.lines(tag).contains("Record 2  Text  [en, UTF-8] Hello from a FeliCa Lite-S"))
}

/// The sample Lite-S with other user blocks.
func liteS(userBlocks: [[UInt8]]) -> CardImage {
    var image = SampleCards.liteS
    image.systems[0].services[0].blocks = userBlocks + [[UInt8](repeating: 0xFF, count: 16)]
    return image
}

@Test func aTagWithNbr1IsReadOneBlockAtATime() async throws {
    let (session, _) = virtualSession(liteS(userBlocks: T3TAttributes.blocks(for: SampleCards.liteSMessage, nbr: 1)))
    let tag = try await NDEFTag.read(using: session)
    #expect(tag.message == SampleCards.liteSMessage)
    #expect(await session.exchangeCount == 2 + 7)
}

@Test func lnPastTheCardsBlocksIsAnErrorNamingLn() async throws {
    // Nmaxb claims 40 blocks, Ln 30 blocks' worth; the Lite-S has 14 user blocks.
    var blocks = T3TAttributes.blocks(for: SampleCards.liteSMessage)
    blocks[0] = T3TAttributes(nbr: 4, nbw: 1, nmaxb: 40, length: 30 * 16).block
    let (session, _) = virtualSession(liteS(userBlocks: blocks))
    do {
        _ = try await NDEFTag.read(using: session)
        Issue.record("read")
    } catch {
        #expect(error.code == .invalidField)
        #expect(error.reason.contains("Ln (bytes 11-13)"))
    }
}

@Test func aDamagedMessageOnTheTagIsAnError() async throws {
    var blocks = T3TAttributes.blocks(for: SampleCards.liteSMessage)
    blocks[1][0] = 0x11  // the first record loses MB and ME
    let (session, _) = virtualSession(liteS(userBlocks: blocks))
    await #expect(throws: FeliCaError(.invalidField, "")) { try await NDEFTag.read(using: session) }
}

@Test func anEmptyFormattedTagHasNoRecords() async throws {
    let (session, _) = virtualSession(liteS(userBlocks: [formattedLiteS] + Array(repeating: [UInt8](repeating: 0, count: 16), count: 13)))
    let tag = try await NDEFTag.read(using: session)
    #expect(tag.records.isEmpty)
    #expect(NDEFRendering.lines(tag).last?.contains("no NDEF message") == true)
}

@Test func aCardWithoutNDEFSaysSoAndNamesItsSystems() async throws {
    for image in [SampleCards.aime, SampleCards.suica] {
        let (session, _) = virtualSession(image)
        do {
            _ = try await NDEFTag.read(using: session)
            Issue.record("read")
        } catch {
            #expect(error.code == .unsupported)
            #expect(error.reason.contains("no NDEF system 12FC"))
        }
    }
    let (session, card) = virtualSession(SampleCards.liteS)
    card.isPresent = false
    await #expect(throws: FeliCaError(.noCard, "")) { try await NDEFTag.read(using: session) }
}

@Test func theLiteProfileNamesAmusementIssuersByDFC() throws {
    let id = try FeliCaLite.IDBlock(block: try #require(SampleCards.aime.systems[0].services[0].block(FeliCaLite.idBlock)))
    #expect(id.dfcHex == "0078")
    #expect(id.issuer == "SEGA Aime")
    #expect(id.idd == IDm(rawValue: 0x012E_5A00_0C0F_FEE0).bytes)
    let ndef = try FeliCaLite.IDBlock(block: try #require(SampleCards.liteS.systems[0].services[0].block(FeliCaLite.idBlock)))
    #expect(ndef.issuer == nil)
    #expect(FeliCaLite.amusementIssuers[0x0068] == "Konami e-amusement pass")
    #expect(FeliCaLite.blockName(0x82) == "ID" && FeliCaLite.blockName(0x0D) == "S_PAD13" && FeliCaLite.blockName(0xA0) == "CRC_CHECK")
    let mc = try FeliCaLite.MemoryConfiguration(block: try #require(SampleCards.liteS.systems[0].services[0].block(0x88)))
    #expect(mc.answersNDEF && mc.writableUserBlocks == 0x3FFF && !mc.systemBlocksWritable)
    #expect(throws: CardDataError(.blockLength, "")) { try FeliCaLite.IDBlock(block: [1, 2]) }
}

@Test func aDumpOfTheLiteSGivesItsImageBack() async throws {
    for image in [SampleCards.liteS, SampleCards.aime] {
        let (session, _) = virtualSession(image)
        let dumped = try await CardImage.read(using: session)
        #expect(dumped == image)
        let outline = dumped.outline()
        #expect(outline.contains("IC FeliCa Lite-S (RC-S966)"))
        #expect(outline.contains("82 ID"))
    }
    let outline = SampleCards.aime.outline()
    #expect(outline.contains("ID block  IDd 012e5a000c0ffee0  DFC 0078 (SEGA Aime)"))
}

@Test(arguments: [CardImageFormat.flipper, .metrodroid, .felica])
func theLiteSSurvivesOtherToolsFormats(_ format: CardImageFormat) async throws {
    // Written as a Flipper .nfc (the MC block's NDEF flag brings 12FC back) or a Metrodroid
    // export (the blocks under both systems, one IDm), read back, the tag reads the same.
    let text = try SampleCards.liteS.exported(as: format, now: "2026-12-01T00:00:00Z")
    let image = try CardImage(importing: text)
    #expect(image.systems.map(\.code) == [FeliCaLite.system, T3TAttributes.system])
    #expect(image.systems.map(\.idm) == [IDm(rawValue: 0x012E_4C11_2233_4455), IDm(rawValue: 0x012E_4C11_2233_4455)])
    let (session, _) = virtualSession(image)
    let tag = try await NDEFTag.read(using: session)
    #expect(tag.message == SampleCards.liteSMessage)
    let (again, _) = virtualSession(image)
    #expect(try await CardImage.read(using: again).systems[0].services == SampleCards.liteS.systems[0].services || format == .flipper)
}

/// A message that frames well but holds a Text record whose language length runs past its
/// payload: the tag is refused with the record named, not shown with the record as hex.
@Test func aRecordWhosePayloadBreaksItsTypeIsAnErrorNamingIt() throws {
    let uri: [UInt8] = [0x91, 0x01, 0x05, 0x55, 0x04] + Array("a.jp".utf8)   // MB, SR, "U": https://a.jp
    let text: [UInt8] = [0x51, 0x01, 0x03, 0x54, 0x05] + Array("en".utf8)     // ME, SR, "T": language length 5 of 2
    let attributes = try T3TAttributes(block: formattedLiteS)
    do {
        _ = try NDEFTag(idm: IDm(rawValue: 0x0101_1203_1234_5678), pmm: PMm(rawValue: 0), attributes: attributes, message: uri + text)
        Issue.record("a damaged Text record was accepted")
    } catch {
        #expect(error.reason.hasPrefix("NDEF record 2 (T): "), "\(error.reason)")
    }
    // The same message without the damaged record reads.
    let good = try NDEFTag(idm: IDm(rawValue: 0x0101_1203_1234_5678), pmm: PMm(rawValue: 0), attributes: attributes,
                           message: [0xD1] + uri.dropFirst())
    #expect(good.records.count == 1)
}
