import FeliCa

/// What one record means, decoded by its type: the NFC Forum well-known types URI (`U`),
/// Text (`T`) and Smart Poster (`Sp`), media types, absolute URIs, external types; any
/// other record is shown by its type and payload.
public enum NDEFContent: Hashable, Sendable {
    /// An empty record (TNF 0).
    case empty
    /// A URI record, its prefix code expanded.
    case uri(NDEFURI)
    /// A Text record.
    case text(NDEFText)
    /// A Smart Poster: a URI with titles, an action and other records around it.
    case smartPoster(NDEFSmartPoster)
    /// A record of a media type (TNF 2, `text/plain`, `image/png`); `text` is the payload
    /// read as UTF-8 when the type is `text/*` and the bytes are valid UTF-8.
    case media(type: String, text: String?)
    /// A record whose type is an absolute URI (TNF 3).
    case absoluteURI(String)
    /// An NFC Forum external type (TNF 4, `example.com:mytype`).
    case external(type: String)
    /// Anything else: a well-known type this decoder does not know, TNF 5 (unknown) or 7
    /// (reserved, read as unknown).
    case other

    /// Decodes `record` by its TNF and type. A URI, Text or Smart Poster payload that does
    /// not follow its type's layout throws `.truncated` or `.invalidField`, naming the field.
    public init(_ record: NDEFRecord) throws(FeliCaError) {
        switch record.tnf {
        case .empty: self = .empty
        case .wellKnown:
            switch record.typeText {
            case "U": self = .uri(try NDEFURI(payload: record.payload))
            case "T": self = .text(try NDEFText(payload: record.payload))
            case "Sp": self = .smartPoster(try NDEFSmartPoster(payload: record.payload))
            default: self = .other
            }
        case .media:
            let type = record.typeText ?? Hex.encode(record.type)
            let isText = type.lowercased().hasPrefix("text/")
            self = .media(type: type, text: isText ? String(validating: record.payload, as: UTF8.self) : nil)
        case .absoluteURI: self = .absoluteURI(String(decoding: record.type, as: UTF8.self))
        case .external: self = .external(type: record.typeText ?? Hex.encode(record.type))
        case .unknown, .unchanged, .reserved: self = .other
        }
    }
}

/// A URI record (NFC Forum URI RTD): byte 0 an abbreviation code, then the rest of the URI
/// as UTF-8.
public struct NDEFURI: Hashable, Sendable {
    /// The abbreviation code of byte 0.
    public var prefixCode: UInt8
    /// The URI with its prefix expanded; a reserved code (0x24 and above) expands to
    /// nothing, as the RTD says readers treat it.
    public var uri: String

    /// The prefixes of codes 0x00-0x23, in code order.
    public static let prefixes: [String] = [
        "", "http://www.", "https://www.", "http://", "https://", "tel:", "mailto:", "ftp://anonymous:anonymous@",
        "ftp://ftp.", "ftps://", "sftp://", "smb://", "nfs://", "ftp://", "dav://", "news:", "telnet://", "imap:",
        "rtsp://", "urn:", "pop:", "sip:", "sips:", "tftp:", "btspp://", "btl2cap://", "btgoep://", "tcpobex://",
        "irdaobex://", "file://", "urn:epc:id:", "urn:epc:tag:", "urn:epc:pat:", "urn:epc:raw:", "urn:epc:", "urn:nfc:",
    ]

    /// Whether ``prefixCode`` is one of the table's.
    public var isKnownPrefix: Bool { Int(prefixCode) < Self.prefixes.count }

    public init(payload: [UInt8]) throws(FeliCaError) {
        guard let code = payload.first else { throw FeliCaError(.truncated, "URI record: empty payload (no prefix code)") }
        guard let rest = String(validating: payload.dropFirst(), as: UTF8.self) else {
            throw FeliCaError(.invalidField, "URI record: the URI after the prefix code is not valid UTF-8")
        }
        prefixCode = code
        uri = (Int(code) < Self.prefixes.count ? Self.prefixes[Int(code)] : "") + rest
    }

    /// The payload of `uri`, abbreviated with the longest prefix of the table that fits.
    public static func payload(_ uri: String) -> [UInt8] {
        var best = 0
        for (code, p) in prefixes.enumerated() where !p.isEmpty && uri.hasPrefix(p) && p.count > prefixes[best].count { best = code }
        return [UInt8(best)] + Array(uri.utf8.dropFirst(prefixes[best].utf8.count))
    }
}

/// A Text record (NFC Forum Text RTD): a status byte (bit 7 the encoding, 0 UTF-8 and
/// 1 UTF-16; bit 6 reserved, 0; bits 5-0 the language code's length), the IANA language
/// code in ASCII, then the text.
public struct NDEFText: Hashable, Sendable {
    public enum Encoding: String, Hashable, Sendable {
        case utf8 = "UTF-8", utf16 = "UTF-16"
    }

    public var language: String
    public var encoding: Encoding
    public var text: String

