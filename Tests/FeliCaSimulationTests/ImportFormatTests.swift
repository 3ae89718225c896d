import FeliCa
import FeliCaCards
import FeliCaJSON
import FeliCaSimulation
import Testing

// Test files written here to each tool's published layout (sources in Docs/formats.md),
// with data of our own: none is a copy of a project's sample.

/// A Flipper Zero data format 2 file of a FeliCa Standard transit card, as the firmware's
/// `felica_save` lays one out: header, IC type, areas, services, the directory tree drawing
/// (lines that are not `key: value`), public blocks; plus a key this tool does not know.
let flipperStandard = """
    Filetype: Flipper NFC device
    Version: 4
    # Device type can be ISO14443-3A, ISO14443-3B, ISO14443-4A, FeliCa
    Device type: FeliCa
    # UID is common for all formats
    UID: 01 2E 44 55 66 77 88 99
    # FeliCa specific data
    Data format version: 2
    Manufacture id: 01 2E 44 55 66 77 88 99
    Manufacture parameter: 10 0B 4B 42 84 85 D0 FF
    IC Type: FeliCa Standard RC-S9X4, Japan Transit IC
    Some future key: 01 02

    # Felica Standard specific data
    Area found: 2
    Area 000: | Code 0000 | Services #000-#002 |
    Area 001: | Code 1CC0 | Services #002-#002 |

    Service found: 3
    Service 000: | Code 008B | Attrib. 0B | Public  | Random | Read Only  |
    Service 001: | Code 090F | Attrib. 0F | Public  | Cyclic | Read Only  |
    Service 002: | Code 1CC8 | Attrib. 08 | Private | Random | Read/Write |

    Directory Tree: 
    +++ ... are public services
    ||| ... are private services
    - AREA_0000/
    +- serv_008B
    +- serv_090F
    |- AREA_0073/
    | |- serv_1CC8
    Public blocks read: 3
    Block 0000: | Service code 008B | Block index 00 | Data: 00 00 00 00 00 00 00 00 20 00 00 D2 04 00 00 A1 |
    Block 0001: | Service code 090F | Block index 00 | Data: 16 01 00 00 35 7B 25 0A 25 07 D2 04 00 00 A1 00 |
    Block 0002: | Service code 090F | Block index 01 | Data: 16 01 00 00 35 7A 25 07 25 0A 9A 05 00 00 A0 00 |

    """

/// A Flipper Zero data format 1 file (always FeliCa Lite): 28 slots of SF1 SF2 + 16 bytes,
/// the MAC and CK slots unread (status A8), SYS_C (slot 20, block 0x85) saying 12FC.
func flipperLite(slots: Int = 28, total: Int = 28) -> String {
    var out = """
        Filetype: Flipper NFC device
        Version: 4
        Device type: FeliCa
        UID: 01 27 00 5D 1C 0F 2A 1B
        Data format version: 1
        Manufacture id: 01 27 00 5D 1C 0F 2A 1B
        Manufacture parameter: 00 F1 00 00 00 01 43 00
        Blocks total: \(total)
        Blocks read: 26

        """
    for slot in 0..<slots {
        var data = [UInt8](repeating: UInt8(slot), count: 16)
        var sf: [UInt8] = [0, 0]
        if slot == 16 || slot == 22 { sf = [0x01, 0xA8]; data = [UInt8](repeating: 0, count: 16) }
        if slot == 20 { data = [0x12, 0xFC] + [UInt8](repeating: 0, count: 14) }
        out += "Block \(slot): " + (sf + data).map { Hex.encode([$0], uppercase: true) }.joined(separator: " ") + "\n"
    }
    return out
}

@Test func flipperStandardFileBecomesACardImage() async throws {
    let image = try CardImage(importing: flipperStandard)
    #expect(image.pmm == PMm(rawValue: 0x100B_4B42_8485_D0FF))
    #expect(image.systems.count == 1)
    let s = image.systems[0]
    #expect(s.code == .transit)  // from its services: the file does not name the system
    #expect(s.idm == IDm(rawValue: 0x012E_4455_6677_8899))
    #expect(s.areas.map(\.code) == [0x0000, 0x1CC0])
    #expect(s.areas.map(\.end) == [0xFFFE, 0x1CFF])
    #expect(s.services.map(\.code) == [0x008B, 0x090F, 0x1CC8])
    #expect(s.services[1].blocks?.count == 2)
    #expect(s.services[2].blocks == nil)
    let notes = image.extra["notes"]?.arrayValue?.compactMap(\.stringValue) ?? []
    #expect(notes.contains { $0.contains("no area end codes") })
    #expect(notes.contains { $0.contains("system 0003") })
    // Every command works on it: the balance decodes through the virtual card.
    let report = try await CardReader(depth: .history).read(CardSession(transport: VirtualTransport(card: VirtualCard(image: image), name: "virtual:test")))
    #expect(report.purses.first?.balance == 1_234)
    #expect(report.purses.first?.transactions.first?.amount == 1_234 - 1_434)
}

