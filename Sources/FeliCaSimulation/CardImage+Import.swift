import FeliCa
import FeliCaJSON

/// The files a card image can be read from: our own `felica-card/1` and the dumps other
/// tools write. Told apart by content, never by the file name.
public enum CardImageFormat: String, Hashable, Sendable, CaseIterable {
    /// `felica-card/1` JSON (`felica dump --json`).
    case felica
    /// Flipper Zero `.nfc` text, device type FeliCa (data format 1 or 2).
    case flipper
    /// Proxmark3 `hf felica dump` JSON.
    case proxmark
    /// Metrodroid (and FareBot) JSON export, FareBot's older `{"cards": [...]}` export included.
    case metrodroid
    /// Metrodroid's (and FareBot's) older XML export (read only).
    case metrodroidXML = "metrodroid-xml"
    /// Metroflip's (a Flipper Zero transit app) saved Suica file: the travel history only (read only).
    case metroflip

    /// How a person calls it.
    public var displayName: String {
        switch self {
        case .felica: "felica-card/1"
        case .flipper: "Flipper Zero .nfc"
        case .proxmark: "Proxmark3 hf felica dump JSON"
        case .metrodroid: "Metrodroid JSON"
        case .metrodroidXML: "Metrodroid XML"
        case .metroflip: "Metroflip file"
        }
    }

    /// The format of `text`, nil when it is none of them.
    public static func detect(_ text: String) -> CardImageFormat? {
        for line in text.split(whereSeparator: \.isNewline) {
            let t = line.drop { $0 == " " || $0 == "\t" }
            if t.isEmpty || t.hasPrefix("#") { continue }
            if t.hasPrefix("Filetype:") {
                let value = t.dropFirst("Filetype:".count).drop { $0 == " " || $0 == "\t" }
                return value.hasPrefix("Flipper Metroflip File") ? .metroflip : .flipper
            }
            if t.hasPrefix("<") { return .metrodroidXML }
            break
        }
        guard let value = try? JSONValue.parse(text), let o = value.objectValue else { return nil }
        if o["format"] != nil { return .felica }
        if o["felica"] != nil || o["tagId"] != nil { return .metrodroid }
        // FareBot's own export (before Metrodroid's layout): `{"cards": [{"cardType": ...}]}`.
        if let cards = o["cards"]?.arrayValue, cards.contains(where: { $0["cardType"] != nil }) { return .metrodroid }
        if let systems = o["systems"]?.arrayValue, systems.contains(where: { $0["nodes"] != nil }) { return .proxmark }
        if o["specification_version"] != nil || o["product_information"] != nil { return .proxmark }
        return nil
    }
}

extension CardImage {
    /// A name that is a file rather than a built-in card: it contains `/` or ends in one of
    /// the image files' usual extensions (`.json`, `.nfc`, `.xml`, `.metro`).
    public static func isImagePath(_ name: String) -> Bool {
        name.contains("/") || name.hasSuffix(".json") || name.hasSuffix(".nfc") || name.hasSuffix(".xml") || name.hasSuffix(".metro")
    }

    /// Reads a card image of any ``CardImageFormat``, told by its content; errors name the
    /// file and the line or JSON path at fault.
    public static func load(path: String) throws(FeliCaError) -> CardImage {
        let text: String
        do {
            text = try readTextFile(path)
        } catch {
            throw FeliCaError(.badInput, "card image \(path): \(error.reason)")
        }
        do {
            return try CardImage(importing: text)
        } catch {
            throw FeliCaError(.badInput, "card image \(path): \(error.reason)")
        }
    }

    /// Parses the text of any ``CardImageFormat``. A UTF-8 byte order mark before the text
    /// (Windows editors write one) is skipped.
    public init(importing original: String) throws(FeliCaError) {
        let text = original.hasPrefix("\u{FEFF}") ? String(original.dropFirst()) : original
        switch CardImageFormat.detect(text) {
        case .felica: try self.init(jsonText: text)
        case .flipper: self = try FlipperNFC.image(text); addLiteNDEFSystem()
        case .proxmark: self = try ProxmarkDump.image(try Self.json(text)); addLiteNDEFSystem()
        case .metrodroid: self = try MetrodroidJSON.image(try Self.json(text)); addLiteNDEFSystem()
        case .metrodroidXML: self = try MetrodroidXML.image(text); addLiteNDEFSystem()
        case .metroflip: self = try MetroflipFile.image(text)
        case nil:
            // Name what it is not, with the JSON error when it was meant to be JSON.
            if text.utf8.first(where: { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }) == UInt8(ascii: "{") {
                do {
                    _ = try JSONValue.parse(text)
                } catch {
                    throw FeliCaError(.badInput, "not valid JSON: \(error)")
                }
            }
            throw FeliCaError(.badInput, "not a card image: neither felica-card/1 JSON (\"format\"), a Flipper Zero .nfc file (\"Filetype:\"), Proxmark3 hf felica dump JSON (\"systems\" with \"nodes\") nor a Metrodroid export (\"felica\" in JSON, <card> in XML)")
        }
    }

