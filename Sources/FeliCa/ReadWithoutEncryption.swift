/// Validates a service list and block list shared by Read and Write Without Encryption.
func validateBlockAccess(_ what: String, services: [ServiceCode], blocks: [BlockListElement], dataBytes: Int) throws(FeliCaError) {
    guard (1...16).contains(services.count) else {
        throw FeliCaError(.invalidArgument, "\(what): 1-16 services per command, got \(services.count)")
    }
    guard !blocks.isEmpty else {
        throw FeliCaError(.invalidArgument, "\(what): the block list is empty")
    }
    for (i, b) in blocks.enumerated() where Int(b.serviceIndex) >= services.count {
        throw FeliCaError(.invalidArgument, "\(what): block list element \(i) names service \(b.serviceIndex), only \(services.count) listed")
    }
    let size = blockAccessLength(services, blocks) + dataBytes
    guard size <= 255 else {
        throw FeliCaError(.invalidArgument, "\(what): command would be \(size) bytes, a frame holds at most 255")
    }
}

/// Length of a Read/Write command frame up to its block list: LEN, code, IDm, then
/// `m, service×m, n, element×n`.
func blockAccessLength(_ services: [ServiceCode], _ blocks: [BlockListElement]) -> Int {
    var size = 12 + 2 * services.count
    for b in blocks { size += b.encodedLength }
    return size
}

/// Writes the `m, service×m, n, element×n` part of Read/Write commands.
func encodeBlockAccess(_ services: [ServiceCode], _ blocks: [BlockListElement], into w: inout FrameWriter) {
    w.append(UInt8(services.count))
    for s in services { w.append(s.rawValue, .littleEndian) }
    w.append(UInt8(blocks.count))
    for b in blocks { b.encode(into: &w) }
}

/// Reads the `m, service×m, n, element×n` part of Read/Write commands.
func decodeBlockAccess(_ r: inout ByteReader) throws(FeliCaError) -> ([ServiceCode], [BlockListElement]) {
    let m = Int(try r.readUInt8("number of services"))
    guard (1...16).contains(m) else {
        throw FeliCaError(.invalidField, "\(r.frame): number of services \(m) is outside 1-16")
    }
    var services: [ServiceCode] = []
    services.reserveCapacity(m)
    for i in 0..<m { services.append(ServiceCode(try r.readUInt16(.littleEndian, "service code \(i)"))) }
    let n = Int(try r.readUInt8("number of blocks"))
    guard n >= 1 else { throw FeliCaError(.invalidField, "\(r.frame): number of blocks is 0") }
    var blocks: [BlockListElement] = []
    blocks.reserveCapacity(n)
    for i in 0..<n { blocks.append(try BlockListElement.decode(&r, index: i)) }
    return (services, blocks)
}

/// Read Without Encryption command: `LEN 06 IDm m service(2 LE)×m n element×n`.
public struct ReadWithoutEncryptionCommand: CardCommand {
    public typealias Response = ReadWithoutEncryptionResponse
    public static var code: CommandCode { .readWithoutEncryption }

    public var idm: IDm
    public var services: [ServiceCode]
    public var blocks: [BlockListElement]

    /// No frame can carry more blocks in its reply (13 + 16n ≤ 255).
    public static let frameBlockLimit = 15

    public init(idm: IDm, services: [ServiceCode], blocks: [BlockListElement]) throws(FeliCaError) {
        try validateBlockAccess("Read Without Encryption", services: services, blocks: blocks, dataBytes: 0)
        guard blocks.count <= Self.frameBlockLimit else {
            throw FeliCaError(.invalidArgument, "Read Without Encryption: \(blocks.count) blocks requested, a reply frame holds at most 15")
        }
        self.idm = idm
        self.services = services
        self.blocks = blocks
    }

    /// One service, consecutive blocks.
    public init(idm: IDm, service: ServiceCode, blocks: some Sequence<Int>) throws(FeliCaError) {
        var list: [BlockListElement] = []
        for b in blocks { list.append(try BlockListElement(serviceIndex: 0, block: b)) }
        try self.init(idm: idm, services: [service], blocks: list)
    }

    public var addressedIDm: IDm? { idm }
    public var frameLength: Int { blockAccessLength(services, blocks) }
    public var longestResponse: Int { ReadWithoutEncryptionResponse.headerLength + 16 * blocks.count }
    public var timing: (kind: ResponseTimeKind, units: Int) { (.read, blocks.count) }

