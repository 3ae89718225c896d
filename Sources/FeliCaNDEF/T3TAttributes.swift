import FeliCa

/// The attribute information block of an NFC Forum Type 3 Tag: block 0 of the NDEF
/// service (system 12FC), which says how the message that follows it is stored.
///
///     byte  0     Ver     mapping version, major in the high nibble (1.0 = 0x10)
///     byte  1     Nbr     blocks a reader may read in one Read Without Encryption
///     byte  2     Nbw     blocks a writer may write in one Write Without Encryption
///     bytes 3-4   Nmaxb   blocks the message may use (BE), after this block
///     bytes 5-8   RFU     0
///     byte  9     WriteF  0x00 done, 0x0F while a write is under way
///     byte  10    RWFlag  0x00 read-only, 0x01 read-write
///     bytes 11-13 Ln      bytes of the message (BE)
///     bytes 14-15 Check   sum of bytes 0-13 (BE)
///
/// The message starts in block 1 and runs over ⌈Ln / 16⌉ blocks.
public struct T3TAttributes: Hashable, Sendable {
    public var version: UInt8
    public var nbr: Int
    public var nbw: Int
    public var nmaxb: Int
    public var writeFlag: UInt8
    public var rwFlag: UInt8
    public var length: Int

    /// The NDEF system and the service its blocks are read through (read-only access).
    public static let system: SystemCode = 0x12FC
    public static let readService: ServiceCode = 0x000B
    /// The service its blocks are written through.
    public static let writeService: ServiceCode = 0x0009
    /// WriteF while a write is under way.
    public static let writing: UInt8 = 0x0F

    public init(version: UInt8 = 0x10, nbr: Int, nbw: Int, nmaxb: Int, writeFlag: UInt8 = 0, rwFlag: UInt8 = 1, length: Int) {
        self.version = version
        self.nbr = nbr
        self.nbw = nbw
        self.nmaxb = nmaxb
        self.writeFlag = writeFlag
        self.rwFlag = rwFlag
        self.length = length
    }

    /// Blocks the message occupies after the attribute block.
    public var messageBlocks: Int { (length + 15) / 16 }
    /// `1.0` from ``version``.
    public var versionText: String { "\(version >> 4).\(version & 0x0F)" }
    public var isWritable: Bool { rwFlag == 0x01 }

    /// Decodes and checks a block 0. Each check names its field: the checksum (bytes 14-15
    /// against the sum of bytes 0-13), Ver (major version 1), Nbr (at least 1), WriteF
    /// (0x0F: a write was interrupted; anything but 0x00 and 0x0F is not allowed), RWFlag
    /// (0x00 or 0x01) and Ln (no more than Nmaxb blocks hold). Throws `.invalidField`, or
    /// `.badLength` when the block is not 16 bytes. A writer, which may finish what an
    /// interrupted write began, passes `allowingWriteInProgress`.
    public init(block: [UInt8], allowingWriteInProgress: Bool = false) throws(FeliCaError) {
        guard block.count == 16 else { throw FeliCaError(.badLength, "NDEF attribute block: \(block.count) bytes, not 16") }
        let sum = block[0..<14].reduce(0) { $0 + Int($1) }
        let check = Int(block[14]) << 8 | Int(block[15])
        guard sum == check else {
            throw FeliCaError(.invalidField, "NDEF attribute block: checksum (bytes 14-15) is \(Hex.digits(check, count: 4)), the sum of bytes 0-13 is \(Hex.digits(sum, count: 4))")
        }
        version = block[0]
        guard version >> 4 == 1 else {
            throw FeliCaError(.invalidField, "NDEF attribute block: Ver (byte 0) is \(version >> 4).\(version & 0x0F); this reader knows mapping version 1.x")
        }
        nbr = Int(block[1])
        nbw = Int(block[2])
        nmaxb = Int(block[3]) << 8 | Int(block[4])
        writeFlag = block[9]
        rwFlag = block[10]
        length = Int(block[11]) << 16 | Int(block[12]) << 8 | Int(block[13])
        guard nbr > 0 else { throw FeliCaError(.invalidField, "NDEF attribute block: Nbr (byte 1) is 0, so no block may be read") }
        guard writeFlag != 0x0F || allowingWriteInProgress else {
            throw FeliCaError(.invalidField, "NDEF attribute block: WriteF (byte 9) is 0F: a write of the message was interrupted, so the message may be incomplete")
        }
        guard writeFlag == 0 || writeFlag == 0x0F else { throw FeliCaError(.invalidField, "NDEF attribute block: WriteF (byte 9) is \(Hex.encode([writeFlag])), neither 00 (done) nor 0F (writing)") }
        guard rwFlag <= 1 else { throw FeliCaError(.invalidField, "NDEF attribute block: RWFlag (byte 10) is \(Hex.encode([rwFlag])), neither 00 (read-only) nor 01 (read-write)") }
        guard messageBlocks <= nmaxb else {
            throw FeliCaError(.invalidField, "NDEF attribute block: Ln (bytes 11-13) is \(length) bytes (\(messageBlocks) blocks), past Nmaxb (bytes 3-4), \(nmaxb) block\(nmaxb == 1 ? "" : "s")")
        }
    }

    /// The block, checksum filled in.
    public var block: [UInt8] {
        var b = [UInt8](repeating: 0, count: 16)
        b[0] = version
        b[1] = UInt8(clamping: nbr)
        b[2] = UInt8(clamping: nbw)
        b[3] = UInt8(nmaxb >> 8 & 0xFF); b[4] = UInt8(nmaxb & 0xFF)
        b[9] = writeFlag
        b[10] = rwFlag
        b[11] = UInt8(length >> 16 & 0xFF); b[12] = UInt8(length >> 8 & 0xFF); b[13] = UInt8(length & 0xFF)
        let sum = b[0..<14].reduce(0) { $0 + Int($1) }
        b[14] = UInt8(sum >> 8); b[15] = UInt8(sum & 0xFF)
        return b
    }

    /// The blocks of a tag holding `message`: the attribute block, then the message padded
    /// with zeros to whole blocks and on to `nmaxb` blocks.
    public static func blocks(for message: [UInt8], nbr: Int = 4, nbw: Int = 1, nmaxb: Int = 13, rwFlag: UInt8 = 1) -> [[UInt8]] {
        let attributes = T3TAttributes(nbr: nbr, nbw: nbw, nmaxb: nmaxb, rwFlag: rwFlag, length: message.count)
        var data = message + [UInt8](repeating: 0, count: max(0, nmaxb * 16 - message.count))
        data += [UInt8](repeating: 0, count: (16 - data.count % 16) % 16)
        return [attributes.block] + stride(from: 0, to: data.count, by: 16).map { Array(data[$0..<($0 + 16)]) }
    }
}
