import FeliCa
import Synchronization

/// Gives a card time to be placed on a reader that does not wait by itself (libnfc, USB),
/// so `--wait` means the same for every reader: until a card has answered a Polling, a
/// Polling that no card answers is sent again, every ``retryPause``, until `wait` has passed
/// since the first one. A Polling for one system is not repeated when a card answers the
/// wildcard: that card lacks the system, and waiting would not change it.
///
/// Retries are not exchanges of the command: a `--trace` recorder, wrapped around this
/// transport, records only the Polling that counted.
final class CardWaitTransport: TransportWrapper {
    let inner: any Transport
    let wait: Duration
    /// Called once, when the first Polling went unanswered and waiting begins.
    let onWaiting: @Sendable (Duration) -> Void
    /// Set once a card has answered (or the command went past Polling): no more waiting.
    private let settled = Mutex(false)

    static let retryPause: Duration = .milliseconds(100)

    init(wrapping inner: any Transport, wait: Duration, onWaiting: @escaping @Sendable (Duration) -> Void = { _ in }) {
        self.inner = inner
        self.wait = wait
        self.onWaiting = onWaiting
    }


    func exchange(_ packet: [UInt8], timeout: Duration) async throws(FeliCaError) -> [UInt8] {
        guard !settled.withLock({ $0 }), let polling = PollingCommand(packet: packet) else {
            settled.withLock { $0 = true }
            return try await inner.exchange(packet, timeout: timeout)
        }
        let clock = ContinuousClock()
        let deadline = clock.now + wait
        var told = false
        while true {
            do {
                let reply = try await inner.exchange(packet, timeout: timeout)
                settled.withLock { $0 = true }
                return reply
            } catch where error.code == .timeout {
                guard clock.now < deadline else { throw error }
                if !polling.systemCode.isWildcard {
                    let wildcard = PollingCommand(systemCode: .wildcard, requestCode: .none, timeSlot: polling.timeSlot)
                    if (try? await inner.exchange(wildcard.encode(), timeout: timeout)) != nil {
                        settled.withLock { $0 = true }
                        throw error
                    }
                }
                if !told {
                    onWaiting(wait)
                    told = true
                }
                do {
                    try await Task.sleep(for: min(Self.retryPause, max(.zero, deadline - clock.now)))
                } catch {
                    throw FeliCaError(.cancelled, "\(name): cancelled while waiting for a card")
                }
            }
        }
    }
}
