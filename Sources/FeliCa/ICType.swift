/// The IC named by PMm byte 1 (Docs/protocol.md, "IC types"). Unknown codes are normal:
/// they are treated as Standard and probed, never refused.
public struct ICType: Hashable, Sendable, CustomStringConvertible {
    /// Product line, which decides the command set and limits.
    public enum Family: String, Hashable, Sendable {
        case standard, mobile, plug, lite, liteS = "lite-s"
    }

    public let code: UInt8
    public let family: Family
    /// Product name when known ("RC-S915"), or a description of the group.
    public let name: String?
    /// Whether the code is in the table.
    public let isKnown: Bool

    public init(code: UInt8) {
        self.code = code
        // Names from three public lists that agree except where noted (Docs/protocol.md,
        // "IC types", cites them): the proxmark3 client's FeliCa IC list, the nfcf-info IC
        // table and nfcpy's tt3_sony.py. nfcpy names 0x35 RC-SA00/2; the other two give
        // 0x33 = RC-SA00/2 and 0x35 = RC-SA01/2, which is followed here.
        switch code {
        case 0x00: (family, name) = (.standard, "RC-S830")
        case 0x01: (family, name) = (.standard, "RC-S915")
        case 0x02: (family, name) = (.standard, "RC-S919")
        case 0x08: (family, name) = (.standard, "RC-S952")
        case 0x09: (family, name) = (.standard, "RC-S953")
        case 0x0B: (family, name) = (.standard, "transit card IC")
        case 0x0C: (family, name) = (.standard, "RC-S954")
        case 0x0D: (family, name) = (.standard, "RC-S960")
        case 0x20: (family, name) = (.standard, "RC-S962")
        case 0x31: (family, name) = (.standard, "transit card IC (2021-)")
        case 0x32: (family, name) = (.standard, "RC-SA00/1")
        case 0x33: (family, name) = (.standard, "RC-SA00/2")
        case 0x34: (family, name) = (.standard, "RC-SA01/1")
        case 0x35: (family, name) = (.standard, "RC-SA01/2")
        case 0x36: (family, name) = (.standard, "transit card IC (ICOCA)")
        case 0x3E: (family, name) = (.standard, "RC-SA08/1")
        case 0x43: (family, name) = (.standard, "RC-SA24/1")
        case 0x44: (family, name) = (.standard, "RC-SA20/1")
        case 0x45: (family, name) = (.standard, "RC-SA20/2")
        case 0x46: (family, name) = (.standard, "RC-SA21/2")
        case 0x47: (family, name) = (.standard, "RC-SA24/1x1")
        case 0x48: (family, name) = (.standard, "RC-SA21/2x1")
        case 0x06, 0x07: (family, name) = (.mobile, "mobile FeliCa 1.0")
        case 0x10...0x13: (family, name) = (.mobile, "mobile FeliCa 2.0")
        case 0x14, 0x15: (family, name) = (.mobile, "mobile FeliCa 3.0")
        case 0x16: (family, name) = (.mobile, "mobile FeliCa (Apple Wallet)")
        case 0x17: (family, name) = (.mobile, "mobile FeliCa 4.0")
        case 0x18...0x1F: (family, name) = (.mobile, "mobile FeliCa 4.1")
        case 0xE0: (family, name) = (.plug, "FeliCa Plug")
        case 0xE1: (family, name) = (.plug, "FeliCa Link (Plug mode)")
        case 0xF0: (family, name) = (.lite, "FeliCa Lite (RC-S965)")
        case 0xF1: (family, name) = (.liteS, "FeliCa Lite-S (RC-S966)")
        case 0xF2: (family, name) = (.liteS, "FeliCa Link (Lite-S mode)")
        default: (family, name) = (.standard, nil)
        }
        isKnown = name != nil
    }

    /// Blocks the IC accepts in one Read Without Encryption, when known.
    ///
    /// Lite and Lite-S accept 4 (their user manuals); for other ICs the limit is not
    /// published per product, so it is nil and the session learns it from the card
    /// (an SF2 0xA2 reply means "too many").
    public var maximumBlocksPerRead: Int? {
        switch family {
        case .lite, .liteS: 4
        default: nil
        }
    }

    public var description: String {
        let hex = Hex.encode([code])
        return name.map { "\($0) (\(hex), \(family.rawValue))" } ?? "unknown IC \(hex) (treated as \(family.rawValue))"
    }
}
