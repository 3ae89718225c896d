import FeliCa
import FeliCaCards
import FeliCaJSON

/// `felica balance`: the balance of every purse on the card.
struct BalanceCommand: CLICommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            name: "balance",
            abstract: "Show the balance of every purse on the card.",
            discussion: "Purses are found by probing what the card holds: a phone carrying a transit card, Edy, nanaco and WAON shows all four. A transit IC card shows as Transit IC unless --issuer names its brand.",
            options: CommonOptions.reader + [PurseOutput.allSystems, PurseOutput.issuer, CommonOptions.json, CommonOptions.redact])
    }

    let readerOptions: ReaderOptions
    let allSystems: Bool
    let issuer: Bool
    let json: Bool

    init(_ args: ParsedArguments) throws(UsageError) {
        readerOptions = try ReaderOptions(args)
        allSystems = args.flag(PurseOutput.allSystems)
        issuer = args.flag(PurseOutput.issuer)
        json = args.flag(CommonOptions.json)
    }

    func run(_ console: Console) async throws -> Int32 {
        let report = try await CardContext.with(readerOptions, console: console) { device, session in
            let reader = PurseOutput.reader(.balance, allSystems: allSystems, stations: nil, device: device, readerOptions: readerOptions, issuer: issuer)
            return try await reader.read(session)
        }
        PurseOutput.diagnostics(report, console)
        if json {
            JSONOut.print(PurseOutput.json(report, history: false), console)
        } else {
            PurseOutput.balances(report, console)
        }
        return PurseOutput.exitStatus(report, history: false, console)
    }
}
