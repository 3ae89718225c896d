import Synchronization

/// The one thread a device's blocking C calls run on (libnfc, pcsc-lite, libusb), one at a
/// time, in the order they were submitted — never on Swift's cooperative pool or
/// Dispatch's shared pool, so neither a busy pool nor a stuck call elsewhere delays them.
///
/// Each transport owns one; ``stop()`` ends it once the queued calls have run, and
/// dropping the last reference does the same without waiting.
public final class DeviceThread: Sendable {
    private let worker: Worker

    /// Starts the thread; `name` shows in debuggers and `top -H`.
    public init(name: String) {
        worker = Worker(name: name)
    }

    deinit { worker.finish(wait: false) }

    /// Runs `body` on the device thread and returns what it returns or throws.
    ///
    /// After ``stop()`` the body runs on the caller's thread instead, so a late call (a
    /// backstop `close` in a `deinit`) still completes rather than wait forever.
    public func run<T: Sendable, E: Error>(_ body: @escaping @Sendable () throws(E) -> T) async throws(E) -> T {
        let result: Result<T, E> = await withCheckedContinuation { continuation in
            let job: @Sendable () -> Void = { continuation.resume(returning: Result { () throws(E) -> T in try body() }) }
            if !worker.submit(job) { job() }
        }
        return try result.get()
    }

    /// Runs `body` on the device thread and returns what it returned or threw — or nil when
    /// it has not returned after `limit`: the caller stops waiting, but the call keeps running
    /// on the thread and later calls queue behind it, so the caller must treat the device as
    /// broken (``OwnedDevice`` does).
    public func run<T: Sendable, E: Error>(limit: Duration, _ body: @escaping @Sendable () throws(E) -> T) async -> Result<T, E>? {
        let done = Mutex(false)
        return await withCheckedContinuation { (continuation: CheckedContinuation<Result<T, E>?, Never>) in
            let finish: @Sendable (Result<T, E>?) -> Void = { r in
                let first = done.withLock { d in
                    defer { d = true }
                    return !d
                }
                if first { continuation.resume(returning: r) }
            }
            let alarm = Watchdog.shared.schedule(after: limit) { finish(nil) }
            let job: @Sendable () -> Void = {
                let r = Result { () throws(E) -> T in try body() }
                Watchdog.shared.cancel(alarm)
                finish(r)
            }
            if !worker.submit(job) { job() }
        }
    }

    /// Runs the calls already queued, then ends the thread and waits for it to end.
    /// Later calls to ``run(_:)`` run on their caller's thread. Calling it again does nothing.
    public func stop() {
        worker.finish(wait: true)
    }
}

/// A thread that runs submitted jobs in order until told to finish.
///
/// `@unchecked Sendable`: `jobs`, `finishing` and `thread` are only read or written with
/// `condition` locked.
private final class Worker: @unchecked Sendable {
    private let condition = ThreadCondition()
    private var jobs: [@Sendable () -> Void] = []
    private var finishing = false
    private var thread: OwnedThread?

    init(name: String) {
        // The thread keeps the worker alive until `finish` lets its loop end.
        let thread = OwnedThread(name: name) { [self] in self.loop() }
        condition.withLock {
            self.thread = thread
            // No thread to be had: every job runs on its caller's thread (`submit` refuses).
            if thread == nil { finishing = true }
        }
    }

    /// Queues `job`; false once the worker is finishing (the job was not taken).
    func submit(_ job: @escaping @Sendable () -> Void) -> Bool {
        condition.withLock {
            guard !finishing else { return false }
            jobs.append(job)
            condition.signal()
            return true
        }
    }

    /// Ends the thread once the jobs already submitted have run; with `wait`, returns only
    /// then. Only the first call has an effect.
    func finish(wait: Bool) {
        let thread = condition.withLock { () -> OwnedThread? in
            let first = !finishing
            finishing = true
            condition.signal()
            return first ? self.thread : nil
        }
        if wait { thread?.join() }
    }

    private func loop() {
        while true {
            let job = condition.withLock { () -> (@Sendable () -> Void)? in
                while jobs.isEmpty && !finishing { condition.wait() }
                return jobs.isEmpty ? nil : jobs.removeFirst()
            }
            guard let job else { return }
            job()
        }
    }
}

/// One process-wide thread that fires alarms: the limits of ``DeviceThread/run(limit:_:)``
/// and the host-side deadlines of the transports (libnfc's watchdog).
///
/// `@unchecked Sendable`: `alarms` and `nextID` are only read or written with `condition`
/// locked.
public final class Watchdog: @unchecked Sendable {
    /// The one watchdog; its thread starts with the first alarm.
    public static let shared = Watchdog()

    /// An alarm scheduled, to cancel it with.
    public struct Alarm: Sendable, Hashable {
        fileprivate let id: Int
    }

    private let condition = ThreadCondition()
    private var alarms: [Int: (deadline: ContinuousClock.Instant, action: @Sendable () -> Void)] = [:]
    private var nextID = 0
    private var started = false

    private init() {}

    /// Runs `action` on a thread of its own after `delay` unless cancelled first.
    @discardableResult
    public func schedule(after delay: Duration, _ action: @escaping @Sendable () -> Void) -> Alarm {
        condition.withLock {
            if !started {
                // The thread runs for the life of the process.
                started = OwnedThread.detach(name: "felica.watchdog") { [self] in self.loop() }
            }
            nextID += 1
            alarms[nextID] = (ContinuousClock.now + delay, action)
            condition.signal()
            return Alarm(id: nextID)
        }
    }

    /// Cancels `alarm`; nothing happens when it has fired already.
    public func cancel(_ alarm: Alarm) {
        condition.withLock { alarms[alarm.id] = nil }
    }

    private func loop() {
        while true {
            let action = condition.withLock { () -> (@Sendable () -> Void)? in
                guard let (id, next) = alarms.min(by: { $0.value.deadline < $1.value.deadline }) else {
                    condition.wait()
                    return nil
                }
                guard ContinuousClock.now >= next.deadline else {
                    condition.wait(until: next.deadline)
                    return nil
                }
                alarms[id] = nil
                return next.action
            }
            // On a thread of its own: an action that blocks (libnfc's abort waits for the
            // device's lock) must not hold back the alarms of other devices.
            if let action, !OwnedThread.detach(name: "felica.alarm", action) { action() }
        }
    }
}
