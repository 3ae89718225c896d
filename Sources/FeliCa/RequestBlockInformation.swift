/// Request Block Information command: `LEN 0E IDm n node(2 LE)×n`.
public struct RequestBlockInformationCommand: Hashable, Sendable {
    public var idm: IDm
    public var nodes: [NodeCode]

    public init(idm: IDm, nodes: [NodeCode]) throws(FeliCaError) {
        guard (1...32).contains(nodes.count) else {
            throw FeliCaError(.invalidArgument, "Request Block Information takes 1-32 nodes, got \(nodes.count)")
        }
        self.idm = idm
        self.nodes = nodes
    }

    public func encode() -> [UInt8] {
        var w = FrameWriter(code: CommandCode.requestBlockInformation.rawValue, capacity: 11 + 2 * nodes.count)
        w.append(idm.rawValue)
        w.append(UInt8(nodes.count))
        for n in nodes { w.append(n.rawValue, .littleEndian) }
        return w.finish()
    }

    public static func decode(_ packet: ArraySlice<UInt8>) throws(FeliCaError) -> RequestBlockInformationCommand {
        var r = try openFrame(packet, code: CommandCode.requestBlockInformation.rawValue, frame: "Request Block Information command")
        let idm = try readIDm(&r)
        let n = Int(try r.readUInt8("number of nodes"))
        guard (1...32).contains(n) else {
            throw FeliCaError(.invalidField, "Request Block Information command: number of nodes \(n) is outside 1-32")
        }
        var nodes: [NodeCode] = []
        for i in 0..<n { nodes.append(NodeCode(try r.readUInt16(.littleEndian, "node code \(i)"))) }
        try r.finish()
        return try RequestBlockInformationCommand(idm: idm, nodes: nodes)
    }
}

/// Request Block Information response: `LEN 0F IDm n assignedBlocks(2 LE)×n`.
public struct RequestBlockInformationResponse: Hashable, Sendable {
    public var idm: IDm
    /// Blocks assigned to each requested node.
    public var blockCounts: [UInt16]
    public init(idm: IDm, blockCounts: [UInt16]) { self.idm = idm; self.blockCounts = blockCounts }

    public func encode() -> [UInt8] {
        var w = FrameWriter(code: CommandCode.requestBlockInformation.responseCode, capacity: 11 + 2 * blockCounts.count)
        w.append(idm.rawValue)
        w.append(UInt8(truncatingIfNeeded: blockCounts.count))
        for c in blockCounts { w.append(c, .littleEndian) }
        return w.finish()
    }

    public static func decode(_ packet: ArraySlice<UInt8>, expecting idm: IDm? = nil) throws(FeliCaError) -> RequestBlockInformationResponse {
        let frame = "Request Block Information response"
        var r = try openFrame(packet, code: CommandCode.requestBlockInformation.responseCode, frame: frame)
        let got = try readIDm(&r)
        try requireIDm(got, idm, frame)
        let n = Int(try r.readUInt8("number of nodes"))
        var counts: [UInt16] = []
        for i in 0..<n { counts.append(try r.readUInt16(.littleEndian, "block count \(i)")) }
        try r.finish()
        return RequestBlockInformationResponse(idm: got, blockCounts: counts)
    }
}
