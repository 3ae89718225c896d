import FeliCaTransportSupport
import Synchronization

/// The messages for one ``Destination``: kept in a ``Spool`` first, then delivered in
/// order, one at a time, on a thread of their own, each sent again with growing pauses
/// (a quarter of a second, doubling to 30 s) until acknowledged — so a destination that is
/// down or slow never holds up the caller, and nothing is lost while it is.
public final class Outbox: Sendable {
    /// The messages not delivered yet.
    public let spool: Spool
    /// Where they go.
    public let destination: any Destination
    private let thread: DeviceThread
    private let wakes: AsyncStream<Void>
    private let wake: AsyncStream<Void>.Continuation
    private let onEvent: @Sendable (Event) -> Void
    private let failing = Atomic<Bool>(false)

    /// Whether the last try failed: delivery is waiting to try again.
    public var isFailing: Bool { failing.load(ordering: .relaxed) }

    /// The pause after the first failed try.
    public static let firstRetry: Duration = .milliseconds(250)
    /// The longest pause between tries.
    public static let longestRetry: Duration = .seconds(30)

    /// What delivery is doing, for the caller to report.
    public enum Event: Sendable, Equatable {
        /// The message `sequence` was acknowledged and removed from the spool.
        case delivered(sequence: UInt64)
        /// A try failed for `reason`; `waiting` messages wait. Said when the failures
        /// start and when their reason changes, not at every try.
        case failing(reason: String, waiting: Int)
        /// Delivery works again after failing; `waiting` messages still wait.
        case recovered(waiting: Int)
        /// The spool itself failed (a full disk, a removed directory).
        case spoolFailed(DeliveryError)
    }

    /// An outbox over `spool` for `destination`; nothing is sent until ``run()``.
    public init(spool: Spool, destination: any Destination, onEvent: @escaping @Sendable (Event) -> Void = { _ in }) {
        self.spool = spool
        self.destination = destination
        self.onEvent = onEvent
        thread = DeviceThread(name: "felica.deliver")
        (wakes, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// Keeps `body` in the spool (on disk when this returns) and wakes the delivery; false
    /// when the spool is full and `body` was not kept.
    public func add(_ body: [UInt8]) throws(DeliveryError) -> Bool {
        let kept = try spool.append(body)
        wake.yield()
        return kept
    }

    /// Tells the destination the reader's state, in order with the messages.
    public func readerState(_ state: ReaderState) async {
        let destination = destination
        await thread.run { destination.readerState(state) }
    }

    /// Closes the destination after the try under way, if any.
    public func close() async {
        let destination = destination
        await thread.run { destination.close() }
    }

    /// Delivers what the spool holds, oldest first, then each message as it is added,
    /// until the task is cancelled.
    public func run() async {
        var wakes = wakes.makeAsyncIterator()
        var retry = Self.firstRetry
        var failing: String?
        let destination = destination
        while !Task.isCancelled {
            let message: Spool.Message?
            do {
                message = try spool.oldest()
            } catch {
                onEvent(.spoolFailed(error))
                do { try await Task.sleep(for: Self.longestRetry) } catch { return }
                continue
            }
            guard let message else {
                if await wakes.next() == nil { return }
                continue
            }
            let body = message.body
            switch await thread.run({ destination.deliver(body) }) {
            case .delivered:
                do {
                    try spool.remove(message.sequence)
                } catch {
                    onEvent(.spoolFailed(error))
                    do { try await Task.sleep(for: Self.longestRetry) } catch { return }
                    continue
                }
                if failing != nil { onEvent(.recovered(waiting: spool.count)) }
                failing = nil
                self.failing.store(false, ordering: .relaxed)
                retry = Self.firstRetry
                onEvent(.delivered(sequence: message.sequence))
            case .failed(let reason):
                if reason != failing { onEvent(.failing(reason: reason, waiting: spool.count)) }
                failing = reason
                self.failing.store(true, ordering: .relaxed)
                do { try await Task.sleep(for: retry) } catch { return }
                retry = min(retry * 2, Self.longestRetry)
            }
        }
    }
}
