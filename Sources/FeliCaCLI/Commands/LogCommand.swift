import FeliCa
import FeliCaCards
import FeliCaLog
import FeliCaJSON

#if canImport(Glibc)
import Glibc
import FeliCaDiagnosis
#endif

/// `felica log`: history kept across readings in a local database.
struct LogCommand: CLICommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            name: "log",
            abstract: "Keep card history across readings; show or export it.",
            discussion: "A card holds only its last 20 or so records; `felica log add` after each trip (or `felica watch --save`) keeps them all. The database is $XDG_DATA_HOME/felica/history.sqlite3 (else ~/.local/share/felica/history.sqlite3); --db chooses another. See \(PackagedFiles.guide("history.md")).",
            subcommands: [LogAddCommand.self, LogShowCommand.self, LogExportCommand.self])
    }
}

/// Options shared by the history commands, and opening the database.
enum HistoryOptions {
    static let db = Option(OptionSpec(
        "db", value: "file", help: "The history database (default: $XDG_DATA_HOME/felica/history.sqlite3, else ~/.local/share/felica/history.sqlite3).",
        kind: .file))
    static let idm = Option(OptionSpec("idm", value: "idm", help: "Only this card (its IDm, 16 hex digits, as `felica poll` shows it).")) { s throws(UsageError) in
        guard s.count == 16, s.allSatisfy(\.isHexDigit) else {
            throw UsageError("option '--idm': \"\(s)\" is not an IDm (16 hex digits, e.g. 0101120312345678)")
        }
        do throws(FeliCaError) { return try IDm(hex: s) } catch { throw UsageError("option '--idm': " + error.reason) }
    }
    static let purse = Option(OptionSpec(
        "purse", value: "purse", help: "Only this purse: \(PurseProfile.allCases.map(\.rawValue).joined(separator: ", ")) (a phone or a card may carry several).",
        kind: .choice(PurseProfile.allCases.map(\.rawValue)))) { s throws(UsageError) in
        // The parser refuses other names.
        guard let p = PurseProfile(rawValue: s) else { throw UsageError("option '--purse': no purse named '\(s)'") }
        return p
    }
    static let from = Option(OptionSpec("from", value: "date", help: "From this day on (YYYY-MM-DD, or YYYY-MM for the month's first day).")) { s throws(UsageError) in
        try day(s, option: "from", endOfMonth: false)
    }
    static let to = Option(OptionSpec("to", value: "date", help: "Up to this day, inclusive (YYYY-MM-DD, or YYYY-MM for the whole month).")) { s throws(UsageError) in
        try day(s, option: "to", endOfMonth: true)
    }
    static let csv = OptionSpec.flag("csv", help: "Write CSV (RFC 4180): date, time, type, from, to, amount, balance, sequence, card, purse, detail.")
    static let excel = OptionSpec.flag("excel", help: "With --csv: start with a UTF-8 byte-order mark and end lines with CRLF, for Excel on Windows.")
    static let summary = OptionSpec.flag("summary", help: "With --csv: after each month, a 'month total' row per card and purse with fares, charges and purchases.")
    static let ofx = OptionSpec.flag(
        "ofx", help: "Write an OFX bank statement (OFX 1.0.2, UTF-8) for accounting apps: a statement per card and purse, a transaction per record, in the purse's currency.")
    static let allowIncomplete = OptionSpec.flag(
        "allow-incomplete", help: "With --csv or --ofx: exit 0 even when records are missing (the file marks them either way; without this flag the exit status is 1).")

    /// The query of `--idm`, `--purse`, `--from` and `--to`; a period that ends before it
    /// begins can never match and is a usage error.
    static func query(_ args: ParsedArguments, newestFirst: Bool) throws(UsageError) -> HistoryStore.Query {
        let q = HistoryStore.Query(card: try args.value(idm), purse: try args.value(purse), from: try args.value(from),
                                   to: try args.value(to), newestFirst: newestFirst)
        if let f = q.from, let t = q.to, f > t {
            throw UsageError("--from \(f.isoDate) is after --to \(t.isoDate): no day is in that period")
        }
        return q
    }

