import FeliCa
import FeliCaReaderCodecs
import FeliCaDevices
import FeliCaSimulation
import FeliCaCards
import FeliCaDiagnosis

/// A command of `felica` or `felica-sim`: its configuration drives parsing and help.
public protocol CLICommand: Sendable {
    static var configuration: CommandConfiguration { get }
    /// Builds the command from parsed options; throws for values that do not make sense.
    init(_ arguments: ParsedArguments) throws(UsageError)
    /// Runs it; returns the exit code.
    func run(_ console: Console) async throws -> Int32
}

extension CLICommand {
    /// Group commands only show help.
    public init(_ arguments: ParsedArguments) throws(UsageError) {
        throw UsageError("'\(Self.configuration.name)' needs a subcommand")
    }
    public func run(_ console: Console) async throws -> Int32 { 64 }
}

/// Exit codes, as the README lists them.
public enum ExitCode {
    public static let ok: Int32 = 0
    public static let failure: Int32 = 1
    public static let usage: Int32 = 64
    public static let unavailable: Int32 = 69
}

/// A failure of the command line itself with the exit code it maps to.
public struct CLIError: Error, CustomStringConvertible {
    public var message: String
    public var exitCode: Int32
    public init(_ message: String, exitCode: Int32 = ExitCode.failure) {
        self.message = message
        self.exitCode = exitCode
    }
    public var description: String { message }
}

/// Options every command that talks to a card accepts.
public enum CommonOptions {
    public static let device = Option(OptionSpec(
        "device", short: "d", value: "device",
        help: "Reader or card: \(DeviceSpec.forms) (default: $FELICA_DEVICE, else the first reader found).",
        kind: .suggested(["usb", "libnfc", "pcsc"] + SampleCards.names.map { "virtual:" + $0 })),
        parseDevice(option:))
    public static let trace = Option(OptionSpec(
        "trace", value: "file", help: "Record every exchange with the card to <file> (felica-trace/1, JSON Lines).", kind: .file))
    public static let json = OptionSpec.flag("json", help: "Print JSON instead of text.")
    public static let redact = OptionSpec.flag(
        "redact", help: "Replace the IDm and the card numbers with pseudonyms (the same for the same card), in the output and in --trace: safe to share.")
    public static let stations = Option(OptionSpec(
        "stations", value: "file", help: "CSV of station names keyed by area, line and station, added over the bundled table (see \(PackagedFiles.guide("formats.md"))).", kind: .file))
    public static let dialect = Option(OptionSpec(
        "dialect", value: "dialect",
        help: "PC/SC readers: how the reader carries FeliCa packets, \(PCSCDialect.names) (default: judged from the reader name, else detected).",
        kind: .choice(PCSCDialect.allCases.map(\.rawValue)))) { name throws(UsageError) in
        guard let dialect = PCSCDialect(name: name) else { throw UsageError("option '--dialect': '\(name)' is not a PC/SC dialect (\(PCSCDialect.names))") }
        return dialect
    }
    public static let wait = Option.seconds(OptionSpec(
        "wait", value: "seconds",
        help: "How long to wait for a card to be placed on a reader (default 3; 0 = it must be there already). Any kind of reader, the same way."),
        in: 0...DeviceSpec.maxWait)
    /// A `--device` value. One that does not parse is a usage error naming the option; an
    /// empty one is too (while an empty `$FELICA_DEVICE` counts as unset, as shells treat
    /// empty variables).
    public static func parseDevice(option text: String) throws(UsageError) -> DeviceSpec {
        guard !text.isEmpty else {
            throw UsageError("option '--device' is empty: name a device (\(DeviceSpec.forms)), or leave the option out to use $FELICA_DEVICE or the first reader found")
        }
        do throws(DeviceSpec.ParseError) {
            return try DeviceSpec(parsing: text)
        } catch {
            throw UsageError("--device '\(text)': \(error.reason)")
        }
    }

    /// `--device`, `--dialect`, `--trace` and `--wait`.
    public static let reader: [OptionSpec] = [device.spec, dialect.spec, trace.spec, wait.spec]
    /// `--device`, `--dialect` and `--trace`, for `watch`, which waits for cards without end.
    public static let readerWithoutWait: [OptionSpec] = [device.spec, dialect.spec, trace.spec]
}

/// Which card to talk to, and how: `--device`, `--dialect`, `--trace`, parsed once.
struct ReaderOptions: Sendable {
    var device: DeviceSpec?
    var dialect: PCSCDialect?
    var trace: String?
    /// `--wait`; nil for commands without it.
    var wait: Duration?
    /// Whether opening a reader fails when no card is placed within the wait; `watch`
    /// opens a PC/SC reader without one and waits for each card as it polls.
    var requiresCard = true
    /// How often a lost reader is opened again (`watch`); nil: a lost reader ends the command.
    var reconnectInterval: Duration?
    /// The device's file and the trace, checked: the trace never overwrites what the
    /// device reads. A command with files of its own adds them and checks again.
    var files = FileRoles()
    /// `--redact`: the session sees pseudonyms for the IDm and card numbers; false for
    /// commands without it.
    var redact = false

    init(_ args: ParsedArguments) throws(UsageError) {
        redact = args.declares(CommonOptions.redact) && args.flag(CommonOptions.redact)
        device = try args.value(CommonOptions.device)
        dialect = try args.value(CommonOptions.dialect)
        trace = try args.value(CommonOptions.trace)
        // `watch` waits for cards without end and declares no --wait.
        wait = args.declares(CommonOptions.wait.spec) ? try args.value(CommonOptions.wait) : nil
        files.add(device: device, trace: trace)
        try files.check()
    }
}
