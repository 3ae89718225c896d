import FeliCa
import FeliCaJSON

/// The XML card exports of Metrodroid before its JSON format (and of FareBot, whose layout
/// it kept), read into card images.
///
/// The layout (metrodroid's `XmlCardFormat` and its test exports `felica/felica-idm.xml`,
/// `felica/felica-no-idm.xml`): a root `<card type="4" id="…" scanned_at="…">` (type 4 is
/// FeliCa; `id` is the IDm in hex; `scanned_at` milliseconds since 1970 UTC), or a
/// `<cards>` root holding several `<card>`s; in a FeliCa card `<idm>` (base64, dropped
/// in Metrodroid 2.9.38: `id` says the same), `<pmm>` (base64), and
/// `<systems><system code="…"><services><service code="…"><blocks><block address="…">`
/// with the block's 16 bytes in base64; codes in decimal. Read only: nothing writes it.
enum MetrodroidXML {
    static func fail(_ line: Int, _ what: String) -> FeliCaError {
        FeliCaError(.badInput, "line \(line): \(what)")
    }

    static func image(_ text: String) throws(FeliCaError) -> CardImage {
        let root = try XMLDocument.parse(text)
        let card: XMLNode
        switch root.name {
        case "card":
            card = root
        case "cards":
            let cards = root.children.filter { $0.name == "card" }
            let felica = cards.filter { $0.attribute("type") == "4" }
            guard felica.count == 1 else {
                let kinds = cards.map { $0.attribute("type") ?? "?" }.joined(separator: ", ")
                throw fail(root.line, felica.isEmpty ? "<cards> holds no FeliCa card (type 4) among its \(cards.count) (types \(kinds))"
                                                     : "<cards> holds \(felica.count) FeliCa cards (lines \(felica.map { String($0.line) }.joined(separator: ", "))): a card image is one card")
            }
            card = felica[0]
        default:
            throw fail(root.line, "root element <\(root.name)>: expected <card> or <cards>")
        }
        guard let type = card.attribute("type") else { throw fail(card.line, "<card> has no type attribute") }
        guard type == "4" else { throw fail(card.line, "<card type=\"\(type)\">: not a FeliCa card (Metrodroid's type 4)") }

        var idm: [UInt8]?
        if let id = card.attribute("id") { idm = try importHex(id, count: 8, "line \(card.line): <card id>") }
        if let e = card.child("idm") {
            let b = try base64(e, count: 8)
            if let idm, idm != b { throw fail(e.line, "<idm> \(Hex.encode(b)) and <card id> \(Hex.encode(idm)) name different cards") }
            idm = b
        }
        guard let idm else { throw fail(card.line, "the card has neither an id attribute nor an <idm>: the IDm is unknown") }
        var pmm: PMm?
        if let e = card.child("pmm") { pmm = PMm(rawValue: uint64(try base64(e, count: 8))) }

        guard let systemsNode = card.child("systems") else { throw fail(card.line, "the card has no <systems>") }
        let systemNodes = systemsNode.children.filter { $0.name == "system" }
        guard !systemNodes.isEmpty else { throw fail(systemsNode.line, "<systems> is empty: a card holds at least one system") }
        var image = CardImage(pmm: pmm, systems: [])
        for (k, s) in systemNodes.enumerated() {
            let code = try decimal(s, "system")
            var services: [CardImage.Service] = []
            for v in s.child("services")?.children.filter({ $0.name == "service" }) ?? [] {
                let sc = try decimal(v, "service")
                var blocks = JSONObject()
                for (n, b) in (v.child("blocks")?.children.filter { $0.name == "block" } ?? []).enumerated() {
                    let address = b.attribute("address") ?? String(n)
                    guard let number = Int(address), (0...0xFFFF).contains(number), address.allSatisfy(\.isNumber) else {
                        throw fail(b.line, "<block address=\"\(address)\">: not a block number")
                    }
                    blocks.append(String(number), .object(["data": .string(Hex.encode(try base64(b, count: 16)))]))
                }
                var o: JSONObject = ["blocksMap": .object(blocks)]
                if v.attribute("skipped") == "true" { o["skipped"] = .bool(true) }
                if let service = try MetrodroidJSON.service(String(sc), .object(o), "line \(v.line): <service code=\"\(sc)\">", into: &image) {
                    services.append(service)
                }
            }
            services.sort { $0.code < $1.code }
            image.systems.append(CardImage.System(code: SystemCode(code), idm: k == 0 ? IDm(rawValue: uint64(idm)) : nil, services: services))
        }
        if let at = card.attribute("scanned_at") {
            guard let ms = Int64(at), ms >= 0, ms < 253_402_300_800_000 else {
                throw fail(card.line, "<card scanned_at=\"\(at)\">: expected milliseconds since 1970")
            }
            image.scannedAt = isoUTC(millis: ms)
        }
        return image
    }