    /// `YYYY-MM-DD`, or `YYYY-MM` as the month's first or last day.
    static func day(_ s: String, option: String, endOfMonth: Bool) throws(UsageError) -> CardDate {
        let parts = s.split(separator: "-", omittingEmptySubsequences: false)
        let bad = UsageError("option '--\(option)': \"\(s)\" is not a date (YYYY-MM-DD or YYYY-MM)")
        // Digits only: Int() would take "+202" as a year, and the dates compare as text.
        guard (2...3).contains(parts.count), parts[0].count == 4, parts.dropFirst().allSatisfy({ $0.count == 2 }),
              parts.allSatisfy({ $0.allSatisfy { ("0"..."9").contains($0) } }),
              let y = Int(parts[0]), let m = Int(parts[1]) else { throw bad }
        let d = parts.count == 3 ? Int(parts[2]) : (endOfMonth ? CardDate.daysIn(month: m, year: y) : 1)
        guard let d, (1...12).contains(m), let date = try? CardDate(year: y, month: m, day: d) else { throw bad }
        return date
    }

    /// The database path: `--db`, else the default under the user's data directory.
    static func path(_ given: String?) throws -> String {
        if let given { return given }
        var env: [String: String] = [:]
        for name in ["XDG_DATA_HOME", "HOME"] { if let v = try RawArguments.environment(name) { env[name] = v } }
        guard let path = HistoryStore.defaultPath(environment: env) else {
            throw CLIError("no place for the history database: neither XDG_DATA_HOME nor HOME is set; give --db FILE")
        }
        return path
    }

    /// Opens the database. `FELICA_TEST_SAVE_STOP=N` kills the process (SIGKILL) before the
    /// N-th statement of a save and `FELICA_TEST_SAVE_PAUSE=N:MS` pauses there: the tests of
    /// interrupted and concurrent saves use them.
    static func open(_ given: String?) throws -> HistoryStore {
        let store = try HistoryStore(path: try path(given), busyTimeoutMilliseconds: busyTimeout)
        let stop = getenv("FELICA_TEST_SAVE_STOP").flatMap { Int(String(cString: $0)) }
        let pause = getenv("FELICA_TEST_SAVE_PAUSE").map { String(cString: $0).split(separator: ":").compactMap { Int($0) } }
        if stop != nil || pause?.count == 2 {
            store.beforeSaveStatement = { n in
                if let pause, pause.count == 2, n == pause[0] { usleep(useconds_t(pause[1] * 1000)) }
                if n == stop { kill(getpid(), SIGKILL) }
            }
        }
        return store
    }

    /// Removes a database this run created, with SQLite's companion files, unless it can be
    /// seen to hold a reading (another process may have made and used it meanwhile).
    static func removeIfEmpty(_ path: String) {
        var st = stat()
        guard stat(path, &st) == 0 else { return }
        if st.st_size > 0 {
            do {
                let store = try HistoryStore(readingAt: path, busyTimeoutMilliseconds: busyTimeout)
                guard try !store.holdsReadings() else { return }
            } catch {
                // No schema yet, or a file that cannot even be looked at (a full disk): made
                // by this run, which failed before its first save.
            }
        }
        for p in [path, path + "-wal", path + "-shm", path + "-journal"] { unlink(p) }
    }

    /// Opens an existing database read-only, for `log show` and `log export`: a path with
    /// no database is an error, and nothing is created.
    static func openForReading(_ given: String?) throws -> HistoryStore {
        try HistoryStore(readingAt: try path(given), busyTimeoutMilliseconds: busyTimeout)
    }

    /// How long a save waits for another process's write lock (ms): 15 s, or
    /// `FELICA_TEST_BUSY_TIMEOUT_MS` (the lock tests, which would otherwise wait 15 s each).
    static var busyTimeout: Int32 {
        getenv("FELICA_TEST_BUSY_TIMEOUT_MS").flatMap { Int32(String(cString: $0)) } ?? 15_000
    }

