import FeliCa
import FeliCaJSON

/// How `felica ndef` shows a tag's records, as text and as JSON, kept beside the model so
/// every front end renders them alike.
///
/// JSON: `{"idm", "pmm", "attributes": {...}, "records": [...]}`; each record has `tnf`
/// (0-7), `type` (text, or hex when not printable) and `id` when it has one, then by kind:
/// URI `uri`; Text `language`, `encoding` (`UTF-8` / `UTF-16`), `text`; Smart Poster
/// `uri`, `titles` (`language`, `text`), `action`, `size`, `mimeType`, `records` (nested);
/// media `length` and `text` (text/*) or `payload` (hex); everything else `payload` (hex).
public enum NDEFRendering {
    /// Payloads longer than this are shown cut, with their length, in text output.
    public static let textPayloadLimit = 64

    public static func json(_ tag: NDEFTag) -> JSONValue {
        var o = JSONObject()
        o.append("idm", .string(tag.idm.hex))
        o.append("pmm", .string(tag.pmm.hex))
        let a = tag.attributes
        o.append("attributes", .object([
            "version": .string(a.versionText), "nbr": .int(a.nbr), "nbw": .int(a.nbw), "nmaxb": .int(a.nmaxb),
            "writable": .bool(a.isWritable), "length": .int(a.length),
        ]))
        o.append("records", .array(tag.records.map(json)))
        return .object(o)
    }

    /// One record as JSON (content decoded by type; see the type's documentation).
    public static func json(_ record: NDEFRecord) -> JSONValue {
        var o = JSONObject()
        o.append("tnf", .int(Int(record.tnf.rawValue)))
        o.append("type", .string(record.typeText ?? Hex.encode(record.type)))
        if !record.id.isEmpty { o.append("id", .string(record.typeText(of: record.id))) }
        // A tag's records were decoded when it was read (``NDEFTag`` refuses one that does
        // not decode); a record built by hand that does not decode shows its payload.
        switch try? NDEFContent(record) {
        case .uri(let u)?: o.append("uri", .string(u.uri))
        case .text(let t)?: text(t, into: &o)
        case .smartPoster(let sp)?:
            o.append("uri", .string(sp.uri))
            o.append("titles", .array(sp.titles.map { t in .object(["language": .string(t.language), "text": .string(t.text)]) }))
            if let action = sp.actionName { o.append("action", .string(action)) }
            if let size = sp.size { o.append("size", .int(Int(size))) }
            if let mime = sp.mimeType { o.append("mimeType", .string(mime)) }
            o.append("records", .array(sp.records.map(json)))
        case .media(_, let text?)?:
            o.append("length", .int(record.payload.count))
            o.append("text", .string(text))
        case .media?:
            o.append("length", .int(record.payload.count))
            o.append("payload", .string(Hex.encode(record.payload)))
        case .empty?: break
        case .absoluteURI?, .external?, .other?, nil:
            o.append("payload", .string(Hex.encode(record.payload)))
        }
        return .object(o)
    }

    private static func text(_ t: NDEFText, into o: inout JSONObject) {
        o.append("language", .string(t.language))
        o.append("encoding", .string(t.encoding.rawValue))
        o.append("text", .string(t.text))
    }

    /// The text lines of a tag: a header with the attribute block, then one line (and
    /// indented detail lines) per record.
    public static func lines(_ tag: NDEFTag) -> [String] {
        let a = tag.attributes
        var out = [
            "IDm      \(tag.idm)",
            "NDEF     version \(a.versionText), \(a.length) of \(a.nmaxb * 16) bytes used, \(a.isWritable ? "read-write" : "read-only"), \(a.nbr) block\(a.nbr == 1 ? "" : "s") per read",
        ]
        if tag.records.isEmpty { out.append("(no NDEF message: the tag is formatted but empty)") }
        for (i, r) in tag.records.enumerated() { out += lines(r, number: "\(i + 1)", indent: "") }
        return out
    }

    /// The lines of one record, numbered (`2`, `2.1` for a Smart Poster's records).
    public static func lines(_ record: NDEFRecord, number: String, indent: String) -> [String] {
        let head = indent + "Record \(number)  "
        let typeText = record.typeText ?? Hex.encode(record.type)
        var out: [String]
        switch try? NDEFContent(record) {
        case .uri(let u)?:
            out = [head + "URI   \(u.uri)" + (u.isKnownPrefix ? "" : "  (reserved prefix code \(Hex.encode([u.prefixCode])), not expanded)")]
        case .text(let t)?:
            out = [head + "Text  [\(t.language), \(t.encoding.rawValue)] \(t.text)"]
        case .smartPoster(let sp)?:
            out = [head + "Smart Poster  \(sp.uri)"]
            for t in sp.titles { out.append(indent + "  title [\(t.language)] \(t.text)") }
            if let action = sp.actionName { out.append(indent + "  action \(action)") }
            if let size = sp.size { out.append(indent + "  size \(size) bytes") }
            if let mime = sp.mimeType { out.append(indent + "  type \(mime)") }
            for (k, inner) in sp.records.enumerated() where !(inner.tnf == .wellKnown && ["U", "T", "act", "s", "t"].contains(inner.typeText ?? "")) {
                out += lines(inner, number: "\(number).\(k + 1)", indent: indent + "  ")
            }
        case .media(let type, let text?)?:
            out = [head + "MIME  \(type)  \(record.payload.count) bytes: \(cut(text))"]
        case .media(let type, nil)?:
            out = [head + "MIME  \(type)  \(record.payload.count) bytes: \(hex(record.payload))"]
        case .absoluteURI(let uri)?:
            out = [head + "Absolute URI \(uri)  \(record.payload.count) bytes: \(hex(record.payload))"]
        case .external(let type)?:
            out = [head + "External \(type)  \(record.payload.count) bytes: \(hex(record.payload))"]
        case .empty?:
            out = [head + "Empty"]
        case .other?, nil:
            out = [head + "TNF \(record.tnf.rawValue) type \"\(typeText)\"  \(record.payload.count) bytes: \(hex(record.payload))"]
        }
        if !record.id.isEmpty { out[0] += "  (id \(record.typeText(of: record.id)))" }
        return out
    }

    static func cut(_ s: String) -> String {
        s.count > textPayloadLimit ? String(s.prefix(textPayloadLimit)) + "…" : s
    }

    static func hex(_ bytes: [UInt8]) -> String {
        bytes.count > textPayloadLimit / 2 ? Hex.encode(bytes.prefix(textPayloadLimit / 2)) + "…" : Hex.encode(bytes)
    }
}

extension NDEFRecord {
    /// `bytes` as ASCII text when printable, else hex (record IDs).
    func typeText(of bytes: [UInt8]) -> String {
        bytes.allSatisfy { (0x20...0x7E).contains($0) } ? String(decoding: bytes, as: UTF8.self) : Hex.encode(bytes)
    }
}
