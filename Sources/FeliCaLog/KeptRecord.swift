import FeliCa
import FeliCaCards

/// One transaction as the history database keeps it, typed: the card, the purse, the day
/// and time as the purse keeps them, what kind of transaction, the names of its stations
/// resolved when it was saved. Text only where the database, CSV and OFX are written
/// (``dayText``, ``timeText``, `TransactionKind.rawValue`).
public struct KeptRecord: Hashable, Sendable {
    /// The card.
    public var card: IDm
    /// The purse.
    public var purse: PurseProfile
    /// The card's sequence number for the record; nil when the purse numbers none.
    public var sequence: Int?
    /// The day, in the card's own time zone, and the time of day to the precision the purse
    /// keeps (`PurseProfile.recordTime`): none for a transit record, seconds for Edy.
    public var date: CardDate
    /// What kind of transaction.
    public var kind: TransactionKind
    /// What happened, in words: console and process for transit, the type name otherwise.
    public var detail: String
    /// Where a ride began, or where a machine stood (station name, else its code); a bus
    /// record's operator and stop.
    public var from: String?
    /// Where a ride ended.
    public var to: String?
    /// Signed change of the balance in the purse's minor units; nil when unknown.
    public var amount: Int?
    /// Balance after the transaction.
    public var balance: Int

    /// A record from its fields.
    public init(card: IDm, purse: PurseProfile, sequence: Int?, date: CardDate, kind: TransactionKind, detail: String,
                from: String?, to: String?, amount: Int?, balance: Int) {
        self.card = card; self.purse = purse; self.sequence = sequence; self.date = date
        self.kind = kind; self.detail = detail; self.from = from; self.to = to; self.amount = amount; self.balance = balance
    }

    /// The record of a decoded transaction; `numbered` false for a purse whose sequence
    /// numbers say nothing (see ``Reading``).
    public init(_ t: Transaction, card: IDm, purse: PurseProfile, numbered: Bool = true) {
        var from: String? = nil, to: String? = nil
        if let stop = t.transit?.busStop {
            from = "bus " + stop
        } else {
            from = t.transit?.entry?.description
            to = t.transit?.exit?.description
        }
        self.init(card: card, purse: purse, sequence: numbered ? t.sequence : nil,
                  date: t.date.kept(upTo: purse.recordTime), kind: t.kind, detail: t.summary,
                  from: from, to: to, amount: t.amount, balance: t.balance)
    }

    /// `YYYY-MM-DD`: the day as the database, CSV and OFX write it.
    public var dayText: String { date.isoDate }
    /// `HH:MM` or `HH:MM:SS`; nil when the purse keeps no time.
    public var timeText: String? { date.timeOfDay() }

    /// What identifies the record's content: two records with the same key must agree on
    /// it, or the second is a conflict. The amount is left out (the oldest record of a
    /// reading has none, a later reading may know it).
    var fingerprint: String {
        [dayText, timeText ?? "", kind.rawValue, detail, from ?? "", to ?? "", String(balance)].joined(separator: "|")
    }
}

extension CardDate {
    /// The same moment with the time cut to `finest` (the day only for `.day`).
    func kept(upTo finest: Precision) -> CardDate {
        guard let t = time, finest < precision else { return self }
        let kept: CardDate?
        switch finest {
        case .day: kept = try? CardDate(year: year, month: month, day: day, utcOffsetMinutes: utcOffsetMinutes)
        case .minute: kept = try? CardDate(year: year, month: month, day: day, hour: t.hour, minute: t.minute, utcOffsetMinutes: utcOffsetMinutes)
        case .second: kept = self
        }
        return kept ?? self
    }

    /// A day and time as the database keeps them (`YYYY-MM-DD`, `HH:MM` or `HH:MM:SS`);
    /// nil for text no record was written with.
    init?(keptDay day: String, time: String?, utcOffsetMinutes: Int) {
        let d = day.split(separator: "-", omittingEmptySubsequences: false)
        guard d.count == 3, d[0].count == 4, d[1].count == 2, d[2].count == 2,
              let y = Int(d[0]), let m = Int(d[1]), let dd = Int(d[2]) else { return nil }
        guard let time else {
            guard let date = try? CardDate(year: y, month: m, day: dd, utcOffsetMinutes: utcOffsetMinutes) else { return nil }
            self = date
            return
        }
        let t = time.split(separator: ":", omittingEmptySubsequences: false)
        guard (2...3).contains(t.count), t.allSatisfy({ $0.count == 2 }), let h = Int(t[0]), let mi = Int(t[1]) else { return nil }
        let s = t.count == 3 ? Int(t[2]) : nil
        if t.count == 3 && s == nil { return nil }
        guard let date = try? CardDate(year: y, month: m, day: dd, hour: h, minute: mi, second: s, utcOffsetMinutes: utcOffsetMinutes) else { return nil }
        self = date
    }
}