    /// Now, in UTC: `2026-11-30T19:00:00Z`.
    static func now() -> String {
        var t = time(nil)
        var parts = tm()
        gmtime_r(&t, &parts)
        func p(_ n: Int32) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return "\(parts.tm_year + 1900)-\(p(parts.tm_mon + 1))-\(p(parts.tm_mday))T\(p(parts.tm_hour)):\(p(parts.tm_min)):\(p(parts.tm_sec))Z"
    }

    /// Saves a report; the one-line account of what was kept, and the gaps and conflicts
    /// as warnings on stderr.
    static func save(_ report: CardReport, device: String?, to store: HistoryStore, console: Console, readAt: String? = nil) throws -> HistoryStore.SaveResult {
        try save(try Reading(report: report, device: device, readAt: readAt ?? now()), to: store, console: console)
    }

    /// Saves a reading; the gaps and conflicts as warnings on stderr.
    static func save(_ reading: Reading, to store: HistoryStore, console: Console) throws(HistoryError) -> HistoryStore.SaveResult {
        let result = try store.save(reading)
        for gap in result.gaps { console.diag("warning: gap in the history of card \(gap.card): \(gap)") }
        for c in result.conflicts { console.diag("warning: card \(reading.card): \(c)") }
        if result.malformed > 0 {
            console.diag("warning: \(result.malformed) record\(result.malformed == 1 ? "" : "s") of card \(reading.card) did not decode and \(result.malformed == 1 ? "was" : "were") not kept")
        }
        return result
    }

    static func summary(_ r: HistoryStore.SaveResult) -> String {
        "\(r.read) record\(r.read == 1 ? "" : "s") read, \(r.added) added, \(r.alreadyKept) already kept"
            + (r.gaps.isEmpty ? "" : ", \(r.gaps.reduce(0) { $0 + $1.missing }) missing (gap)")
    }

    static func json(_ r: HistoryStore.SaveResult) -> JSONValue {
        .object(["read": .int(r.read), "added": .int(r.added), "alreadyKept": .int(r.alreadyKept),
                 "gaps": .array(r.gaps.map(gap)), "conflicts": .array(r.conflicts.map { .string($0) }), "malformed": .int(r.malformed)])
    }

    static func gap(_ g: HistoryStore.Gap) -> JSONValue {
        var o: JSONObject = ["card": .string(g.card), "purse": .string(g.purse), "afterSequence": .int(g.afterSequence),
                             "beforeSequence": .int(g.beforeSequence), "missing": .int(g.missing)]
        if let d = g.afterDate { o.append("afterDate", .string(d)) }
        if let d = g.beforeDate { o.append("beforeDate", .string(d)) }
        return .object(o)
    }

    /// Writes records as CSV to stdout in large writes; an export that lacks records says
    /// so on stderr too, and exits 1 unless `allowIncomplete`.
    static func writeCSV(excel: Bool, summary: Bool, allowIncomplete: Bool, console: Console,
                         _ produce: (inout ExpenseCSV) throws -> Void) throws -> Int32 {
        var buffer = ""
        buffer.reserveCapacity(1 << 16)
        var csv = try ExpenseCSV(excel: excel, summary: summary) { line in
            buffer += line
            if buffer.utf8.count >= 1 << 16 { console.out(buffer); buffer.removeAll(keepingCapacity: true) }
        }
        try produce(&csv)
        try csv.finish()
        console.out(buffer)
        guard !csv.incomplete.isEmpty else { return ExitCode.ok }
        console.diag("warning: the export is incomplete (its rows say where):")
        for n in csv.incomplete { console.diag("  \(n)") }
        return allowIncomplete ? ExitCode.ok : ExitCode.failure
    }

