import FeliCa
import FeliCaCards

/// `felica history`: every purse with its transactions, newest first.
struct HistoryCommand: CLICommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            name: "history",
            abstract: "Show the transaction history of every purse on the card, newest first.",
            discussion: "Transit records name their stations from the bundled station table (codes as area/line/station where it has none); --stations adds or overrides names from a CSV of area,line,station,name lines.",
            options: CommonOptions.card + [CommonOptions.stations.spec, PurseOutput.allSystems, CommonOptions.json])
    }

    let card: CardOptions
    let stations: String?
    let allSystems: Bool
    let json: Bool

    init(_ args: ParsedArguments) throws(UsageError) {
        card = try CardOptions(args)
        stations = try args.value(CommonOptions.stations)
        allSystems = args.flag(PurseOutput.allSystems)
        json = args.flag(CommonOptions.json)
    }

    func run(_ console: Console) async throws -> Int32 {
        let reader = PurseOutput.reader(.history, allSystems: allSystems, stations: try PurseOutput.stations(stations))
        let report = try await CardContext.with(card, console: console) { session in try await reader.read(session) }
        PurseOutput.diagnostics(report, console)
        if json {
            JSONOut.print(PurseOutput.json(report, history: true), console)
        } else {
            PurseOutput.histories(report, console)
        }
        return ExitCode.ok
    }
}
