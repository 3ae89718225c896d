import FeliCaCards
/// CSV of kept records for a spreadsheet or an expense claim (RFC 4180): a header row,
/// fields quoted when they hold a comma, a quote or a line break.
///
/// Columns: date, time, type, from, to, amount, balance, sequence, card, purse, detail.
/// With ``summary``, each month's rows are followed by a `month total` row per card and
/// purse, and three more columns, `fares`, `charges`, `purchases`: yen spent on rides, yen
/// charged, yen spent in shops that month (positive numbers). ``excel`` starts with a UTF-8
/// byte-order mark and ends lines with CRLF, which Excel on Windows needs to read Japanese
/// names; plain output ends lines with LF.
///
/// What the file lacks is in the file: records that rolled off the card before it was read
/// are a `gap` row where they were, a record that did not decode a `not decoded` row, a
/// purse that could not be read an `unreadable` row, each with the card and purse; the month
/// totals they touch say `incomplete: ...` in their detail, as does a total that leaves out
/// a fare, charge or purchase whose amount is unknown (the oldest record on a card). ``incomplete`` lists the same for
/// the exit status and stderr.
public struct ExpenseCSV {
    /// Byte-order mark and CRLF line endings.
    public var excel: Bool
    /// A `month total` row per card and purse after each month, with the three summary columns.
    public var summary: Bool
    private let write: (String) throws -> Void
    private var month: String?
    /// The month's totals per card and purse, in the order they first appear.
    private var totals: [PurseKey: Totals] = [:]
    private var order: [PurseKey] = []
    /// What is missing from every month of a purse (a record with no date that did not decode).
    private var missingEverywhere: [PurseKey: [String]] = [:]
    /// Everything missing from the output, in words: empty when the export is complete.
    public private(set) var incomplete: [String] = []

    private struct PurseKey: Hashable {
        var card: String
        var purse: String
    }

    private struct Totals {
        var fares = 0, charges = 0, purchases = 0
        var missing: [String] = []
    }

    /// The header of every export.
    public static let columns = ["date", "time", "type", "from", "to", "amount", "balance", "sequence", "card", "purse", "detail"]
    /// The record types the month totals add up.
    static let summed: Set<TransactionKind> = [.transit, .charge, .purchase]
    /// The columns ``summary`` adds.
    public static let summaryColumns = ["fares", "charges", "purchases"]

    /// Starts the output: the byte-order mark (`excel`) and the header row go to `write`.
    public init(excel: Bool, summary: Bool, write: @escaping (String) throws -> Void) throws {
        self.excel = excel
        self.summary = summary
        self.write = write
        try write((excel ? "\u{FEFF}" : "") + line(Self.columns + (summary ? Self.summaryColumns : [])))
    }

    /// One record; records come oldest first for the month totals to be right.
    public mutating func add(_ r: KeptRecord) throws {
        let day = r.dayText, card = r.card.hex, purse = r.purse.rawValue
        let key = try enter(month: String(day.prefix(7)), card: card, purse: purse)
        if let amount = r.amount {
            switch r.kind {
            case .transit: totals[key]!.fares -= amount
            case .charge: totals[key]!.charges += amount
            case .purchase: totals[key]!.purchases -= amount
            default: break
            }
        } else if summary, Self.summed.contains(r.kind) {
            // Left out of the month's total, which must say so: the oldest record on a card,
            // or one whose previous balance is not on the card, has no known amount.
            let note = "the amount of the \(r.kind.rawValue) on \(day)" + (r.sequence.map { " (sequence \($0))" } ?? "") + " is unknown"
            totals[key]!.missing.append(note)
            incomplete.append("card \(card) \(purse): \(note), so the \(String(day.prefix(7))) total leaves it out")
        }
        try row([day, r.timeText ?? "", r.kind.rawValue, r.from ?? "", r.to ?? "", r.amount.map(String.init) ?? "", String(r.balance),
                 r.sequence.map(String.init) ?? "", card, purse, r.detail])
    }

