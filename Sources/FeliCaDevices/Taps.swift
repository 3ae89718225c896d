import FeliCa
import Synchronization

/// One card placed on the reader: the card, and when the Polling that found it was sent.
public struct Tap: Sendable {
    /// The card, as the Polling (or the reader) found it.
    public let target: Target
    /// When the Polling that found the card was sent: how long the card has been in the
    /// field is measured from here.
    public let polledAt: ContinuousClock.Instant
}

/// Cards as they are tapped on a device, one ``Tap`` each: the watch loop of a kiosk or a
/// gate, as an `AsyncSequence`.
///
/// Each iteration waits for a card to arrive and yields it; the loop body reads it; asking
/// for the next tap waits for that card to leave first, so a card held still is one tap.
/// A card no hand moves (a `virtual:` card, whose transport says `placesCardItself`)
/// is taken away after each tap and placed again after `interval`, by its transport.
///
/// A reader opened with ``Device/OpenOptions/reconnectInterval`` outlives being unplugged:
/// when it is lost (an exchange fails with `FeliCaError.Code.readerGone`, the code every
/// transport gives a reader that left or stopped answering — never a card's absence or
/// silence), the loop says ``Event/readerLost(device:error:)`` once, closes the reader,
/// opens it again by the same device string every `reconnectInterval` until that works,
/// says ``Event/readerBack(device:)`` and goes on. Without it, the loss ends the loop with
/// its error. A card read in full before the loss is not read again if it is still there.
///
/// ```swift
/// let device = try await Device.open("usb")
/// let session = device.session()
/// for try await tap in device.taps(session) {
///     print(tap.target.idm)
/// }
/// ```
public struct Taps: AsyncSequence, Sendable {
    public typealias Element = Tap

    /// What the loop is doing, for a progress line.
    public enum Event: Sendable, Hashable {
        /// Waiting for a card to be placed.
        case waitingForCard
        /// A card was read; waiting for it to leave.
        case waitingForRemoval
        /// The card read last is still on the reader ``Taps/leftOnReader`` after its read:
        /// no next card is read until it leaves. Sent once per tap.
        case stillOnReader(IDm)
        /// The reader named `device` left or stopped answering (`error`, code
        /// `readerGone`); waiting for it to come back. Sent once per loss.
        case readerLost(device: String, error: FeliCaError)
        /// The reader named `device` is open again after ``readerLost(device:error:)``.
        case readerBack(device: String)
        /// Opening the lost reader again failed with `error`: sent for the first failure and
        /// again whenever the failure's code changes (gone from the bus, then no permission
        /// once it is back, say), so a wait that cannot end by itself can be explained.
        case readerStillAway(device: String, error: FeliCaError)
    }

    /// How long a card may stay on the reader after its tap before ``Event/stillOnReader(_:)``.
    public static let leftOnReader: Duration = .seconds(2)

    let session: CardSession
    let interval: Duration
    let onEvent: (@Sendable (Event) -> Void)?
    /// The reader to open again when it is lost; nil: a lost reader ends the loop.
    let reconnecting: ReconnectingTransport?
    /// A loss the loop body met (``readerFailed(_:)``), for the next iteration to handle.
    private let bodyLoss = LossNote()

    /// Taps on `session`'s transport, polled every `interval` for a card and for its leaving;
    /// `reconnecting` (the bottom of `session`'s transport) is opened again when it is lost.
    public init(_ session: CardSession, interval: Duration = .milliseconds(250),
                reconnecting: ReconnectingTransport? = nil, onEvent: (@Sendable (Event) -> Void)? = nil) {
        self.session = session
        self.interval = interval
        self.reconnecting = reconnecting
        self.onEvent = onEvent
    }

    /// Whether a lost reader is opened again rather than ending the loop.
    public var reconnects: Bool { reconnecting != nil }

    /// Tells the loop that reading a tap failed because the reader was lost (`error` has
    /// code `readerGone`): the next iteration waits for the reader instead of ending, and
    /// the card, not read in full, is read again if it is still there. Only when
    /// ``reconnects``; otherwise the caller ends with the error.
    public func readerFailed(_ error: FeliCaError) {
        bodyLoss.error.withLock { $0 = error }
    }

