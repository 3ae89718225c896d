/// Request System Code command: `LEN 0C IDm`.
public struct RequestSystemCodeCommand: Hashable, Sendable {
    public var idm: IDm
    public init(idm: IDm) { self.idm = idm }

    public func encode() -> [UInt8] {
        var w = FrameWriter(code: CommandCode.requestSystemCode.rawValue, capacity: 10)
        w.append(idm.rawValue)
        return w.finish()
    }

    public static func decode(_ packet: ArraySlice<UInt8>) throws(FeliCaError) -> RequestSystemCodeCommand {
        var r = try openFrame(packet, code: CommandCode.requestSystemCode.rawValue, frame: "Request System Code command")
        let idm = try readIDm(&r)
        try r.finish()
        return RequestSystemCodeCommand(idm: idm)
    }
}

/// Request System Code response: `LEN 0D IDm n code(2 BE)×n`.
public struct RequestSystemCodeResponse: Hashable, Sendable {
    public var idm: IDm
    public var systemCodes: [SystemCode]
    public init(idm: IDm, systemCodes: [SystemCode]) { self.idm = idm; self.systemCodes = systemCodes }

    public func encode() -> [UInt8] {
        var w = FrameWriter(code: CommandCode.requestSystemCode.responseCode, capacity: 11 + 2 * systemCodes.count)
        w.append(idm.rawValue)
        w.append(UInt8(truncatingIfNeeded: systemCodes.count))
        for s in systemCodes { w.append(s.rawValue, .bigEndian) }
        return w.finish()
    }

    public static func decode(_ packet: ArraySlice<UInt8>, expecting idm: IDm? = nil) throws(FeliCaError) -> RequestSystemCodeResponse {
        let frame = "Request System Code response"
        var r = try openFrame(packet, code: CommandCode.requestSystemCode.responseCode, frame: frame)
        let got = try readIDm(&r)
        try requireIDm(got, idm, frame)
        let n = Int(try r.readUInt8("number of systems"))
        var codes: [SystemCode] = []
        codes.reserveCapacity(n)
        for i in 0..<n { codes.append(SystemCode(try r.readUInt16(.bigEndian, "system code \(i)"))) }
        try r.finish()
        return RequestSystemCodeResponse(idm: got, systemCodes: codes)
    }
}
