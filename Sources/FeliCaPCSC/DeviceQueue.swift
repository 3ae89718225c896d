import FeliCa
import Foundation
import Synchronization

/// The one thread a device's blocking pcsc-lite calls run on, off Swift's cooperative pool
/// and off Dispatch's shared pool, so neither a busy pool nor a stuck call elsewhere can
/// delay them.
final class DeviceQueue: Sendable {
    private let worker: Worker

    init(label: String) {
        worker = Worker(label: label)
    }

    deinit { worker.finish() }

    /// Runs `body` on the device thread and waits for it.
    func run<T: Sendable>(_ body: @escaping @Sendable () throws(FeliCaError) -> T) async throws(FeliCaError) -> T {
        let result: Result<T, FeliCaError> = await withCheckedContinuation { continuation in
            worker.submit { continuation.resume(returning: Result { () throws(FeliCaError) -> T in try body() }) }
        }
        return try result.get()
    }

    /// Runs `body` on the device thread; when it has not returned after `limit`, stops
    /// waiting and throws `onExpiry` (the call keeps running on the thread; the caller must
    /// treat the device as broken).
    func run<T: Sendable>(limit: Duration, onExpiry: FeliCaError, _ body: @escaping @Sendable () throws(FeliCaError) -> T) async throws(FeliCaError) -> T {
        let done = Mutex(false)
        let result: Result<T, FeliCaError> = await withCheckedContinuation { continuation in
            let finish: @Sendable (Result<T, FeliCaError>) -> Void = { r in
                let first = done.withLock { d in
                    defer { d = true }
                    return !d
                }
                if first { continuation.resume(returning: r) }
            }
            let alarm = Watchdog.shared.schedule(after: limit) { finish(.failure(onExpiry)) }
            worker.submit {
                let r = Result { () throws(FeliCaError) -> T in try body() }
                Watchdog.shared.cancel(alarm)
                finish(r)
            }
        }
        return try result.get()
    }
}

/// A thread that runs submitted jobs in order until told to finish.
///
/// `@unchecked Sendable`: `jobs` and `finished` are only read or written with `condition`
/// locked.
private final class Worker: @unchecked Sendable {
    private let condition = NSCondition()
    private var jobs: [@Sendable () -> Void] = []
    private var finished = false

    init(label: String) {
        // The thread keeps the worker alive until `finish()` lets its loop end.
        let thread = Thread { [self] in self.loop() }
        thread.name = label
        thread.start()
    }

    func submit(_ job: @escaping @Sendable () -> Void) {
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    /// Ends the thread once the jobs already submitted have run.
    func finish() {
        condition.lock()
        finished = true
        condition.signal()
        condition.unlock()
    }

    private func loop() {
        while true {
            condition.lock()
            while jobs.isEmpty && !finished { condition.wait() }
            if jobs.isEmpty {
                condition.unlock()
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
        thread.name = "felica.pcsc.watchdog"
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
