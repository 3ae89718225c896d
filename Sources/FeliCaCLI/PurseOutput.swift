import FeliCa
import FeliCaCards
import FeliCaDevices
import FeliCaJSON
import FeliCaFiles

/// Rendering of card reports shared by `balance`, `history` and `watch`.
enum PurseOutput {
    /// `--all-systems`: probe the common area of transit cards too.
    static let allSystems = OptionSpec.flag(
        "all-systems", help: "Also probe the common area (FE00) of transit cards, which is skipped by default (2 more exchanges).")

    /// `--issuer`: name the transit brand at balance depth too.
    static let issuer = OptionSpec.flag(
        "issuer", help: "Name the brand of a transit IC card (Suica, PASMO, ICOCA ...) from its areas: 1 more exchange on a live card, none on a card image. history always names it.")

    /// The reader a command uses. `issuer` nil names the transit brand as the library does
    /// (at history depth); from a card image (`device` opened by `readerOptions`) the brand
    /// is told from its areas, unasked, and the day of an imported scan is its reading date.
    static func reader(_ depth: CardReader.Depth, allSystems: Bool, stations: StationTable?, device: Device? = nil,
                       readerOptions: ReaderOptions? = nil, issuer: Bool? = nil) -> CardReader {
        var r = CardReader(depth: depth, stations: stations)
        r.probeTransitCardCommonArea = allSystems
        r.namesIssuer = issuer
        if let device, let readerOptions {
            if let scanned = CardContext.scannedAt(device), let day = readingDay(scanned) {
                r.readingDate = ReadingDate(day: day, source: .scanDate)
            }
            r.knownNodes = CardContext.knownNodes(device, readerOptions)
        }
        return r
    }

    /// The day of a `YYYY-MM-DDTHH:MM:SSZ` time.
    static func readingDay(_ iso: String) -> CardDate? {
        let parts = iso.prefix(10).split(separator: "-")
        guard parts.count == 3, let y = Int(parts[0]), let m = Int(parts[1]), let d = Int(parts[2]) else { return nil }
        return try? CardDate(year: y, month: m, day: d)
    }

    // MARK: - Station table

    /// The bundled station table, with `--stations FILE` added over it (format: ``StationTable``).
    static func stations(_ path: String?) throws -> StationTable {
        guard let path else { return .bundled }
        let text: String
        switch SystemCalls.readText(path) {
        case .success(let t): text = t
        case .failure(let e): throw CLIError("cannot read the station table \(path): \(e.reason)")
        }
        do {
            return StationTable.bundled.merging(try StationTable(csv: text, source: path))
        } catch {
            throw CLIError("station table \(error.reason)")
        }
    }

    // MARK: - Text

    /// `¥1,234`; signed amounts get `+`/`-`; unknown is `?`.
    static func yen(_ v: Int?, signed: Bool = false) -> String {
        money(v, .jpy, signed: signed)
    }

    /// `¥1,234`, `HK$50.00`, `-HK$14.40`; unknown is `?`.
    static func money(_ v: Int?, _ currency: Currency, signed: Bool = false) -> String {
        v.map { currency.format($0, signed: signed) } ?? "?"
    }


    /// Diagnostics, on stderr with `note:` and the same with `--json`: what the reader
    /// could not forward, and (only when no purse was found, or they would repeat on every
    /// Edy) the systems holding no known layout, which explain an empty result. A skipped
    /// common area of a transit-card IC is the normal case (its purse is in system 0003),
    /// so it is a note only when no purse was found, or with `-v`; JSON carries it in
    /// `notProbed` either way.
    static func diagnostics(_ report: CardReport, _ console: Console) {
        for n in report.readerLimits { console.diag("note: \(n)") }
        if !report.purses.isEmpty {
            guard console.verbose else { return }
            for s in report.skipped where s.system == .common { console.diag("note: \(s) (--all-systems probes it)") }
            return
        }
        let commonArea = report.skipped.filter { $0.system == .common }.map(\.description)
        for n in report.notes { console.diag("note: \(n)" + (commonArea.contains(n) ? " (--all-systems probes it)" : "")) }
    }

