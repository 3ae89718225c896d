import FeliCa
import FeliCaCards

/// One reading of a card, ready to merge into the history database: every purse's
/// records, newest first, as the card returned them.
public struct Reading: Sendable {
    /// One purse of the reading.
    public struct PurseRecords: Sendable {
        /// Which purse.
        public var profile: PurseProfile
        /// Newest first.
        public var records: [KeptRecord]
        /// Records that did not decode (kept out of the database; the save reports them).
        public var malformed: Int
        /// Whether the purse's sequence numbers identify its records (see ``init(report:device:readAt:)``).
        public var numbered: Bool

        /// A purse's records, newest first.
        public init(profile: PurseProfile, records: [KeptRecord], malformed: Int, numbered: Bool) {
            self.profile = profile; self.records = records; self.malformed = malformed; self.numbered = numbered
        }
    }

    /// The card's IDm, hex.
    public var card: String
    /// The device string the reading came from.
    public var device: String?
    /// When, as `YYYY-MM-DDTHH:MM:SSZ` (UTC).
    public var readAt: String
    /// Every purse whose history was read.
    public var purses: [PurseRecords]

    /// A reading from its parts.
    public init(card: String, device: String?, readAt: String, purses: [PurseRecords]) {
        self.card = card; self.device = device; self.readAt = readAt; self.purses = purses
    }

    /// The reading of a card report read at history depth.
    ///
    /// A purse whose history was not read, or could not be read (a refused read, a card
    /// that answered part of it), makes the whole reading incomplete: it throws, and
    /// nothing is saved rather than half. A purse whose history needs a key carries no
    /// history at all and is left out.
    ///
    /// Sequence numbers identify records when they differ from each other; a purse whose
    /// records repeat a number (all zero, say) is keyed by content instead.
    public init(report: CardReport, device: String?, readAt: String) throws(HistoryError) {
        var purses: [PurseRecords] = []
        for p in report.purses where p.profile.hasHistory {
            let unreadable = p.historyIssues.filter {
                if case .unreadable = $0.problem { return true }
                return false
            }
            if let issue = unreadable.first {
                throw HistoryError(.incompleteReading, "the \(p.profile.displayName) history could not be read (\(issue)); nothing was saved")
            }
            guard let history = p.history else {
                // Needs a key, or absent: there is no history to keep.
                if !p.historyIssues.isEmpty { continue }
                throw HistoryError(.incompleteReading, "the \(p.profile.displayName) history was not read; nothing was saved")
            }
            let transactions = history.compactMap(\.transaction)
            let modulus = p.profile.sequenceModulus
            let numbers = transactions.map { $0.sequence % modulus }
            let numbered = Set(numbers).count == numbers.count
            purses.append(PurseRecords(
                profile: p.profile,
                records: transactions.map { KeptRecord($0, card: report.idm, purse: p.profile, numbered: numbered) },
                malformed: history.count - transactions.count, numbered: numbered))
        }
        self.init(card: report.idm.hex, device: device, readAt: readAt, purses: purses)
    }

    /// True when every record of `older` is in this reading too (same card, purse,
    /// sequence and content): saving this one keeps all that saving `older` would. A
    /// reading waiting to be saved is dropped for a newer one that covers it.
    public func covers(_ older: Reading) -> Bool {
        guard older.card == card else { return false }
        var have: Set<String> = []
        for p in purses { for r in p.records { have.insert(Self.identity(r)) } }
        return older.purses.allSatisfy { $0.records.allSatisfy { have.contains(Self.identity($0)) } }
    }

    private static func identity(_ r: KeptRecord) -> String {
        r.purse.rawValue + "|" + (r.sequence.map(String.init) ?? "-") + "|" + r.fingerprint
    }

    /// Sequence numbers wrap at this value (`PurseProfile.sequenceModulus`).
    public static func sequenceModulus(_ profile: PurseProfile) -> Int { profile.sequenceModulus }
}
