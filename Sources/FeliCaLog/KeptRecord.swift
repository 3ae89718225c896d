import FeliCa
import FeliCaCards

/// One transaction as the history database keeps it: flat text and numbers, the names of
/// its stations resolved when it was saved.
public struct KeptRecord: Hashable, Sendable {
    /// The card's IDm, 16 lower-case hex digits.
    public var card: String
    /// The purse: `transit-ic`, `edy`, `nanaco`, `waon`.
    public var purse: String
    /// The card's sequence number for the record; nil when the purse numbers none.
    public var sequence: Int?
    /// `YYYY-MM-DD`, Japan time.
    public var date: String
    /// `HH:MM` (or `HH:MM:SS` where the card keeps seconds); nil when the card keeps no time.
    public var time: String?
    /// `transit`, `purchase`, `charge`, `refund`, `transfer`, `points`, `other`.
    public var type: String
    /// What happened, in words: console and process for transit, the type name otherwise.
    public var detail: String
    /// Where a ride began, or where a machine stood (station name, else its code); a bus
    /// record's operator and stop.
    public var from: String?
    /// Where a ride ended.
    public var to: String?
    /// Signed change of the balance in yen; nil when unknown.
    public var amount: Int?
    /// Balance after the transaction.
    public var balance: Int

    /// A record from its fields.
    public init(card: String, purse: String, sequence: Int?, date: String, time: String?, type: String, detail: String,
                from: String?, to: String?, amount: Int?, balance: Int) {
        self.card = card; self.purse = purse; self.sequence = sequence; self.date = date; self.time = time
        self.type = type; self.detail = detail; self.from = from; self.to = to; self.amount = amount; self.balance = balance
    }

    /// The record of a decoded transaction; `numbered` false for a purse whose sequence
    /// numbers say nothing (see ``Reading``).
    public init(_ t: Transaction, card: IDm, purse: PurseProfile, numbered: Bool = true) {
        let time = t.date.timeOfDay(upTo: purse.recordTime)
        var from: String? = nil, to: String? = nil
        if let stop = t.transit?.busStop {
            from = "bus " + stop
        } else {
            from = t.transit?.entry?.description
            to = t.transit?.exit?.description
        }
        self.init(card: card.hex, purse: purse.rawValue, sequence: numbered ? t.sequence : nil,
                  date: t.date.isoDate, time: time, type: t.kind.rawValue, detail: t.summary,
                  from: from, to: to, amount: t.amount, balance: t.balance)
    }

    /// What identifies the record's content: two records with the same key must agree on
    /// it, or the second is a conflict. The amount is left out (the oldest record of a
    /// reading has none, a later reading may know it).
    var fingerprint: String {
        [date, time ?? "", type, detail, from ?? "", to ?? "", String(balance)].joined(separator: "|")
    }
}