    // MARK: - What a reading lacks

    /// What a reading lacks of what the command is for: the balance of a purse (every
    /// command), its history (at history depth) that could not be read, or records that did
    /// not decode. A purse whose kind of card keeps no history readable without a key
    /// (Octopus) lacks nothing: the card simply has none. One line each, for stderr.
    static func shortfalls(_ report: CardReport, history: Bool) -> [String] {
        var out: [String] = []
        for p in report.purses {
            if p.balance == nil && p.profile.hasBalance {
                let why = p.issues.filter { $0.content == .balance }.map(\.description)
                out.append("the \(p.displayName) balance could not be read" + (why.isEmpty ? "" : ": " + why.joined(separator: "; ")))
            }
            guard history, p.profile.hasHistory else { continue }
            let why = p.historyIssues.map(\.description)
            if p.history == nil || !why.isEmpty {
                out.append("the \(p.displayName) history could not be read" + (why.isEmpty ? "" : ": " + why.joined(separator: "; ")))
            }
            let malformed = p.history?.filter { if case .malformed = $0 { true } else { false } }.count ?? 0
            if malformed > 0 {
                out.append("\(malformed) record\(malformed == 1 ? "" : "s") of the \(p.displayName) history did not decode")
            }
        }
        return out
    }

    /// The exit status of a reading by the one rule every command follows: a reading that
    /// lacks what the command is for fails (exit 1), each lack said on stderr; a card that
    /// simply has none of it (no purse, a purse that keeps no history) does not.
    static func exitStatus(_ report: CardReport, history: Bool, _ console: Console) -> Int32 {
        let lacks = shortfalls(report, history: history)
        guard !lacks.isEmpty else { return ExitCode.ok }
        console.error("the reading is incomplete: " + lacks.joined(separator: "; "))
        return ExitCode.failure
    }

    /// Purses of cards that keep no history readable without a key, for a note when the
    /// history was asked for (the table says it in its own rows).
    static func noHistoryNotes(_ report: CardReport, _ console: Console) {
        for p in report.purses where !p.profile.hasHistory {
            console.diag("note: \(noHistory(p))")
        }
    }

    /// `Octopus cards keep no history readable without a key: the balance is all there is`.
    static func noHistory(_ p: Purse) -> String {
        "\(p.displayName) cards keep no history readable without a key: the balance is all there is"
    }

    /// The line of a card without a purse, naming its systems; a tag formatted for NDEF
    /// (system 12FC) is pointed at `felica ndef`.
    static func noPurse(_ report: CardReport, _ console: Console) {
        guard report.purses.isEmpty else { return }
        console.line("No purse found on the card (systems: \(report.systems.map(\.description).joined(separator: ", "))).")
        if report.systems.contains(.ndef) { console.diag("hint: the card is formatted for NDEF; `felica ndef` shows its message") }
    }

    /// One line per purse: name, balance, number, points; then its issues and notes.
    static func balances(_ report: CardReport, _ console: Console) {
        noPurse(report, console)
        for p in report.purses {
            console.line(headline(p))
            problems(p, console)
        }
    }

    /// The purse's name in text output: a transit card's brand comes with its kind,
    /// `Suica (Transit IC)`, so `history` (which names the brand) and `balance` (which
    /// shows `Transit IC` unless --issuer) are seen to show the same card.
    static func name(_ p: Purse) -> String {
        guard p.profile == .transitIC, let brand = p.issuer else { return p.displayName }
        return "\(brand) (\(p.profile.displayName))"
    }

    static func headline(_ p: Purse) -> String {
        let name = name(p)
        var line = TextLayout.padRight(name, max(11, name.count + 1)) + TextLayout.padLeft(p.balance.map { money($0, p.profile.currency) } ?? (p.profile.hasBalance ? "unreadable" : "ID card"), 10)
        if let n = p.number { line += "  no. \(n)" }
        if let pts = p.points { line += "  \(pts) point\(pts == 1 ? "" : "s")" }
        return line
    }

