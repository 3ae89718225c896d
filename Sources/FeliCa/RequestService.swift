/// Request Service command: `LEN 02 IDm n node(2 LE)×n`, n 1-32.
public struct RequestServiceCommand: Hashable, Sendable {
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

    public func encode() -> [UInt8] {
        var w = FrameWriter(code: CommandCode.requestService.rawValue, capacity: 11 + 2 * nodes.count)
        w.append(idm.rawValue)
        w.append(UInt8(nodes.count))
        for n in nodes { w.append(n.rawValue, .littleEndian) }
        return w.finish()
    }

    public static func decode(_ packet: ArraySlice<UInt8>) throws(FeliCaError) -> RequestServiceCommand {
        var r = try openFrame(packet, code: CommandCode.requestService.rawValue, frame: "Request Service command")
        let idm = try readIDm(&r)
        let n = Int(try r.readUInt8("number of nodes"))
        guard (1...maximumNodes).contains(n) else {
            throw FeliCaError(.invalidField, "Request Service command: number of nodes \(n) is outside 1-32")
        }
        var nodes: [NodeCode] = []
        nodes.reserveCapacity(n)
        for i in 0..<n { nodes.append(NodeCode(try r.readUInt16(.littleEndian, "node code \(i)"))) }
        try r.finish()
        return try RequestServiceCommand(idm: idm, nodes: nodes)
    }
}

/// Request Service response: `LEN 03 IDm n keyVersion(2 LE)×n`; `FFFF` = node absent.
public struct RequestServiceResponse: Hashable, Sendable {
    public var idm: IDm
    /// One entry per requested node; nil where the card does not hold the node.
    public var keyVersions: [UInt16?]

    public init(idm: IDm, keyVersions: [UInt16?]) {
        self.idm = idm
        self.keyVersions = keyVersions
    }

    public func encode() -> [UInt8] {
        var w = FrameWriter(code: CommandCode.requestService.responseCode, capacity: 11 + 2 * keyVersions.count)
        w.append(idm.rawValue)
        w.append(UInt8(truncatingIfNeeded: keyVersions.count))
        for k in keyVersions { w.append(k ?? 0xFFFF, .littleEndian) }
        return w.finish()
    }

    public static func decode(_ packet: ArraySlice<UInt8>, expecting idm: IDm? = nil) throws(FeliCaError) -> RequestServiceResponse {
        let frame = "Request Service response"
        var r = try openFrame(packet, code: CommandCode.requestService.responseCode, frame: frame)
        let got = try readIDm(&r)
        try requireIDm(got, idm, frame)
        let n = Int(try r.readUInt8("number of nodes"))
        var kv: [UInt16?] = []
        kv.reserveCapacity(n)
        for i in 0..<n {
            let v = try r.readUInt16(.littleEndian, "key version \(i)")
            kv.append(v == 0xFFFF ? nil : v)
        }
        try r.finish()
        return RequestServiceResponse(idm: got, keyVersions: kv)
    }
}
