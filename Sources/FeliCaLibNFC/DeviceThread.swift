import Dispatch
import Foundation
import Synchronization

/// A thread of its own for one device: every blocking libnfc call runs here, one at a
/// time, never on Swift's shared cooperative pool.
final class DeviceThread: Sendable {
    private struct Queue {
        var jobs: [@Sendable () -> Void] = []
        var stopping = false
    }

    /// What the thread and its callers share (a class, so the thread can hold it).
    private final class Shared: Sendable {
        let queue = Mutex(Queue())
        let wake = DispatchSemaphore(value: 0)
        let finished = DispatchSemaphore(value: 0)

        func loop() {
            while true {
                wake.wait()
                let (job, stop) = queue.withLock { q -> ((@Sendable () -> Void)?, Bool) in
                    q.jobs.isEmpty ? (nil, q.stopping) : (q.jobs.removeFirst(), false)
                }
                if let job { job() } else if stop { break }
            }
            finished.signal()
        }
    }

    private let shared = Shared()

    init(name: String) {
        let thread = Thread { [shared] in shared.loop() }
        thread.name = name
        thread.start()
    }

    /// Runs `body` on the device thread and returns its result.
    func run<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { (c: CheckedContinuation<T, Never>) in
            let accepted = shared.queue.withLock { q -> Bool in
                guard !q.stopping else { return false }
                q.jobs.append { c.resume(returning: body()) }
                return true
            }
            if accepted {
                shared.wake.signal()
            } else {
                // Stopped: run inline rather than leave the caller waiting forever.
                c.resume(returning: body())
            }
        }
    }

    /// Finishes the queued jobs, then ends the thread and waits for it. Call once.
    func stop() {
        let first = shared.queue.withLock { q -> Bool in
            defer { q.stopping = true }
            return !q.stopping
        }
        guard first else { return }
        shared.wake.signal()
        shared.finished.wait()
    }
}