    public init(language: String, encoding: Encoding = .utf8, text: String) {
        self.language = language
        self.encoding = encoding
        self.text = text
    }

    public init(payload: [UInt8]) throws(FeliCaError) {
        var reader = ByteReader(payload[...], frame: "Text record")
        let status = try reader.readUInt8("status byte")
        guard status & 0x40 == 0 else {
            throw FeliCaError(.invalidField, "Text record: status byte \(Hex.encode([status])) sets bit 6, which is reserved (0)")
        }
        let length = Int(status & 0x3F)
        let code = try reader.readBytes(length, "language code (\(length) bytes)")
        guard code.allSatisfy({ (0x21...0x7E).contains($0) }) else {
            throw FeliCaError(.invalidField, "Text record: the language code is not printable ASCII")
        }
        language = String(decoding: code, as: UTF8.self)
        let body = Array(reader.readRest())
        if status & 0x80 == 0 {
            encoding = .utf8
            guard let s = String(validating: body, as: UTF8.self) else { throw FeliCaError(.invalidField, "Text record: the text is not valid UTF-8") }
            text = s
        } else {
            encoding = .utf16
            text = try Self.utf16(body)
        }
    }

    /// UTF-16 with an optional byte order mark; big-endian without one, as the RTD says.
    static func utf16(_ bytes: [UInt8]) throws(FeliCaError) -> String {
        guard bytes.count % 2 == 0 else { throw FeliCaError(.invalidField, "Text record: UTF-16 text of \(bytes.count) bytes (an odd count)") }
        var little = false
        var start = 0
        if bytes.count >= 2 {
            if bytes[0] == 0xFF && bytes[1] == 0xFE { little = true; start = 2 } else if bytes[0] == 0xFE && bytes[1] == 0xFF { start = 2 }
        }
        var units: [UInt16] = []
        for i in stride(from: start, to: bytes.count, by: 2) {
            let (high, low) = little ? (bytes[i + 1], bytes[i]) : (bytes[i], bytes[i + 1])
            units.append(UInt16(high) << 8 | UInt16(low))
        }
        guard let s = String(validating: units, as: UTF16.self) else { throw FeliCaError(.invalidField, "Text record: the UTF-16 text holds an unpaired surrogate") }
        return s
    }

    /// The record's payload (UTF-16 written big-endian with a byte order mark).
    public var payload: [UInt8] {
        let code = Array(language.utf8)
        var body: [UInt8]
        switch encoding {
        case .utf8: body = Array(text.utf8)
        case .utf16: body = [0xFE, 0xFF] + text.utf16.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }
        }
        return [UInt8(code.count & 0x3F) | (encoding == .utf16 ? 0x80 : 0)] + code + body
    }
}

/// A Smart Poster (NFC Forum Smart Poster RTD): its payload is an NDEF message holding
/// exactly one URI record, any number of Text records (titles, one per language), and
/// optionally an action (`act`, 1 byte: 0 do, 1 save, 2 open), a size (`s`, 4 bytes BE),
/// a type (`t`, a MIME type) and icons (media records).
public struct NDEFSmartPoster: Hashable, Sendable {
    public var uri: String
    public var titles: [NDEFText]
    /// The `act` byte, when present.
    public var action: UInt8?
    /// The `s` record: the size of what the URI points at.
    public var size: UInt32?
    /// The `t` record: the MIME type of what the URI points at.
    public var mimeType: String?
    /// Every record of the poster, in order (the URI and titles included).
    public var records: [NDEFRecord]

    /// The action's name: `do`, `save`, `open`, or the number.
    public var actionName: String? {
        action.map { a in a < 3 ? ["do", "save", "open"][Int(a)] : "\(a)" }
    }

    public init(payload: [UInt8]) throws(FeliCaError) {
        let inner: [NDEFRecord]
        do throws(FeliCaError) {
            inner = try NDEFRecord.parseMessage(payload)
        } catch {
            throw FeliCaError(error.code, "Smart Poster: \(error.reason)")
        }
        var uris: [String] = []
        titles = []
        records = inner
        for r in inner where r.tnf == .wellKnown {
            switch r.typeText {
            case "U": uris.append(try NDEFURI(payload: r.payload).uri)
            case "T": titles.append(try NDEFText(payload: r.payload))
            case "act":
                guard r.payload.count == 1 else { throw FeliCaError(.invalidField, "Smart Poster: the action record holds \(r.payload.count) bytes, not 1") }
                action = r.payload[0]
            case "s":
                guard r.payload.count == 4 else { throw FeliCaError(.invalidField, "Smart Poster: the size record holds \(r.payload.count) bytes, not 4") }
                size = r.payload.reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            case "t":
                mimeType = String(validating: r.payload, as: UTF8.self)
            default: break
            }
        }
        guard uris.count == 1 else { throw FeliCaError(.invalidField, "Smart Poster: holds \(uris.count) URI records; it must hold exactly one") }
        uri = uris[0]
    }
}
