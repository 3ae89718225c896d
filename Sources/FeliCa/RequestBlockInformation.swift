/// Request Block Information command: `LEN 0E IDm n node(2 LE)×n`.
public struct RequestBlockInformationCommand: CardCommand {
    public typealias Response = RequestBlockInformationResponse
    public static var code: CommandCode { .requestBlockInformation }

    public var idm: IDm
    public var nodes: [NodeCode]

    /// Nodes one command asks about.
    public static let maximumNodes = 32

    public init(idm: IDm, nodes: [NodeCode]) throws(FeliCaError) {
        guard (1...Self.maximumNodes).contains(nodes.count) else {
            throw FeliCaError(.invalidArgument, "Request Block Information takes 1-32 nodes, got \(nodes.count)")
        }
        self.idm = idm
        self.nodes = nodes
    }

    public var addressedIDm: IDm? { idm }
    public var frameLength: Int { 11 + 2 * nodes.count }
    public var longestResponse: Int { 11 + 2 * nodes.count }

    public func encodeBody(into w: inout FrameWriter) {
        w.appendBigEndian(idm.rawValue)
        w.append(UInt8(nodes.count))
        for n in nodes { w.append(n.rawValue, .littleEndian) }
    }

    public static func decodeBody(_ r: inout ByteReader) throws(FeliCaError) -> RequestBlockInformationCommand {
        let idm = try r.readIDm()
        let n = Int(try r.readUInt8("number of nodes"))
        guard (1...maximumNodes).contains(n) else {
            throw FeliCaError(.invalidField, "\(r.frame): number of nodes \(n) is outside 1-32")
        }
        var nodes: [NodeCode] = []
        nodes.reserveCapacity(n)
        for i in 0..<n { nodes.append(NodeCode(try r.readUInt16(.littleEndian, "node code \(i)"))) }
        return try RequestBlockInformationCommand(idm: idm, nodes: nodes)
    }
}

/// Request Block Information response: `LEN 0F IDm n assignedBlocks(2 LE)×n`.
public struct RequestBlockInformationResponse: CardResponse {
    public static var code: CommandCode { .requestBlockInformation }

    public var idm: IDm
    /// Blocks assigned to each requested node.
    public var blockCounts: [UInt16]
    public init(idm: IDm, blockCounts: [UInt16]) { self.idm = idm; self.blockCounts = blockCounts }

    public var frameLength: Int { 11 + 2 * blockCounts.count }

    public func encodeBody(into w: inout FrameWriter) {
        w.appendBigEndian(idm.rawValue)
        w.append(UInt8(truncatingIfNeeded: blockCounts.count))
        for c in blockCounts { w.append(c, .littleEndian) }
    }

    public static func decodeBody(_ r: inout ByteReader, expecting idm: IDm?) throws(FeliCaError) -> RequestBlockInformationResponse {
        let got = try r.readIDm(expecting: idm)
        let n = Int(try r.readUInt8("number of nodes"))
        var counts: [UInt16] = []
        counts.reserveCapacity(n)
        for i in 0..<n { counts.append(try r.readUInt16(.littleEndian, "block count \(i)")) }
        return RequestBlockInformationResponse(idm: got, blockCounts: counts)
    }
}