    public func encodeBody(into w: inout FrameWriter) {
        w.appendBigEndian(idm.rawValue)
        encodeBlockAccess(services, blocks, into: &w)
    }

    public static func decodeBody(_ r: inout ByteReader) throws(FeliCaError) -> ReadWithoutEncryptionCommand {
        let idm = try r.readIDm()
        let (services, blocks) = try decodeBlockAccess(&r)
        for (i, b) in blocks.enumerated() where Int(b.serviceIndex) >= services.count {
            throw FeliCaError(.invalidField, "\(r.frame): block list element \(i) names service \(b.serviceIndex), only \(services.count) listed")
        }
        return ReadWithoutEncryptionCommand(unchecked: idm, services, blocks)
    }

    private init(unchecked idm: IDm, _ s: [ServiceCode], _ b: [BlockListElement]) {
        self.idm = idm; services = s; blocks = b
    }
}

/// Read Without Encryption response: `LEN 07 IDm SF1 SF2 [n data(16×n)]` — the block
/// count and data are present only when SF1 is 0.
public struct ReadWithoutEncryptionResponse: CardResponse {
    public static var code: CommandCode { .readWithoutEncryption }

    public var idm: IDm
    public var status: StatusFlags
    /// The data of all blocks back to back (16 bytes each); a slice of the decoded frame,
    /// so decoding copies nothing.
    public var data: ArraySlice<UInt8>

    /// Bytes before the block data: LEN, code, IDm, SF1, SF2 and the block count.
    public static let headerLength = 13

    public init(idm: IDm, status: StatusFlags, data: ArraySlice<UInt8> = []) {
        self.idm = idm
        self.status = status
        self.data = data
    }

    public var blockCount: Int { data.count / 16 }

    /// Block `i` (16 bytes).
    public subscript(block i: Int) -> ArraySlice<UInt8> {
        let s = data.startIndex + 16 * i
        return data[s..<(s + 16)]
    }

    /// Every block as its own array.
    public var blocks: [[UInt8]] { (0..<blockCount).map { Array(self[block: $0]) } }

    public var frameLength: Int { status.isSuccess ? Self.headerLength + data.count : 12 }

    public func encodeBody(into w: inout FrameWriter) {
        w.appendBigEndian(idm.rawValue)
        w.append(status.sf1)
        w.append(status.sf2)
        if status.isSuccess {
            w.append(UInt8(truncatingIfNeeded: data.count / 16))
            w.append(contentsOf: data)
        }
    }

    public static func decodeBody(_ r: inout ByteReader, expecting idm: IDm?) throws(FeliCaError) -> ReadWithoutEncryptionResponse {
        let got = try r.readIDm(expecting: idm)
        let sf = StatusFlags(sf1: try r.readUInt8("SF1"), sf2: try r.readUInt8("SF2"))
        guard sf.isSuccess else { return ReadWithoutEncryptionResponse(idm: got, status: sf) }
        let n = Int(try r.readUInt8("number of blocks"))
        let data = try r.readBytes(16 * n, "block data (\(n) blocks)")
        return ReadWithoutEncryptionResponse(idm: got, status: sf, data: data)
    }
}

extension ReadWithoutEncryptionCommand {
    /// How many of `blocks`, taken in order from the first, one command carries: at most
    /// `limit` blocks (and the frame's 15), 16 services, and a command frame of 255 bytes.
    /// ``CardSession/read(_:from:)`` cuts its commands with it, and reading plans cut
    /// their batches with it, so a plan's batch is exactly one command.
    public static func fitting(_ blocks: some Collection<(service: ServiceCode, block: Int)>, limit: Int) -> Int {
        var services: [ServiceCode] = []
        var size = 12
        var count = 0
        for e in blocks {
            guard count < min(limit, frameBlockLimit) else { break }
            let known = services.contains(e.service)
            let extra = (known ? 0 : 2) + (e.block <= 0xFF ? 2 : 3)
            if (!known && services.count == 16) || size + extra > 255 { break }
            if !known { services.append(e.service) }
            size += extra
            count += 1
        }
        return max(count, blocks.isEmpty ? 0 : 1)
    }
}
