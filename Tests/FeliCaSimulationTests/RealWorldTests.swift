#if canImport(Glibc)
import Glibc
#endif
import FeliCa
import FeliCaCards
import FeliCaJSON
import FeliCaNDEF
import FeliCaSimulation
import Testing

// The corpus of Tests/RealWorld: FeliCa files other projects publish, kept byte for byte
// (Tests/RealWorld/SOURCES.md names each one's repository, path, commit and licence).
// Every expected value comes from the publishing project's own tests or from facts that
// can be checked without this tool (balances chaining from record to record, the counts a
// file declares, the FeliCa node code layout), never from this tool's output.

/// The path of a corpus file.
func realWorld(_ name: String) -> String {
    var path = #filePath
    for _ in 0..<2 { path = String(path[..<path.lastIndex(of: "/")!]) }
    return path + "/RealWorld/" + name
}

/// Reads a corpus file into an image through the one import path every tool uses.
func loadReal(_ name: String) throws -> CardImage {
    try CardImage.load(path: realWorld(name))
}

/// Reads the card an image makes, as `felica history` does, through the virtual card.
func readReal(_ image: CardImage, depth: CardReader.Depth = .history, on date: ReadingDate? = nil) async throws -> CardReport {
    var reader = CardReader(depth: depth)
    if let date { reader.readingDate = date }
    return try await reader.read(CardSession(transport: VirtualTransport(card: VirtualCard(image: image), name: "virtual:real")))
}

/// The text of a corpus file.
func realText(_ name: String) throws -> String {
    let image = try CardImageText.read(realWorld(name))
    return image
}

