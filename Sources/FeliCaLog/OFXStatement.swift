import FeliCaCards

/// Kept records as an OFX bank statement (OFX 1.0.2, UTF-8), for accounting and expense apps
/// that import bank statements: one statement per card and purse (the card's IDm is the
/// account, the purse names the bank), one transaction per record, in the purse's currency.
///
/// Each transaction's `FITID` is made of the card, the purse and the record's sequence
/// number (or, for a purse that numbers none, its date, time and balance), so the same
/// record exported twice has the same id and an importer skips it the second time.
///
/// What the statement lacks is said: a gap, a record that did not decode, an unreadable
/// purse and a record whose amount is not known (a transaction needs an amount, so it is
/// left out) are each an XML comment in the statement they belong to and an entry of
/// ``incomplete``, for the exit status and stderr — the rules of ``ExpenseCSV``. The one
/// record whose amount is never known, a purse's oldest record (nothing older was read),
/// opens the statement instead: the transactions start after it.
public struct OFXStatement {
    /// Everything missing from the output, in words: empty when the statement is complete.
    public private(set) var incomplete: [String] = []
    /// When the statement was made, UTC: `20261203121500`.
    public let generatedAt: String
    private var accounts: [Account] = []

    private struct Account {
        var card: String
        var purse: String
        var records: [KeptRecord] = []
        var notes: [String] = []
        var fitids: Set<String> = []
    }

    /// A statement made at `generatedAt` (UTC, `YYYYMMDDHHMMSS`).
    public init(generatedAt: String) {
        self.generatedAt = generatedAt
    }

    /// One record; records come oldest first.
    public mutating func add(_ r: KeptRecord) {
        let i = account(r.card.hex, r.purse.rawValue)
        let record = "the record of \(r.dayText)\(r.sequence.map { " (sequence \($0))" } ?? "")"
        if r.amount == nil && accounts[i].records.isEmpty {
            // The oldest record kept: its balance opens the statement.
            accounts[i].notes.append("\(record) opens the statement: its amount is not known (no older record was read), its balance \(r.balance) is where the statement starts")
        } else if r.amount == nil {
            let note = "\(record) has no known amount: left out"
            accounts[i].notes.append(note)
            incomplete.append("card \(r.card.hex) \(r.purse.rawValue): \(note)")
        }
        accounts[i].records.append(r)
    }

    /// Records of the purse that rolled off the card before it was read (`date`, where they
    /// sit among the records, does not matter to a statement).
    public mutating func addGap(_ gap: HistoryStore.Gap, date: String) {
        let what = gap.missing == 1 ? "1 record" : "\(gap.missing) records"
        let span = [gap.afterDate, gap.beforeDate].compactMap { $0 }
        let note = "\(what) missing between sequence \(gap.afterSequence) and \(gap.beforeSequence)"
            + (span.count == 2 ? " (\(span[0]) to \(span[1]))" : "") + ": they rolled off the card before it was read"
        accounts[account(gap.card, gap.purse)].notes.append(note)
        incomplete.append("card \(gap.card) \(gap.purse): \(note)")
    }

    /// What could not be had at all: `type` is `not decoded` or `unreadable`.
    public mutating func addMissing(type: String, card: String, purse: String, detail: String) {
        accounts[account(card, purse)].notes.append("\(type): \(detail)")
        incomplete.append("card \(card) \(purse): \(type): \(detail)")
    }

    private mutating func account(_ card: String, _ purse: String) -> Int {
        if let i = accounts.firstIndex(where: { $0.card == card && $0.purse == purse }) { return i }
        accounts.append(Account(card: card, purse: purse))
        return accounts.count - 1
    }

    /// The whole document.
    public func render() -> String {
        // OFX 1.0.2's header, as Japanese banks' statements have it (the form the importing
        // apps know best), in UTF-8; every element is closed, so the body reads as XML too.
        var out = """
            OFXHEADER:100
            DATA:OFXSGML
            VERSION:102
            SECURITY:NONE
            ENCODING:UTF-8
            CHARSET:CSUNICODE
            COMPRESSION:NONE
            OLDFILEUID:NONE
            NEWFILEUID:NONE

            <OFX>
            <SIGNONMSGSRSV1><SONRS><STATUS><CODE>0</CODE><SEVERITY>INFO</SEVERITY></STATUS>\
            <DTSERVER>\(generatedAt)</DTSERVER><LANGUAGE>JPN</LANGUAGE></SONRS></SIGNONMSGSRSV1>
            <BANKMSGSRSV1>

            """
        for (n, account) in accounts.enumerated() {
            out += statement(account, number: n + 1)
        }
        out += "</BANKMSGSRSV1>\n</OFX>\n"
        return out
    }

