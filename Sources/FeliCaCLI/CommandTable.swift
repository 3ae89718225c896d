import FeliCa
import FeliCaSimulation

/// Every `felica` subcommand, in help order. Add new commands here.
enum FelicaCommands {
    static var all: [any CLICommand.Type] {
        [
            DevicesCommand.self,
            PollCommand.self,
            DumpCommand.self,
            ReadCommand.self,
            BalanceCommand.self,
            HistoryCommand.self,
            WatchCommand.self,
            LogCommand.self,
            OrderCommand.self,
            BenchCommand.self,
            TraceCommand.self,
            DoctorCommand.self,
        ]
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

/// The two command trees, by program name.
enum CommandTree {
    static let roots: [any CLICommand.Type] = [FelicaRoot.self, FelicaSimRoot.self]

    static func root(named name: String) -> (any CLICommand.Type)? {
        roots.first { $0.configuration.name == name }
    }
}

/// Options the stand-ins share.
enum SimOptions {
    /// `--card`: a built-in sample card or a card image; a name close to a built-in one
    /// that is no file gets a "did you mean".
    static let card = Option(OptionSpec(
        "card", value: "card", help: "The card: \(SampleCards.names.joined(separator: ", ")), or a card image path.",
        kind: .nameOrFile(SampleCards.names))) { name throws(UsageError) in try CardName.check(name, option: "card") }
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

/// Built-in card names, checked where they are given.
enum CardName {
    /// `name` unchanged when it is a built-in card or could be a file; a usage error with a
    /// suggestion when it is neither.
    static func check(_ name: String, option: String) throws(UsageError) -> String {
        if SampleCards.names.contains(name) || name.contains("/") || name.hasSuffix(".json") { return name }
        throw UsageError("option '--\(option)': no built-in card named '\(name)' (built-in: \(SampleCards.names.joined(separator: ", "))); a card image path must contain '/' or end in .json"
            + Suggestion.didYouMean(name, SampleCards.names))
    }
}