    /// Writes records as an OFX statement to stdout; a statement that lacks records says so
    /// on stderr too (and in XML comments in the statement), and exits 1 unless `allowIncomplete`.
    static func writeOFX(allowIncomplete: Bool, console: Console, _ produce: (inout OFXStatement) throws -> Void) throws -> Int32 {
        var t = time(nil)
        var parts = tm()
        gmtime_r(&t, &parts)
        let stamp = "\(parts.tm_year + 1900)" + [parts.tm_mon + 1, parts.tm_mday, parts.tm_hour, parts.tm_min, parts.tm_sec]
            .map { $0 < 10 ? "0\($0)" : "\($0)" }.joined()
        var ofx = OFXStatement(generatedAt: stamp)
        try produce(&ofx)
        console.out(ofx.render())
        guard !ofx.incomplete.isEmpty else { return ExitCode.ok }
        console.diag("warning: the statement is incomplete (its comments say where):")
        for n in ofx.incomplete { console.diag("  \(n)") }
        return allowIncomplete ? ExitCode.ok : ExitCode.failure
    }

    /// `--excel` and `--summary` only mean something with `--csv`, `--allow-incomplete`
    /// with `--csv` or `--ofx`; the two formats exclude each other.
    static func checkCSVFlags(_ args: ParsedArguments, csv: Bool) throws(UsageError) {
        let ofx = args.declares(Self.ofx) && args.flag(Self.ofx)
        if csv && ofx { throw UsageError("--csv and --ofx exclude each other") }
        for f in [excel, summary] where args.flag(f) && !csv {
            throw UsageError("option '--\(f.long)' needs --csv")
        }
        if args.flag(allowIncomplete) && !csv && !ofx { throw UsageError("option '--allow-incomplete' needs --csv or --ofx") }
    }
}

/// `felica log add`: read the card and merge its records.
struct LogAddCommand: CLICommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            name: "add",
            abstract: "Read the card on the reader and keep its records in the history database.",
            discussion: "Reading the same card twice adds nothing. Records that rolled off the card since the last reading are reported as a gap. The reading is saved whole or not at all: a card pulled away mid-read saves nothing.",
            options: CommonOptions.reader + [HistoryOptions.db.spec, CommonOptions.stations.spec, PurseOutput.allSystems, CommonOptions.json])
    }

    let readerOptions: ReaderOptions
    let db: String?
    let stations: String?
    let allSystems: Bool
    let json: Bool

    init(_ args: ParsedArguments) throws(UsageError) {
        readerOptions = try ReaderOptions(args)
        db = try args.value(HistoryOptions.db)
        stations = try args.value(CommonOptions.stations)
        allSystems = args.flag(PurseOutput.allSystems)
        json = args.flag(CommonOptions.json)
        try readerOptions.files.adding {
            $0.reads(stations, as: "the station table (--stations)")
            $0.writes(db, as: "--db")
        }.check()
    }

    func run(_ console: Console) async throws -> Int32 {
        // A database this run creates holds nothing of the user's until a save succeeds: a
        // failure (a full disk, no card) leaves no empty file behind.
        let path = try HistoryOptions.path(db)
        let existed = access(path, F_OK) == 0
        do {
            return try await save(path, console)
        } catch {
            if !existed { HistoryOptions.removeIfEmpty(path) }
            throw error
        }
    }

    func save(_ path: String, _ console: Console) async throws -> Int32 {
        let store = try HistoryOptions.open(path)
        let table = try PurseOutput.stations(stations)
        let (report, device, scannedAt) = try await CardContext.with(readerOptions, console: console) { device, session in
            let reader = PurseOutput.reader(.history, allSystems: allSystems, stations: table, device: device, readerOptions: readerOptions)
            return (try await reader.read(session), session.transport.name, CardContext.scannedAt(device))
        }
        PurseOutput.diagnostics(report, console)
        let result = try HistoryOptions.save(report, device: device, to: store, console: console, readAt: scannedAt)
        if json {
            let o = JSONObject([("card", .string(report.idm.hex))] + (HistoryOptions.json(result).objectValue?.members.map { ($0.key, $0.value) } ?? []))
            JSONOut.print(.object(o), console)
        } else {
            console.line("Card \(report.idm): \(HistoryOptions.summary(result)) (\(store.path))")
        }
        PurseOutput.noHistoryNotes(report, console)
        return PurseOutput.exitStatus(report, history: true, console)
    }
}

