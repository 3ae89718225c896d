extension JSONValue {
    /// Nesting deeper than this is refused, so hostile input cannot exhaust the stack.
    public static let maximumDepth = 256

    /// Parses one JSON document; anything but whitespace after it is an error.
    public static func parse(_ text: String) throws(JSONError) -> JSONValue {
        var p = JSONParser(Array(text.utf8))
        p.skipWhitespace()
        let v = try p.value(depth: 0)
        p.skipWhitespace()
        guard p.i == p.bytes.count else { throw p.error("unexpected text after the JSON value") }
        return v
    }
}

struct JSONParser {
    let bytes: [UInt8]
    var i = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    func error(_ reason: String) -> JSONError {
        var line = 1, col = 1
        for b in bytes[..<min(i, bytes.count)] {
            if b == 0x0A { line += 1; col = 1 } else if b & 0xC0 != 0x80 { col += 1 }
        }
        return JSONError(reason: reason, line: line, column: col)
    }

    mutating func skipWhitespace() {
        while i < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[i]) { i += 1 }
    }

    mutating func expect(_ literal: String, _ v: JSONValue) throws(JSONError) -> JSONValue {
        let l = Array(literal.utf8)
        guard i + l.count <= bytes.count, Array(bytes[i..<(i + l.count)]) == l else {
            throw error("invalid literal (expected \(literal))")
        }
        i += l.count
        return v
    }

    mutating func value(depth: Int) throws(JSONError) -> JSONValue {
        guard depth < JSONValue.maximumDepth else { throw error("nesting deeper than \(JSONValue.maximumDepth) levels") }
        guard i < bytes.count else { throw error("unexpected end of input, expected a value") }
        switch bytes[i] {
        case UInt8(ascii: "{"): return try object(depth: depth)
        case UInt8(ascii: "["): return try array(depth: depth)
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): return try expect("true", .bool(true))
        case UInt8(ascii: "f"): return try expect("false", .bool(false))
        case UInt8(ascii: "n"): return try expect("null", .null)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
        default: throw error("unexpected character '\(Unicode.Scalar(bytes[i]))', expected a value")
        }
    }

    mutating func object(depth: Int) throws(JSONError) -> JSONValue {
        i += 1
        var obj = JSONObject()
        var seen = Set<String>()
        skipWhitespace()
        if i < bytes.count, bytes[i] == UInt8(ascii: "}") { i += 1; return .object(obj) }
        while true {
            skipWhitespace()
            guard i < bytes.count, bytes[i] == UInt8(ascii: "\"") else { throw error("expected a member name in quotes") }
            let key = try string()
            guard seen.insert(key).inserted else { throw error("duplicate member \"\(key)\"") }
            skipWhitespace()
            guard i < bytes.count, bytes[i] == UInt8(ascii: ":") else { throw error("expected ':' after member name \"\(key)\"") }
            i += 1
            skipWhitespace()
            obj.append(key, try value(depth: depth + 1))
            skipWhitespace()
            guard i < bytes.count else { throw error("unexpected end of input inside an object") }
            if bytes[i] == UInt8(ascii: ",") { i += 1; continue }
            if bytes[i] == UInt8(ascii: "}") { i += 1; return .object(obj) }
            throw error("expected ',' or '}' in an object")
        }
    }

    mutating func array(depth: Int) throws(JSONError) -> JSONValue {
        i += 1
        var out: [JSONValue] = []
        skipWhitespace()
        if i < bytes.count, bytes[i] == UInt8(ascii: "]") { i += 1; return .array(out) }
        while true {
            skipWhitespace()
            out.append(try value(depth: depth + 1))
            skipWhitespace()
            guard i < bytes.count else { throw error("unexpected end of input inside an array") }
            if bytes[i] == UInt8(ascii: ",") { i += 1; continue }
            if bytes[i] == UInt8(ascii: "]") { i += 1; return .array(out) }
            throw error("expected ',' or ']' in an array")
        }
    }

    mutating func hex4() throws(JSONError) -> UInt32 {
        guard i + 4 <= bytes.count else { throw error("truncated \\u escape") }
        var v: UInt32 = 0
        for _ in 0..<4 {
            let c = bytes[i]
            let d: UInt32
            switch c {
            case 0x30...0x39: d = UInt32(c - 0x30)
            case 0x41...0x46: d = UInt32(c - 0x41 + 10)
            case 0x61...0x66: d = UInt32(c - 0x61 + 10)
            default: throw error("invalid hex digit in \\u escape")
            }
            v = v << 4 | d
            i += 1
        }
        return v
    }

    mutating func string() throws(JSONError) -> String {
        i += 1
        var out: [UInt8] = []
        while true {
            guard i < bytes.count else { throw error("unterminated string") }
            let c = bytes[i]
            i += 1
            switch c {
            case UInt8(ascii: "\""):
                guard let s = String(validating: out, as: UTF8.self) else { throw error("string is not valid UTF-8") }
                return s
            case UInt8(ascii: "\\"):
                guard i < bytes.count else { throw error("unterminated escape") }
                let e = bytes[i]
                i += 1
                switch e {
                case UInt8(ascii: "\""): out.append(0x22)
                case UInt8(ascii: "\\"): out.append(0x5C)
                case UInt8(ascii: "/"): out.append(0x2F)
                case UInt8(ascii: "b"): out.append(0x08)
                case UInt8(ascii: "f"): out.append(0x0C)
                case UInt8(ascii: "n"): out.append(0x0A)
                case UInt8(ascii: "r"): out.append(0x0D)
                case UInt8(ascii: "t"): out.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = try hex4()
                    if (0xD800...0xDBFF).contains(scalar) {
                        guard i + 2 <= bytes.count, bytes[i] == UInt8(ascii: "\\"), bytes[i + 1] == UInt8(ascii: "u") else {
                            throw error("unpaired surrogate in \\u escape")
                        }
                        i += 2
                        let low = try hex4()
                        guard (0xDC00...0xDFFF).contains(low) else { throw error("invalid low surrogate in \\u escape") }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    }
                    guard let u = Unicode.Scalar(scalar) else { throw error("invalid \\u escape") }
                    out.append(contentsOf: Array(String(Character(u)).utf8))
                default: throw error("invalid escape \\\(Unicode.Scalar(e))")
                }
            case 0x00..<0x20:
                throw error("control character in string (escape it)")
            default:
                out.append(c)
            }
        }
    }

    mutating func number() throws(JSONError) -> JSONValue {
        let start = i
        if bytes[i] == UInt8(ascii: "-") { i += 1 }
        func digits(_ p: inout JSONParser) -> Int {
            let s = p.i
            while p.i < p.bytes.count, (0x30...0x39).contains(p.bytes[p.i]) { p.i += 1 }
            return p.i - s
        }
        let intStart = i
        guard digits(&self) > 0 else { throw error("invalid number") }
        if bytes[intStart] == UInt8(ascii: "0") && i - intStart > 1 { throw error("leading zero in number") }
        if i < bytes.count, bytes[i] == UInt8(ascii: ".") {
            i += 1
            guard digits(&self) > 0 else { throw error("digits expected after '.'") }
        }
        if i < bytes.count, bytes[i] == UInt8(ascii: "e") || bytes[i] == UInt8(ascii: "E") {
            i += 1
            if i < bytes.count, bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-") { i += 1 }
            guard digits(&self) > 0 else { throw error("digits expected in exponent") }
        }
        let text = String(decoding: bytes[start..<i], as: UTF8.self)
        guard let d = Double(text), d.isFinite else { throw error("number out of range") }
        return .number(d)
    }
}
