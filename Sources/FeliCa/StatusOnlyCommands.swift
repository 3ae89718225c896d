/// Request Specification Version command: `LEN 3C IDm 00 00`.
public struct RequestSpecificationVersionCommand: CardCommand {
    public typealias Response = RequestSpecificationVersionResponse
    public static var code: CommandCode { .requestSpecificationVersion }

    public var idm: IDm
    public init(idm: IDm) { self.idm = idm }

    public var addressedIDm: IDm? { idm }
    public var frameLength: Int { 12 }
    public var longestResponse: Int { 255 }

    public func encodeBody(into w: inout FrameWriter) {
        w.appendBigEndian(idm.rawValue)
        w.append(0x0000, .bigEndian)
    }

    public static func decodeBody(_ r: inout ByteReader) throws(FeliCaError) -> RequestSpecificationVersionCommand {
        let idm = try r.readIDm()
        try readReserved(&r)
        return RequestSpecificationVersionCommand(idm: idm)
    }
}

/// Request Specification Version response: `LEN 3D IDm SF1 SF2 [version data]`.
public struct RequestSpecificationVersionResponse: CardResponse {
    public static var code: CommandCode { .requestSpecificationVersion }

    public var idm: IDm
    public var status: StatusFlags
    /// Format version, basic version (2 LE), number of options, option versions (2 LE each).
    public var versionData: [UInt8]
    public init(idm: IDm, status: StatusFlags, versionData: [UInt8]) {
        self.idm = idm; self.status = status; self.versionData = versionData
    }

    /// Basic version, when the version data carries one (`[format, lo, hi, ...]`).
    public var basicVersion: UInt16? {
        versionData.count >= 3 ? UInt16(versionData[2]) << 8 | UInt16(versionData[1]) : nil
    }

    public var frameLength: Int { 12 + (status.isSuccess ? versionData.count : 0) }

    public func encodeBody(into w: inout FrameWriter) {
        w.appendBigEndian(idm.rawValue)
        w.append(status.sf1)
        w.append(status.sf2)
        if status.isSuccess { w.append(contentsOf: versionData) }
    }

    public static func decodeBody(_ r: inout ByteReader, expecting idm: IDm?) throws(FeliCaError) -> RequestSpecificationVersionResponse {
        let got = try r.readIDm(expecting: idm)
        let sf = StatusFlags(sf1: try r.readUInt8("SF1"), sf2: try r.readUInt8("SF2"))
        var data: [UInt8] = []
        if sf.isSuccess {
            // format version(1) basic version(2) number of options(1) option versions(2×n)
            let format = try r.readUInt8("format version")
            let basic = try r.readBytes(2, "basic version")
            let n = try r.readUInt8("number of options")
            let options = try r.readBytes(2 * Int(n), "option versions")
            data = [format] + Array(basic) + [n] + Array(options)
        }
        return RequestSpecificationVersionResponse(idm: got, status: sf, versionData: data)
    }
}

/// Reset Mode command: `LEN 3E IDm 00 00`.
public struct ResetModeCommand: CardCommand {
    public typealias Response = ResetModeResponse
    public static var code: CommandCode { .resetMode }

    public var idm: IDm
    public init(idm: IDm) { self.idm = idm }

    public var addressedIDm: IDm? { idm }
    public var frameLength: Int { 12 }
    public var longestResponse: Int { 12 }

    public func encodeBody(into w: inout FrameWriter) {
        w.appendBigEndian(idm.rawValue)
        w.append(0x0000, .bigEndian)
    }

    public static func decodeBody(_ r: inout ByteReader) throws(FeliCaError) -> ResetModeCommand {
        let idm = try r.readIDm()
        try readReserved(&r)
        return ResetModeCommand(idm: idm)
    }
}

/// Reset Mode response: `LEN 3F IDm SF1 SF2`.
public struct ResetModeResponse: CardResponse {
    public static var code: CommandCode { .resetMode }

    public var idm: IDm
    public var status: StatusFlags
    public init(idm: IDm, status: StatusFlags) { self.idm = idm; self.status = status }

    public var frameLength: Int { 12 }

    public func encodeBody(into w: inout FrameWriter) {
        w.appendBigEndian(idm.rawValue)
        w.append(status.sf1)
        w.append(status.sf2)
    }

    public static func decodeBody(_ r: inout ByteReader, expecting idm: IDm?) throws(FeliCaError) -> ResetModeResponse {
        let got = try r.readIDm(expecting: idm)
        let sf = StatusFlags(sf1: try r.readUInt8("SF1"), sf2: try r.readUInt8("SF2"))
        return ResetModeResponse(idm: got, status: sf)
    }
}

/// Reads the two reserved bytes of Request Specification Version and Reset Mode, which must be zero.
private func readReserved(_ r: inout ByteReader) throws(FeliCaError) {
    let reserved = try r.readUInt16(.bigEndian, "reserved")
    guard reserved == 0 else {
        throw FeliCaError(.invalidField, "\(r.frame): reserved field is \(hex16(reserved)), must be 0000")
    }
}
