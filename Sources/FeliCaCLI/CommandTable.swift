import FeliCa
import FeliCaSimulation
import FeliCaDevices
import FeliCaCards

/// Every `felica` subcommand, in help order. Add new commands here.
enum FelicaCommands {
    static var all: [any CLICommand.Type] {
        [
            DevicesCommand.self,
            PollCommand.self,
            DumpCommand.self,
            ReadCommand.self,
            WriteCommand.self,
            BalanceCommand.self,
            HistoryCommand.self,
            NDEFCommand.self,
            VerifyCommand.self,
            WatchCommand.self,
            LogCommand.self,
            OrderCommand.self,
            BenchCommand.self,
            TraceCommand.self,
            DoctorCommand.self,
        ]
    }
}

/// The command trees this module knows, by program name (`felica-sim`'s is its own module's).
enum CommandTree {
    static let roots: [any CLICommand.Type] = [FelicaRoot.self]

    static func root(named name: String) -> (any CLICommand.Type)? {
        roots.first { $0.configuration.name == name }
    }
}

/// Built-in card names, checked where they are given.
package enum CardName {
    /// `name` unchanged when it is a built-in card or could be a file; a usage error with a
    /// suggestion when it is neither.
    package static func check(_ name: String, option: String) throws(UsageError) -> String {
        if DeviceSpec.virtualCardSource(name) != nil { return name }
        throw UsageError("option '--\(option)': no built-in card named '\(name)' (built-in: \(SampleCards.names.joined(separator: ", "))); a card image path must contain '/' or end in .json or .nfc"
            + Suggestion.didYouMean(name, SampleCards.names))
    }
}
