import FeliCa
import FeliCaJSON

/// A whole card as data: the `felica-card/1` format that `felica dump --json` writes and
/// `virtual:<path>` serves. Unknown keys are kept, so a load and save gives the file back.
public struct CardImage: Hashable, Sendable {
    public static let formatName = "felica-card/1"
    /// PMm used when neither the image nor the system gives one (a transit-card IC).
    public static let defaultPMm = PMm(rawValue: 0x100b_4b42_8485_d0ff)

    /// Card-wide PMm.
    public var pmm: PMm?
    /// Blocks the card accepts in one read; nil = the IC's known limit, else 15.
    public var maxBlocksPerRead: Int?
    /// Nodes the card takes in one Request Service (`"maxNodesPerRequest": 8`); nil = the
    /// command's limit, 32. Asked for more, the virtual card stays silent, as cards with a
    /// lower limit do.
    public var maxNodesPerRequest: Int?
    public var systems: [System]
    /// Commands the card never answers (`"ignores": ["request-block-information"]`), as
    /// cards lacking an optional command behave: the virtual card stays silent to them.
    public var ignores: Set<CommandCode> = []
    /// Bit rates the card answers at (`"bitRates": [212]`); nil = 212 and 424 kbps, as
    /// cards made this century do. Polling with request code 2 reports them.
    public var bitRates: [AirTiming.BitRate]?
    /// The card key of a FeliCa Lite-S (`"cardKey"`, 32 hex digits): 16 bytes in the order a
    /// host hands them to the cipher (nfcpy's `FelicaLiteS.authenticate`); the tag's CK block
    /// 0x87 holds each 8-byte half reversed. Nil: the tag computes its MACs under 16 zero bytes.
    public var cardKey: [UInt8]?
    /// Members this version does not interpret, kept for the round trip.
    public var extra: JSONObject

    public init(pmm: PMm? = nil, maxBlocksPerRead: Int? = nil, maxNodesPerRequest: Int? = nil, systems: [System], ignores: Set<CommandCode> = [],
                bitRates: [AirTiming.BitRate]? = nil, cardKey: [UInt8]? = nil, extra: JSONObject = [:]) {
        self.cardKey = cardKey
        self.pmm = pmm
        self.maxBlocksPerRead = maxBlocksPerRead
        self.maxNodesPerRequest = maxNodesPerRequest
        self.systems = systems
        self.ignores = ignores
        self.bitRates = bitRates
        self.extra = extra
    }

    /// The rates the card answers at: ``bitRates``, or both.
    public var answeredBitRates: [AirTiming.BitRate] { bitRates ?? AirTiming.BitRate.allCases }

    /// One system of the card.
    public struct System: Hashable, Sendable {
        public var code: SystemCode
        public var idm: IDm?
        public var pmm: PMm?
        public var areas: [Area]
        public var services: [Service]
        public var extra: JSONObject

        public init(code: SystemCode, idm: IDm? = nil, pmm: PMm? = nil, areas: [Area] = [], services: [Service], extra: JSONObject = [:]) {
            self.code = code
            self.idm = idm
            self.pmm = pmm
            self.areas = areas
            self.services = services
            self.extra = extra
        }
    }

    /// An area and the last node code it spans.
    public struct Area: Hashable, Sendable {
        public var code: AreaCode
        public var end: AreaCode
        public var extra: JSONObject
        public init(code: AreaCode, end: AreaCode, extra: JSONObject = [:]) {
            self.code = code; self.end = end; self.extra = extra
        }
    }

    /// A service: its blocks when readable without a key, else key version and size.
    public struct Service: Hashable, Sendable {
        public var code: ServiceCode
        /// 16-byte blocks (block 0 first; for cyclic services the newest record).
        public var blocks: [[UInt8]]?
        /// Blocks numbered past the end of ``blocks``, by block number (`"blocksAt"`): the
        /// FeliCa Lite's system blocks 0x80-0xA0 sit far above its 15 user blocks.
        public var blocksAt: [Int: [UInt8]] = [:]
        public var keyVersion: UInt16?
        /// Size of a key-protected service, whose data is never readable.
        public var blockCount: Int?
        /// The card answers reads of this service without a key although its attribute asks
        /// for one (`"answersWithoutKey": true`), as Shenzhen Tong's balance 0118 does.
        public var answersWithoutKey = false
        public var extra: JSONObject

        public init(code: ServiceCode, blocks: [[UInt8]]? = nil, keyVersion: UInt16? = nil, blockCount: Int? = nil, answersWithoutKey: Bool = false, extra: JSONObject = [:]) {
            self.code = code
            self.answersWithoutKey = answersWithoutKey
            self.blocks = blocks
            self.keyVersion = keyVersion
            self.blockCount = blockCount
            self.extra = extra
        }

        /// Whether its blocks can be read without a key.
        public var isReadable: Bool { code.isReadableWithoutKey || answersWithoutKey }

        /// Blocks the service holds, readable or not (numbered blocks past the list count as
        /// reaching their number).
        public var size: Int { max(blocks?.count ?? blockCount ?? 0, (blocksAt.keys.max() ?? -1) + 1) }

        /// Block `number`'s data, nil when the service does not hold it readably.
        public func block(_ number: Int) -> [UInt8]? {
            if let blocks, number < blocks.count { return blocks[number] }
            return blocksAt[number]
        }
    }

    /// Services whose attribute asks for a key but which cards answer without one: a dump
    /// tries to read them, and keeps them as keyed when the card refuses.
    public static let readDespiteAttribute: Set<ServiceCode> = [0x0118]

    /// The IDm of system `index`: as given, else derived from system 0's IDm with the
    /// system number in the high nibble of byte 0 (as real multi-system cards do), else
    /// from a fixed base.
    public func idm(ofSystem index: Int) -> IDm {
        if let given = systems[index].idm { return given }
        let base = systems.first?.idm?.rawValue ?? 0x0114_2E00_1234_5678
        let nibble = UInt64(index & 0xF) << 60
        return IDm(rawValue: base & 0x0FFF_FFFF_FFFF_FFFF | nibble)
    }

    /// When the card was read, as `YYYY-MM-DDTHH:MM:SSZ` (member `scannedAt`): kept from an
    /// imported dump that says (Metrodroid's scan time), nil for our own dumps.
    public var scannedAt: String? {
        get { extra["scannedAt"]?.stringValue }
        set { extra["scannedAt"] = newValue.map { .string($0) } }
    }

    /// The areas and services each system lists, by system code: what Request Service
    /// would find on the card, known without asking it.
    public var nodesBySystem: [SystemCode: [NodeCode]] {
        var out: [SystemCode: [NodeCode]] = [:]
        for s in systems { out[s.code, default: []] += s.areas.map(\.code) + s.services.map(\.code) }
        return out
    }

    /// The PMm of system `index`.
    public func pmm(ofSystem index: Int) -> PMm {
        systems[index].pmm ?? pmm ?? Self.defaultPMm
    }
}
