import Foundation
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
/// `@unchecked Sendable`: `jobs` and `finishing` are only read or written with `condition`
/// locked; `ended` is a semaphore, safe from any thread.
private final class Worker: @unchecked Sendable {
    private let condition = NSCondition()
    private var jobs: [@Sendable () -> Void] = []
    private var finishing = false
    private let ended = DispatchSemaphore(value: 0)

    init(name: String) {
        // The thread keeps the worker alive until `finish` lets its loop end.
        let thread = Thread { [self] in self.loop() }
        thread.name = name
        thread.start()
    }

    /// Queues `job`; false once the worker is finishing (the job was not taken).
    func submit(_ job: @escaping @Sendable () -> Void) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard !finishing else { return false }
        jobs.append(job)
        condition.signal()
        return true
    }

    /// Ends the thread once the jobs already submitted have run; with `wait`, returns only
    /// then. Only the first call has an effect.
    func finish(wait: Bool) {
        condition.lock()
        let first = !finishing
        finishing = true
        condition.signal()
        condition.unlock()
        if first && wait { ended.wait() }
    }

    private func loop() {
        while true {
            condition.lock()
            while jobs.isEmpty && !finishing { condition.wait() }
            if jobs.isEmpty {
                condition.unlock()
                ended.signal()
                return
            }
            let job = jobs.removeFirst()
            condition.unlock()
            job()
        }
    }
}

/// One process-wide thread that fires alarms for calls that overrun their limit.
///
/// `@unchecked Sendable`: `alarms` and `nextID` are only read or written with `condition`
/// locked.
private final class Watchdog: @unchecked Sendable {
    static let shared = Watchdog()

    private let condition = NSCondition()
    private var alarms: [Int: (deadline: ContinuousClock.Instant, action: @Sendable () -> Void)] = [:]
    private var nextID = 0
    private let clock = ContinuousClock()

    private init() {
        let thread = Thread { [self] in self.loop() }
        thread.name = "felica.watchdog"
        thread.start()
    }

    /// Runs `action` after `delay` unless cancelled first; returns the alarm's id.
    func schedule(after delay: Duration, _ action: @escaping @Sendable () -> Void) -> Int {
        condition.lock()
        defer { condition.unlock() }
        nextID += 1
        alarms[nextID] = (clock.now + delay, action)
        condition.signal()
        return nextID
    }

    func cancel(_ id: Int) {
        condition.lock()
        alarms[id] = nil
        condition.unlock()
    }

    private func loop() {
        condition.lock()
        while true {
            guard let (id, next) = alarms.min(by: { $0.value.deadline < $1.value.deadline }) else {
                condition.wait()
                continue
            }
            let left = next.deadline - clock.now
            if left > .zero {
                let (s, atto) = left.components
                _ = condition.wait(until: Date(timeIntervalSinceNow: Double(s) + Double(atto) / 1e18))
                continue
            }
            alarms[id] = nil
            condition.unlock()
            next.action()
            condition.lock()
        }
    }
}
