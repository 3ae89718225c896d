/// Search Service Code command: `LEN 0A IDm index(2 LE)`.
public struct SearchServiceCodeCommand: CardCommand {
    public typealias Response = SearchServiceCodeResponse
    public static var code: CommandCode { .searchServiceCode }

    public var idm: IDm
    public var index: UInt16
    public init(idm: IDm, index: UInt16) { self.idm = idm; self.index = index }

    public var addressedIDm: IDm? { idm }
    public var frameLength: Int { 12 }
    public var longestResponse: Int { 14 }

    public func encodeBody(into w: inout FrameWriter) {
        w.appendBigEndian(idm.rawValue)
        w.append(index, .littleEndian)
    }

    public static func decodeBody(_ r: inout ByteReader) throws(FeliCaError) -> SearchServiceCodeCommand {
        let idm = try r.readIDm()
        let i = try r.readUInt16(.littleEndian, "index")
        return SearchServiceCodeCommand(idm: idm, index: i)
    }
}

/// One entry of a system's node list.
public enum Node: Hashable, Sendable, CustomStringConvertible {
    /// An area and the last node code it spans.
    case area(AreaCode, end: AreaCode)
    case service(ServiceCode)

    public var code: NodeCode {
        switch self {
        case .area(let c, _): c
        case .service(let c): c
        }
    }

    public var description: String {
        switch self {
        case .area(let c, let e): "area \(c)-\(e)"
        case .service(let c): "service \(c)"
        }
    }
}

/// Search Service Code response: `LEN 0B IDm code(2 LE) [end(2 LE) when an area]`;
/// `FFFF` = end of list.
public struct SearchServiceCodeResponse: CardResponse {
    public static var code: CommandCode { .searchServiceCode }

    public var idm: IDm
    /// nil at the end of the list.
    public var node: Node?
    public init(idm: IDm, node: Node?) { self.idm = idm; self.node = node }

    public var frameLength: Int {
        if case .area = node { 14 } else { 12 }
    }

    public func encodeBody(into w: inout FrameWriter) {
        w.appendBigEndian(idm.rawValue)
        switch node {
        case nil: w.append(0xFFFF, .littleEndian)
        case .service(let c): w.append(c.rawValue, .littleEndian)
        case .area(let c, let end):
            w.append(c.rawValue, .littleEndian)
            w.append(end.rawValue, .littleEndian)
        }
    }

    public static func decodeBody(_ r: inout ByteReader, expecting idm: IDm?) throws(FeliCaError) -> SearchServiceCodeResponse {
        let got = try r.readIDm(expecting: idm)
        let code = NodeCode(try r.readUInt16(.littleEndian, "node code"))
        let node: Node?
        if code == .none {
            node = nil
        } else if code.isArea {
            node = .area(code, end: NodeCode(try r.readUInt16(.littleEndian, "area end code")))
        } else {
            node = .service(code)
        }
        return SearchServiceCodeResponse(idm: got, node: node)
    }
}