@Test func flipperLiteFileKeepsItsSystemBlocks() async throws {
    let image = try CardImage(importing: flipperLite())
    #expect(image.systems.map(\.code) == [0x12FC])
    let s = image.systems[0].services[0]
    #expect(s.code == 0x000B)
    #expect(s.blocks?.count == 15)  // S_PAD0-13 and REG
    #expect(s.block(0x0E) == [UInt8](repeating: 14, count: 16))
    #expect(s.block(0x80) == [UInt8](repeating: 15, count: 16))  // RC
    #expect(s.block(0x81) == nil)  // MAC: unread
    #expect(s.block(0x82) == [UInt8](repeating: 17, count: 16))  // ID
    #expect(s.block(0xA0) == [UInt8](repeating: 27, count: 16))  // CRC_CHECK
    // The virtual card serves the numbered blocks.
    let card = VirtualCard(image: image)
    let session = CardSession(transport: VirtualTransport(card: card, name: "virtual:test"))
    let t = try await session.detect()
    let blocks = try await session.read(service: 0x000B, blocks: 0x82..<0x83, from: t)
    #expect(blocks == [[UInt8](repeating: 17, count: 16)])
    // Written back, every slot comes back the same, the unread ones with their status flags.
    let again = try FlipperNFCText.lines(of: try image.exported(as: .flipper, now: "2026-12-01T00:00:00Z"))
    let original = try FlipperNFCText.lines(of: flipperLite())
    for slot in 0..<28 { #expect(again["Block \(slot)"] == original["Block \(slot)"]) }
}

@Test func flipperFileWithSystemsGivesEverySystem() throws {
    let text = """
        Filetype: Flipper NFC device
        Version: 4
        Device type: FeliCa
        Data format version: 2
        Manufacture id: 01 14 2E 01 02 03 04 05
        Manufacture parameter: 03 14 4B 42 84 85 D0 FF
        System found: 2
        System 00: 0003
        Area found: 0
        Service found: 1
        Service 000: | Code 008B | Attrib. 0B | Public  | Random | Read Only  |
        Public blocks read: 1
        Block 0000: | Service code 008B | Block index 00 | Data: 00 00 00 00 00 00 00 00 20 00 00 64 00 00 00 01 |
        System 01: FE00
        Area found: 0
        Service found: 1
        Service 000: | Code 1317 | Attrib. 17 | Public  | Purse  | Read Only  |
        Public blocks read: 1
        Block 0000: | Service code 1317 | Block index 00 | Data: E8 03 00 00 00 00 00 00 00 00 00 00 00 00 00 00 |
        """
    let image = try CardImage(importing: text)
    #expect(image.systems.map(\.code) == [0x0003, 0xFE00])
    #expect(image.systems[1].services[0].blocks?.first?.prefix(2) == [0xE8, 0x03])
}

struct BadImport: CustomTestStringConvertible, Sendable {
    let text: String
    let message: String
    var testDescription: String { message }
}

@Test(arguments: [
    BadImport(text: flipperStandard.replacing( "Device type: FeliCa", with: "Device type: Mifare Classic"),
              message: "line 4: the device type is Mifare Classic, not FeliCa"),
    BadImport(text: flipperStandard.replacing( "Data format version: 2", with: "Data format version: 0"),
              message: "line 8: data format version 0 is not a version number (this tool reads 1 to 3)"),
    BadImport(text: flipperStandard.replacing( "Manufacture id: 01 2E 44 55 66 77 88 99", with: "Manufacture id: 01 2E 44"),
              message: "line 9: Manufacture id: expected 8 bytes, found 3"),
    BadImport(text: flipperStandard.replacing( "A0 00 |", with: "A0 |"),
              message: "line 35: Block 0002 data: expected 16 bytes, found 15"),
    BadImport(text: flipperStandard.replacing( "35 7B 25 0A", with: "35 7G 25 0A"),
              message: "line 34: Block 0001 data"),
    BadImport(text: flipperStandard.replacing( "Service code 090F | Block index 01", with: "Service code 1234 | Block index 01"),
              message: "line 35: block of service 1234, which the file does not list"),
    BadImport(text: flipperLite(slots: 20), message: "\"Blocks total\" says 28 blocks, the file holds 20 (is it cut short?)"),
    BadImport(text: "Filetype: Flipper NFC device\nVersion: 4\nDevice type: FeliCa\n", message: "no \"Data format version:\" line (is the file cut short?)"),
])
func damagedFlipperFilesSayWhere(_ bad: BadImport) {
    #expect {
        _ = try CardImage(importing: bad.text)
    } throws: { e in
        (e as? FeliCaError)?.reason.contains(bad.message) == true
    }
}