    static func decimal(_ node: XMLNode, _ what: String) throws(FeliCaError) -> UInt16 {
        guard let c = node.attribute("code") else { throw fail(node.line, "<\(what)> has no code attribute") }
        guard !c.isEmpty, c.allSatisfy({ $0.isASCII && $0.isNumber }), let v = UInt16(c) else {
            throw fail(node.line, "<\(what) code=\"\(c)\">: not a code in decimal (0-65535), as Metrodroid writes them")
        }
        return v
    }

    static func base64(_ node: XMLNode, count: Int) throws(FeliCaError) -> [UInt8] {
        let text = String(node.text.filter { !$0.isWhitespace })
        guard let b = decodeBase64(text) else { throw fail(node.line, "<\(node.name)>: \"\(text)\" is not base64") }
        guard b.count == count else { throw fail(node.line, "<\(node.name)>: expected \(count) bytes, found \(b.count)") }
        return b
    }
}

/// One element of an XML document: its name, attributes, child elements, the text directly
/// inside it, and the line it starts on.
struct XMLNode {
    var name: String
    var attributes: [(String, String)] = []
    var children: [XMLNode] = []
    var text = ""
    var line: Int

    func attribute(_ name: String) -> String? { attributes.first { $0.0 == name }?.1 }
    func child(_ name: String) -> XMLNode? { children.first { $0.name == name } }
}

/// A small XML reader for card exports: elements, attributes, text, comments, the XML
/// declaration and processing instructions, CDATA, and the five named and numeric
/// character references. No DTDs. Errors give the line and column.
enum XMLDocument {
    static func parse(_ text: String) throws(FeliCaError) -> XMLNode {
        var p = Parser(bytes: Array(text.utf8))
        return try p.document()
    }

    struct Parser {
        let bytes: [UInt8]
        var i = 0

        func position(_ at: Int) -> (line: Int, column: Int) {
            var line = 1, column = 1
            for b in bytes[..<min(at, bytes.count)] {
                if b == 0x0A { line += 1; column = 1 } else { column += 1 }
            }
            return (line, column)
        }

        func fail(_ what: String, at: Int? = nil) -> FeliCaError {
            let (l, c) = position(at ?? i)
            return FeliCaError(.badInput, "not valid XML: line \(l), column \(c): \(what)")
        }

        func starts(_ s: String) -> Bool {
            let u = Array(s.utf8)
            return i + u.count <= bytes.count && Array(bytes[i..<i + u.count]) == u
        }

        mutating func skipSpace() {
            while i < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[i]) { i += 1 }
        }

        /// Skips up to and past `end`, or fails naming what was left open.
        mutating func skip(past end: String, _ what: String) throws(FeliCaError) {
            let start = i
            while i < bytes.count {
                if starts(end) { i += end.utf8.count; return }
                i += 1
            }
            throw fail("\(what) is not closed (\"\(end)\" missing)", at: start)
        }

        /// Comments, processing instructions and blank space between elements.
        mutating func skipMisc() throws(FeliCaError) {
            while true {
                skipSpace()
                if starts("<!--") { try skip(past: "-->", "comment") } else if starts("<?") { try skip(past: "?>", "processing instruction") } else { return }
            }
        }

        mutating func document() throws(FeliCaError) -> XMLNode {
            try skipMisc()
            if starts("<!DOCTYPE") { throw fail("a DOCTYPE is not read here") }
            guard i < bytes.count, bytes[i] == UInt8(ascii: "<") else { throw fail(i < bytes.count ? "expected an element" : "no element") }
            let root = try element()
            try skipMisc()
            guard i == bytes.count else { throw fail("content after the root element </\(root.name)>") }
            return root
        }

