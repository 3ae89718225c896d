import Synchronization

/// A device's thread and the connection it drives, with the skeleton every transport's calls
/// share: refusing calls on a closed or broken device, cancellation passed on to the
/// blocking C call, a host watchdog, and the latch that keeps a device whose call never came
/// back broken. Closed exactly once: by ``close()``, or — for a transport dropped without
/// closing — by a backstop when the last reference goes.
///
/// Transports keep one instead of their own "closed" and "broken" flags, watchdog, close
/// routine and `deinit`.
public final class OwnedDevice<Connection: Sendable, Failure: Error>: Sendable {
    /// What a call that cannot run throws.
    public struct Refusals: Sendable {
        /// The device was closed.
        public var closed: Failure
        /// The calling task was cancelled before the call started.
        public var cancelled: Failure

        public init(closed: Failure, cancelled: Failure) {
            self.closed = closed
            self.cancelled = cancelled
        }
    }

    /// The thread every call to the connection runs on.
    public let thread: DeviceThread
    /// The open connection (libnfc device, libusb handle, pcsc-lite context...).
    public let connection: Connection
    private let refusals: Refusals
    private let closeLimit: Duration?
    private let shutDown: @Sendable (Connection) -> Void
    private let state = Mutex(State())

    private struct State: Sendable {
        var closed = false
        /// What the call that overran its limit threw; every later call throws it.
        var broken: Failure?
    }

    /// Takes over `connection`, driven on `thread`; `close` releases it (run on the thread,
    /// given up after `closeLimit` when one is set).
    public init(thread: DeviceThread, connection: Connection, refusals: Refusals, closeLimit: Duration? = nil,
                close: @escaping @Sendable (Connection) -> Void) {
        self.thread = thread
        self.connection = connection
        self.refusals = refusals
        self.closeLimit = closeLimit
        shutDown = close
    }

    /// Whether ``close()`` has been called.
    public var isClosed: Bool { state.withLock { $0.closed } }

    /// What a call that never came back threw, thrown again by every later call; nil while
    /// the device works.
    public var broken: Failure? { state.withLock { $0.broken } }

    /// Runs `body` with the connection on the device thread and returns what it returns.
    ///
    /// Refused at once (``Refusals``) on a closed device or a cancelled task, and with
    /// ``broken`` on a broken one. Cancelling the task while `body` runs calls `onCancel`
    /// (from any thread), which should make the blocking call return early (abort the
    /// command).
    public func run<T: Sendable>(onCancel: @escaping @Sendable (Connection) -> Void = { _ in },
                                 _ body: @escaping @Sendable (Connection) throws(Failure) -> T) async throws(Failure) -> T {
        try await perform(watchdog: nil, onCancel: onCancel, body)
    }

    /// ``run(onCancel:_:)`` with a host watchdog: when `body` has not returned within
    /// `limit`, the caller gets `stuck`, and the device counts as broken from then on — the
    /// thread may still be inside the C call, and every later call would queue behind it.
    public func run<T: Sendable>(limit: Duration, stuck: Failure, onCancel: @escaping @Sendable (Connection) -> Void = { _ in },
                                 _ body: @escaping @Sendable (Connection) throws(Failure) -> T) async throws(Failure) -> T {
        try await perform(watchdog: (limit, stuck), onCancel: onCancel, body)
    }

    private func perform<T: Sendable>(watchdog: (limit: Duration, stuck: Failure)?, onCancel: @escaping @Sendable (Connection) -> Void,
                                      _ body: @escaping @Sendable (Connection) throws(Failure) -> T) async throws(Failure) -> T {
        let (closed, broken) = state.withLock { ($0.closed, $0.broken) }
        if let broken { throw broken }
        guard !closed else { throw refusals.closed }
        if Task.isCancelled { throw refusals.cancelled }
        let connection = connection
        let thread = thread
        let outcome: Result<T, Failure> = await withTaskCancellationHandler {
            let job: @Sendable () throws(Failure) -> T = { () throws(Failure) -> T in try body(connection) }
            guard let (limit, stuck) = watchdog else {
                do throws(Failure) {
                    return .success(try await thread.run(job))
                } catch {
                    return .failure(error)
                }
            }
            guard let outcome = await thread.run(limit: limit, job) else {
                state.withLock { $0.broken = stuck }
                return .failure(stuck)
            }
            return outcome
        } onCancel: {
            onCancel(connection)
        }
        return try outcome.get()
    }

    /// Releases the connection on its thread, then ends the thread. Later calls do nothing.
    /// A broken device (a call stuck on the thread would keep the release from ever running),
    /// or a release that overruns `closeLimit`, is only marked closed: the process's exit
    /// releases it.
    public func close() async {
        let (first, broken) = state.withLock { s -> (Bool, Failure?) in
            defer { s.closed = true }
            return (!s.closed, s.broken)
        }
        guard first, broken == nil else { return }
        let connection = connection
        let shutDown = shutDown
        if let closeLimit {
            guard await thread.run(limit: closeLimit, { () throws(Never) in shutDown(connection) }) != nil else { return }
        } else {
            await thread.run { shutDown(connection) }
        }
        thread.stop()
    }

    deinit {
        guard !state.withLock({ $0.closed }) else { return }
        let connection = connection
        let thread = thread
        let shutDown = shutDown
        Task.detached {
            await thread.run { shutDown(connection) }
            thread.stop()
        }
    }
}
