/// Request Response command: `LEN 04 IDm` — is the card still there, and in which mode.
public struct RequestResponseCommand: CardCommand {
    public typealias Response = RequestResponseResponse
    public static var code: CommandCode { .requestResponse }

    public var idm: IDm
    public init(idm: IDm) { self.idm = idm }

    public var addressedIDm: IDm? { idm }
    public var frameLength: Int { 10 }
    public var longestResponse: Int { 11 }

    public func encodeBody(into w: inout FrameWriter) { w.appendBigEndian(idm.rawValue) }

    public static func decodeBody(_ r: inout ByteReader) throws(FeliCaError) -> RequestResponseCommand {
        RequestResponseCommand(idm: try r.readIDm())
    }
}

/// Request Response response: `LEN 05 IDm mode` (mode 0-3).
public struct RequestResponseResponse: CardResponse {
    public static var code: CommandCode { .requestResponse }

    public var idm: IDm
    public var mode: UInt8
    public init(idm: IDm, mode: UInt8) { self.idm = idm; self.mode = mode }

    public var frameLength: Int { 11 }

    public func encodeBody(into w: inout FrameWriter) {
        w.appendBigEndian(idm.rawValue)
        w.append(mode)
    }

    public static func decodeBody(_ r: inout ByteReader, expecting idm: IDm?) throws(FeliCaError) -> RequestResponseResponse {
        let got = try r.readIDm(expecting: idm)
        let mode = try r.readUInt8("mode")
        guard mode <= 3 else { throw FeliCaError(.invalidField, "\(r.frame): mode \(mode) is outside 0-3") }
        return RequestResponseResponse(idm: got, mode: mode)
    }
}
