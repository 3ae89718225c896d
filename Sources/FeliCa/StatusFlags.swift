/// Status flags of a reply: SF1 says where the error is, SF2 what it is.
public struct StatusFlags: Hashable, Sendable, CustomStringConvertible {
    public var sf1: UInt8
    public var sf2: UInt8
    public init(sf1: UInt8, sf2: UInt8) { self.sf1 = sf1; self.sf2 = sf2 }

    public static let success = StatusFlags(sf1: 0, sf2: 0)

    public var isSuccess: Bool { sf1 == 0 }

    /// Where the error lies: SF1 0xFF = not tied to one block; other non-zero values point
    /// at the failing element of the block list.
    public var location: String {
        switch sf1 {
        case 0x00: "no error"
        case 0xFF: "not tied to one block"
        default: "block list element \(sf1)"
        }
    }

    /// The name of SF2 (Docs/protocol.md, "Status flags"); unknown codes are shown by number.
    public var name: String {
        switch sf2 {
        case 0x00: "success"
        case 0x01: "purse data under/overflow"
        case 0x02: "cashback data exceeded"
        case 0x03: "limited purse data out of range"
        case 0x70: "memory error (fatal)"
        case 0x71: "memory rewrite count over limit (warning)"
        case 0xA1: "illegal number of services"
        case 0xA2: "illegal command packet (number of blocks)"
        case 0xA3: "illegal block list (service order)"
        case 0xA4: "illegal service type"
        case 0xA5: "access not allowed"
        case 0xA6: "illegal service code list"
        case 0xA7: "illegal block list (access mode)"
        case 0xA8: "illegal block number (out of range)"
        case 0xA9: "data write failure"
        case 0xAA: "key change failure"
        case 0xAB: "illegal package parity or MAC"
        case 0xAC: "illegal parameter"
        case 0xAD: "service exists already"
        case 0xAE: "illegal system code"
        case 0xAF: "too many simultaneous cyclic writes"
        case 0xC0: "illegal package identifier"
        case 0xC1: "illegal parameter (package)"
        case 0xC2: "command disabled"
        case 0xC3: "illegal node property"
        default: "unknown status \(hexByte(sf2))"
        }
    }

    /// Access refused because the service needs a key (0xA5 or 0xA6 depending on the IC).
    public var meansKeyRequired: Bool { !isSuccess && (sf2 == 0xA5 || sf2 == 0xA6) }
    /// Too many blocks for this card in one command.
    public var meansTooManyBlocks: Bool { !isSuccess && sf2 == 0xA2 }

    public var description: String {
        "SF1=\(hexByte(sf1)) SF2=\(hexByte(sf2)) (\(name)\(isSuccess ? "" : ", " + location))"
    }
}
