import FeliCa

/// Entry points of the two executables.
public enum FeliCaCommandLine {
    public static let version = "0.1.0"

    /// Runs `felica` with `arguments` (without the program name); returns the exit code.
    public static func felica(_ arguments: [String]) async -> Int32 {
        await run(FelicaRoot.self, arguments)
    }

    /// Runs `felica-sim`.
    public static func felicaSim(_ arguments: [String]) async -> Int32 {
        await run(FelicaSimRoot.self, arguments)
    }

    /// Parses a `felica` command line and builds the command without running it; returns
    /// the exit code a run would start with (0 = would run, 64 = usage error). For fuzzing
    /// the parser.
    public static func checkArguments(_ arguments: [String]) -> Int32 {
        check(FelicaRoot.self, arguments, name: "felica")
    }

    /// ``checkArguments(_:)`` for `felica-sim`.
    public static func checkSimArguments(_ arguments: [String]) -> Int32 {
        check(FelicaSimRoot.self, arguments, name: "felica-sim")
    }

    private static func check(_ root: any CLICommand.Type, _ arguments: [String], name: String) -> Int32 {
        let parser = ArgumentParser(root: root, version: version)
        guard let outcome = try? parser.parse(arguments) else { return ExitCode.usage }
        if case .run(let type, let parsed, _) = outcome, (try? type.init(parsed)) == nil { return ExitCode.usage }
        _ = HelpFormatter.help(root, path: [name])
        return ExitCode.ok
    }

    static func run(_ root: any CLICommand.Type, _ arguments: [String]) async -> Int32 {
        let console = Console()
        let parser = ArgumentParser(root: root, version: version)
        let outcome: ParseOutcome
        do {
            outcome = try parser.parse(arguments)
        } catch {
            let name = error.path.joined(separator: " ")
            console.diag("Error: \(error.error.message)\nUsage: \(HelpFormatter.usage(error.command, path: error.path))\n  See '\(name) --help' for more information.")
            return ExitCode.usage
        }
        switch outcome {
        case .version:
            console.line(version)
            return ExitCode.ok
        case .help(let command, let path):
            console.out(HelpFormatter.help(command, path: path))
            return ExitCode.ok
        case .run(let type, let parsed, let path):
            let command: any CLICommand
            do {
                command = try type.init(parsed)
            } catch {
                console.diag("Error: \(error.message)\nUsage: \(HelpFormatter.usage(type, path: path))\n  See '\(path.joined(separator: " ")) --help' for more information.")
                return ExitCode.usage
            }
            do {
                return try await command.run(console)
            } catch let e as FeliCaError {
                console.diag("Error: \(e.reason)")
                return e.isUnavailable ? ExitCode.unavailable : ExitCode.failure
            } catch let e as CLIError {
                console.diag("Error: \(e.message)")
                return e.exitCode
            } catch let e as UsageError {
                console.diag("Error: \(e.message)\nUsage: \(HelpFormatter.usage(type, path: path))\n  See '\(path.joined(separator: " ")) --help' for more information.")
                return ExitCode.usage
            } catch {
                console.diag("Error: \(error)")
                return ExitCode.failure
            }
        }
    }
}

/// `felica`: the command table.
struct FelicaRoot: CLICommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            name: "felica",
            abstract: "Read Japanese FeliCa cards (Suica and other transit IC cards, Edy, nanaco, WAON) from USB readers.",
            discussion: "Try it without a reader: felica balance --device virtual:suica",
            subcommands: FelicaCommands.all)
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
