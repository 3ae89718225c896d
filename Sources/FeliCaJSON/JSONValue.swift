/// A JSON value that keeps object keys in their order, so files the project writes
/// and reads back come out identical, and unknown keys survive a round trip.
public enum JSONValue: Hashable, Sendable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)

    public var stringValue: String? { if case .string(let s) = self { s } else { nil } }
    public var doubleValue: Double? { if case .number(let d) = self { d } else { nil } }
    public var boolValue: Bool? { if case .bool(let b) = self { b } else { nil } }
    public var arrayValue: [JSONValue]? { if case .array(let a) = self { a } else { nil } }
    public var objectValue: JSONObject? { if case .object(let o) = self { o } else { nil } }
    public var isNull: Bool { self == .null }

    /// The number as an exact integer, when it is one.
    public var intValue: Int? {
        guard case .number(let d) = self, d.rounded() == d, abs(d) < 9.007_199_254_740_992e15 else { return nil }
        return Int(d)
    }

    /// Member `key` of an object (nil for other values or a missing key).
    public subscript(key: String) -> JSONValue? { objectValue?[key] }

    /// A short name of the value's type, for error messages.
    public var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}

/// A JSON object: members in file order, looked up by key.
public struct JSONObject: Hashable, Sendable, ExpressibleByDictionaryLiteral, Sequence {
    public private(set) var members: [(key: String, value: JSONValue)]

    public init() { members = [] }
    public init(_ members: [(String, JSONValue)]) { self.members = members.map { (key: $0.0, value: $0.1) } }
    public init(dictionaryLiteral elements: (String, JSONValue)...) { self.init(elements) }

    public subscript(key: String) -> JSONValue? {
        get { members.first { $0.key == key }?.value }
        set {
            if let i = members.firstIndex(where: { $0.key == key }) {
                if let v = newValue { members[i].value = v } else { members.remove(at: i) }
            } else if let v = newValue {
                members.append((key, v))
            }
        }
    }

    public var keys: [String] { members.map(\.key) }
    public var isEmpty: Bool { members.isEmpty }
    public mutating func append(_ key: String, _ value: JSONValue) { self[key] = value }
    public func makeIterator() -> IndexingIterator<[(key: String, value: JSONValue)]> { members.makeIterator() }

    public static func == (a: JSONObject, b: JSONObject) -> Bool {
        a.members.count == b.members.count && zip(a.members, b.members).allSatisfy { $0.key == $1.key && $0.value == $1.value }
    }

    public func hash(into h: inout Hasher) {
        for m in members { h.combine(m.key); h.combine(m.value) }
    }
}

/// A syntax error with its position (1-based line and column).
public struct JSONError: Error, Hashable, Sendable, CustomStringConvertible {
    public var reason: String
    public var line: Int
    public var column: Int
    public init(reason: String, line: Int, column: Int) {
        self.reason = reason; self.line = line; self.column = column
    }
    public var description: String { "line \(line), column \(column): \(reason)" }
}
