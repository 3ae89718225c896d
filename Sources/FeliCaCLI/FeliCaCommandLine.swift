import FeliCa
import FeliCaLog
import FeliCaDelivery
import FeliCaDevices

/// Entry points of the two executables.
public enum FeliCaCommandLine {
    public static let version = "0.1.0"

    /// Runs `felica` with the process's arguments, refusing one that is not UTF-8
    /// (``RawArguments``); returns the exit code.
    public static func felica() async -> Int32 {
        await withProcessArguments(name: "felica") { await felica($0) }
    }

    /// Runs `body` with the process's arguments, or says which is not UTF-8 and returns 64.
    public static func withProcessArguments(name: String, _ body: ([String]) async -> Int32) async -> Int32 {
        switch RawArguments.current() {
        case .success(let arguments):
            return await body(arguments)
        case .failure(let error):
            Console().error(error.message)
            return ExitCode.usage
        }
    }

    /// Runs `felica` with `arguments` (without the program name); returns the exit code.
    public static func felica(_ arguments: [String]) async -> Int32 {
        await run(FelicaRoot.self, arguments)
    }

    /// Parses a `felica` command line and builds the command without running it; returns
    /// the exit code a run would start with (0 = would run, 64 = usage error). For fuzzing
    /// the parser.
    public static func checkArguments(_ arguments: [String]) -> Int32 {
        check(FelicaRoot.self, arguments, name: "felica")
    }

    /// Parses a command line of `root`'s program without running it (``checkArguments(_:)``).
    package static func check(_ root: any CLICommand.Type, _ arguments: [String], name: String) -> Int32 {
        let parser = ArgumentParser(root: root, version: version)
        guard let outcome = try? parser.parse(arguments) else { return ExitCode.usage }
        if case .run(let type, let parsed, _) = outcome, (try? type.init(parsed)) == nil { return ExitCode.usage }
        _ = HelpFormatter.help(root, path: [name], root: root)
        return ExitCode.ok
    }

    /// `felica --version`, `--help`, `--generate-completion-script` and `--generate-manual`
    /// answered without Swift concurrency: an `await` in the program's top-level code starts
    /// its threads, a few milliseconds of a `--version`. The exit code when the command line
    /// was one of those (answered here, exactly as ``felica()`` would); nil when it is anything
    /// else, a usage error included, for ``felica()`` to run.
    public static func felicaWithoutWaiting() -> Int32? {
        guard case .success(let arguments) = RawArguments.current(),
              let outcome = try? ArgumentParser(root: FelicaRoot.self, version: version).parse(arguments)
        else { return nil }
        return answer(outcome, FelicaRoot.self)
    }

    /// The output and exit code of an outcome that runs no command (the version, a help, a
    /// completion script, the manual); nil for a command to run.
    private static func answer(_ outcome: ParseOutcome, _ root: any CLICommand.Type) -> Int32? {
        if case .run = outcome { return nil }
        let console = Console()
        switch outcome {
        case .version:
            console.line(version)
        case .help(let command, let path):
            console.out(HelpFormatter.help(command, path: path, root: root))
        case .completion(let shell):
            console.out(CompletionScript.script(for: root, shell: shell))
        case .manual:
            console.out(ManualPage.page(for: root, version: version))
        case .run:
            break
        }
        return console.finish(ExitCode.ok)
    }

    /// Runs a command line of `root`'s program; returns the exit code.
    package static func run(_ root: any CLICommand.Type, _ arguments: [String]) async -> Int32 {
        let parser = ArgumentParser(root: root, version: version)
        let outcome: ParseOutcome
        do {
            outcome = try parser.parse(arguments)
        } catch {
            Console().diag(usageError(error.error, error.command, error.path))
            return ExitCode.usage
        }
        if let code = answer(outcome, root) { return code }
        switch outcome {
        case .version, .help, .completion, .manual:
            return ExitCode.ok  // answered above
        case .run(let type, let parsed, let path):
            let console = Console(verbose: parsed.declares(GlobalOptions.verbose) && parsed.flag(GlobalOptions.verbose))
            let command: any CLICommand
            do {
                command = try type.init(parsed)
            } catch {
                console.diag(usageError(error, type, path))
                return ExitCode.usage
            }
            do {
                return console.finish(try await command.run(console))
            } catch let e as FeliCaError {
                console.error(ErrorHints.message(e))
                return e.isUnavailable ? ExitCode.unavailable : ExitCode.failure
            } catch let e as CLIError {
                console.error(e.message)
                return e.exitCode
            } catch let e as DeviceError {
                // A device string or option the caller got wrong: a usage error.
                console.diag(usageError(UsageError(ErrorHints.message(e)), type, path))
                return ExitCode.usage
            } catch let e as UsageError {
                console.diag(usageError(e, type, path))
                return ExitCode.usage
            } catch let e as HistoryError {
                console.error(ErrorHints.message(e))
                return ExitCode.failure
            } catch let e as DeliveryError {
                console.error(ErrorHints.message(e))
                return ExitCode.failure
            } catch {
                console.error("\(error)")
                return ExitCode.failure
            }
        }
    }

    /// `Error: <what>`, the usage line and where to find more.
    static func usageError(_ error: UsageError, _ command: any CLICommand.Type, _ path: [String]) -> String {
        let name = path.joined(separator: " ")
        return "\(Console.errorLabel()) \(error.message)\nUsage: \(HelpFormatter.usage(command, path: path))\n  See '\(name) --help' for more information."
    }
}

/// Options of the root that every command accepts, before or after its name.
enum GlobalOptions {
    static let verbose = OptionSpec.flag(
        "verbose", short: "v", help: "Print every frame exchanged with the card on stderr as it goes, decoded.")
    static let all: [OptionSpec] = [verbose]
}

/// `felica`: the command table.
struct FelicaRoot: CLICommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            name: "felica",
            abstract: "Read Japanese FeliCa cards (Suica and other transit IC cards, Edy, nanaco, WAON) from USB readers.",
            discussion: "Try it without a reader: felica balance --device virtual:suica",
            options: GlobalOptions.all,
            subcommands: FelicaCommands.all)
    }
}
