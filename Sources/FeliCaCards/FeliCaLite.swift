import FeliCa

/// FeliCa Lite (RC-S965, IC type F0) and Lite-S (RC-S966, F1; FeliCa Link in Lite-S mode,
/// F2): one system, 88B4, without areas; every block is read through service 000B (read-only
/// access) and written through 0009, without a key. The chip answers only Polling, Read and
/// Write Without Encryption, and reads at most 4 blocks at once.
///
/// Memory map (block numbers):
///
/// | block | name | content |
/// |---|---|---|
/// | 00-0D | S_PAD0-13 | user data (an NDEF tag's attribute block and message) |
/// | 0E | REG | subtraction register |
/// | 80 | RC | random challenge (authentication) |
/// | 81 | MAC | MAC of the last read |
/// | 82 | ID | bytes 0-7 IDd (the IDm), 8-9 DFC (data format code), 10-15 free |
/// | 83 | D_ID | IDm and PMm |
/// | 84 | SER_C | service code |
/// | 85 | SYS_C | system code (88B4) |
/// | 86 | CKV | card key version |
/// | 87 | CK | card key (never readable) |
/// | 88 | MC | memory configuration |
/// | 90 | WCNT | write counter (Lite-S) |
/// | 91 | MAC_A | MAC with authentication (Lite-S) |
/// | 92 | STATE | authentication state (Lite-S) |
/// | A0 | CRC_CHECK | CRC check (Lite-S) |
///
/// MC bytes 0-1 (little-endian) hold one bit per user block (set: writable); byte 2 is FF
/// while the system blocks are writable; byte 3 bit 0 set makes the tag answer Polling for
/// system 12FC too (NDEF). A tag formatted for NDEF still answers 88B4, also to a wildcard
/// Polling, with the same IDm.
public enum FeliCaLite {
    public static let system: SystemCode = 0x88B4
    public static let readService: ServiceCode = 0x000B
    /// The ID block's number.
    public static let idBlock = 0x82
    /// The MC block's number.
    public static let memoryConfigurationBlock = 0x88

    /// Whether PMm byte 1 names a Lite or Lite-S.
    public static func isLite(_ pmm: PMm) -> Bool {
        pmm.ic.family == .lite || pmm.ic.family == .liteS
    }

    /// Every block of the memory map of `pmm`'s IC, in order: the Lite-S adds WCNT, MAC_A,
    /// STATE and CRC_CHECK. Which of them answer a read without a MAC is the card's business
    /// (CK never does); a dump keeps those that answer.
    public static func blocks(of pmm: PMm) -> [Int] {
        Array(0x00...0x0E) + Array(0x80...0x88) + (pmm.ic.family == .liteS ? [0x90, 0x91, 0x92, 0xA0] : [])
    }

    /// The memory map's name of block `number` (`S_PAD3`, `ID`), nil for a number outside it.
    public static func blockName(_ number: Int) -> String? {
        switch number {
        case 0x00...0x0D: "S_PAD\(number)"
        case 0x0E: "REG"
        case 0x80...0x88: ["RC", "MAC", "ID", "D_ID", "SER_C", "SYS_C", "CKV", "CK", "MC"][number - 0x80]
        case 0x90...0x92: ["WCNT", "MAC_A", "STATE"][number - 0x90]
        case 0xA0: "CRC_CHECK"
        default: nil
        }
    }

    /// The ID block (0x82): IDd, data format code and the free bytes.
    public struct IDBlock: Hashable, Sendable {
        /// Bytes 0-7: the IDd, which the tag answers Polling with as its IDm.
        public var idd: [UInt8]
        /// Bytes 8-9, big-endian: the data format code an issuer sets.
        public var dfc: UInt16
        /// Bytes 10-15, free for the issuer.
        public var free: [UInt8]

        public init(block: [UInt8]) throws(CardDataError) {
            let b = try Block(block, "FeliCa Lite ID block (82)")
            idd = Array(b.bytes[0..<8])
            dfc = b.uint16BE(8)
            free = Array(b.bytes[10..<16])
        }

        public init(idm: IDm, dfc: UInt16, free: [UInt8] = [UInt8](repeating: 0, count: 6)) {
            idd = idm.bytes
            self.dfc = dfc
            self.free = Array((free + [UInt8](repeating: 0, count: 6)).prefix(6))
        }

        public var block: [UInt8] { idd + [UInt8(dfc >> 8), UInt8(dfc & 0xFF)] + free }
        /// The DFC as 4 hex digits.
        public var dfcHex: String { Hex.digits(dfc, count: 4) }
        /// The amusement card issuer the DFC names, if it is one of ``amusementIssuers``.
        public var issuer: String? { FeliCaLite.amusementIssuers[dfc] }
    }

    /// Issuers of amusement (arcade) cards by the DFC of their Lite or Lite-S cards, as the
    /// Amusement IC documentation at sega.bsnk.me and Flipper Zero's amusement-card parser
    /// list them.
    public static let amusementIssuers: [UInt16: String] = [
        0x0078: "SEGA Aime",
        0x0068: "Konami e-amusement pass",
        0x002A: "Bandai Namco Passport",
        0x003A: "Bandai Namco Passport",
        0x0079: "Taito NESiCA",
    ]

    /// The MC block (0x88), as far as a reader without the key needs it.
    public struct MemoryConfiguration: Hashable, Sendable {
        /// Bits 0-13 of bytes 0-1 (LE): S_PAD0-13 writable.
        public var writableUserBlocks: UInt16
        /// Byte 2 is FF: the system blocks can still be written.
        public var systemBlocksWritable: Bool
        /// Byte 3 bit 0: the tag answers Polling for 12FC (NDEF).
        public var answersNDEF: Bool

        public init(block: [UInt8]) throws(CardDataError) {
            let b = try Block(block, "FeliCa Lite MC block (88)")
            writableUserBlocks = b.uint16LE(0) & 0x3FFF
            systemBlocksWritable = b[2] == 0xFF
            answersNDEF = b[3] & 0x01 != 0
        }

        /// An MC block with every user block writable, the system blocks locked, and the
        /// NDEF flag as given.
        public static func block(answersNDEF: Bool) -> [UInt8] {
            [0xFF, 0x7F, 0x00, answersNDEF ? 0x01 : 0x00] + [UInt8](repeating: 0, count: 12)
        }
    }

    /// Reads the ID block of a Lite or Lite-S; nil when the card refuses it (status flags).
    public static func readID(using session: CardSession, from target: Target) async throws(FeliCaError) -> IDBlock? {
        do {
            let data = try await session.read(service: readService, blocks: idBlock..<(idBlock + 1), from: target)[0]
            return try? IDBlock(block: data)
        } catch where error.code == .status {
            return nil
        }
    }
}