/// `felica log show`: the kept records.
struct LogShowCommand: CLICommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            name: "show",
            abstract: "Show the records kept in the history database, newest first.",
            discussion: "Days newest first; within a day, each card's purses in the card's own order (its sequence numbers), newest first. Gaps (records that rolled off a card before it was read) of the cards, purses and period shown follow the records.",
            options: [HistoryOptions.db.spec, HistoryOptions.idm.spec, HistoryOptions.purse.spec, HistoryOptions.from.spec, HistoryOptions.to.spec,
                      CommonOptions.json])
    }

    let db: String?
    let query: HistoryStore.Query
    let json: Bool

    init(_ args: ParsedArguments) throws(UsageError) {
        db = try args.value(HistoryOptions.db)
        query = try HistoryOptions.query(args, newestFirst: true)
        json = args.flag(CommonOptions.json)
    }

    func run(_ console: Console) async throws -> Int32 {
        let store = try HistoryOptions.openForReading(db)
        let records = try store.records(query)
        let gaps = try store.gaps(query)
        if json {
            JSONOut.print(.object(["records": .array(records.map(Self.json)), "gaps": .array(gaps.map(HistoryOptions.gap))]), console)
            return ExitCode.ok
        }
        if records.isEmpty {
            console.line("No records kept\(query.card.map { " for card \($0.hex)" } ?? "")\(query.purse.map { " in purse \($0.rawValue)" } ?? "") in \(store.path)\(query.from != nil || query.to != nil ? " in that period" : "").")
        } else {
            let pad = { TextLayout.padRight($0, $1) }, left = { TextLayout.padLeft($0, $1) }
            console.line(pad("DATE", 16) + "  " + pad("CARD", 16) + "  " + pad("PURSE", 10) + "  " + pad("TYPE", 9) + left("AMOUNT", 9) + left("BALANCE", 10) + left("SEQ", 7) + "  DETAILS")
            for r in records {
                let when = r.dayText + (r.timeText.map { " " + $0.prefix(5) } ?? "")
                console.line(pad(when, 16) + "  " + pad(r.card.hex, 16) + "  " + pad(r.purse.rawValue, 10) + "  " + pad(r.kind.rawValue, 9) + left(PurseOutput.yen(r.amount, signed: true), 9)
                             + left(PurseOutput.yen(r.balance), 10) + left(r.sequence.map(String.init) ?? "-", 7) + "  " + Self.details(r))
            }
        }
        for g in gaps { console.line("gap: card \(g.card) \(g)") }
        return ExitCode.ok
    }

    /// `ticket gate, fare: 新宿 → 渋谷`.
    static func details(_ r: KeptRecord) -> String {
        switch (r.from, r.to) {
        case (let a?, let b?): "\(r.detail): \(a) → \(b)"
        case (let a?, nil): "\(r.detail): \(a)"
        case (nil, let b?): "\(r.detail): → \(b)"
        case (nil, nil): r.detail
        }
    }

    static func json(_ r: KeptRecord) -> JSONValue {
        var o = JSONObject()
        o.append("card", .string(r.card.hex))
        o.append("purse", .string(r.purse.rawValue))
        o.append("date", .string(r.dayText))
        o.append("time", r.timeText.map { .string($0) } ?? .null)
        o.append("type", .string(r.kind.rawValue))
        o.append("amount", r.amount.map { .int($0) } ?? .null)
        o.append("balance", .int(r.balance))
        o.append("sequence", r.sequence.map { .int($0) } ?? .null)
        o.append("from", r.from.map { .string($0) } ?? .null)
        o.append("to", r.to.map { .string($0) } ?? .null)
        o.append("detail", .string(r.detail))
        return .object(o)
    }
}

