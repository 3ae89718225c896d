import FeliCa

/// Answer To Reset as a PC/SC reader reports it for a contactless card (ISO/IEC 7816-3):
/// `TS T0 {TAi TBi TCi TDi} historical(K) [TCK]`.
///
/// Contactless readers build the ATR themselves; for storage cards such as FeliCa the
/// historical bytes follow PC/SC Part 3: `80 4F <len> RID(A0 00 00 03 06) SS NN NN 00 00 00 00`,
/// where `SS` names the standard and `NN NN` the card.
public struct ATR: Hashable, Sendable, CustomStringConvertible {
    /// Every byte, as received.
    public let bytes: [UInt8]
    /// The historical bytes (at most 15).
    public let historicalBytes: [UInt8]
    /// Protocols the interface bytes offer (`T=0`, `T=1`, ...), in order of appearance.
    public let protocols: [Int]

    /// Registered application provider identifier of the PC/SC workgroup.
    public static let pcscRID: [UInt8] = [0xA0, 0x00, 0x00, 0x03, 0x06]

    /// Parses and checks the structure, including the TCK check byte when present.
    public init(_ bytes: [UInt8]) throws(FeliCaError) {
        var r = ByteReader(bytes[...], frame: "ATR")
        let ts = try r.readUInt8("TS")
        guard ts == 0x3B || ts == 0x3F else {
            throw FeliCaError(.invalidField, "ATR: TS is \(Self.hex(ts)), expected 3B (direct) or 3F (inverse convention)")
        }
        let t0 = try r.readUInt8("T0")
        var y = t0 >> 4
        let k = Int(t0 & 0x0F)
        var protocols: [Int] = []
        var level = 1
        while true {
            if y & 0x1 != 0 { _ = try r.readUInt8("TA\(level)") }
            if y & 0x2 != 0 { _ = try r.readUInt8("TB\(level)") }
            if y & 0x4 != 0 { _ = try r.readUInt8("TC\(level)") }
            guard y & 0x8 != 0 else { break }
            let td = try r.readUInt8("TD\(level)")
            protocols.append(Int(td & 0x0F))
            y = td >> 4
            level += 1
        }
        let historical = Array(try r.readBytes(k, "historical bytes (T0 announces \(k))"))
        // TCK is present unless only T=0 is offered.
        if protocols.contains(where: { $0 != 0 }) {
            _ = try r.readUInt8("TCK")
            var x: UInt8 = 0
            for b in bytes.dropFirst() { x ^= b }
            guard x == 0 else {
                throw FeliCaError(.invalidField, "ATR: check byte TCK is wrong (XOR of T0…TCK is \(Self.hex(x)), expected 00)")
            }
        }
        try r.finish()
        self.bytes = bytes
        self.historicalBytes = historical
        self.protocols = protocols.isEmpty ? [0] : protocols
    }

    /// The PC/SC Part 3 storage-card fields of the historical bytes, when they have that layout.
    public var storageCard: (standard: UInt8, cardName: UInt16)? {
        let h = historicalBytes
        guard h.count >= 11, h[0] == 0x80, h[1] == 0x4F, Int(h[2]) >= 8, h.count >= 3 + Int(h[2]),
              Array(h[3..<8]) == Self.pcscRID
        else { return nil }
        return (h[8], UInt16(h[9]) << 8 | UInt16(h[10]))
    }

    /// PC/SC Part 3 standard byte for FeliCa.
    public static let feliCaStandard: UInt8 = 0x11
    /// Card names that mean FeliCa: `00 3B` (PC/SC Part 3 supplement), `F0 11` and `F0 12`
    /// (ACS firmware: FeliCa at 212 and 424 kbps).
    public static let feliCaCardNames: Set<UInt16> = [0x003B, 0xF011, 0xF012]

    /// Whether the historical bytes say the card is FeliCa (standard 0x11 or a FeliCa card name).
    public var isFeliCa: Bool {
        guard let s = storageCard else { return false }
        return s.standard == Self.feliCaStandard || Self.feliCaCardNames.contains(s.cardName)
    }

    /// The ATR a PC/SC Part 3 reader builds for a FeliCa card:
    /// `3B 8F 80 01 80 4F 0C A0 00 00 03 06 11 00 3B 00 00 00 00 <TCK>`.
    public static func feliCa(standard: UInt8 = feliCaStandard, cardName: UInt16 = 0x003B) -> [UInt8] {
        var out: [UInt8] = [0x3B, 0x8F, 0x80, 0x01, 0x80, 0x4F, 0x0C] + pcscRID
        out += [standard, UInt8(cardName >> 8), UInt8(cardName & 0xFF), 0, 0, 0, 0]
        var x: UInt8 = 0
        for b in out.dropFirst() { x ^= b }
        out.append(x)
        return out
    }

    public var description: String { Hex.encode(bytes, uppercase: true, separator: " ") }

    private static func hex(_ b: UInt8) -> String { Hex.encode([b], uppercase: true) }
}
