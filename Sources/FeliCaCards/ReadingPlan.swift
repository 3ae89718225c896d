import FeliCa

/// What a service of a purse layout holds: the word issues and the JSON `content` name it by.
public enum ServiceContent: String, Hashable, Sendable, CaseIterable, CustomStringConvertible {
    case balance
    case history
    /// The card number (Edy, nanaco, WAON).
    case number
    /// Loyalty points (nanaco, WAON).
    case points
    /// The University Co-op member number.
    case memberNumber = "member number"
    /// The transit gate log.
    case gateLog = "gate log"
    /// The transit card's pending entry.
    case pendingEntry = "pending entry"
    /// An ID card's number (FCF).
    case idNumber = "ID number"

    /// The word as issues print it (`gate log`).
    public var description: String { rawValue }
}

/// One service a purse layout reads: what it holds, and how many of its blocks are read
/// at each depth.
public struct ServiceRead: Hashable, Sendable {
    /// The service, readable without a key.
    public var service: ServiceCode
    /// What it holds.
    public var content: ServiceContent
    /// Blocks read for `felica balance` (0 = not read at that depth).
    public var balanceBlocks: Int
    /// Blocks read for `felica history`.
    public var historyBlocks: Int
    /// Whether the card may lack the service without that being worth an issue (the
    /// transit gate log and pending entry, which some regional cards do not carry).
    public var optional: Bool

    public init(_ service: ServiceCode, _ content: ServiceContent, balance: Int, history: Int, optional: Bool = false) {
        self.service = service; self.content = content
        self.balanceBlocks = balance; self.historyBlocks = history; self.optional = optional
    }

    /// Blocks read at `depth`.
    public func blocks(at depth: CardReader.Depth) -> Int {
        depth == .balance ? balanceBlocks : historyBlocks
    }
}

/// The blocks read for one purse, by service; a service that was not read (absent, behind
/// a key, not wanted at this depth) has none.
public struct ServiceBlocks: Hashable, Sendable {
    public var blocks: [ServiceCode: [[UInt8]]]

    public init(_ blocks: [ServiceCode: [[UInt8]]] = [:]) { self.blocks = blocks }

    /// Every block read from `service`, nil when it was not read.
    public subscript(service: ServiceCode) -> [[UInt8]]? { blocks[service] }

    /// Block 0 of `service`, nil when it was not read.
    public func first(_ service: ServiceCode) -> [UInt8]? { blocks[service]?.first }
}

/// A purse layout in one place: where it lives, the services it reads at each depth, and
/// how their blocks decode into a ``Purse``. ``CardReader`` reads every layout the same
/// way; each profile declares its own next to its decoder.
public struct PurseLayout: Sendable {
    /// Where a layout lives on a card.
    public enum Placement: Hashable, Sendable {
        /// In a system of its own (the transit layout under 0003 and the regional codes).
        /// Its first read is also its probe.
        case ownSystem([SystemCode])
        /// In the common area 0xFE00, next to other layouts. Request Service on
        /// ``PurseLayout/presence`` tells whether it is there before anything is read.
        case commonArea
    }

    /// What decoding needs besides the blocks.
    public struct DecodeContext: Sendable {
        public var system: SystemCode
        public var depth: CardReader.Depth
        public var stations: StationTable?
        /// The day of the reading (decides Octopus's offset).
        public var readingDate: ReadingDate
    }

    public var profile: PurseProfile
    public var placement: Placement
    /// The service whose presence means the purse is there.
    public var presence: ServiceCode
    /// What is read, in reading order.
    public var services: [ServiceRead]
    /// Turns the blocks read into the purse; bad blocks become the purse's issues.
    public var decode: @Sendable (ServiceBlocks, DecodeContext) -> Purse
    /// Whether a key-protected twin of ``presence`` (same number, attribute asking for a
    /// key) means the purse is there, only locked. True for the purses; false for a layout
    /// whose service number other cards use for their own keyed data (FCF's 1A8B: the
    /// common area of a Suica holds a keyed 1A88), which is named only by the readable
    /// service itself.
    public var keyedTwinMeansPresent: Bool

