/// Request Specification Version command: `LEN 3C IDm 00 00`.
public struct RequestSpecificationVersionCommand: Hashable, Sendable {
    public var idm: IDm
    public init(idm: IDm) { self.idm = idm }

    public func encode() -> [UInt8] {
        var w = FrameWriter(code: CommandCode.requestSpecificationVersion.rawValue, capacity: 12)
        w.append(idm.rawValue)
        w.append(0x0000, .bigEndian)
        return w.finish()
    }

    public static func decode(_ packet: ArraySlice<UInt8>) throws(FeliCaError) -> RequestSpecificationVersionCommand {
        var r = try openFrame(packet, code: CommandCode.requestSpecificationVersion.rawValue, frame: "Request Specification Version command")
        let idm = try readIDm(&r)
        let reserved = try r.readUInt16(.bigEndian, "reserved")
        guard reserved == 0 else {
            throw FeliCaError(.invalidField, "Request Specification Version command: reserved field is \(hex16(reserved)), must be 0000")
        }
        try r.finish()
        return RequestSpecificationVersionCommand(idm: idm)
    }
}

/// Request Specification Version response: `LEN 3D IDm SF1 SF2 [version data]`.
public struct RequestSpecificationVersionResponse: Hashable, Sendable {
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

    public func encode() -> [UInt8] {
        var w = FrameWriter(code: CommandCode.requestSpecificationVersion.responseCode, capacity: 12 + versionData.count)
        w.append(idm.rawValue)
        w.append(status.sf1)
        w.append(status.sf2)
        if status.isSuccess { w.append(contentsOf: versionData) }
        return w.finish()
    }

    public static func decode(_ packet: ArraySlice<UInt8>, expecting idm: IDm? = nil) throws(FeliCaError) -> RequestSpecificationVersionResponse {
        let frame = "Request Specification Version response"
        var r = try openFrame(packet, code: CommandCode.requestSpecificationVersion.responseCode, frame: frame)
        let got = try readIDm(&r)
        try requireIDm(got, idm, frame)
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
        try r.finish()
        return RequestSpecificationVersionResponse(idm: got, status: sf, versionData: data)
    }
}

/// Reset Mode command: `LEN 3E IDm 00 00`.
public struct ResetModeCommand: Hashable, Sendable {
    public var idm: IDm
    public init(idm: IDm) { self.idm = idm }

    public func encode() -> [UInt8] {
        var w = FrameWriter(code: CommandCode.resetMode.rawValue, capacity: 12)
        w.append(idm.rawValue)
        w.append(0x0000, .bigEndian)
        return w.finish()
    }

    public static func decode(_ packet: ArraySlice<UInt8>) throws(FeliCaError) -> ResetModeCommand {
        var r = try openFrame(packet, code: CommandCode.resetMode.rawValue, frame: "Reset Mode command")
        let idm = try readIDm(&r)
        let reserved = try r.readUInt16(.bigEndian, "reserved")
        guard reserved == 0 else {
            throw FeliCaError(.invalidField, "Reset Mode command: reserved field is \(hex16(reserved)), must be 0000")
        }
        try r.finish()
        return ResetModeCommand(idm: idm)
    }
}

/// Reset Mode response: `LEN 3F IDm SF1 SF2`.
public struct ResetModeResponse: Hashable, Sendable {
    public var idm: IDm
    public var status: StatusFlags
    public init(idm: IDm, status: StatusFlags) { self.idm = idm; self.status = status }

    public func encode() -> [UInt8] {
        var w = FrameWriter(code: CommandCode.resetMode.responseCode, capacity: 12)
        w.append(idm.rawValue)
        w.append(status.sf1)
        w.append(status.sf2)
        return w.finish()
    }

    public static func decode(_ packet: ArraySlice<UInt8>, expecting idm: IDm? = nil) throws(FeliCaError) -> ResetModeResponse {
        let frame = "Reset Mode response"
        var r = try openFrame(packet, code: CommandCode.resetMode.responseCode, frame: frame)
        let got = try readIDm(&r)
        try requireIDm(got, idm, frame)
        let sf = StatusFlags(sf1: try r.readUInt8("SF1"), sf2: try r.readUInt8("SF2"))
        try r.finish()
        return ResetModeResponse(idm: got, status: sf)
    }
}