        mutating func name() throws(FeliCaError) -> String {
            let start = i
            while i < bytes.count {
                let b = bytes[i]
                let ok = (0x41...0x5A).contains(b) || (0x61...0x7A).contains(b) || b == 0x5F || b == 0x3A || b >= 0x80
                    || (i > start && ((0x30...0x39).contains(b) || b == 0x2D || b == 0x2E))
                guard ok else { break }
                i += 1
            }
            guard i > start else { throw fail("expected a name") }
            return String(decoding: bytes[start..<i], as: UTF8.self)
        }

        mutating func element() throws(FeliCaError) -> XMLNode {
            let open = i
            i += 1 // "<"
            var node = XMLNode(name: try name(), line: position(open).line)
            while true {
                let before = i
                skipSpace()
                guard i < bytes.count else { throw fail("<\(node.name)> is not closed", at: open) }
                if starts("/>") { i += 2; return node }
                if bytes[i] == UInt8(ascii: ">") { i += 1; break }
                guard i > before else { throw fail("expected a space, \">\" or \"/>\" in <\(node.name)>") }
                let key = try name()
                skipSpace()
                guard i < bytes.count, bytes[i] == UInt8(ascii: "=") else { throw fail("attribute \(key) has no value") }
                i += 1
                skipSpace()
                guard i < bytes.count, bytes[i] == UInt8(ascii: "\"") || bytes[i] == UInt8(ascii: "'") else { throw fail("the value of \(key) is not quoted") }
                let quote = bytes[i]
                i += 1
                let start = i
                while i < bytes.count, bytes[i] != quote {
                    if bytes[i] == UInt8(ascii: "<") { throw fail("\"<\" in the value of \(key)") }
                    i += 1
                }
                guard i < bytes.count else { throw fail("the value of \(key) is not closed", at: start - 1) }
                if node.attribute(key) != nil { throw fail("attribute \(key) given twice", at: start) }
                node.attributes.append((key, try unescape(bytes[start..<i], at: start)))
                i += 1
            }
            // Content.
            while true {
                guard i < bytes.count else { throw fail("<\(node.name)> is not closed (</\(node.name)> missing)", at: open) }
                if starts("</") {
                    let close = i
                    i += 2
                    let n = try name()
                    skipSpace()
                    guard i < bytes.count, bytes[i] == UInt8(ascii: ">") else { throw fail("expected \">\" after </\(n)") }
                    i += 1
                    guard n == node.name else { throw fail("</\(n)> closes <\(node.name)> (line \(node.line))", at: close) }
                    return node
                } else if starts("<!--") {
                    try skip(past: "-->", "comment")
                } else if starts("<![CDATA[") {
                    let start = i + 9
                    try skip(past: "]]>", "CDATA section")
                    node.text += String(decoding: bytes[start..<(i - 3)], as: UTF8.self)
                } else if starts("<?") {
                    try skip(past: "?>", "processing instruction")
                } else if bytes[i] == UInt8(ascii: "<") {
                    node.children.append(try element())
                } else {
                    let start = i
                    while i < bytes.count, bytes[i] != UInt8(ascii: "<") { i += 1 }
                    node.text += try unescape(bytes[start..<i], at: start)
                }
            }
        }

        func unescape(_ raw: ArraySlice<UInt8>, at start: Int) throws(FeliCaError) -> String {
            guard raw.contains(UInt8(ascii: "&")) else { return String(decoding: raw, as: UTF8.self) }
            var out: [UInt8] = []
            var k = raw.startIndex
            while k < raw.endIndex {
                guard raw[k] == UInt8(ascii: "&") else { out.append(raw[k]); k += 1; continue }
                guard let semi = raw[k...].firstIndex(of: UInt8(ascii: ";")) else { throw fail("\"&\" without \";\"", at: k) }
                let ref = String(decoding: raw[(k + 1)..<semi], as: UTF8.self)
                let named = ["amp": "&", "lt": "<", "gt": ">", "quot": "\"", "apos": "'"]
                if let s = named[ref] {
                    out += Array(s.utf8)
                } else if ref.hasPrefix("#"), let v = ref.hasPrefix("#x") ? UInt32(ref.dropFirst(2), radix: 16) : UInt32(ref.dropFirst(), radix: 10),
                          let scalar = Unicode.Scalar(v) {
                    out += Array(String(Character(scalar)).utf8)
                } else {
                    throw fail("unknown reference &\(ref);", at: k)
                }
                k = semi + 1
            }
            return String(decoding: out, as: UTF8.self)
        }
    }
}