/// A data format newer than this reader knows is read with the newest layout it knows
/// (the lines it does not know are skipped), and the image's notes say so.
@Test func aNewerFlipperDataFormatReadsAsTheNewestKnown() throws {
    let image = try CardImage(importing: flipperStandard.replacing("Data format version: 2", with: "Data format version: 7"))
    #expect(image == (try CardImage(importing: flipperStandard)).noted("data format version 7 is newer than this tool knows (3): read as 3, lines it does not know skipped"))
}

extension CardImage {
    func noted(_ line: String) -> CardImage {
        var image = self
        var notes = image.extra["notes"]?.arrayValue ?? []
        notes.append(.string(line))
        image.extra["notes"] = .array(notes)
        return image
    }
}

/// Every strict prefix of a Flipper file cut at a line break either loads (a shorter card) or
/// fails with a reason; never a crash or a card with more than the file held.
@Test func everyTruncatedFlipperFileFailsClearlyOrLoadsLess() {
    let lines = flipperStandard.split(separator: "\n", omittingEmptySubsequences: false)
    for n in 0..<lines.count - 2 {
        let text = lines[0..<n].joined(separator: "\n")
        do {
            let image = try CardImage(importing: text)
            #expect(image.systems.flatMap(\.services).count <= 3)
        } catch {
            #expect(!error.reason.isEmpty)
        }
    }
    // Cut inside the last block line: named.
    let cut = String(flipperStandard.dropLast(20))
    #expect(throws: FeliCaError.self) { try CardImage(importing: cut) }
}

// MARK: - Proxmark3

let proxmarkDump = """
    {
      "Created": "proxmark3",
      "FileType": "felica",
      "specification_version": "00000100",
      "product_information": null,
      "container_issue_information": null,
      "systems": [
        {
          "code": "0003",
          "idm": "012e445566778899",
          "pmm": "100b4b428485d0ff",
          "encryption_identifier": null,
          "nodes": [
            {"type": "system", "code": "0300", "des_key_version": "0100", "aes_key_version": null},
            {"type": "area", "code": "0000FEFF", "des_key_version": "0000", "aes_key_version": null},
            {"type": "area", "code": "C01CFF1D", "des_key_version": "0200", "aes_key_version": null},
            {"type": "service", "code": "8B00", "des_key_version": "0000", "aes_key_version": null,
             "data": {"0000": "000000000000000020000064000000a1"}},
            {"type": "service", "code": "0F09", "des_key_version": "0000", "aes_key_version": null,
             "data": {"0000": "16010000357b250a250764000000a100", "0001": "16010000357a2507250a9a050000a000"}},
            {"type": "service", "code": "C81C", "des_key_version": "0300", "aes_key_version": null}
          ]
        }
      ]
    }
    """

@Test func proxmarkDumpBecomesACardImage() throws {
    let image = try CardImage(importing: proxmarkDump)
    let s = image.systems[0]
    #expect(s.code == .transit)
    #expect(s.idm == IDm(rawValue: 0x012E_4455_6677_8899))
    #expect(s.areas == [CardImage.Area(code: 0x0000, end: 0xFFFE), CardImage.Area(code: 0x1CC0, end: 0x1DFF)])
    #expect(s.services.map(\.code) == [0x008B, 0x090F, 0x1CC8])
    #expect(s.services[0].blocks?.first?[11] == 0x64)
    #expect(s.services[1].blocks?.count == 2)
    #expect(s.services[2].keyVersion == 0x0003)  // "0300": little-endian bytes
    #expect(s.services[2].blocks == nil)
}

