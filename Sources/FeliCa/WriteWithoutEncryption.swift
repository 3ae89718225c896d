/// Write Without Encryption command: `LEN 08 IDm m service×m n element×n data(16×n)`.
public struct WriteWithoutEncryptionCommand: Hashable, Sendable {
    public var idm: IDm
    public var services: [ServiceCode]
    public var blocks: [BlockListElement]
    /// 16 bytes per block element, back to back.
    public var data: [UInt8]

    public init(idm: IDm, services: [ServiceCode], blocks: [BlockListElement], data: [UInt8]) throws(FeliCaError) {
        guard data.count == 16 * blocks.count else {
            throw FeliCaError(.invalidArgument, "Write Without Encryption: \(blocks.count) blocks need \(16 * blocks.count) data bytes, got \(data.count)")
        }
        try validateBlockAccess("Write Without Encryption", services: services, blocks: blocks, dataBytes: data.count)
        self.idm = idm
        self.services = services
        self.blocks = blocks
        self.data = data
    }

    public func encode() -> [UInt8] {
        var w = FrameWriter(code: CommandCode.writeWithoutEncryption.rawValue, capacity: 12 + 2 * services.count + 3 * blocks.count + data.count)
        w.append(idm.rawValue)
        w.append(UInt8(services.count))
        for s in services { w.append(s.rawValue, .littleEndian) }
        w.append(UInt8(blocks.count))
        for b in blocks { b.encode(into: &w) }
        w.append(contentsOf: data)
        return w.finish()
    }

    public static func decode(_ packet: ArraySlice<UInt8>) throws(FeliCaError) -> WriteWithoutEncryptionCommand {
        var r = try openFrame(packet, code: CommandCode.writeWithoutEncryption.rawValue, frame: "Write Without Encryption command")
        let idm = try readIDm(&r)
        let (services, blocks) = try decodeBlockAccess(&r)
        let data = try r.readBytes(16 * blocks.count, "block data (\(blocks.count) blocks)")
        try r.finish()
        do {
            return try WriteWithoutEncryptionCommand(idm: idm, services: services, blocks: blocks, data: Array(data))
        } catch {
            throw FeliCaError(.invalidField, "Write Without Encryption command: " + error.reason)
        }
    }
}

/// Write Without Encryption response: `LEN 09 IDm SF1 SF2`.
public struct WriteWithoutEncryptionResponse: Hashable, Sendable {
    public var idm: IDm
    public var status: StatusFlags
    public init(idm: IDm, status: StatusFlags) { self.idm = idm; self.status = status }

    public func encode() -> [UInt8] {
        var w = FrameWriter(code: CommandCode.writeWithoutEncryption.responseCode, capacity: 12)
        w.append(idm.rawValue)
        w.append(status.sf1)
        w.append(status.sf2)
        return w.finish()
    }

    public static func decode(_ packet: ArraySlice<UInt8>, expecting idm: IDm? = nil) throws(FeliCaError) -> WriteWithoutEncryptionResponse {
        let frame = "Write Without Encryption response"
        var r = try openFrame(packet, code: CommandCode.writeWithoutEncryption.responseCode, frame: frame)
        let got = try readIDm(&r)
        try requireIDm(got, idm, frame)
        let sf = StatusFlags(sf1: try r.readUInt8("SF1"), sf2: try r.readUInt8("SF2"))
        try r.finish()
        return WriteWithoutEncryptionResponse(idm: got, status: sf)
    }
}
