/// One element of a block list: which service (index into the command's service list),
/// access mode and block number.
///
/// 2-byte form `1 AAA SSSS | block` for blocks 0-255, 3-byte form
/// `0 AAA SSSS | block lo | block hi` above.
public struct BlockListElement: Hashable, Sendable {
    /// Index into the command's service list (0-15).
    public var serviceIndex: UInt8
    /// Access mode (0 normal, 1 cashback for purse services; 3 bits).
    public var accessMode: UInt8
    public var blockNumber: UInt16

    public init(serviceIndex: Int, block: Int, accessMode: UInt8 = 0) throws(FeliCaError) {
        guard (0...15).contains(serviceIndex) else {
            throw FeliCaError(.invalidArgument, "block list element: service index \(serviceIndex) is outside 0-15")
        }
        guard (0...0xFFFF).contains(block) else {
            throw FeliCaError(.invalidArgument, "block list element: block number \(block) is outside 0-65535")
        }
        guard accessMode <= 7 else {
            throw FeliCaError(.invalidArgument, "block list element: access mode \(accessMode) is outside 0-7")
        }
        self.serviceIndex = UInt8(serviceIndex)
        self.accessMode = accessMode
        self.blockNumber = UInt16(block)
    }

    /// Bytes on the wire: 2 for blocks up to 255, else 3.
    public var encodedLength: Int { blockNumber <= 0xFF ? 2 : 3 }

    @inlinable
    func encode(into w: inout FrameWriter) {
        let head = (accessMode & 7) << 4 | (serviceIndex & 0xF)
        if blockNumber <= 0xFF {
            w.append(0x80 | head)
            w.append(UInt8(blockNumber))
        } else {
            w.append(head)
            w.append(blockNumber, .littleEndian)
        }
    }

    static func decode(_ r: inout ByteReader, index: Int) throws(FeliCaError) -> BlockListElement {
        let head = try r.readUInt8("block list element \(index)")
        let block: UInt16
        if head & 0x80 != 0 {
            block = UInt16(try r.readUInt8("block list element \(index) block number"))
        } else {
            block = try r.readUInt16(.littleEndian, "block list element \(index) block number")
        }
        return BlockListElement(raw: head & 0xF, mode: (head >> 4) & 7, block: block)
    }

    private init(raw: UInt8, mode: UInt8, block: UInt16) {
        serviceIndex = raw; accessMode = mode; blockNumber = block
    }
}
