/// Request Service command: `LEN 02 IDm n node(2 LE)×n`, n 1-32.
public struct RequestServiceCommand: CardCommand {
    public typealias Response = RequestServiceResponse
    public static var code: CommandCode { .requestService }

    public var idm: IDm
    public var nodes: [NodeCode]

    public static let maximumNodes = NodeList.maximum

    public init(idm: IDm, nodes: [NodeCode]) throws(FeliCaError) {
        try NodeList.check(nodes.count, command: "Request Service")
        self.idm = idm
        self.nodes = nodes
    }

    public var addressedIDm: IDm? { idm }
    public var frameLength: Int { 11 + 2 * nodes.count }
    public var longestResponse: Int { 11 + 2 * nodes.count }
    public var timing: (kind: ResponseTimeKind, units: Int) { (.requestService, nodes.count) }

    public func encodeBody(into w: inout FrameWriter) {
        w.appendBigEndian(idm.rawValue)
        NodeList.encode(nodes, into: &w)
    }

    public static func decodeBody(_ r: inout ByteReader) throws(FeliCaError) -> RequestServiceCommand {
        let idm = try r.readIDm()
        let nodes = try NodeList.decode(&r)
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
        let versions = try NodeList.decodeAnswers(&r, "key version")
        return RequestServiceResponse(idm: got, keyVersions: versions.map { $0 == 0xFFFF ? nil : $0 })
    }
}
