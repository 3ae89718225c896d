import FeliCaFiles
import FeliCaTransportSupport
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A command run for each event (`felica watch --exec`): through `/bin/sh -c`, with the
/// event's JSON on its standard input and its fields in its environment, one run at a
/// time in order, on a thread of its own, each ended (SIGTERM, then SIGKILL a second
/// later, to its whole process group) when it overruns its time limit. Its standard output
/// goes to the caller's standard error: standard output carries felica's results only.
///
/// The caller never waits: ``run(input:environment:)`` queues and returns. How each run
/// went is told to `onOutcome`; a queue already holding ``maximumQueued`` runs drops the
/// new one (said too).
public final class CommandHook: Sendable {
    /// The command line, as given to `/bin/sh -c`.
    public let command: String
    /// How long one run may take.
    public let limit: Duration
    /// How many runs may wait behind the one under way.
    public static let maximumQueued = 100

    private let thread: DeviceThread
    private let queue: AsyncStream<Run>.Continuation
    private let worker: Task<Void, Never>
    private let onOutcome: @Sendable (Outcome) -> Void

    /// One run asked for.
    struct Run: Sendable {
        let input: [UInt8]
        let environment: [String: String]
    }

    /// How one run went.
    public struct Outcome: Sendable, Equatable {
        /// What happened.
        public enum Kind: Sendable, Equatable {
            /// It exited with status 0.
            case succeeded
            /// It exited with another status, or was ended by a signal.
            case failed(ChildProcess.Ending)
            /// It overran the time limit and was ended.
            case timedOut
            /// It could not be started (`/bin/sh` missing).
            case notStarted(String)
            /// The queue was full: this run was dropped.
            case dropped
        }
        public let kind: Kind
        /// The environment it was given (for the caller's message: the card's IDm).
        public let environment: [String: String]
        /// How long it ran.
        public let elapsed: Duration
    }

    /// Runs `command` for each event, each for at most `limit`.
    public init(command: String, limit: Duration, onOutcome: @escaping @Sendable (Outcome) -> Void) {
        self.command = command
        self.limit = limit
        self.onOutcome = onOutcome
        let thread = DeviceThread(name: "felica.exec")
        self.thread = thread
        let (runs, queue) = AsyncStream.makeStream(of: Run.self, bufferingPolicy: .unbounded)
        self.queue = queue
        let queued = Counter()
        self.counter = queued
        worker = Task { [command, limit] in
            for await run in runs {
                let outcome = await thread.run { Self.execute(command, run, limit: limit) }
                queued.value.subtract(1, ordering: .relaxed)
                onOutcome(outcome)
            }
        }
    }

    /// Queued and running, shared with the worker task.
    private final class Counter: Sendable {
        let value = Atomic<Int>(0)
    }
    private let counter: Counter

    /// Queues a run with `input` on standard input and `environment` added to this
    /// process's; returns at once. False when the queue was full (the run is dropped,
    /// and `onOutcome` told).
    @discardableResult
    public func run(input: [UInt8], environment: [String: String]) -> Bool {
        let before = counter.value.add(1, ordering: .relaxed).oldValue
        guard before <= Self.maximumQueued else {
            counter.value.subtract(1, ordering: .relaxed)
            onOutcome(Outcome(kind: .dropped, environment: environment, elapsed: .zero))
            return false
        }
        queue.yield(Run(input: input, environment: environment))
        return true
    }

    /// Waits until the runs queued so far have ended, or `deadline`; how many are left.
    public func finish(until deadline: ContinuousClock.Instant) async -> Int {
        while counter.value.load(ordering: .relaxed) > 0 && ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(10))
        }
        return counter.value.load(ordering: .relaxed)
    }

    deinit {
        queue.finish()
    }

    /// One run, on the hook's thread: start, feed, wait, end it if it overruns.
    static func execute(_ command: String, _ run: Run, limit: Duration) -> Outcome {
        let started = ContinuousClock.now
        func outcome(_ kind: Outcome.Kind) -> Outcome {
            Outcome(kind: kind, environment: run.environment, elapsed: ContinuousClock.now - started)
        }
        // A socket rather than a pipe for standard input: a command that exits without
        // reading makes the write fail with EPIPE (MSG_NOSIGNAL), not kill us by SIGPIPE.
        var pair: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0 else {
            return outcome(.notStarted("cannot create a socket pair: \(String(cString: strerror(errno)))"))
        }
        var environment = Self.currentEnvironment().filter { entry in
            !run.environment.keys.contains { entry.hasPrefix($0 + "=") }
        }
        environment += run.environment.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        let pid: pid_t
        do {
            pid = try ChildProcess.spawn(["/bin/sh", "-c", command], redirections: [(pair[1], 0), (2, 1)],
                                         environment: environment, ownGroup: true)
        } catch {
            close(pair[0]); close(pair[1])
            return outcome(.notStarted(error.reason))
        }
        close(pair[1])
        _ = SystemCalls.writeAll(run.input) { send(pair[0], $0, $1, Int32(MSG_NOSIGNAL)) }
        shutdown(pair[0], Int32(SHUT_WR))
        close(pair[0])
        if let ending = ChildProcess.wait(pid, until: started + limit) {
            return outcome(ending == .exited(0) ? .succeeded : .failed(ending))
        }
        ChildProcess.kill(pid, SIGTERM)
        if ChildProcess.wait(pid, until: .now + .seconds(1)) == nil {
            ChildProcess.kill(pid, SIGKILL)
            _ = ChildProcess.wait(pid)
        }
        return outcome(.timedOut)
    }

    /// This process's environment, `NAME=value` each.
    static func currentEnvironment() -> [String] {
        var entries: [String] = []
        var p = environ
        while let entry = p.pointee {
            entries.append(String(cString: entry))
            p += 1
        }
        return entries
    }
}