/// Reads a file whole (the tests only; the library reads through CardImage.load).
enum CardImageText {
    static func read(_ path: String) throws -> String {
        guard let f = fopen(path, "rb") else { throw FeliCaError(.badInput, "cannot open \(path)") }
        defer { fclose(f) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = fread(&buffer, 1, buffer.count, f)
            bytes += buffer[0..<n]
            if n < buffer.count { break }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Writes `text` to a fresh file in the temporary directory and returns its path.
    static func temporary(_ text: String, name: String) throws -> String {
        var template = Array("/tmp/felica-realworld-XXXXXX".utf8CString)
        guard let dir = mkdtemp(&template) else { throw FeliCaError(.badInput, "mkdtemp failed") }
        let path = String(cString: dir) + "/" + name
        guard let f = fopen(path, "wb") else { throw FeliCaError(.badInput, "cannot write \(path)") }
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBufferPointer { fwrite($0.baseAddress, 1, $0.count, f) }
        fclose(f)
        return path
    }
}

/// The newest-first transactions' balances chain: each balance is the one before it plus
/// its signed amount (a fact of the records, whatever tool decodes them).
func balancesChain(_ t: [Transaction]) -> Bool {
    zip(t, t.dropFirst()).allSatisfy { newer, older in newer.amount == nil || older.balance + newer.amount! == newer.balance }
}

// MARK: - FareBot: Flipper Zero dumps of real transit cards

/// codebutler/farebot FlipperIntegrationTest on its Flipper dumps of a real Suica, PASMO and
/// ICOCA: the brand, the number of trips, and the fares of the trips it lists first. FareBot
/// lists them oldest first (its trip 0 is the record with the lowest sequence number and the
/// earliest date) and gives as "balance" the balance after that oldest record (870, 500 and
/// 827 yen). The card itself says otherwise, in facts no decoder is needed for: the balance
/// block (service 008B, bytes 11-12 little-endian) and the newest history record (highest
/// sequence number, latest date) both hold 10, 0 and 175 yen. So: our records, oldest first,
/// are FareBot's trips; FareBot's balance is our oldest record's; the purse balance is the
/// balance block's.
@Test(arguments: [
    ("farebot/Suica.nfc", "Suica", 870, 20, [0, 150, 160, 150, 150, 150, 110, -2000, 160, 120, 100, 210, 170, 210, 160, 190]),
    ("farebot/PASMO.nfc", "PASMO", 500, 11, [-500, 160, 100, -1000]),
    ("farebot/ICOCA.nfc", "ICOCA", 827, 20, [0, 734, -2000, 958]),
])
func fareBotsFlipperTransitDumpsDecodeAsFareBotSays(_ file: String, _ brand: String, _ fareBotBalance: Int, _ trips: Int, _ fares: [Int]) async throws {
    let image = try loadReal(file)
    let report = try await readReal(image)
    let purse = try #require(report.purses.first { $0.profile == .transitIC })
    #expect(purse.issuer == brand)
    let t = purse.transactions
    #expect(t.count == trips)
    #expect(balancesChain(t))
    // Newest first: sequence numbers fall from record to record.
    #expect(zip(t, t.dropFirst()).allSatisfy { $0.sequence > $1.sequence })
    let oldestFirst = Array(t.reversed())
    #expect(oldestFirst.first?.balance == fareBotBalance)
    // FareBot's fare is what was paid (a charge negative). The oldest record has no record
    // before it to take an amount from: FareBot shows 0, and this tool none; but a card's
    // issue (PASMO's oldest: process 07, sequence 1) starts from nothing, so both take its
    // balance as the amount: FareBot as the fare −500, this tool as +500 credited.
    let oldest = try #require(oldestFirst.first)
    if fares[0] == 0 {
        #expect(oldest.amount == nil)
        #expect(oldest.type.code != 0x07)
    } else {
        #expect(fares[0] == -fareBotBalance)
        #expect(oldest.type.code == 0x07 && oldest.sequence == 1)
        #expect(oldest.amount == -fares[0])
        #expect(oldest.amount == oldest.balance)
    }
    #expect(Array(oldestFirst.prefix(fares.count).dropFirst().map { -($0.amount ?? 0) }) == Array(fares.dropFirst()))
    // The balance block, read straight from the file's 008B block.
    let block = try #require(image.systems.first { $0.code == .transit }?.services.first { $0.code == 0x008B }?.block(0))
    let balanceBlock = Int(block[11]) | Int(block[12]) << 8
    #expect(purse.balance == balanceBlock)
    #expect(t.first?.balance == balanceBlock)
}

/// FareBot's first Suica trips, oldest first, by station (FareBot romanises the names our
/// table keeps in Japanese): Shibuya → Toritsudaigaku, Toritsudaigaku → Shibuya,
/// Shibuya → Kōenji, Kōenji → Shinjuku.
@Test func fareBotsSuicaTripsRunBetweenTheStationsFareBotNames() async throws {
    var reader = CardReader(depth: .history, stations: .bundled)
    reader.readingDate = .today()
    let report = try await reader.read(CardSession(transport: VirtualTransport(card: VirtualCard(image: try loadReal("farebot/Suica.nfc")), name: "virtual:real")))
    let t = try #require(report.purses.first).transactions.reversed().prefix(4)
    let names = t.map { "\($0.transit?.entry?.name ?? "?") → \($0.transit?.exit?.name ?? "?")" }
    #expect(names == ["渋谷 → 都立大学", "都立大学 → 渋谷", "渋谷 → 高円寺", "高円寺 → 新宿"])
}

/// The areas the Flipper writes empty (`Services #012-#000`: first index the next area's,
/// last 0) hold no service; the others hold the services their range names.
@Test func anEmptyFlipperAreaHoldsNoService() throws {
    let image = try loadReal("farebot/PASMO.nfc")
    let transit = try #require(image.systems.first { $0.code == .transit })
    // Area 003: | Code 0FC0 | Services #012-#000 |, then Area 004: 1000 from #012.
    let empty = try #require(transit.areas.first { $0.code == 0x0FC0 })
    #expect(!transit.services.contains { $0.code.number >= empty.code.number && $0.code.number <= empty.end.number })
    // The root area spans the system, though the file writes it #000-#000.
    #expect(transit.areas.first { $0.code == .root }?.end == 0xFFFE)
    // Counts the file declares (`Area found: 9`, `Service found: 50`; system FE00: 3 and 5).
    #expect(transit.areas.count == 9)
    #expect(transit.services.count == 50)
    let common = try #require(image.systems.first { $0.code == .common })
    #expect(common.areas.count == 3)
    #expect(common.services.count == 5)
}

/// FareBot's Octopus.json (a Metrodroid-layout export): FareBot's SampleDumpIntegrationTest
/// asserts HKD −14.40 (raw 0x164 = 356, offset 500 after 2017-10-01, scanned 2017-10-02).
@Test func fareBotsOctopusExportHasFareBotsBalance() async throws {
    let image = try loadReal("farebot/Octopus.json")
    #expect(image.scannedAt == "2017-10-02T00:00:00Z")
    let report = try await readReal(image, depth: .balance, on: ReadingDate(day: try CardDate(year: 2017, month: 10, day: 2), source: .scanDate))
    #expect(report.purses.first { $0.profile == .octopus }?.balance == -1_440)
}

// MARK: - Metrodroid

/// Metrodroid's FeliCa Lite-S NDEF exports: system 88B4 only, service 000B; the MC block
/// (0x88) has SYS_OP (byte 3) = 01, so the tag answers Polling for 12FC too. Metrodroid's
/// TransitDataSerializedTest expects the URI https://www.metrodroid.org from
/// felicalitendef.json, the text "Metrodroid" (English) from felicatxt.json, the Android
/// package au.id.micolous.farebot from felicapkg.json, the Wi-Fi SSID test-wifi from
/// felicawifi.json.
@Test(arguments: [
    ("metrodroid/felicalitendef.json", "U", "https://www.metrodroid.org"),
    ("metrodroid/felicatxt.json", "T", "en:Metrodroid"),
    ("metrodroid/felicapkg.json", "android.com:pkg", "au.id.micolous.farebot"),
    ("metrodroid/felicawifi.json", "application/vnd.wfa.wsc", "test-wifi"),
])
func metrodroidLiteSExportsAnswer12FCAndHoldTheirNDEF(_ file: String, _ type: String, _ expected: String) async throws {
    let image = try loadReal(file)
    #expect(image.systems.map(\.code) == [0x88B4, 0x12FC])
    let session = CardSession(transport: VirtualTransport(card: VirtualCard(image: image), name: "virtual:real"))
    let tag = try await NDEFTag.read(using: session)
    let record = try #require(tag.records.first)
    #expect(String(decoding: record.type, as: UTF8.self) == type)
    switch try NDEFContent(record) {
    case .uri(let u): #expect(u.uri == expected)
    case .text(let t): #expect("\(t.language):\(t.text)" == expected)
    default: #expect(String(decoding: record.payload, as: UTF8.self).contains(expected))
    }
}

/// The MC block decides: the same export with SYS_OP 00 gives a tag that stays silent to
/// Polling for 12FC (FeliCa Lite-S user's manual: MC byte 3 selects NDEF support).
@Test func aLiteSWhoseMCBlockDisablesNDEFDoesNotAnswer12FC() async throws {
    let text = try realText("metrodroid/felicalitendef.json")
    let off = text.replacingFirst("ffffff01ff00", with: "ffffff00ff00")
    #expect(off != text)
    let image = try CardImage(importing: off)
    #expect(image.systems.map(\.code) == [0x88B4])
    let session = CardSession(transport: VirtualTransport(card: VirtualCard(image: image), name: "virtual:real"))
    let target = try await session.poll(systemCode: 0x12FC)
    #expect(target == nil)
}

/// felicandef.json: the same tag read through 12FC (Metrodroid lists the blocks under 4860).
@Test func metrodroidsNDEFSystemExportReadsTheURI() async throws {
    let image = try loadReal("metrodroid/felicandef.json")
    #expect(image.systems.first?.code == 0x12FC)
    let session = CardSession(transport: VirtualTransport(card: VirtualCard(image: image), name: "virtual:real"))
    let tag = try await NDEFTag.read(using: session)
    let record = try #require(tag.records.first)
    guard case .uri(let u) = try NDEFContent(record) else { Issue.record("not a URI record"); return }
    #expect(u.uri == "https://www.metrodroid.org")
}

/// metrodroid_3.json (two published copies: Metrodroid's re-serialisation of a FareBot
/// export, FarebotJsonTest, and its zip test): `"pMm": null`, Octopus system 8008, service
/// 0117 with the purse block Metrodroid's test pins.
@Test(arguments: ["metrodroid/farebot-metrodroid_3.json", "metrodroid/zip-metrodroid_3.json"])
func metrodroidsOctopusWithANullPMmLoads(_ file: String) throws {
    let image = try loadReal(file)
    #expect(image.systems.map(\.code) == [0x8008])
    #expect(image.idm(ofSystem: 0) == IDm(rawValue: 0x0010_8310_5188_1C82))
    let purse = try #require(image.systems[0].services.first { $0.code == 0x0117 })
    #expect(purse.block(0) == Hex.decode("00108310518720928b30d38f00000000"))
}

/// farebot.json (FareBot's own export, 7 cards of which one FeliCa): Metrodroid's
/// FarebotJsonTest converts its FeliCa card to metrodroid_3.json, so both give the same
/// card. FareBot keeps the PMm as bytes (01 20 22 04 27 67 4E FF, signed: −1 is FF) where
/// the conversion drops it.
@Test func fareBotsOwnExportGivesTheCardMetrodroidConvertsItTo() throws {
    var image = try loadReal("metrodroid/farebot.json")
    #expect(image.pmm == PMm(rawValue: 0x0120_2204_2767_4EFF))
    image.pmm = nil
    let metrodroid = try loadReal("metrodroid/farebot-metrodroid_3.json")
    #expect(image == metrodroid)
}

/// An export with no FeliCa card, or two, is refused naming what it holds.
@Test func aFareBotExportMustHoldOneFeliCaCard() throws {
    let text = try realText("metrodroid/farebot.json")
    for (changed, message) in [
        (text.replacing("\"cardType\": \"FeliCa\"", with: "\"cardType\": \"Other\""), "$.cards: no FeliCa card among the 7"),
        (text.replacing("\"cardType\": \"CEPAS\"", with: "\"cardType\": \"FeliCa\""), "$.cards: 3 FeliCa cards ([1], [2], [3]): a card image is one card"),
    ] {
        #expect(changed != text)
        do {
            _ = try CardImage(importing: changed)
            Issue.record("accepted: \(message)")
        } catch {
            #expect(error.reason.hasPrefix(message), "\(error.reason)")
        }
    }
}

/// Metrodroid's own FeliCa format fixtures (FelicaJsonImportTest) are written for its
/// lenient parser: keys without quotes (`3: {`), which JSON does not allow, and "service" 1,
/// which in FeliCa's node layout (attribute 0 or 1) is an area. They are refused with the
/// file, line and column of the first bare key.
@Test(arguments: [
    "felica-empty-system.json", "felica-idm.json", "felica-no-idm.json", "felica-skipped-service.json",
    "felica-skipped-system-missing-services.json", "felica-skipped-system.json",
    "felica-spec-version-aes-only.json", "felica-spec-version-des.json",
])
func metrodroidsLenientFixturesAreRefusedWithTheirLine(_ file: String) throws {
    let path = realWorld("metrodroid/" + file)
    // The first line whose key is a bare number.
    let lines = try realText("metrodroid/" + file).split(separator: "\n", omittingEmptySubsequences: false)
    let bare = try #require(lines.firstIndex { $0.drop { $0 == " " }.first?.isNumber == true }) + 1
    do {
        _ = try CardImage.load(path: path)
        Issue.record("\(file) was accepted")
    } catch {
        #expect(error.reason.hasPrefix("card image \(path): not valid JSON: line \(bare), column "))
    }
}

// MARK: - Flipper Zero firmware unit-test assets

/// flipperzero-firmware nfc_test.c felica_read: Felica.nfc is a FeliCa Lite (data format 1)
/// whose 28 slots all read; the firmware's listener serves it.
@Test(arguments: ["flipper/Felica.nfc", "unleashed/Felica.nfc"])
func flippersLiteAssetLoads(_ file: String) async throws {
    let image = try loadReal(file)
    let lite = try #require(image.systems.first)
    #expect(lite.code == 0x88B4)
    let memory = try #require(lite.services.first { $0.code == 0x000B })
    #expect(memory.block(0) == Hex.decode("deadbeaf00000000000000" + "00deadbeaf"))
    #expect(memory.block(1) == Hex.decode("00112233445566778899aabbccddeeff"))
    // ID block (0x82): the IDm, then the PMm the file's header gives.
    #expect(memory.block(0x82)?.prefix(8) == Hex.decode("299ffa53ab75876e")?[...])
    // MC (0x88) byte 3 = 00: NDEF not enabled, so no 12FC.
    #expect(image.systems.count == 1)
    let session = CardSession(transport: VirtualTransport(card: VirtualCard(image: image), name: "virtual:real"))
    #expect(try await session.poll(systemCode: 0x88B4) != nil)
}

/// nfc_test.c felica_standard_file_test / felica_standard_v2_file_test: system 0003, one
/// area 0000 (end FFFE in format 3), services 0009 and 000B with key versions 0003 and 0004
/// (format 3; none in format 2), two public blocks 01..10 and A1..B0.
@Test(arguments: [
    ("flipper/Felica_Standard_with_keys.nfc", true),
    ("unleashed/Felica_Standard_with_keys.nfc", true),
    ("unleashed/Felica_Standard_v3.nfc", true),
    ("unleashed/Felica_Standard_v2.nfc", false),
])
func flippersStandardAssetsLoadAsTheFirmwareTestSays(_ file: String, _ keyVersions: Bool) throws {
    let image = try loadReal(file)
    #expect(image.systems.count == 1)
    let s = image.systems[0]
    #expect(s.code == .transit)
    #expect(s.areas.map(\.code) == [.root])
    #expect(s.areas.first?.end == 0xFFFE)
    #expect(s.services.map(\.code) == [0x0009, 0x000B])
    #expect(s.services.map(\.keyVersion) == (keyVersions ? [3, 4] : [nil, nil]))
    #expect(s.services[0].block(0) == Hex.decode("0102030405060708090a0b0c0d0e0f10"))
    #expect(s.services[1].block(0) == Hex.decode("a1a2a3a4a5a6a7a8a9aaabacadaeafb0"))
    // The keys a file may carry (`Service 000 Key: ...`) are never card data.
    #expect(!image.jsonText().lowercased().contains("1122334455667788"))
}

/// nfc_test.c felica_oversized_lite_file_test: the firmware refuses this file (29 slots
/// for a Lite's 28); so does this tool, naming the line.
@Test func theOversizedLiteIsRefusedWithItsLine() throws {
    let path = realWorld("unleashed/Felica_oversized_lite.nfc")
    do {
        _ = try CardImage.load(path: path)
        Issue.record("the oversized Lite was accepted")
    } catch {
        #expect(error.reason == "card image \(path): line 41: block slot 28 is past the Lite's 28")
    }
}

// MARK: - How files arrive: line endings, byte order mark, spaces, damage

/// The same real dump saved on Windows (CRLF), with a UTF-8 byte order mark, with trailing
/// spaces, with old Mac line ends: the same card.
@Test(arguments: ["crlf", "bom", "bom+crlf", "trailing", "cr"])
func aRealDumpReadsTheSameHoweverItWasSaved(_ variant: String) throws {
    let text = try realText("farebot/Suica.nfc")
    let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
    let changed = switch variant {
    case "crlf": lines.joined(separator: "\r\n")
    case "bom": "\u{FEFF}" + text
    case "bom+crlf": "\u{FEFF}" + lines.joined(separator: "\r\n")
    case "trailing": lines.map { $0.isEmpty ? "" : $0 + "  \t" }.joined(separator: "\n")
    default: lines.joined(separator: "\r")
    }
    #expect(changed != text)
    let path = try CardImageText.temporary(changed, name: "Suica.nfc")
    let farebot = try loadReal("farebot/Suica.nfc")
    #expect(try CardImage.load(path: path) == farebot)
}

/// A Metrodroid export with a byte order mark and CRLF reads the same.
@Test func aMetrodroidExportWithABOMAndCRLFReadsTheSame() throws {
    let text = try realText("metrodroid/felicalitendef.json")
    let changed = "\u{FEFF}" + text.split(separator: "\n", omittingEmptySubsequences: false).joined(separator: "\r\n")
    let original = try loadReal("metrodroid/felicalitendef.json")
    #expect(try CardImage(importing: changed) == original)
}

/// A real dump cut short, or with one line corrupted, is refused with the file and the line.
@Test func aDamagedRealDumpNamesFileAndLine() throws {
    let text = try realText("farebot/ICOCA.nfc")
    var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    // Cut after line 100 (a block line): `Public blocks read` promises more.
    let cut = try CardImageText.temporary(lines.prefix(100).joined(separator: "\n") + "\n", name: "ICOCA-cut.nfc")
    do {
        _ = try CardImage.load(path: cut)
        Issue.record("a truncated dump was accepted")
    } catch {
        #expect(error.reason.hasPrefix("card image \(cut): line "))
        #expect(error.reason.contains("is it cut short?"))
    }
    // One corrupted byte in a block line.
    let n = try #require(lines.firstIndex { $0.hasPrefix("Block 0005:") })
    lines[n] = lines[n].replacingFirst("Data: ", with: "Data: Z")
    let bad = try CardImageText.temporary(lines.joined(separator: "\n"), name: "ICOCA-bad.nfc")
    do {
        _ = try CardImage.load(path: bad)
        Issue.record("a corrupted dump was accepted")
    } catch {
        #expect(error.reason.hasPrefix("card image \(bad): line \(n + 1): Block 0005 data"))
    }
}

/// Every real transit dump cut at any line, short of its last block line, is refused with
/// a line number: none reads as a smaller card.
@Test(arguments: ["farebot/Suica.nfc", "farebot/PASMO.nfc", "farebot/ICOCA.nfc"])
func everyCutOfARealDumpIsRefusedWithALine(_ file: String) throws {
    let lines = try realText(file).split(separator: "\n", omittingEmptySubsequences: false)
    let lastBlock = try #require(lines.lastIndex { $0.hasPrefix("Block ") })
    for n in 1...lastBlock {
        do {
            _ = try CardImage(importing: lines[0..<n].joined(separator: "\n"))
            Issue.record("\(file) cut after line \(n) was accepted")
        } catch {
            #expect(error.reason.hasPrefix("line ") || error.reason.hasPrefix("no \""), "\(file) cut after line \(n): \(error.reason)")
        }
    }
}

/// A real transit dump written back as a Flipper file (`felica dump --format flipper`) reads
/// as the same card: its empty areas are written as the firmware writes them.
@Test(arguments: ["farebot/Suica.nfc", "farebot/PASMO.nfc", "farebot/ICOCA.nfc"])
func aRealDumpWrittenBackAsFlipperReadsTheSame(_ file: String) throws {
    let image = try loadReal(file)
    let text = try image.exported(as: .flipper, now: "2026-01-01T00:00:00Z")
    #expect(text.contains("Services #012-#000 |") || file.hasSuffix("ICOCA.nfc"))
    let again = try CardImage(importing: text)
    #expect(again.systems == image.systems)
}

// MARK: - Metrodroid's older XML exports

/// metrodroid FelicaXmlImportTest: felica-idm.xml (with `<idm>`, as Metrodroid up to 2.9.37
/// wrote) and felica-no-idm.xml (without, 2.9.38 on) are the card 0101010101010101 with the
/// one system 3. Its FelicaJsonImportTest's twin files put a "service" 1 there with one
/// block of 16 zero bytes; 0001 is an area code in FeliCa's node layout (attribute 1), so
/// the image leaves it out and says so. The PMm is the base64 `BTFDRUaCt/8=`, the scan time
/// 1 500 000 000 000 ms after 1970, 2017-07-14 02:40:00 UTC.
@Test(arguments: ["metrodroid/felica-idm.xml", "metrodroid/felica-no-idm.xml"])
func metrodroidsXMLExportsLoad(_ file: String) throws {
    let text = try realText(file)
    #expect(CardImageFormat.detect(text) == .metrodroidXML)
    let image = try loadReal(file)
    #expect(image.systems.map(\.code) == [0x0003])
    #expect(image.idm(ofSystem: 0) == IDm(rawValue: 0x0101_0101_0101_0101))
    #expect(image.pmm == PMm(rawValue: 0x0531_4345_4682_b7ff))
    #expect(image.scannedAt == "2017-07-14T02:40:00Z")
    #expect(image.systems[0].services.isEmpty)
    let notes = image.extra["notes"]?.arrayValue?.compactMap(\.stringValue) ?? []
    #expect(notes.count == 1)
    #expect(notes.first?.contains("0001 is an area code") == true && notes.first?.contains("its 1 block") == true, "\(notes)")
}

/// The two files differ only in the `<idm>` element and the comment, so they are one card
/// (the notes name each file's own line).
@Test func metrodroidsXMLExportsWithAndWithoutIDmAreOneCard() throws {
    var with = try loadReal("metrodroid/felica-idm.xml")
    var without = try loadReal("metrodroid/felica-no-idm.xml")
    #expect(with.extra["notes"]?.arrayValue?.first?.stringValue?.hasPrefix("line 11: ") == true)
    #expect(without.extra["notes"]?.arrayValue?.first?.stringValue?.hasPrefix("line 10: ") == true)
    with.extra["notes"] = nil
    without.extra["notes"] = nil
    #expect(with == without)
}

/// Every cut of a real XML export, and each damaged form, is refused naming file and line.
@Test func everyCutOfARealXMLExportIsRefusedWithALine() throws {
    let text = try realText("metrodroid/felica-idm.xml")
    let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
    for n in 1..<(lines.count - 1) {
        let cut = lines.prefix(n).joined(separator: "\n") + "\n"
        do {
            _ = try CardImage(importing: cut)
            Issue.record("a cut after line \(n) was accepted")
        } catch {
            #expect(error.reason.contains("line "), "\(n): \(error.reason)")
        }
    }
    let damaged: [(String, String, String)] = [
        ("id=\"0101010101010101\"", "id=\"0202020202020202\"", "line 6: <idm> 0101010101010101 and <card id> 0202020202020202 name different cards"),
        ("type=\"4\"", "type=\"2\"", "line 2: <card type=\"2\">: not a FeliCa card"),
        ("<system code=\"3\">", "<system code=\"0x3\">", "line 9: <system code=\"0x3\">: not a code in decimal"),
        ("AAAAAAAAAAAAAAAAAAAAAA==", "AAAAAAAAAAAAAAAAAAAA", "line 13: <block>: expected 16 bytes, found 15"),
        ("</services>", "</service>", "not valid XML: line 16, column 13: </service> closes <services> (line 10)"),
    ]
    for (from, to, message) in damaged {
        let changed = text.replacing(from, with: to)
        let file = try CardImageText.temporary(changed, name: "damaged.xml")
        do {
            _ = try CardImage.load(path: file)
            Issue.record("accepted: \(message)")
        } catch {
            #expect(error.reason.hasPrefix("card image \(file): " + message), "\(error.reason)")
        }
    }
}

// MARK: - Metroflip: its saved Suica files

/// zinongli/Metroflip's example files: a real Suica's travel history (service 090F) as the
/// app saves it, in its three published versions (the author edited station bytes between
/// them; the rest is the same card). What Metroflip's own decoder (scenes/plugins/suica.c,
/// `suica_parse`) takes from each record, worked out here from the raw bytes by its rules,
/// and our decoder must agree: balance = bytes 10-11 little-endian; date = year (byte 4 >> 1),
/// month (byte 4 bit 0, byte 5 bits 7-5), day (byte 5 bits 4-0); a record whose byte 14 is 01
/// (sequence 1) is the card's "birthday", its issue.
@Test(arguments: ["metroflip/suica_example.metro", "metroflip/suica_example.nfc", "metroflip/e0443177/suica_example.nfc"])
func metroflipsSuicaFilesDecodeAsMetroflipReadsThem(_ file: String) async throws {
    let text = try realText(file)
    #expect(CardImageFormat.detect(text) == .metroflip)
    let image = try loadReal(file)
    let history = try #require(image.systems.first { $0.code == .transit }?.services.first { $0.code == 0x090F }?.blocks)
    // The file's own Travel lines, 00 to 07, in order.
    let travel = text.split(whereSeparator: \.isNewline).filter { $0.hasPrefix("Travel ") && !$0.hasPrefix("Travel History") }
    #expect(history.count == travel.count && history.count == 8)
    let records = history.filter { $0.contains { $0 != 0 } }
    #expect(records.count == 7)
    let report = try await readReal(image)
    let purse = try #require(report.purses.first { $0.profile == .transitIC })
    let t = purse.transactions
    #expect(t.count == records.count)
    for (tx, b) in zip(t, records) {
        #expect(tx.balance == Int(b[11]) << 8 | Int(b[10]))
        #expect(tx.date.year == 2000 + Int(b[4] & 0xFE) >> 1)
        #expect(tx.date.month == Int(b[4] & 0x01) << 3 | Int(b[5] & 0xE0) >> 5)
        #expect(tx.date.day == Int(b[5] & 0x1F))
        #expect(tx.sequence & 0xFF == Int(b[14]))
        // A shop or vending machine (console C7, C8) keeps the time in bytes 6-7: hour =
        // byte 6 >> 3, minute = byte 6 bits 2-0 then byte 7 bits 7-5.
        if b[0] == 0xC7 || b[0] == 0xC8 {
            #expect(tx.date.time?.hour == Int(b[6]) >> 3)
            #expect(tx.date.time?.minute == Int(b[6] & 0x07) << 3 | Int(b[7]) >> 5)
        }
    }
    // Sequence numbers 7 down to 1, and the balances chain from record to record.
    #expect(t.map(\.sequence) == [7, 6, 5, 4, 3, 2, 1])
    #expect(balancesChain(t))
    // The oldest is the issue ("birthday" in Metroflip): process 07, sold with 1000 yen on it.
    let issue = try #require(t.last)
    #expect(issue.type.code == 0x07)
    #expect(issue.amount == 1000 && issue.balance == 1000)
    // The file holds no balance block; the newest record's balance is the card's last.
    #expect(t.first?.balance == 0)
    let notes = image.extra["notes"]?.arrayValue?.compactMap(\.stringValue) ?? []
    #expect(notes.contains { $0.contains("only the travel history") })
}

/// The three versions differ in station bytes (6-9) only.
@Test func metroflipsVersionsDifferInStationsOnly() throws {
    let files = ["metroflip/suica_example.metro", "metroflip/suica_example.nfc", "metroflip/e0443177/suica_example.nfc"]
    var histories: [[[UInt8]]] = []
    for f in files {
        let image = try loadReal(f)
        histories.append(image.systems.first?.services.first?.blocks ?? [])
    }
    for h in histories.dropFirst() {
        #expect(h.count == histories[0].count)
        for (a, b) in zip(h, histories[0]) {
            #expect(Array(a[0..<6]) == Array(b[0..<6]) && Array(a[10...]) == Array(b[10...]))
        }
    }
    #expect(histories[0] != histories[1] && histories[1] != histories[2])
}

/// Every cut of a real Metroflip file past its first line either refuses naming a line or
/// (cut between records: the format declares no count) loads the records before the cut.
@Test func everyCutOfARealMetroflipFileIsRefusedWithALineOrKeepsItsFirstRecords() throws {
    let text = try realText("metroflip/suica_example.nfc")
    let full = try CardImage(importing: text).systems[0].services[0].blocks ?? []
    let chars = Array(text)
    let firstLine = chars.firstIndex(of: "\r\n") ?? 0
    for n in (firstLine + 1)..<chars.count {
        let cut = String(chars[0..<n])
        do throws(FeliCaError) {
            let image = try CardImage(importing: cut)
            let blocks = image.systems[0].services[0].blocks ?? []
            #expect(!blocks.isEmpty && Array(full.prefix(blocks.count)) == blocks, "cut at \(n)")
        } catch {
            #expect(error.reason.contains("line "), "cut at \(n): \(error.reason)")
        }
    }
}

/// Damaged Metroflip files: each refusal names its line.
@Test func aDamagedMetroflipFileNamesItsLine() throws {
    let text = try realText("metroflip/suica_example.nfc")
    let damaged: [(String, String, String)] = [
        ("Card Type: suica", "Card Type: navigo", "line 4: card type navigo"),
        ("Device type: FeliCa", "Device type: ISO14443-4A", "line 3: the device type"),
        ("Travel 02: 16 01", "Travel 03: 16 01", "line 8: \"Travel 03:\" where Travel 02"),
        ("31 54 01 18", "31 54 01 1", "line 8: Travel 02"),
        ("Version: 1", "Version: 2", "line 2: Metroflip file version 2"),
    ]
    for (from, to, expected) in damaged {
        let changed = text.replacingFirst(from, with: to)
        #expect(changed != text)
        var reason = "no error"
        do throws(FeliCaError) {
            _ = try CardImage(importing: changed)
        } catch {
            reason = error.reason
        }
        #expect(reason.contains(expected), "\(to): \(reason)")
    }
}