    /// A loss the loop body met, until the loop takes it; shared by the copies of a ``Taps``.
    final class LossNote: Sendable {
        let error = Mutex<FeliCaError?>(nil)
        func take() -> FeliCaError? { error.withLock { e in defer { e = nil }; return e } }
    }

    public func makeAsyncIterator() -> Iterator {
        Iterator(taps: self)
    }

    /// Waits for each card in turn.
    public struct Iterator: AsyncIteratorProtocol {
        let taps: Taps
        /// The card yielded last, until it has left.
        var onReader: Target?

        public mutating func next() async throws -> Tap? {
            if let lost = taps.bodyLoss.take(), let reader = taps.reconnecting {
                onReader = nil
                try await taps.reconnect(reader, after: lost)
            }
            while true {
                do {
                    if let card = onReader {
                        try await taps.waitForRemoval(of: card)
                        onReader = nil
                        // A card no hand moves is placed again after the interval, as a hand would.
                        if taps.session.transport.placesCardItself { try await Task.sleep(for: taps.interval) }
                    }
                    let tap = try await taps.waitForCard()
                    onReader = tap.target
                    return tap
                } catch let error as FeliCaError where error.code == .readerGone && taps.reconnecting != nil {
                    try await taps.reconnect(taps.reconnecting!, after: error)
                }
            }
        }
    }

    /// Says the reader is lost, closes it, and opens it again every `reader.interval` until
    /// that works (or the task is cancelled, which ends the wait at once).
    func reconnect(_ reader: ReconnectingTransport, after error: FeliCaError) async throws {
        onEvent?(.readerLost(device: reader.name, error: error))
        await reader.inner.close()
        var failing: FeliCaError.Code?
        while true {
            try await Task.sleep(for: reader.interval)
            // Not back yet is any failure to open: gone from the bus, not answering yet,
            // still held by the daemon. Only cancellation ends the wait.
            let back: any Transport
            do {
                back = try await reader.reopen()
            } catch let error as FeliCaError {
                if error.code != failing { onEvent?(.readerStillAway(device: reader.name, error: error)) }
                failing = error.code
                continue
            } catch {
                continue
            }
            if Task.isCancelled {
                await back.close()
                throw CancellationError()
            }
            reader.replace(with: back)
            onEvent?(.readerBack(device: reader.name))
            return
        }
    }

    /// Polls until a card answers. `CardSession.detect()` polls at the slowest bit rate,
    /// where every card answers, whatever rate the last card was read at; a reader that will
    /// not forward Polling names the card it found itself.
    func waitForCard() async throws -> Tap {
        session.transport.placeCard(true)
        onEvent?(.waitingForCard)
        while true {
            try Task.checkCancellation()
            let sent = ContinuousClock.now
            do throws(FeliCaError) {
                return Tap(target: try await session.detect(), polledAt: sent)
            } catch {
                guard error.code == .noCard else { throw error }
                try await Task.sleep(for: interval)
            }
        }
    }

    /// Returns once `card` no longer answers.
    func waitForRemoval(of card: Target) async throws {
        session.transport.placeCard(false)
        onEvent?(.waitingForRemoval)
        let since = ContinuousClock.now
        var said = false
        while try await session.isPresent(card) {
            if !said, ContinuousClock.now - since >= Self.leftOnReader {
                onEvent?(.stillOnReader(card.idm))
                said = true
            }
            try await Task.sleep(for: interval)
        }
    }
}

extension Device {
    /// The cards tapped on this device, through `session` (one of ``session(wrapping:)``).
    /// A reader opened with ``OpenOptions/reconnectInterval`` is opened again when it is lost.
    public func taps(_ session: CardSession, interval: Duration = .milliseconds(250),
                     onEvent: (@Sendable (Taps.Event) -> Void)? = nil) -> Taps {
        Taps(session, interval: interval, reconnecting: transport as? ReconnectingTransport, onEvent: onEvent)
    }
}