    static func json(_ text: String) throws(FeliCaError) -> JSONValue {
        do {
            return try JSONValue.parse(text)
        } catch {
            throw FeliCaError(.badInput, "not valid JSON: \(error)")
        }
    }

    /// The image written in `format`; `now` (`YYYY-MM-DDTHH:MM:SSZ`) is the scan time a
    /// format that needs one gets when the image has no ``scannedAt``.
    public func exported(as format: CardImageFormat, now: String) throws(FeliCaError) -> String {
        switch format {
        case .felica: jsonText()
        case .flipper: try FlipperNFC.text(self)
        case .metrodroid: MetrodroidJSON.text(self, now: now)
        case .proxmark: throw FeliCaError(.unsupported, "writing Proxmark3 dumps is not supported (flipper and metrodroid are)")
        case .metrodroidXML: throw FeliCaError(.unsupported, "writing Metrodroid's older XML is not supported (its JSON, metrodroid, is)")
        case .metroflip: throw FeliCaError(.unsupported, "writing Metroflip files is not supported (flipper and metrodroid are)")
        }
    }

    /// The system code a dump that does not name its system most likely read, by the
    /// services it holds: the profiles' own services, else nil.
    static func systemCode(guessedFrom services: [ServiceCode]) -> SystemCode? {
        let set = Set(services.map { ServiceCode($0.rawValue | 1) })
        if set.contains(0x008B) || set.contains(0x090F) { return .transit }
        if set.contains(0x0117) { return 0x8008 }
        if set.contains(0x0118) { return 0x8005 }
        let common: Set<ServiceCode> = [0x110B, 0x1317, 0x170F, 0x558B, 0x5597, 0x564F, 0x6817, 0x684F, 0x680B, 0x50D7]
        if !set.isDisjoint(with: common) { return .common }
        return nil
    }

    /// A FeliCa Lite-S whose memory configuration block (MC, 0x88) has SYS_OP (byte 3) = 01
    /// answers Polling for 12FC (NDEF) as well as 88B4, with the same IDm and the same
    /// memory: a dump lists the system it was read through; this adds the other, as
    /// `felica dump` writes such a tag (a 12FC system with no services of its own).
    mutating func addLiteNDEFSystem() {
        guard let si = systems.indices.first(where: { i in
            let family = pmm(ofSystem: i).ic.family
            return (family == .lite || family == .liteS) && systems[i].code == 0x88B4
        }) else { return }
        guard !systems.contains(where: { $0.code == 0x12FC }),
              let memory = systems[si].services.first(where: { $0.code == 0x000B || $0.code == 0x0009 }),
              let mc = memory.block(0x88), mc.count == 16, mc[3] == 0x01
        else { return }
        systems.append(System(code: 0x12FC, idm: idm(ofSystem: si), services: []))
    }

    /// Appends a line to the image's `notes` (what an import could not carry over).
    mutating func note(_ text: String) {
        var notes = extra["notes"]?.arrayValue ?? []
        notes.append(.string(text))
        extra["notes"] = .array(notes)
    }
}

/// Strict hex of one field, naming where it was found.
func importHex(_ s: some StringProtocol, count: Int? = nil, _ where_: String) throws(FeliCaError) -> [UInt8] {
    let digits = String(s.filter { $0 != " " })
    guard digits.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) || (0x41...0x46).contains($0) }),
          let bytes = Hex.decode(digits)
    else { throw FeliCaError(.badInput, "\(where_): \"\(s)\" is not hex bytes") }
    if let count, bytes.count != count {
        throw FeliCaError(.badInput, "\(where_): expected \(count) bytes, found \(bytes.count)")
    }
    return bytes
}

func uint64(_ bytes: [UInt8]) -> UInt64 { bytes.reduce(0) { $0 << 8 | UInt64($1) } }

func bytes64(_ v: UInt64) -> [UInt8] { (0..<8).map { UInt8(truncatingIfNeeded: v >> (56 - 8 * UInt64($0))) } }