    private func statement(_ a: Account, number: Int) -> String {
        let profile = PurseProfile(rawValue: a.purse)
        let currency = profile?.currency ?? .jpy
        let zone = currency == .jpy ? "[+9:JST]" : "[+8]"
        let dated = a.records.filter { $0.amount != nil }
        var out = "<STMTTRNRS><TRNUID>\(number)</TRNUID><STATUS><CODE>0</CODE><SEVERITY>INFO</SEVERITY></STATUS>\n"
        out += "<STMTRS><CURDEF>\(currency.code)</CURDEF>\n"
        out += "<BANKACCTFROM><BANKID>\(Self.bankID(a.purse))</BANKID><ACCTID>\(Self.escaped(a.card))</ACCTID><ACCTTYPE>CHECKING</ACCTTYPE></BANKACCTFROM>\n"
        for note in a.notes { out += "<!-- incomplete: \(Self.comment(note)) -->\n" }
        let first = (dated.first ?? a.records.first).map { Self.day($0.dayText) } ?? String(generatedAt.prefix(8))
        let last = a.records.last.map { Self.day($0.dayText) } ?? String(generatedAt.prefix(8))
        out += "<BANKTRANLIST><DTSTART>\(first)</DTSTART><DTEND>\(last)</DTEND>\n"
        var seen: [String: Int] = [:]
        for r in dated {
            let amount = r.amount!
            var fitid = Self.fitid(r)
            seen[fitid, default: 0] += 1
            if seen[fitid]! > 1 { fitid += "-\(seen[fitid]!)" }
            let name = Self.name(r)
            out += "<STMTTRN><TRNTYPE>\(amount < 0 ? "DEBIT" : "CREDIT")</TRNTYPE>"
            out += "<DTPOSTED>\(Self.day(r.dayText))\(Self.clock(r.timeText))\(zone)</DTPOSTED>"
            out += "<TRNAMT>\(Self.amount(amount, currency))</TRNAMT><FITID>\(Self.escaped(fitid))</FITID>"
            out += "<NAME>\(Self.escaped(String(name.prefix(32))))</NAME><MEMO>\(Self.escaped(String(Self.memo(r).prefix(255))))</MEMO></STMTTRN>\n"
        }
        out += "</BANKTRANLIST>\n"
        if let newest = a.records.last {
            out += "<LEDGERBAL><BALAMT>\(Self.amount(newest.balance, currency))</BALAMT><DTASOF>\(Self.day(newest.dayText))\(Self.clock(newest.timeText))\(zone)</DTASOF></LEDGERBAL>\n"
        }
        out += "</STMTRS></STMTTRNRS>\n"
        return out
    }

    /// `0101120312345678-transit-ic-42-20261130`, or with the date, time and balance for a purse
    /// that numbers no records.
    static func fitid(_ r: KeptRecord) -> String {
        // The day too: a 16-bit sequence number comes round again after years of use.
        let card = r.card.hex, purse = r.purse.rawValue
        if let s = r.sequence { return "\(card)-\(purse)-\(s)-\(day(r.dayText))" }
        return "\(card)-\(purse)-\(day(r.dayText))\(clock(r.timeText))-\(r.balance)"
    }

    /// The purse as a bank id (at most 9 characters).
    static func bankID(_ purse: String) -> String {
        switch purse {
        case "transit-ic": "TRANSITIC"
        case "shenzhen-tong": "SZTONG"
        case "univ-coop": "UNIVCOOP"
        default: String(purse.uppercased().filter { $0.isLetter || $0.isNumber }.prefix(9))
        }
    }

    /// Who was paid or paid in: the ride's stations, else what happened.
    static func name(_ r: KeptRecord) -> String {
        if let from = r.from, let to = r.to { return "\(from) - \(to)" }
        return r.from ?? r.detail
    }

    static func memo(_ r: KeptRecord) -> String {
        [r.kind.rawValue, r.detail, r.from, r.to].compactMap { $0 }.filter { !$0.isEmpty }.joined(separator: "; ")
    }

    /// `2026-11-30` → `20261130`.
    static func day(_ date: String) -> String { date.filter { $0 != "-" } }

    /// `08:30` → `083000`; no time → `120000` (noon: the day stays the day in every zone).
    static func clock(_ time: String?) -> String {
        guard let time else { return "120000" }
        let digits = time.filter { $0 != ":" }
        return digits.count == 4 ? digits + "00" : digits
    }

    /// `-210` yen, `-14.40` Hong Kong dollars.
    static func amount(_ minor: Int, _ currency: Currency) -> String {
        guard currency.minorDigits > 0 else { return String(minor) }
        var scale = 1
        for _ in 0..<currency.minorDigits { scale *= 10 }
        let fraction = String(abs(minor) % scale)
        return (minor < 0 ? "-" : "") + String(abs(minor) / scale) + "."
            + String(repeating: "0", count: currency.minorDigits - fraction.count) + fraction
    }

    static func escaped(_ text: String) -> String {
        var out = ""
        for c in text {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            default: out.append(c)
            }
        }
        return out
    }

    /// Text for an XML comment, which may not hold `--`.
    static func comment(_ text: String) -> String {
        var out = escaped(text)
        while out.contains("--") { out = out.replacing("--", with: "- -") }
        return out
    }
}
