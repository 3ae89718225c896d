/// Request Service command: `LEN 02 IDm n node(2 LE)×n`, n 1-32.
public struct RequestServiceCommand: CardCommand {
    public typealias Response = RequestServiceResponse
    public static var code: CommandCode { .requestService }

    public var idm: IDm
    public var nodes: [NodeCode]

    public static let maximumNodes = 32

    public init(idm: IDm, nodes: [NodeCode]) throws(FeliCaError) {
        guard (1...Self.maximumNodes).contains(nodes.count) else {
            throw FeliCaError(.invalidArgument, "Request Service takes 1-32 nodes, got \(nodes.count)")
        }
        self.idm = idm
        self.nodes = nodes
    }

    public var addressedIDm: IDm? { idm }
    public var frameLength: Int { 11 + 2 * nodes.count }
    public var longestResponse: Int { 11 + 2 * nodes.count }
    public var timing: (kind: ResponseTimeKind, units: Int) { (.requestService, nodes.count) }

    public func encodeBody(into w: inout FrameWriter) {
        w.appendBigEndian(idm.rawValue)
        w.append(UInt8(nodes.count))
        for n in nodes { w.append(n.rawValue, .littleEndian) }
    }

    public static func decodeBody(_ r: inout ByteReader) throws(FeliCaError) -> RequestServiceCommand {
        let idm = try r.readIDm()
        let n = Int(try r.readUInt8("number of nodes"))
        guard (1...maximumNodes).contains(n) else {
            throw FeliCaError(.invalidField, "\(r.frame): number of nodes \(n) is outside 1-32")
        }
        var nodes: [NodeCode] = []
        nodes.reserveCapacity(n)
        for i in 0..<n { nodes.append(NodeCode(try r.readUInt16(.littleEndian, "node code \(i)"))) }
        return try RequestServiceCommand(idm: idm, nodes: nodes)
    }
}

/// Request Service response: `LEN 03 IDm n keyVersion(2 LE)×n`; `FFFF` = node absent.
public struct RequestServiceResponse: CardResponse {
    public static var code: CommandCode { .requestService }

    public var idm: IDm
    /// One entry per requested node; nil where the card does not hold the node.
    public var keyVersions: [UInt16?]

    public init(idm: IDm, keyVersions: [UInt16?]) {
        self.idm = idm
        self.keyVersions = keyVersions
    }

    public var frameLength: Int { 11 + 2 * keyVersions.count }

    public func encodeBody(into w: inout FrameWriter) {
        w.appendBigEndian(idm.rawValue)
        w.append(UInt8(truncatingIfNeeded: keyVersions.count))
        for k in keyVersions { w.append(k ?? 0xFFFF, .littleEndian) }
    }

    public static func decodeBody(_ r: inout ByteReader, expecting idm: IDm?) throws(FeliCaError) -> RequestServiceResponse {
        let got = try r.readIDm(expecting: idm)
        let n = Int(try r.readUInt8("number of nodes"))
        var kv: [UInt16?] = []
        kv.reserveCapacity(n)
        for i in 0..<n {
            let v = try r.readUInt16(.littleEndian, "key version \(i)")
            kv.append(v == 0xFFFF ? nil : v)
        }
        return RequestServiceResponse(idm: got, keyVersions: kv)
    }
}
