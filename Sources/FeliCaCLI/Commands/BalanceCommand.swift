import FeliCa
import FeliCaCards
import FeliCaJSON
import Foundation

/// `felica balance`: the balance of every purse on the card.
struct BalanceCommand: CLICommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            name: "balance",
            abstract: "Show the balance of every purse on the card.",
            discussion: "Purses are found by probing what the card holds: a phone carrying a transit card, Edy, nanaco and WAON shows all four.",
            options: CommonOptions.reader + [PurseOutput.allSystems, CommonOptions.json])
    }

    let readerOptions: ReaderOptions
    let allSystems: Bool
    let json: Bool

    init(_ args: ParsedArguments) throws(UsageError) {
        readerOptions = try ReaderOptions(args)
        allSystems = args.flag(PurseOutput.allSystems)
        json = args.flag(CommonOptions.json)
    }

    func run(_ console: Console) async throws -> Int32 {
        let reader = PurseOutput.reader(.balance, allSystems: allSystems, stations: nil, readerOptions: readerOptions)
        let report = try await CardContext.with(readerOptions, console: console) { session in try await reader.read(session) }
        PurseOutput.diagnostics(report, console)
        if json {
            JSONOut.print(PurseOutput.json(report, history: false), console)
        } else {
            PurseOutput.balances(report, console)
        }
        return ExitCode.ok
    }
}
