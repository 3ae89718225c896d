import Dispatch
import FeliCa
import FeliCaCards
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// `felica watch`: wait for a card, print its purses, wait for it to leave, repeat.
/// Ctrl-C (SIGINT) or SIGTERM ends it cleanly with exit code 0.
struct WatchCommand: CLICommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            name: "watch",
            abstract: "Wait for cards and print the purses of each; Ctrl-C ends.",
            discussion: "With --json each card is one line of JSON (the `felica balance --json` object).",
            options: CommonOptions.card + [
                OptionSpec("count", value: "n", help: "Stop after <n> cards."),
                PurseOutput.allSystems,
                CommonOptions.json,
            ])
    }

    let args: ParsedArguments
    let count: Int?

    init(_ args: ParsedArguments) throws(UsageError) {
        self.args = args
        if let c = args.value("count") {
            guard let n = Int(c), n > 0 else { throw UsageError("option '--count': \"\(c)\" is not a positive number") }
            count = n
        } else {
            count = nil
        }
    }

    /// How often to poll for a card, and for its leaving.
    static let interval: Duration = .milliseconds(250)

    func run(_ console: Console) async throws -> Int32 {
        let session = try await CardContext.session(args, console: console)
        let json = args.flag("json"), limit = count, reader = PurseOutput.reader(.balance, args, stations: nil)
        // Handlers first: a signal that arrives before the loop starts still ends it.
        let stopper = Stopper()
        let signals = Self.onInterrupt { stopper.stop() }
        defer { for s in signals { s.cancel() } }
        let task = Task { () async throws -> Void in
            try await Self.loop(session, reader: reader, json: json, limit: limit, console: console)
        }
        stopper.set(task)
        do {
            try await task.value
        } catch is CancellationError {
        } catch let e as FeliCaError where e.code == .cancelled {
        } catch {
            await session.transport.close()
            throw error
        }
        console.endProgress()
        await session.transport.close()
        return ExitCode.ok
    }

    /// Cancels the watch loop once it exists, or as soon as it is handed over.
    final class Stopper: Sendable {
        private let state = Mutex<(task: Task<Void, any Error>?, stopped: Bool)>((nil, false))

        func set(_ task: Task<Void, any Error>) {
            let stopped = state.withLock { s in s.task = task; return s.stopped }
            if stopped { task.cancel() }
        }

        func stop() {
            state.withLock { s in s.stopped = true; return s.task }?.cancel()
        }
    }

    /// Routes SIGINT and SIGTERM to `handler` instead of killing the process.
    static func onInterrupt(_ handler: @escaping @Sendable () -> Void) -> [any DispatchSourceSignal] {
        [SIGINT, SIGTERM].map { sig in
            signal(sig, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            source.setEventHandler(handler: handler)
            source.resume()
            return source
        }
    }

    static func loop(_ session: CardSession, reader: CardReader, json: Bool, limit: Int?, console: Console) async throws {
        var seen = 0
        while true {
            console.progress("waiting for a card on \(session.transport.name) (Ctrl-C ends)")
            let first = try await waitForCard(session)
            console.endProgress()
            if let report = try await readCard(reader, session, first, console) {
                PurseOutput.diagnostics(report, console)
                if json {
                    JSONOut.print(PurseOutput.json(report, history: false), console)
                } else {
                    console.line("Card \(report.idm)")
                    PurseOutput.balances(report, console)
                    console.line()
                }
            }
            seen += 1
            if let limit, seen >= limit { break }
            console.progress("remove the card")
            while try await session.isPresent(first) {
                try await Task.sleep(for: interval)
            }
        }
    }

    /// Reads the card; nil (after saying so) when it left in the middle.
    static func readCard(_ reader: CardReader, _ session: CardSession, _ first: Target, _ console: Console) async throws(FeliCaError) -> CardReport? {
        do {
            return try await reader.read(session, first: first)
        } catch {
            guard error.code == .timeout || error.code == .cardGone || error.code == .transmission else { throw error }
            console.diag("the card left before it was read (\(error.reason)); hold it still on the reader")
            return nil
        }
    }

    static func waitForCard(_ session: CardSession) async throws -> Target {
        while true {
            try Task.checkCancellation()
            if let r = try await session.poll() {
                return Target(idm: r.idm, pmm: r.pmm, systemCode: r.systemCode)
            }
            try await Task.sleep(for: interval)
        }
    }
}
