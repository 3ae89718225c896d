/// Request Response command: `LEN 04 IDm` — is the card still there, and in which mode.
public struct RequestResponseCommand: Hashable, Sendable {
    public var idm: IDm
    public init(idm: IDm) { self.idm = idm }

    public func encode() -> [UInt8] {
        var w = FrameWriter(code: CommandCode.requestResponse.rawValue, capacity: 10)
        w.append(idm.rawValue)
        return w.finish()
    }

    public static func decode(_ packet: ArraySlice<UInt8>) throws(FeliCaError) -> RequestResponseCommand {
        var r = try openFrame(packet, code: CommandCode.requestResponse.rawValue, frame: "Request Response command")
        let idm = try readIDm(&r)
        try r.finish()
        return RequestResponseCommand(idm: idm)
    }
}

/// Request Response response: `LEN 05 IDm mode` (mode 0-3).
public struct RequestResponseResponse: Hashable, Sendable {
    public var idm: IDm
    public var mode: UInt8
    public init(idm: IDm, mode: UInt8) { self.idm = idm; self.mode = mode }

    public func encode() -> [UInt8] {
        var w = FrameWriter(code: CommandCode.requestResponse.responseCode, capacity: 11)
        w.append(idm.rawValue)
        w.append(mode)
        return w.finish()
    }

    public static func decode(_ packet: ArraySlice<UInt8>, expecting idm: IDm? = nil) throws(FeliCaError) -> RequestResponseResponse {
        let frame = "Request Response response"
        var r = try openFrame(packet, code: CommandCode.requestResponse.responseCode, frame: frame)
        let got = try readIDm(&r)
        try requireIDm(got, idm, frame)
        let mode = try r.readUInt8("mode")
        guard mode <= 3 else { throw FeliCaError(.invalidField, "\(frame): mode \(mode) is outside 0-3") }
        try r.finish()
        return RequestResponseResponse(idm: got, mode: mode)
    }
}
