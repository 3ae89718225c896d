import FeliCa
import FeliCaSimulation
import FeliCaTrace
import FeliCaDiagnosis

/// `felica trace`: look at recorded sessions.
struct TraceCommand: CLICommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            name: "trace",
            abstract: "Show a recorded trace, export it for Wireshark, or redact it for sharing.",
            discussion: "Record a trace with --trace FILE on any command that talks to a card; replay it with --device replay:FILE. See \(PackagedFiles.guide("traces.md")).",
            subcommands: [TraceShowCommand.self, TraceExportCommand.self, TraceRedactCommand.self])
    }

    /// Checks that the trace read and the file written are not the same file.
    static func check(reading input: String, as inputRole: String, writing output: String, as outputRole: String) throws(UsageError) {
        var files = FileRoles()
        files.reads(input, as: inputRole)
        files.writes(output, as: outputRole)
        try files.check()
    }

    /// `trace` with the IDm and card numbers replaced, under the user's redaction key.
    static func redacted(_ trace: Trace) throws -> Trace {
        var redactor = try RedactionKey.redactor()
        return trace.redacted(by: &redactor)
    }

    /// Loads the trace at `path`; a card image given by mistake is named as one, with the
    /// device string that serves it.
    static func load(_ path: String, lenient: Bool) throws -> Trace {
        do {
            return try Trace.load(path: path, lenient: lenient)
        } catch {
            if (try? CardImage.load(path: path)) != nil {
                throw FeliCaError(
                    .badInput,
                    "\(path) is a card image (felica-card/1), not a trace (felica-trace/1); to talk to the card it holds, use --device virtual:\(path)")
            }
            throw error
        }
    }
}

/// `felica trace show FILE`: the exchanges, decoded.
struct TraceShowCommand: CLICommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            name: "show",
            abstract: "List every exchange of a trace: time, direction, decoded command or response, status flags, elapsed time.",
            discussion: """
                A damaged trace is listed up to the damage, which is then reported as an error. \
                --json prints one JSON object per exchange (JSON Lines) with every decoded field, \
                block data included.
                """,
            arguments: [ArgumentSpec("file", help: "A felica-trace/1 file (recorded with --trace).", kind: .file)],
            options: [CommonOptions.json, blocksFlag])
    }

    static let blocksFlag = OptionSpec.flag("blocks", help: "Show the 16 bytes of each block read or written, under its packet.")

    let path: String
    let json: Bool
    let blocks: Bool
    init(_ args: ParsedArguments) throws(UsageError) {
        path = args.positionals[0]
        json = args.flag(CommonOptions.json)
        blocks = args.flag(Self.blocksFlag)
    }

    func run(_ console: Console) async throws -> Int32 {
        let trace = try TraceCommand.load(path, lenient: true)
        console.out(json ? trace.jsonListing() : trace.listing(blocks: blocks))
        if let damage = trace.damage {
            throw FeliCaError(damage.code, "\(damage.reason)\n  the listing stops before the damage (\(trace.exchanges.count) exchange\(trace.exchanges.count == 1 ? "" : "s") listed)")
        }
        return ExitCode.ok
    }
}

/// `felica trace export FILE --pcap OUT [--format pcapng|pcap]`.
struct TraceExportCommand: CLICommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            name: "export",
            abstract: "Write a trace as a capture file for Wireshark or tshark.",
            discussion: """
                pcapng (the default) carries each packet whole, LEN byte included, with its direction \
                (commands outbound, responses inbound) and the device as the interface description, \
                link type USER1 (148). Classic pcap (--format pcap) has link type USER0 (147), packets \
                without their LEN byte, and no direction. The project's dissector, which the felica package installs \
                among Wireshark's Lua plugins (\(PackagedFiles.dissector)), decodes both: tshark -r OUT. \
                See \(PackagedFiles.guide("traces.md")).
                """,
            arguments: [ArgumentSpec("file", help: "A felica-trace/1 file (recorded with --trace).", kind: .file)],
            options: [pcapOption.spec, formatOption.spec, lenientFlag, CommonOptions.redact],
            required: [pcapOption.spec.long])
    }

    static let pcapOption = Option(OptionSpec("pcap", value: "out", help: "Write the capture to <out> (replaced only once complete).", kind: .file))
    static let formatOption = Option(
        OptionSpec("format", value: "format", help: "pcapng (default) or pcap (classic: no direction, for tools that need it).",
                   kind: .choice(Pcap.Format.allCases.map(\.rawValue)))
    ) { s throws(UsageError) in
        guard let format = Pcap.Format(rawValue: s) else { throw UsageError("option '--format': '\(s)' is not one of pcapng, pcap") }
        return format
    }
    static let lenientFlag = OptionSpec.flag("lenient", help: "Export the exchanges before damage in a damaged trace instead of failing.")

    let path: String
    let output: String
    let format: Pcap.Format
    let lenient: Bool
    let redact: Bool
    init(_ args: ParsedArguments) throws(UsageError) {
        path = args.positionals[0]
        redact = args.flag(CommonOptions.redact)
        output = try args.required(Self.pcapOption)
        format = try args.value(Self.formatOption) ?? .pcapng
        lenient = args.flag(Self.lenientFlag)
        try TraceCommand.check(reading: path, as: "the trace to export (<file>)", writing: output, as: "--pcap")
    }

    func run(_ console: Console) async throws -> Int32 {
        var trace = try TraceCommand.load(path, lenient: lenient)
        if redact { trace = try TraceCommand.redacted(trace) }
        if let damage = trace.damage {
            console.diag("warning: \(damage.reason)\n  exporting the \(trace.exchanges.count) exchanges before the damage")
        }
        let export = try Pcap.write(trace, to: output, format: format)
        var summary = "wrote \(export.frames) frame\(export.frames == 1 ? "" : "s") to \(output) (\(format.rawValue))"
        if export.skipped > 0 { summary += " (\(export.skipped) empty packet\(export.skipped == 1 ? "" : "s") left out)" }
        console.diag(summary)
        return ExitCode.ok
    }
}

/// `felica trace redact FILE OUT`: the trace with its IDms and card numbers replaced.
struct TraceRedactCommand: CLICommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            name: "redact",
            abstract: "Write a copy of a trace with the IDm and the card numbers replaced by pseudonyms, safe to share.",
            discussion: """
                The pseudonyms come from a key of your own (FELICA_REDACT_KEY, else ~/.config/felica/redact-key, \
                made on first use): the same card gets the same pseudonym in every trace and dump you redact, \
                and nobody without the key can tell which card it was. PMm, timings, balances, dates and \
                stations are kept, and the copy replays like the original (--device replay:OUT). \
                See \(PackagedFiles.guide("traces.md")).
                """,
            arguments: [ArgumentSpec("file", help: "A felica-trace/1 file (recorded with --trace).", kind: .file),
                        ArgumentSpec("out", help: "Where to write the redacted copy (never the input; created 0600).", kind: .file)])
    }

    let path: String
    let output: String
    init(_ args: ParsedArguments) throws(UsageError) {
        path = args.positionals[0]
        output = args.positionals[1]
        try TraceCommand.check(reading: path, as: "the trace to redact (<file>)", writing: output, as: "<out>")
    }

    func run(_ console: Console) async throws -> Int32 {
        let redacted = try TraceCommand.redacted(try TraceCommand.load(path, lenient: false))
        try FileOutput.writeAtomically(redacted.jsonLines(), to: output)
        console.diag("wrote \(redacted.exchanges.count) exchange\(redacted.exchanges.count == 1 ? "" : "s") to \(output), IDm and card numbers replaced")
        return ExitCode.ok
    }
}
