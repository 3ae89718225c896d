import FeliCa
import FeliCaJSON

/// `felica balance` (interim: the transit balance from service 008B until card profiles land).
struct BalanceCommand: CLICommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            name: "balance",
            abstract: "Show the balance of every purse on the card.",
            options: CommonOptions.card + [CommonOptions.json])
    }

    let args: ParsedArguments
    init(_ args: ParsedArguments) throws(UsageError) { self.args = args }

    func run(_ console: Console) async throws -> Int32 {
        let (idm, balance) = try await CardContext.with(args, console: console) { session in
            guard let t = try await session.select(.transit) else {
                throw FeliCaError(.noCard, "no transit IC system (0003) answered on \(session.transport.name)")
            }
            let block = try await session.read(service: 0x008B, blocks: 0..<1, from: t)[0]
            return (t.idm, Int(block[11]) | Int(block[12]) << 8)
        }
        if args.flag("json") {
            JSONOut.print(.object(["idm": .string(idm.hex), "purses": .array([.object([
                "profile": "transit-ic", "system": "0003", "balance": .int(balance), "currency": "JPY",
            ])])]), console)
        } else {
            console.line("transit-ic  ¥\(balance)")
        }
        return ExitCode.ok
    }
}
