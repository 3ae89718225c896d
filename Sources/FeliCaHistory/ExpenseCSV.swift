/// CSV of kept records for a spreadsheet or an expense claim (RFC 4180): a header row,
/// fields quoted when they hold a comma, a quote or a line break.
///
/// Columns: date, time, type, from, to, amount, balance, sequence, card, purse, detail.
/// With ``summary``, each month's rows are followed by a `month total` row and three more
/// columns, `fares`, `charges`, `purchases`: yen spent on rides, yen charged, yen spent in
/// shops that month (positive numbers). ``excel`` starts with a UTF-8 byte-order mark
/// and ends lines with CRLF, which Excel on Windows needs to read Japanese names; plain
/// output ends lines with LF.
public struct ExpenseCSV {
    /// Byte-order mark and CRLF line endings.
    public var excel: Bool
    /// A `month total` row after each month, with the three summary columns.
    public var summary: Bool
    private let write: (String) throws -> Void
    private var month: String?
    private var totals = (fares: 0, charges: 0, purchases: 0)

    /// The header of every export.
    public static let columns = ["date", "time", "type", "from", "to", "amount", "balance", "sequence", "card", "purse", "detail"]
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
        let recordMonth = String(r.date.prefix(7))
        if summary, let month, month != recordMonth { try flushMonth() }
        month = recordMonth
        if let amount = r.amount {
            switch r.type {
            case "transit": totals.fares -= amount
            case "charge": totals.charges += amount
            case "purchase": totals.purchases -= amount
            default: break
            }
        }
        var fields = [r.date, r.time ?? "", r.type, r.from ?? "", r.to ?? "", r.amount.map(String.init) ?? "", String(r.balance),
                      r.sequence.map(String.init) ?? "", r.card, r.purse, r.detail]
        if summary { fields += ["", "", ""] }
        try write(line(fields))
    }

    /// Ends the output (the last month's total, with ``summary``).
    public mutating func finish() throws {
        if summary, month != nil { try flushMonth() }
    }

    private mutating func flushMonth() throws {
        var fields = Array(repeating: "", count: Self.columns.count)
        fields[0] = month ?? ""
        fields[2] = "month total"
        try write(line(fields + [String(totals.fares), String(totals.charges), String(totals.purchases)]))
        totals = (0, 0, 0)
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