/// `felica log export --csv`: the kept records as CSV, oldest first.
struct LogExportCommand: CLICommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            name: "export",
            abstract: "Write the kept records as CSV or OFX, oldest first, for a spreadsheet, an expense claim or an accounting app.",
            discussion: """
                For a month's commuting claim: felica log export --csv --from 2026-11 --to 2026-11 --summary > november.csv \
                (add --excel for Excel on Windows). Days oldest first; within a day, each card's purses in the card's own \
                order. Records that rolled off a card before it was read are a 'gap' row where they were missing, and the \
                month totals they touch say 'incomplete'; the exit status is then 1 (--allow-incomplete makes it 0). \
                --ofx writes an OFX bank statement instead (one transaction per record, with an FITID that stays the same \
                from one export to the next, so an importing app skips what it already has); a record whose amount is not \
                known (the oldest one read of a card) cannot be a transaction and is left out, which is said as a gap is.
                """,
            options: [exportCSV, HistoryOptions.ofx, HistoryOptions.db.spec, HistoryOptions.idm.spec, HistoryOptions.purse.spec, HistoryOptions.from.spec,
                      HistoryOptions.to.spec, HistoryOptions.excel, HistoryOptions.summary, HistoryOptions.allowIncomplete])
    }

    /// `--csv`: the default format, so optional (kept so `history --csv` habits work).
    static let exportCSV = OptionSpec.flag("csv", help: "Write CSV (RFC 4180), the default unless --ofx: date, time, type, from, to, amount, balance, sequence, card, purse, detail.")

    let db: String?
    let query: HistoryStore.Query
    let excel: Bool
    let summary: Bool
    let allowIncomplete: Bool
    let ofx: Bool

    init(_ args: ParsedArguments) throws(UsageError) {
        // CSV unless --ofx: the usage line shows --csv as optional, and it is (as with `history --csv`).
        ofx = args.flag(HistoryOptions.ofx)
        if ofx && args.flag(Self.exportCSV) { throw UsageError("--csv and --ofx exclude each other") }
        try HistoryOptions.checkCSVFlags(args, csv: !ofx)
        db = try args.value(HistoryOptions.db)
        query = try HistoryOptions.query(args, newestFirst: false)
        excel = args.flag(HistoryOptions.excel)
        summary = args.flag(HistoryOptions.summary)
        allowIncomplete = args.flag(HistoryOptions.allowIncomplete)
    }

    func run(_ console: Console) async throws -> Int32 {
        let store = try HistoryOptions.openForReading(db)
        // Each gap goes where its records were: before the first record read after it.
        var gaps = try store.gaps(query).map { g in (g, Self.clamp(g.beforeDate ?? g.afterDate ?? "", query)) }
        gaps.sort { $0.1 < $1.1 }
        if ofx {
            return try HistoryOptions.writeOFX(allowIncomplete: allowIncomplete, console: console) { out in
                try Self.rows(store, gaps, query, into: &out)
            }
        }
        return try HistoryOptions.writeCSV(excel: excel, summary: summary, allowIncomplete: allowIncomplete, console: console) { out in
            try Self.rows(store, gaps, query, into: &out)
        }
    }

    /// The records oldest first, each gap before the first record read after it.
    static func rows<Sink: RecordSink>(_ store: HistoryStore, _ gaps: [(HistoryStore.Gap, String)], _ query: HistoryStore.Query,
                                       into out: inout Sink) throws {
        var next = gaps.startIndex
        try store.forEach(query) { r in
            let day = r.dayText
            while next < gaps.endIndex, gaps[next].1 < day || (gaps[next].1 == day && gaps[next].0.card == r.card.hex
                                                              && gaps[next].0.purse == r.purse.rawValue && gaps[next].0.beforeSequence == r.sequence) {
                try out.addGap(gaps[next].0, date: gaps[next].1)
                next += 1
            }
            try out.add(r)
        }
        for (g, date) in gaps[next...] { try out.addGap(g, date: date) }
    }

    /// The day of a gap's row, within the period exported.
    static func clamp(_ day: String, _ query: HistoryStore.Query) -> String {
        if let from = query.from?.isoDate, day < from { return from }
        if let to = query.to?.isoDate, day > to { return to }
        return day
    }
}
