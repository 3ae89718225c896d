import FeliCa

/// What a reader makes of a FeliCa Lite's own blocks: the ID block with the issuer its
/// data format code names, the memory configuration, reading the ID. The memory map itself
/// is the chip's (``FeliCa/FeliCaLite``, in the FeliCa module).
extension FeliCaLite {
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