    public init(profile: PurseProfile, placement: Placement, presence: ServiceCode, services: [ServiceRead],
                keyedTwinMeansPresent: Bool = true,
                decode: @escaping @Sendable (ServiceBlocks, DecodeContext) -> Purse) {
        self.profile = profile; self.placement = placement; self.presence = presence
        self.services = services; self.keyedTwinMeansPresent = keyedTwinMeansPresent; self.decode = decode
    }

    /// The services read at `depth`, with their block counts.
    public func reads(at depth: CardReader.Depth) -> [ServiceRead] {
        services.filter { $0.blocks(at: depth) > 0 }
    }

    /// Every layout the library decodes, in the order a report lists their purses.
    public static let all: [PurseLayout] = [TransitIC.layout, Edy.layout, Nanaco.layout, WAON.layout, UnivCoop.layout, FCF.layout,
                                            Octopus.octopusLayout, Octopus.shenzhenTongLayout,
                                            OKICA.layout, Ryuto.layout, KMT.layout, KMT.mrtjLayout]
}

/// Turns what is known about a card into the fewest exchanges: which systems need listing,
/// which services are read in which command. Facts it uses: the card's first system and
/// PMm IC (from the wildcard Polling), the session's block limit (the IC's, or the one the
/// card taught it by refusing a batch), and services known to be absent or behind a key.
public struct ReadPlanner: Sendable {
    /// How much to read.
    public var depth: CardReader.Depth
    /// Probe the common area of a transit-card IC too.
    public var probeTransitCardCommonArea: Bool

    public init(depth: CardReader.Depth, probeTransitCardCommonArea: Bool = false) {
        self.depth = depth
        self.probeTransitCardCommonArea = probeTransitCardCommonArea
    }

    /// PMm IC codes of the chips made for transit cards.
    public static let transitCardICs: Set<UInt8> = [0x0B, 0x31, 0x36]

    /// Whether the common area is left unprobed: the card's first system is a transit
    /// system and its chip is one of the ICs made for transit cards. Those cards are issued
    /// by transit operators; Edy, nanaco and WAON come on their own cards or on phones
    /// (mobile ICs), so probing would cost two exchanges on every transit card to find
    /// nothing.
    public func skipsCommonArea(of first: Target) -> Bool {
        guard !probeTransitCardCommonArea, let own = first.systemCode, TransitIC.systemCodes.contains(own) else { return false }
        return Self.transitCardICs.contains(first.pmm.icCode)
    }

    /// Whether Request System Code is worth its exchange. On a transit-card IC whose
    /// common area is skipped anyway, the list tells nothing the plan uses: the first
    /// system is the transit one, and nothing else on such a card is read.
    public func needsSystemList(_ first: Target) -> Bool {
        !skipsCommonArea(of: first)
    }

    /// One block to read: which wanted service (index into the caller's list) and which block.
    public struct Element: Hashable, Sendable {
        public var want: Int
        public var service: ServiceCode
        public var block: Int
    }

    /// The blocks of `wants` (service, block count) in reading order.
    public static func elements(_ wants: [(service: ServiceCode, blocks: Int)]) -> [Element] {
        wants.enumerated().flatMap { i, w in (0..<w.blocks).map { Element(want: i, service: w.service, block: $0) } }
    }

    /// How many of `pending`, from the first, go in the next command when the card takes
    /// `limit` blocks per read.
    public static func nextBatch(_ pending: [Element], limit: Int) -> Int {
        ReadWithoutEncryptionCommand.fitting(pending.lazy.map { (service: $0.service, block: $0.block) }, limit: limit)
    }

    /// The commands reading `wants` takes when no batch is refused.
    public static func batches(_ wants: [(service: ServiceCode, blocks: Int)], limit: Int) -> [[Element]] {
        var pending = elements(wants)[...]
        var out: [[Element]] = []
        while !pending.isEmpty {
            let n = nextBatch(Array(pending), limit: limit)
            out.append(Array(pending.prefix(n)))
            pending = pending.dropFirst(n)
        }
        return out
    }
}