/// A dump as the writer in Proxmark3's `cmdhffelica.c` lays it out: no wrapper keys, the
/// system node coded `FFFF`, every node with `data` (empty but for readable services),
/// uppercase hex, the encryption identifier by name, and an area found by Request Service
/// written by its code alone, without an end.
let proxmarkWriterDump = """
    {
      "specification_version": "0001001000",
      "product_information": null,
      "container_issue_information": null,
      "systems": [
        {
          "code": "0003",
          "idm": "012E445566778899",
          "pmm": "100B4B428485D0FF",
          "encryption_identifier": "AES128_DES112",
          "nodes": [
            {"type": "system", "code": "FFFF", "des_key_version": "0000", "aes_key_version": "0000", "data": {}},
            {"type": "area", "code": "0000FEFF", "des_key_version": "0000", "aes_key_version": null, "data": {}},
            {"type": "area", "code": "C01C", "des_key_version": "0200", "aes_key_version": null, "data": {}},
            {"type": "service", "code": "8B00", "des_key_version": "0000", "aes_key_version": null,
             "data": {"0000": "000000000000000020000064000000A1"}},
            {"type": "service", "code": "C81C", "des_key_version": "0300", "aes_key_version": null, "data": {}}
          ]
        }
      ]
    }
    """

@Test func proxmarkWriterLayoutIsRead() throws {
    #expect(CardImageFormat.detect(proxmarkWriterDump) == .proxmark)
    let image = try CardImage(importing: proxmarkWriterDump)
    let s = image.systems[0]
    #expect(s.idm == IDm(rawValue: 0x012E_4455_6677_8899))
    #expect(s.areas.map(\.code) == [0x0000, 0x1CC0])
    #expect(s.areas[1].end == 0x1CC0)
    #expect(s.areas[1].extra["endUnknown"] == true)
    #expect(s.extra["encryptionIdentifier"] == "AES128_DES112")
    #expect(s.services.map(\.code) == [0x008B, 0x1CC8])
    #expect(s.services[0].blocks?.first?[15] == 0xA1)
    #expect(image.transitIssuer == "PASMO")
    // The image is ours now: it round-trips, the unknown end kept as a mark.
    let again = try CardImage(jsonText: image.jsonText())
    #expect(again.systems[0].areas[1].extra["endUnknown"] == true)
}

@Test(arguments: [
    BadImport(text: #"{"systems":[{"code":"0003","nodes":[{"type":"area","code":"C01"}]}]}"#,
              message: "$.systems[0].nodes[0].code: \"C01\" is not hex bytes"),
    BadImport(text: #"{"systems":[{"code":"0003","nodes":[{"type":"area","code":"C01CFF1D00"}]}]}"#,
              message: "$.systems[0].nodes[0].code: expected 4 bytes, found 5"),
    BadImport(text: #"{"systems":[{"code":"0003","nodes":[{"type":"service","code":"8B","data":{}}]}]}"#,
              message: "$.systems[0].nodes[0].code: expected 2 bytes, found 1"),
    BadImport(text: #"{"systems":[{"code":"0003","nodes":[{"type":"service","code":"8B00","data":{"0000":"00"}}]}]}"#,
              message: "$.systems[0].nodes[0].data.0000: expected 16 bytes, found 1"),
    BadImport(text: #"{"systems":[{"code":"0003","nodes":[{"type":"leaf","code":"8B00"}]}]}"#,
              message: "$.systems[0].nodes[0].type: \"leaf\" is not system, area or service"),
    BadImport(text: #"{"systems":[{"code":"0003","nodes":[{"type":"service","code":"8B00","data":{"zz00":"00000000000000000000000000000000"}}]}]}"#,
              message: "$.systems[0].nodes[0].data.zz00: \"zz00\" is not hex bytes"),
])
func damagedProxmarkDumpsNameThePath(_ bad: BadImport) {
    #expect {
        _ = try CardImage(importing: bad.text)
    } throws: { e in
        (e as? FeliCaError)?.reason.contains(bad.message) == true
    }
}

// MARK: - Metrodroid

let metrodroidExport = """
    {
      "tagId": "012e445566778899",
      "scannedAt": {"timeInMillis": 1470000000000, "tz": "Asia/Hong_Kong"},
      "felica": {
        "pMm": "100b4b428485d0ff",
        "systems": {
          "3": {
            "services": {
              "139": {"blocksMap": {"0": {"data": "000000000000000020000064000000a1"}}},
              "2319": {"blocks": [{"data": "16010000357b250a250764000000a100"}, {"data": "16010000357a2507250a9a050000a000"}]},
              "6088": {"skipped": true}
            }
          }
        }
      }
    }
    """

