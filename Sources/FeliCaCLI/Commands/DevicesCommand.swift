import FeliCa
import FeliCaJSON
import FeliCaSimulation

/// `felica devices`: every reader from every stack, and the built-in virtual cards.
struct DevicesCommand: CLICommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            name: "devices",
            abstract: "List readers (libnfc, PC/SC) and built-in virtual cards, with the --device string for each.",
            options: [CommonOptions.json])
    }

    let args: ParsedArguments
    init(_ args: ParsedArguments) throws(UsageError) { self.args = args }

    func run(_ console: Console) async throws -> Int32 {
        let readers = await ExtraDevices.listReaders()
        let virtual = SampleCards.names.map {
            DeviceListing(stack: "virtual", name: "built-in sample card \($0)", device: "virtual:\($0)", state: "card present")
        }
        let rows = readers + virtual
        if args.flag("json") {
            JSONOut.print(.array(rows.map { r in
                .object(["stack": .string(r.stack), "name": .string(r.name), "device": .string(r.device), "state": .string(r.state)])
            }), console)
            return ExitCode.ok
        }
        let header = ("STACK", "NAME", "DEVICE", "STATE")
        let table = [header] + rows.map { ($0.stack, $0.name, $0.device, $0.state) }
        let w0 = table.map(\.0.count).max()!, w1 = table.map(\.1.count).max()!, w2 = table.map(\.2.count).max()!
        for r in table {
            console.line(DumpCommand.pad(r.0, w0 + 2) + DumpCommand.pad(r.1, w1 + 2) + DumpCommand.pad(r.2, w2 + 2) + r.3)
        }
        if readers.isEmpty {
            console.diag("no reader found; `felica doctor` explains why. The virtual cards work without hardware.")
        }
        return ExitCode.ok
    }
}