    static func problems(_ p: Purse, _ console: Console) {
        if let rule = p.rule, console.verbose || rule.offset != Octopus.offset(p.profile, readOn: .today()).offset {
            // Only when it tells something: a reading today uses today's rule.
            console.diag("note: \(p.displayName) balance rule: \(rule)")
        }
        for i in p.issues { console.line("  ! \(i)") }
        for n in p.notes { console.line("  ! \(n)") }
    }

    /// The history table of every purse, newest first, one line per transaction.
    static func histories(_ report: CardReport, _ console: Console) {
        noPurse(report, console)
        for (k, p) in report.purses.enumerated() {
            if k > 0 { console.line() }
            console.line(headline(p))
            problems(p, console)
            if !p.profile.hasHistory { console.line("  (\(noHistory(p)))") }
            guard let history = p.history else { continue }
            if history.isEmpty {
                console.line("  (no transactions)")
                continue
            }
            let shown = p.profile.recordTime
            let dateWidth = shown == .second ? 19 : 16
            console.line("  " + TextLayout.padRight("DATE", dateWidth) + "  " + TextLayout.padRight("TYPE", 9) + TextLayout.padLeft("AMOUNT", 9) + TextLayout.padLeft("BALANCE", 10)
                         + TextLayout.padLeft("SEQ", 7) + "  DETAILS")
            for e in history {
                switch e {
                case .transaction(let t):
                    console.line("  " + TextLayout.padRight(t.date.display(upTo: shown), dateWidth) + "  " + TextLayout.padRight(t.kind.rawValue, 9)
                                 + TextLayout.padLeft(money(t.amount, p.profile.currency, signed: true), 9) + TextLayout.padLeft(money(t.balance, p.profile.currency), 10)
                                 + TextLayout.padLeft(String(t.sequence), 7) + "  " + details(t))
                case .malformed(let slot, let error, let raw):
                    console.line("  slot \(slot): not decoded: \(error.reason) [\(Hex.encode(raw))]")
                }
            }
            if let transit = p.transit { gateLines(transit, console) }
        }
    }

    /// What happened where (``Transaction/details``).
    static func details(_ t: Transaction) -> String { t.details }

    static func gateLines(_ info: TransitInfo, _ console: Console) {
        if let log = info.gateLog, !log.isEmpty {
            console.line("  gate log:")
            for e in log {
                switch e {
                case .event(let g):
                    console.line("    \(g.date.display(seconds: false))  \(TextLayout.padRight(g.isEntry ? "entry" : "exit", 5))  \(g.station)  gate 0x\(Hex.digits(g.gate, count: 4, uppercase: true))"
                                 + (g.isEntry ? "" : "  fare \(yen(g.fare))"))
                case .malformed(let slot, let error, let raw):
                    console.line("    slot \(slot): not decoded: \(error.reason) [\(Hex.encode(raw))]")
                }
            }
        }
        if let p = info.pendingEntry {
            console.line("  entered, not yet exited: \(p.station) at \(p.date.display(seconds: false))")
        }
    }

    // MARK: - JSON (keys are stable: Docs/formats.md)

    static func json(_ report: CardReport, history: Bool) -> JSONValue {
        var o: JSONObject = ["idm": .string(report.idm.hex), "purses": .array(report.purses.map { purse($0, history: history) })]
        if !report.skipped.isEmpty { o.append("notProbed", .array(report.skipped.map(skipped))) }
        return .object(o)
    }

    /// A system left unprobed: `{"system":"fe00","reason":"...","listed":false}`.
    static func skipped(_ s: SkippedSystem) -> JSONValue {
        .object(["system": .string(s.system.hex), "reason": .string(s.reason), "listed": .bool(s.listed)])
    }

