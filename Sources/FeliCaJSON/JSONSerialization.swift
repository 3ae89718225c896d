extension JSONValue {
    /// JSON text. Compact puts everything on one line (JSON Lines); pretty indents by two
    /// spaces and keeps arrays of scalars on one line each element.
    public func serialized(pretty: Bool = false) -> String {
        var out = ""
        write(to: &out, pretty: pretty, indent: 0)
        return out
    }

    private func write(to out: inout String, pretty: Bool, indent: Int) {
        switch self {
        case .null: out += "null"
        case .bool(let b): out += b ? "true" : "false"
        case .number(let d): out += Self.format(d)
        case .string(let s): Self.quote(s, into: &out)
        case .array(let a):
            if a.isEmpty { out += "[]"; return }
            out += "["
            for (k, v) in a.enumerated() {
                if k > 0 { out += "," }
                if pretty { out += "\n" + String(repeating: " ", count: indent + 2) }
                v.write(to: &out, pretty: pretty, indent: indent + 2)
            }
            if pretty { out += "\n" + String(repeating: " ", count: indent) }
            out += "]"
        case .object(let o):
            if o.isEmpty { out += "{}"; return }
            out += "{"
            for (k, m) in o.members.enumerated() {
                if k > 0 { out += "," }
                if pretty { out += "\n" + String(repeating: " ", count: indent + 2) }
                Self.quote(m.key, into: &out)
                out += pretty ? ": " : ":"
                m.value.write(to: &out, pretty: pretty, indent: indent + 2)
            }
            if pretty { out += "\n" + String(repeating: " ", count: indent) }
            out += "}"
        }
    }

    /// Integers print without a fraction; other numbers in Swift's shortest round-trip form.
    public static func format(_ d: Double) -> String {
        if d.rounded() == d && abs(d) < 1e15 { return String(Int64(d)) }
        return "\(d)"
    }

    static func quote(_ s: String, into out: inout String) {
        out += "\""
        for u in s.unicodeScalars {
            switch u {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where u.value < 0x20:
                let h = String(u.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - h.count) + h
            default: out.unicodeScalars.append(u)
            }
        }
        out += "\""
    }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByArrayLiteral, ExpressibleByNilLiteral, ExpressibleByFloatLiteral
{
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int) { self = .number(Double(value)) }
    public init(floatLiteral value: Double) { self = .number(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    public init(nilLiteral: ()) { self = .null }
}

extension JSONValue {
    /// A number from an integer.
    public static func int(_ v: Int) -> JSONValue { .number(Double(v)) }
}