@Test func metrodroidExportBecomesACardImageWithItsScanDate() throws {
    let image = try CardImage(importing: metrodroidExport)
    #expect(image.scannedAt == "2016-07-31T21:20:00Z")
    let s = image.systems[0]
    #expect(s.code == .transit)  // "3", decimal
    #expect(s.services.map(\.code) == [0x008B, 0x090F, 0x17C8])  // 139, 2319, 6088
    #expect(s.services[1].blocks?.count == 2)  // legacy "blocks"
    #expect(s.services[2].blocks == nil)  // needs a key
    // The scan date survives our own format.
    #expect(try CardImage(jsonText: image.jsonText()).scannedAt == "2016-07-31T21:20:00Z")
}

@Test(arguments: [
    BadImport(text: #"{"tagId":"012e445566778899","felica":{"systems":{"0x3":{}}}}"#,
              message: "$.felica.systems.0x3: \"0x3\" is not a code in decimal"),
    BadImport(text: #"{"tagId":"012e4455","felica":{"systems":{"3":{}}}}"#, message: "$.tagId: expected 8 bytes, found 4"),
    BadImport(text: #"{"tagId":"012e445566778899","felica":{"systems":{"3":{"services":{"139":{"blocksMap":{"0":{"data":"00"}}}}}}}}"#,
              message: "$.felica.systems.3.services.139.blocksMap.0.data: expected 16 bytes, found 1"),
    BadImport(text: #"{"tagId":"012e445566778899","scannedAt":{"timeInMillis":"soon"},"felica":{"systems":{"3":{}}}}"#,
              message: "$.scannedAt.timeInMillis: expected milliseconds since 1970"),
    BadImport(text: #"{"tagId":"012e445566778899","felica":{"systems":{"3":{"services":{"#, message: "not valid JSON: line 1"),
])
func damagedMetrodroidExportsNameThePath(_ bad: BadImport) {
    #expect {
        _ = try CardImage(importing: bad.text)
    } throws: { e in
        (e as? FeliCaError)?.reason.contains(bad.message) == true
    }
}

// MARK: - Round trips

/// Every block of every readable service, by system, service and block number.
func everyBlock(_ image: CardImage) -> [String: [UInt8]] {
    var out: [String: [UInt8]] = [:]
    for s in image.systems {
        for svc in s.services {
            for (i, b) in (svc.blocks ?? []).enumerated() { out["\(s.code)/\(svc.code)/\(i)"] = b }
            for (n, b) in svc.blocksAt { out["\(s.code)/\(svc.code)/\(n)"] = b }
        }
    }
    return out
}

@Test(arguments: SampleCards.names)
func exportedDumpsKeepEveryBlock(_ name: String) throws {
    let image = SampleCards.image(named: name)!
    for format in [CardImageFormat.flipper, .metrodroid] {
        let text = try image.exported(as: format, now: "2026-12-01T10:00:00Z")
        #expect(CardImageFormat.detect(text) == format)
        let back = try CardImage(importing: text)
        #expect(everyBlock(back) == everyBlock(image), "\(format)")
        #expect(back.systems.map(\.code) == image.systems.map(\.code))
        #expect(back.systems.map { $0.services.map(\.code) } == image.systems.map { $0.services.map(\.code) })
        #expect(back.idm(ofSystem: 0) == image.idm(ofSystem: 0))
    }
    // Metrodroid carries the scan time.
    let m = try CardImage(importing: try image.exported(as: .metrodroid, now: "2026-12-01T10:00:00Z"))
    #expect(m.scannedAt == "2026-12-01T10:00:00Z")
}

@Test func theFormatIsToldByContentNotName() throws {
    #expect(CardImageFormat.detect(flipperStandard) == .flipper)
    #expect(CardImageFormat.detect(proxmarkDump) == .proxmark)
    #expect(CardImageFormat.detect(metrodroidExport) == .metrodroid)
    #expect(CardImageFormat.detect(SampleCards.suica.jsonText()) == .felica)
    #expect(CardImageFormat.detect("hello") == nil)
    #expect {
        _ = try CardImage(importing: "hello")
    } throws: { e in (e as? FeliCaError)?.reason.contains("not a card image") == true }
}

/// Parses `key: value` lines of a Flipper file, for comparing two files line by line.
enum FlipperNFCText {
    static func lines(of text: String) throws -> [String: String] {
        var out: [String: String] = [:]
        for l in text.split(separator: "\n") {
            guard let c = l.firstIndex(of: ":") else { continue }
            out[String(l[..<c])] = String(l[l.index(after: c)...]).trimmingSpaces()
        }
        return out
    }
}

extension String {
    func trimmingSpaces() -> String {
        var s = Substring(self)
        while s.first == " " { s = s.dropFirst() }
        while s.last == " " { s = s.dropLast() }
        return String(s)
    }
}
