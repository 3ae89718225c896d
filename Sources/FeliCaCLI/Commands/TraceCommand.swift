import FeliCa
import FeliCaTrace

/// `felica trace`: look at recorded sessions.
struct TraceCommand: CLICommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            name: "trace",
            abstract: "Show a recorded trace, or export it for Wireshark.",
            discussion: "Record a trace with --trace FILE on any command that talks to a card; replay it with --device replay:FILE. See Docs/traces.md.",
            subcommands: [TraceShowCommand.self, TraceExportCommand.self])
    }
}

/// `felica trace show FILE`: the exchanges, decoded.
struct TraceShowCommand: CLICommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            name: "show",
            abstract: "List every exchange of a trace: time, direction, decoded command or response, status flags, elapsed time.",
            discussion: "A damaged trace is listed up to the damage, which is then reported as an error.",
            arguments: [ArgumentSpec("file", help: "A felica-trace/1 file (recorded with --trace).", kind: .file)])
    }

    let path: String
    init(_ args: ParsedArguments) throws(UsageError) { path = args.positionals[0] }

    func run(_ console: Console) async throws -> Int32 {
        let trace = try Trace.load(path: path, lenient: true)
        console.out(trace.listing())
        if let damage = trace.damage { throw damage }
        return ExitCode.ok
    }
}

/// `felica trace export FILE --pcap OUT`.
struct TraceExportCommand: CLICommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            name: "export",
            abstract: "Write a trace as a pcap file for Wireshark or tshark.",
            discussion: """
                The pcap has link type USER0 (147), one frame per packet without its LEN byte. \
                Map USER0 to Wireshark's FeliCa dissector once: \
                tshark -o 'uat:user_dlts:"User 0 (DLT=147)","felica","0","","0",""' -r OUT
                """,
            arguments: [ArgumentSpec("file", help: "A felica-trace/1 file (recorded with --trace).", kind: .file)],
            options: [pcapOption.spec, lenientFlag],
            required: [pcapOption.spec.long])
    }

    static let pcapOption = Option(OptionSpec("pcap", value: "out", help: "Write the pcap to <out> (replaced only once complete).", kind: .file))
    static let lenientFlag = OptionSpec.flag("lenient", help: "Export the exchanges before damage in a damaged trace instead of failing.")

    let path: String
    let output: String
    let lenient: Bool
    init(_ args: ParsedArguments) throws(UsageError) {
        path = args.positionals[0]
        output = try args.required(Self.pcapOption)
        lenient = args.flag(Self.lenientFlag)
    }

    func run(_ console: Console) async throws -> Int32 {
        let trace = try Trace.load(path: path, lenient: lenient)
        if let damage = trace.damage {
            console.diag("warning: \(damage.reason)\n  exporting the \(trace.exchanges.count) exchanges before the damage")
        }
        let export = try Pcap.write(trace, to: output)
        var summary = "wrote \(export.frames) frame\(export.frames == 1 ? "" : "s") to \(output)"
        if export.skipped > 0 { summary += " (\(export.skipped) empty packet\(export.skipped == 1 ? "" : "s") left out)" }
        console.diag(summary)
        return ExitCode.ok
    }
}