    static func purse(_ p: Purse, history: Bool) -> JSONValue {
        var o = JSONObject()
        o.append("profile", .string(p.profile.rawValue))
        if let issuer = p.issuer { o.append("issuer", .string(issuer)) }
        o.append("system", .string(p.system.hex))
        o.append("balance", p.balance.map { .int($0) } ?? .null)
        o.append("currency", .string(p.profile.currency.code))
        if let rule = p.rule {
            o.append("balanceRule", .object(["offset": .int(rule.offset), "readOn": .string(rule.readOn.day.iso),
                                             "source": .string(rule.readOn.source.rawValue), "rule": .string(rule.why)]))
        }
        if let n = p.number { o.append("number", .string(n)) }
        if let pts = p.points { o.append("points", .int(pts)) }
        if history {
            if p.profile.hasHistory { o.append("transactions", p.history.map { .array($0.map(entry)) } ?? .null) }
            if let t = p.transit {
                o.append("card", .object(["type": .int(t.cardType), "region": .int(t.region), "transactionCounter": .int(t.transactionCounter)]))
                if let log = t.gateLog { o.append("gateLog", .array(log.map(gate))) }
                o.append("pendingEntry", t.pendingEntry.map { .object(["date": .string($0.date.iso), "station": station($0.station)]) } ?? .null)
            }
        }
        if !p.issues.isEmpty { o.append("issues", .array(p.issues.map(issue))) }
        if !p.notes.isEmpty { o.append("notes", .array(p.notes.map { .string($0) })) }
        return .object(o)
    }

    static func entry(_ e: HistoryEntry) -> JSONValue {
        switch e {
        case .malformed(let slot, let error, let raw):
            return .object(["error": .string(error.reason), "slot": .int(slot), "raw": .string(Hex.encode(raw))])
        case .transaction(let t):
            var o = JSONObject()
            o.append("date", .string(t.date.iso))
            o.append("type", .string(t.kind.rawValue))
            o.append("amount", t.amount.map { .int($0) } ?? .null)
            o.append("balance", .int(t.balance))
            o.append("sequence", .int(t.sequence))
            if let x = t.transit {
                o.append("console", code(x.console))
                o.append("process", code(x.process))
                o.append("entry", x.entry.map(station) ?? .null)
                o.append("exit", x.exit.map(station) ?? .null)
                if let bus = x.bus { o.append("bus", .object(["operatorLine": .int(bus.operatorLine), "stop": .int(bus.stop)])) }
                if x.paidPartlyInCash { o.append("partlyCash", true) }
            } else {
                o.append("code", code(t.type))
            }
            if let term = t.terminal { o.append("terminal", .string(term)) }
            return .object(o)
        }
    }

    static func code(_ c: CodeName) -> JSONValue {
        .object(["code": .int(c.code), "name": c.name.map { .string($0) } ?? .null])
    }

    static func station(_ s: StationRef) -> JSONValue {
        .object(["area": s.area.map { .int($0) } ?? .null, "line": .int(s.line), "station": .int(s.station),
                 "name": s.name.map { .string($0) } ?? .null, "lineName": s.lineName.map { .string($0) } ?? .null,
                 "company": s.company.map { .string($0) } ?? .null])
    }

    static func gate(_ e: GateLogEntry) -> JSONValue {
        switch e {
        case .event(let g):
            .object(["date": .string(g.date.iso), "entry": .bool(g.isEntry), "station": station(g.station),
                     "gate": .int(g.gate), "fare": .int(g.fare)])
        case .malformed(let slot, let error, let raw):
            .object(["error": .string(error.reason), "slot": .int(slot), "raw": .string(Hex.encode(raw))])
        }
    }

    static func issue(_ i: ServiceIssue) -> JSONValue {
        var o = JSONObject()
        o.append("service", .string(i.service.hex))
        o.append("content", .string(i.content.rawValue))
        switch i.problem {
        case .needsKey(let kv):
            o.append("problem", "needs-key")
            if let kv { o.append("keyVersion", .string(Hex.encode([UInt8(kv >> 8), UInt8(kv & 0xFF)]))) }
        case .absent:
            o.append("problem", "absent")
        case .unreadable(let why):
            o.append("problem", "unreadable")
            o.append("reason", .string(why))
        }
        return .object(o)
    }
}
