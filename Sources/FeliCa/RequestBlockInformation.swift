/// Request Block Information command: `LEN 0E IDm n node(2 LE)×n`.
public struct RequestBlockInformationCommand: CardCommand {
    public typealias Response = RequestBlockInformationResponse
    public static var code: CommandCode { .requestBlockInformation }

    public var idm: IDm
    public var nodes: [NodeCode]

    /// Nodes one command asks about.
    public static let maximumNodes = NodeList.maximum

    public init(idm: IDm, nodes: [NodeCode]) throws(FeliCaError) {
        try NodeList.check(nodes.count, command: "Request Block Information")
        self.idm = idm
        self.nodes = nodes
    }

    public var addressedIDm: IDm? { idm }
    public var frameLength: Int { 11 + 2 * nodes.count }
    public var longestResponse: Int { 11 + 2 * nodes.count }

    public func encodeBody(into w: inout FrameWriter) {
        w.appendBigEndian(idm.rawValue)
        NodeList.encode(nodes, into: &w)
    }

    public static func decodeBody(_ r: inout ByteReader) throws(FeliCaError) -> RequestBlockInformationCommand {
        let idm = try r.readIDm()
        let nodes = try NodeList.decode(&r)
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
        let counts = try NodeList.decodeAnswers(&r, "block count")
        return RequestBlockInformationResponse(idm: got, blockCounts: counts)
    }
}
