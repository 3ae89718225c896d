import FeliCa
import FeliCaReaderCodecs
import FeliCaDevices
import FeliCaCLI
import FeliCaEmulators
import FeliCaSimulation
import FeliCaCards

/// Entry point of `felica-sim`: stand-ins for readers, served to the real stacks.
public enum FeliCaSimCommandLine {
    /// Runs `felica-sim` with `arguments` (without the program name); returns the exit code.
    /// Runs `felica-sim` with the process's arguments, refusing one that is not UTF-8.
    public static func felicaSim() async -> Int32 {
        await FeliCaCommandLine.withProcessArguments(name: "felica-sim") { await felicaSim($0) }
    }

    public static func felicaSim(_ arguments: [String]) async -> Int32 {
        await FeliCaCommandLine.run(FelicaSimRoot.self, arguments)
    }

    /// The command tree of `felica-sim`, for help, man page, completion and README checks.
    package static var root: any CLICommand.Type { FelicaSimRoot.self }

    /// Parses a `felica-sim` command line without running it; 0 = would run, 64 = usage
    /// error. For fuzzing the parser.
    public static func checkArguments(_ arguments: [String]) -> Int32 {
        FeliCaCommandLine.check(FelicaSimRoot.self, arguments, name: "felica-sim")
    }
}

/// `felica-sim`: stand-ins for hardware.
struct FelicaSimRoot: CLICommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            name: "felica-sim",
            abstract: "Stand-ins for readers: serve a virtual FeliCa card to real libnfc or pcscd.",
            subcommands: FelicaSimCommands.all)
    }
}

/// Every `felica-sim` subcommand. Add new stand-ins here.
enum FelicaSimCommands {
    static var all: [any CLICommand.Type] {
        [
            PN532SimCommand.self,
            VPCDSimCommand.self,
            RCS380SimCommand.self,
            RCS956SimCommand.self,
        ]
    }
}

/// Options the stand-ins share.
enum SimOptions {
    /// `--card`: a built-in sample card or a card image; a name close to a built-in one
    /// that is no file gets a "did you mean".
    static let card = Option(OptionSpec(
        "card", value: "card", help: "The card: \(SampleCards.names.joined(separator: ", ")), or a card image path.",
        kind: .nameOrFile(SampleCards.names))) { name throws(UsageError) in try CardName.check(name, option: "card") }
    /// `--save-writes FILE`: the card's contents, writes included, saved as a card image
    /// when the stand-in stops (the card image it started from is never changed).
    static let saveWrites = Option(OptionSpec(
        "save-writes", value: "file", help: "When the stand-in stops, save the card, writes included, as a card image to <file> (the --card file itself is never changed).",
        kind: .file))

    /// Saves `card`'s contents to `path`, when both are given.
    static func save(_ card: VirtualCard?, to path: String?, _ console: Console) throws {
        guard let card, let path else { return }
        try FileOutput.writeAtomically(card.image.jsonText(), to: path)
        console.diag("the card, writes included, saved to \(path)")
    }

    /// `--no-card`: an empty field.
    static let noCard = OptionSpec.flag("no-card", help: "No card in the field.")
    /// `--taps P:A`: the card comes and goes.
    static let taps = Option(OptionSpec(
        "taps", value: "present:absent", help: "Tap the card over and over: in the field for <present> packets, away for <absent>, repeat.")) { text throws(UsageError) in
        do throws(FeliCaError) { return try CardTaps(parsing: text) } catch { throw UsageError("option '--taps': \(error.reason)") }
    }
    /// `--timing rf`: take as long as the real hardware, the card answering in its typical
    /// time; `--timing rf-worst-case`: the card answering at its PMm bound.
    static func timing(_ help: String) -> Option<String> {
        Option(OptionSpec("timing", value: "model", help: help + " rf-worst-case: the same, with the card answering at its PMm bound.",
                          kind: .choice(["rf", "rf-worst-case"])))
    }

    /// The card timing `--timing` asked for; nil = no timing.
    static func cardTiming(_ value: String?) -> CardTiming? {
        value.map { $0 == "rf-worst-case" ? .worstCase : .typical }
    }

    /// `--card` or `--no-card`, exactly one of them: the card, nil for an empty field.
    static func cardOrNone(_ args: ParsedArguments) throws(UsageError) -> String? {
        let card = try args.value(card)
        if args.flag(noCard) {
            guard card == nil else { throw UsageError("--card and --no-card contradict each other: choose one") }
        } else if card == nil {
            throw UsageError("missing required option '--card' (or --no-card for an empty field)")
        }
        return card
    }
}

