import FeliCa
import FeliCaCards
import FeliCaLog

/// `felica history`: every purse with its transactions, newest first.
struct HistoryCommand: CLICommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            name: "history",
            abstract: "Show the transaction history of every purse on the card, newest first.",
            discussion: "Transit records name their stations from the bundled station table (codes as area/line/station where it has none); --stations adds or overrides names from a CSV of area,line,station,name lines.",
            options: CommonOptions.reader + [CommonOptions.stations.spec, PurseOutput.allSystems, CommonOptions.json, CommonOptions.redact,
                                           HistoryOptions.csv, HistoryOptions.ofx, HistoryOptions.excel, HistoryOptions.summary, HistoryOptions.allowIncomplete])
    }

    let readerOptions: ReaderOptions
    let stations: String?
    let allSystems: Bool
    let json: Bool
    let csv: Bool
    let excel: Bool
    let summary: Bool
    let allowIncomplete: Bool
    let ofx: Bool

    init(_ args: ParsedArguments) throws(UsageError) {
        readerOptions = try ReaderOptions(args)
        stations = try args.value(CommonOptions.stations)
        allSystems = args.flag(PurseOutput.allSystems)
        json = args.flag(CommonOptions.json)
        csv = args.flag(HistoryOptions.csv)
        excel = args.flag(HistoryOptions.excel)
        summary = args.flag(HistoryOptions.summary)
        allowIncomplete = args.flag(HistoryOptions.allowIncomplete)
        ofx = args.flag(HistoryOptions.ofx)
        if json && (csv || ofx) { throw UsageError("--json and --\(csv ? "csv" : "ofx") exclude each other") }
        try HistoryOptions.checkCSVFlags(args, csv: csv)
        try readerOptions.files.adding { $0.reads(stations, as: "the station table (--stations)") }.check()
    }

    func run(_ console: Console) async throws -> Int32 {
        let table = try PurseOutput.stations(stations)
        let report = try await CardContext.with(readerOptions, console: console) { device, session in
            try await PurseOutput.reader(.history, allSystems: allSystems, stations: table, device: device, readerOptions: readerOptions).read(session)
        }
        PurseOutput.diagnostics(report, console)
        if ofx {
            return try HistoryOptions.writeOFX(allowIncomplete: allowIncomplete, console: console) { out in
                try Self.csvRows(report, into: &out)
            }
        }
        if csv {
            PurseOutput.noHistoryNotes(report, console)
            let status = try HistoryOptions.writeCSV(excel: excel, summary: summary, allowIncomplete: allowIncomplete, console: console) { out in
                try Self.csvRows(report, into: &out)
            }
            // The rows mark what the history lacks; a balance that could not be read is not a row.
            let balance = PurseOutput.exitStatus(report, history: false, console)
            return status == ExitCode.ok ? balance : status
        } else if json {
            PurseOutput.noHistoryNotes(report, console)
            JSONOut.print(PurseOutput.json(report, history: true), console)
        } else {
            PurseOutput.histories(report, console)
        }
        return PurseOutput.exitStatus(report, history: true, console)
    }

    /// The report as export rows: first what could not be had (purses whose history could
    /// not be read, records that did not decode), then the records oldest first, as a
    /// claim lists trips: by day, and within a day purse by purse in the card's own order
    /// (a transit record keeps no time of day, so time cannot order a day).
    static func csvRows<Sink: RecordSink>(_ report: CardReport, into out: inout Sink) throws {
        var records: [(date: String, purse: Int, position: Int, record: KeptRecord)] = []
        for (k, p) in report.purses.enumerated() {
            let why = p.historyIssues.map(\.description)
            // A card that keeps no history (Octopus) lacks nothing: a note says so, not a row.
            if p.profile.hasHistory && (p.history == nil || !why.isEmpty) {
                try out.addMissing(type: "unreadable", card: report.idm.hex, purse: p.profile.rawValue,
                                   detail: why.isEmpty ? "the history was not read" : why.joined(separator: "; "))
            }
            guard let history = p.history else { continue }
            // The card lists newest first.
            for (position, entry) in history.reversed().enumerated() {
                switch entry {
                case .transaction(let t):
                    let r = KeptRecord(t, card: report.idm, purse: p.profile)
                    records.append((r.dayText, k, position, r))
                case .malformed(let slot, let error, let raw):
                    try out.addMissing(type: "not decoded", card: report.idm.hex, purse: p.profile.rawValue,
                                       detail: "slot \(slot): \(error.reason) [\(Hex.encode(raw))]")
                }
            }
        }
        records.sort { ($0.date, $0.purse, $0.position) < ($1.date, $1.purse, $1.position) }
        for r in records { try out.add(r.record) }
    }
}