    /// A `gap` row dated `date` (in order among the records): records of the gap's purse that
    /// rolled off the card before it was read, between `afterDate` and `beforeDate`.
    public mutating func addGap(_ gap: HistoryStore.Gap, date: String) throws {
        let key = try enter(month: String(date.prefix(7)), card: gap.card, purse: gap.purse)
        let what = gap.missing == 1 ? "1 record" : "\(gap.missing) records"
        let span = [gap.afterDate, gap.beforeDate].compactMap { $0 }
        let note = "\(what) missing between sequence \(gap.afterSequence) and \(gap.beforeSequence)"
            + (span.count == 2 ? " (\(span[0]) to \(span[1]))" : "")
        totals[key]!.missing.append(note)
        incomplete.append("card \(gap.card) \(gap.purse): \(note)")
        try row([date, "", "gap", "", "", "", "", "", gap.card, gap.purse, "incomplete: \(note): they rolled off the card before it was read"])
    }

    /// A row for what could not be had at all, before any record: `type` is `not decoded`
    /// (a record the card returned that did not decode) or `unreadable` (a purse whose
    /// history could not be read); every month total of the purse says so.
    public mutating func addMissing(type: String, card: String, purse: String, detail: String) throws {
        let key = PurseKey(card: card, purse: purse)
        missingEverywhere[key, default: []].append("\(type): \(detail)")
        incomplete.append("card \(card) \(purse): \(type): \(detail)")
        try row(["", "", type, "", "", "", "", "", card, purse, "incomplete: \(detail)"])
    }

    /// Ends the output (the last month's totals, with ``summary``).
    public mutating func finish() throws {
        if summary, month != nil { try flushMonth() }
    }

    /// Starts `month` (writing the totals of the one before) and the purse's totals in it.
    private mutating func enter(month recordMonth: String, card: String, purse: String) throws -> PurseKey {
        if summary, let month, month != recordMonth { try flushMonth() }
        month = recordMonth
        let key = PurseKey(card: card, purse: purse)
        if totals[key] == nil {
            totals[key] = Totals()
            order.append(key)
        }
        return key
    }

    private func row(_ fields: [String]) throws {
        try write(line(fields + (summary ? ["", "", ""] : [])))
    }

    private mutating func flushMonth() throws {
        // Card by card, each card's purses by name: the same order in every month.
        for key in order.sorted(by: { ($0.card, $0.purse) < ($1.card, $1.purse) }) {
            let t = totals[key]!
            let missing = (missingEverywhere[key] ?? []) + t.missing
            var fields = Array(repeating: "", count: Self.columns.count)
            fields[0] = month ?? ""
            fields[2] = "month total"
            fields[8] = key.card
            fields[9] = key.purse
            if !missing.isEmpty { fields[10] = "incomplete: " + missing.joined(separator: "; ") }
            try write(line(fields + [String(t.fares), String(t.charges), String(t.purchases)]))
        }
        totals = [:]
        order = []
    }

    private func line(_ fields: [String]) -> String {
        fields.map(Self.quoted).joined(separator: ",") + (excel ? "\r\n" : "\n")
    }

    /// The field as RFC 4180 wants it: quoted, with quotes doubled, when it holds a comma,
    /// a quote, a line break or leading/trailing space.
    static func quoted(_ field: String) -> String {
        let special = field.unicodeScalars.contains { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }
            || field.first == " " || field.last == " "
        guard special else { return field }
        return "\"" + field.replacingQuotes() + "\""
    }
}

extension String {
    fileprivate func replacingQuotes() -> String {
        var out = ""
        out.reserveCapacity(count + 2)
        for c in unicodeScalars {
            if c == "\"" { out.unicodeScalars.append("\"") }
            out.unicodeScalars.append(c)
        }
        return out
    }
}
