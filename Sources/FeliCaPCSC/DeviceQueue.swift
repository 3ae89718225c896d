import Dispatch
import FeliCa
import Synchronization

/// The one serial queue a device's blocking pcsc-lite calls run on, off Swift's
/// cooperative pool.
final class DeviceQueue: Sendable {
    private let queue: DispatchQueue

    init(label: String) {
        queue = DispatchQueue(label: label)
    }

    /// Runs `body` on the queue and waits for it.
    func run<T: Sendable>(_ body: @escaping @Sendable () throws(FeliCaError) -> T) async throws(FeliCaError) -> T {
        let result: Result<T, FeliCaError> = await withCheckedContinuation { continuation in
            queue.async { continuation.resume(returning: Result { () throws(FeliCaError) -> T in try body() }) }
        }
        return try result.get()
    }

    /// Runs `body` on the queue; when it has not returned after `limit`, gives up waiting
    /// and throws `onExpiry` (the call keeps running on the queue; the caller must treat the
    /// device as broken).
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
            queue.async { finish(Result { () throws(FeliCaError) -> T in try body() }) }
            let (s, atto) = limit.components
            let nanos = max(0, s) * 1_000_000_000 + atto / 1_000_000_000
            DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(Int(clamping: nanos))) {
                finish(.failure(onExpiry))
            }
        }
        return try result.get()
    }
}
