/// Request System Code command: `LEN 0C IDm`.
public struct RequestSystemCodeCommand: CardCommand {
    public typealias Response = RequestSystemCodeResponse
    public static var code: CommandCode { .requestSystemCode }

    public var idm: IDm
    public init(idm: IDm) { self.idm = idm }

    public var addressedIDm: IDm? { idm }
    public var frameLength: Int { 10 }
    // At most 16 systems: the system number is four bits.
    public var longestResponse: Int { 11 + 2 * 16 }

    public func encodeBody(into w: inout FrameWriter) { w.appendBigEndian(idm.rawValue) }

    public static func decodeBody(_ r: inout ByteReader) throws(FeliCaError) -> RequestSystemCodeCommand {
        RequestSystemCodeCommand(idm: try r.readIDm())
    }
}

/// Request System Code response: `LEN 0D IDm n code(2 BE)×n`.
public struct RequestSystemCodeResponse: CardResponse {
    public static var code: CommandCode { .requestSystemCode }

    public var idm: IDm
    public var systemCodes: [SystemCode]
    public init(idm: IDm, systemCodes: [SystemCode]) { self.idm = idm; self.systemCodes = systemCodes }

    public var frameLength: Int { 11 + 2 * systemCodes.count }

    public func encodeBody(into w: inout FrameWriter) {
        w.appendBigEndian(idm.rawValue)
        w.append(UInt8(truncatingIfNeeded: systemCodes.count))
        for s in systemCodes { w.append(s.rawValue, .bigEndian) }
    }

    public static func decodeBody(_ r: inout ByteReader, expecting idm: IDm?) throws(FeliCaError) -> RequestSystemCodeResponse {
        let got = try r.readIDm(expecting: idm)
        let n = Int(try r.readUInt8("number of systems"))
        var codes: [SystemCode] = []
        codes.reserveCapacity(n)
        for i in 0..<n { codes.append(SystemCode(try r.readUInt16(.bigEndian, "system code \(i)"))) }
        return RequestSystemCodeResponse(idm: got, systemCodes: codes)
    }
}
