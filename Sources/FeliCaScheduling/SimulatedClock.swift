import Synchronization

/// A clock that only moves when told to: timing models advance it by the time each
/// exchange would take, so a 45-second polling sequence is simulated in microseconds.
///
/// Copies share one time line.
public struct SimulatedClock: Clock, Sendable {
    /// A point on the simulated time line: the time elapsed since the clock was made.
    public struct Instant: InstantProtocol, Sendable, Hashable, Comparable {
        public var sinceStart: Duration
        public init(sinceStart: Duration) { self.sinceStart = sinceStart }
        public func advanced(by duration: Duration) -> Instant { Instant(sinceStart: sinceStart + duration) }
        public func duration(to other: Instant) -> Duration { other.sinceStart - sinceStart }
        public static func < (a: Instant, b: Instant) -> Bool { a.sinceStart < b.sinceStart }
    }

    /// Holds the shared time; `Mutex` makes the reads and advances safe from any task.
    private final class Storage: Sendable {
        let elapsed = Mutex<Duration>(.zero)
    }
    private let storage = Storage()

    public init() {}

    public var now: Instant { Instant(sinceStart: storage.elapsed.withLock { $0 }) }
    public var minimumResolution: Duration { .nanoseconds(1) }

    /// Moves the clock forward by `duration` (negative durations are ignored).
    public func advance(by duration: Duration) {
        guard duration > .zero else { return }
        storage.elapsed.withLock { $0 += duration }
    }

    /// Sleeping on a simulated clock moves it to the deadline at once.
    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        try Task.checkCancellation()
        storage.elapsed.withLock { $0 = max($0, deadline.sinceStart) }
    }
}
