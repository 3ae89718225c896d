/// A service or area code: 10-bit number << 6 | 6-bit attribute, little-endian on the wire.
public struct NodeCode: Hashable, Sendable, Comparable, CustomStringConvertible, ExpressibleByIntegerLiteral {
    public var rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }
    public init(_ rawValue: UInt16) { self.rawValue = rawValue }
    public init(integerLiteral value: UInt16) { rawValue = value }
    public init(number: UInt16, attribute: NodeAttribute) {
        rawValue = (number & 0x3FF) << 6 | UInt16(attribute.rawValue & 0x3F)
    }

    /// From 4 hex digits as written big-endian (`090f`, `0x090F`).
    public init?(hex: String) {
        guard let s = SystemCode(hex: hex) else { return nil }
        rawValue = s.rawValue
    }

    /// The 10-bit node number.
    public var number: UInt16 { rawValue >> 6 }
    public var attribute: NodeAttribute { NodeAttribute(rawValue: UInt8(rawValue & 0x3F)) }
    public var isArea: Bool { attribute.isArea }
    public var isService: Bool { !attribute.isArea }
    /// Bit 0 of a service attribute: readable without a key.
    public var isReadableWithoutKey: Bool { isService && attribute.rawValue & 1 == 1 }

    /// `FFFF`: in Request Service replies "absent", in Search Service Code "end of list".
    public static let none = NodeCode(0xFFFF)
    /// The root area of every system.
    public static let root = NodeCode(0x0000)

    public var hex: String { Hex.encode([UInt8(rawValue >> 8), UInt8(rawValue & 0xFF)]) }
    public var description: String { Hex.encode([UInt8(rawValue >> 8), UInt8(rawValue & 0xFF)], uppercase: true) }
    public static func < (a: NodeCode, b: NodeCode) -> Bool { a.rawValue < b.rawValue }
}

/// A service code (a ``NodeCode`` whose attribute names a service kind).
public typealias ServiceCode = NodeCode
/// An area code (a ``NodeCode`` with attribute 0x00 or 0x01).
public typealias AreaCode = NodeCode

/// The low 6 bits of a node code (Docs/protocol.md, "Service attributes").
public struct NodeAttribute: Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue & 0x3F }

    /// How a service's blocks are organised.
    public enum Kind: Hashable, Sendable {
        case area(mayHaveSubareas: Bool)
        case random(readOnly: Bool)
        case cyclic(readOnly: Bool)
        case purse(Purse)
        case unknown
    }

    /// Purse access modes.
    public enum Purse: String, Hashable, Sendable {
        case direct, cashback, decrement, readOnly = "read-only"
    }

    public var kind: Kind {
        switch rawValue {
        case 0x00: .area(mayHaveSubareas: true)
        case 0x01: .area(mayHaveSubareas: false)
        case 0x08, 0x09: .random(readOnly: false)
        case 0x0A, 0x0B: .random(readOnly: true)
        case 0x0C, 0x0D: .cyclic(readOnly: false)
        case 0x0E, 0x0F: .cyclic(readOnly: true)
        case 0x10, 0x11: .purse(.direct)
        case 0x12, 0x13: .purse(.cashback)
        case 0x14, 0x15: .purse(.decrement)
        case 0x16, 0x17: .purse(.readOnly)
        default: .unknown
        }
    }

    public var isArea: Bool { rawValue <= 0x01 }
    /// For services: a key is needed to access it (bit 0 clear).
    public var requiresKey: Bool { !isArea && rawValue & 1 == 0 }
    /// For services: the kind accepts Write Without Encryption (read-write, no key).
    public var isWritableWithoutKey: Bool {
        switch kind {
        case .random(readOnly: false), .cyclic(readOnly: false): !requiresKey
        case .purse(let p): p != .readOnly && !requiresKey
        default: false
        }
    }

    public var description: String {
        let key = isArea ? "" : (requiresKey ? ", key" : ", no key")
        switch kind {
        case .area(let sub): return sub ? "area" : "area (no sub-areas)"
        case .random(let ro): return "random " + (ro ? "read-only" : "read-write") + key
        case .cyclic(let ro): return "cyclic " + (ro ? "read-only" : "read-write") + key
        case .purse(let p): return "purse " + p.rawValue + key
        case .unknown: return "attribute " + hexByte(rawValue)
        }
    }
}

/// The node list Request Service and Request Block Information send, `n node(2 LE)×n`
/// with n 1-32, and the list of one 16-bit answer per node their responses carry.
enum NodeList {
    static let maximum = 32

    static func check(_ count: Int, command: String) throws(FeliCaError) {
        guard (1...maximum).contains(count) else {
            throw FeliCaError(.invalidArgument, "\(command) takes 1-\(maximum) nodes, got \(count)")
        }
    }

    static func encode(_ nodes: [NodeCode], into w: inout FrameWriter) {
        w.append(UInt8(nodes.count))
        for n in nodes { w.append(n.rawValue, .littleEndian) }
    }

    static func decode(_ r: inout ByteReader) throws(FeliCaError) -> [NodeCode] {
        let n = Int(try r.readUInt8("number of nodes"))
        guard (1...maximum).contains(n) else {
            throw FeliCaError(.invalidField, "\(r.frame): number of nodes \(n) is outside 1-\(maximum)")
        }
        var nodes: [NodeCode] = []
        nodes.reserveCapacity(n)
        for i in 0..<n { nodes.append(NodeCode(try r.readUInt16(.littleEndian, "node code \(i)"))) }
        return nodes
    }

    /// `n answer(2 LE)×n`; each answer named `field` and its index in errors.
    static func decodeAnswers(_ r: inout ByteReader, _ field: String) throws(FeliCaError) -> [UInt16] {
        let n = Int(try r.readUInt8("number of nodes"))
        var answers: [UInt16] = []
        answers.reserveCapacity(n)
        for i in 0..<n { answers.append(try r.readUInt16(.littleEndian, "\(field) \(i)")) }
        return answers
    }
}
