/// Write Without Encryption command: `LEN 08 IDm m service×m n element×n data(16×n)`.
public struct WriteWithoutEncryptionCommand: CardCommand {
    public typealias Response = WriteWithoutEncryptionResponse
    public static var code: CommandCode { .writeWithoutEncryption }
    /// A write whose reply was lost may have been stored: sending it again is not the
    /// caller's to decide blindly (``CardSession/write(service:blocks:to:)``).
    public static var isRepeatable: Bool { false }

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

    public var addressedIDm: IDm? { idm }
    public var frameLength: Int { blockAccessLength(services, blocks) + data.count }
    public var longestResponse: Int { 12 }
    public var timing: (kind: ResponseTimeKind, units: Int) { (.write, blocks.count) }

    public func encodeBody(into w: inout FrameWriter) {
        w.appendBigEndian(idm.rawValue)
        encodeBlockAccess(services, blocks, into: &w)
        w.append(contentsOf: data)
    }

    public static func decodeBody(_ r: inout ByteReader) throws(FeliCaError) -> WriteWithoutEncryptionCommand {
        let idm = try r.readIDm()
        let (services, blocks) = try decodeBlockAccess(&r)
        let data = try r.readBytes(16 * blocks.count, "block data (\(blocks.count) blocks)")
        do {
            return try WriteWithoutEncryptionCommand(idm: idm, services: services, blocks: blocks, data: Array(data))
        } catch {
            throw FeliCaError(.invalidField, "\(r.frame): " + error.reason)
        }
    }
}

/// Write Without Encryption response: `LEN 09 IDm SF1 SF2`.
public struct WriteWithoutEncryptionResponse: CardResponse {
    public static var code: CommandCode { .writeWithoutEncryption }

    public var idm: IDm
    public var status: StatusFlags
    public init(idm: IDm, status: StatusFlags) { self.idm = idm; self.status = status }

    public var frameLength: Int { 12 }

    public func encodeBody(into w: inout FrameWriter) {
        w.appendBigEndian(idm.rawValue)
        w.append(status.sf1)
        w.append(status.sf2)
    }

    public static func decodeBody(_ r: inout ByteReader, expecting idm: IDm?) throws(FeliCaError) -> WriteWithoutEncryptionResponse {
        let got = try r.readIDm(expecting: idm)
        let sf = StatusFlags(sf1: try r.readUInt8("SF1"), sf2: try r.readUInt8("SF2"))
        return WriteWithoutEncryptionResponse(idm: got, status: sf)
    }
}
