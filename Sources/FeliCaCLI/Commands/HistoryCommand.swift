import FeliCa
import FeliCaCards
import FeliCaHistory

/// `felica history`: every purse with its transactions, newest first.
struct HistoryCommand: CLICommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            name: "history",
            abstract: "Show the transaction history of every purse on the card, newest first.",
            discussion: "Transit records name their stations from the bundled station table (codes as area/line/station where it has none); --stations adds or overrides names from a CSV of area,line,station,name lines.",
            options: CommonOptions.card + [CommonOptions.stations.spec, PurseOutput.allSystems, CommonOptions.json,
                                           HistoryOptions.csv, HistoryOptions.excel, HistoryOptions.summary])
    }

    let card: CardOptions
    let stations: String?
    let allSystems: Bool
    let json: Bool
    let csv: Bool
    let excel: Bool
    let summary: Bool

    init(_ args: ParsedArguments) throws(UsageError) {
        card = try CardOptions(args)
        stations = try args.value(CommonOptions.stations)
        allSystems = args.flag(PurseOutput.allSystems)
        json = args.flag(CommonOptions.json)
        csv = args.flag(HistoryOptions.csv)
        excel = args.flag(HistoryOptions.excel)
        summary = args.flag(HistoryOptions.summary)
        if json && csv { throw UsageError("--json and --csv exclude each other") }
        try HistoryOptions.checkCSVFlags(args, csv: csv)
    }

    func run(_ console: Console) async throws -> Int32 {
        let reader = PurseOutput.reader(.history, allSystems: allSystems, stations: try PurseOutput.stations(stations), card: card)
        let report = try await CardContext.with(card, console: console) { session in try await reader.read(session) }
        PurseOutput.diagnostics(report, console)
        if csv {
            // Oldest first, as a claim lists trips; each purse's records keep the card's order.
            let records = report.purses.flatMap { p in p.transactions.reversed().map { KeptRecord($0, card: report.idm, purse: p.profile) } }
            let ordered = records.enumerated().sorted { ($0.element.date, $0.element.time ?? "", $0.offset) < ($1.element.date, $1.element.time ?? "", $1.offset) }
            try HistoryOptions.writeCSV(excel: excel, summary: summary, console: console) { out in
                for r in ordered { try out.add(r.element) }
            }
        } else if json {
            JSONOut.print(PurseOutput.json(report, history: true), console)
        } else {
            PurseOutput.histories(report, console)
        }
        return ExitCode.ok
    }
}
