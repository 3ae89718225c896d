/// Search Service Code command: `LEN 0A IDm index(2 LE)`.
public struct SearchServiceCodeCommand: Hashable, Sendable {
    public var idm: IDm
    public var index: UInt16
    public init(idm: IDm, index: UInt16) { self.idm = idm; self.index = index }

    public func encode() -> [UInt8] {
        var w = FrameWriter(code: CommandCode.searchServiceCode.rawValue, capacity: 12)
        w.append(idm.rawValue)
        w.append(index, .littleEndian)
        return w.finish()
    }

    public static func decode(_ packet: ArraySlice<UInt8>) throws(FeliCaError) -> SearchServiceCodeCommand {
        var r = try openFrame(packet, code: CommandCode.searchServiceCode.rawValue, frame: "Search Service Code command")
        let idm = try readIDm(&r)
        let i = try r.readUInt16(.littleEndian, "index")
        try r.finish()
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
public struct SearchServiceCodeResponse: Hashable, Sendable {
    public var idm: IDm
    /// nil at the end of the list.
    public var node: Node?
    public init(idm: IDm, node: Node?) { self.idm = idm; self.node = node }

    public func encode() -> [UInt8] {
        var w = FrameWriter(code: CommandCode.searchServiceCode.responseCode, capacity: 14)
        w.append(idm.rawValue)
        switch node {
        case nil: w.append(0xFFFF, .littleEndian)
        case .service(let c): w.append(c.rawValue, .littleEndian)
        case .area(let c, let end):
            w.append(c.rawValue, .littleEndian)
            w.append(end.rawValue, .littleEndian)
        }
        return w.finish()
    }

    public static func decode(_ packet: ArraySlice<UInt8>, expecting idm: IDm? = nil) throws(FeliCaError) -> SearchServiceCodeResponse {
        let frame = "Search Service Code response"
        var r = try openFrame(packet, code: CommandCode.searchServiceCode.responseCode, frame: frame)
        let got = try readIDm(&r)
        try requireIDm(got, idm, frame)
        let code = NodeCode(try r.readUInt16(.littleEndian, "node code"))
        let node: Node?
        if code == .none {
            node = nil
        } else if code.isArea {
            node = .area(code, end: NodeCode(try r.readUInt16(.littleEndian, "area end code")))
        } else {
            node = .service(code)
        }
        try r.finish()
        return SearchServiceCodeResponse(idm: got, node: node)
    }
}
