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
}
