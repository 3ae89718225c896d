import FeliCa
import FeliCaSimulation

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
/// A `virtual:` card never leaves by itself: it is taken away after each tap and placed
/// again after `interval`.
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
    }

    /// How long a card may stay on the reader after its tap before ``Event/stillOnReader(_:)``.
    public static let leftOnReader: Duration = .seconds(2)

    let session: CardSession
    let virtualCard: VirtualCard?
    let interval: Duration
    let onEvent: (@Sendable (Event) -> Void)?

    /// Taps on `session`'s transport, polled every `interval` for a card and for its leaving.
    public init(_ session: CardSession, virtualCard: VirtualCard? = nil, interval: Duration = .milliseconds(250),
                onEvent: (@Sendable (Event) -> Void)? = nil) {
        self.session = session
        self.virtualCard = virtualCard
        self.interval = interval
        self.onEvent = onEvent
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
            if let card = onReader {
                try await taps.waitForRemoval(of: card)
                onReader = nil
                // A virtual card is placed again after the interval, as a hand would.
                if taps.virtualCard != nil { try await Task.sleep(for: taps.interval) }
            }
            let tap = try await taps.waitForCard()
            onReader = tap.target
            return tap
        }
    }

    /// Polls until a card answers. `CardSession.detect()` polls at the slowest bit rate,
    /// where every card answers, whatever rate the last card was read at; a reader that will
    /// not forward Polling names the card it found itself.
    func waitForCard() async throws -> Tap {
        virtualCard?.isPresent = true
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
        virtualCard?.isPresent = false
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
    public func taps(_ session: CardSession, interval: Duration = .milliseconds(250),
                     onEvent: (@Sendable (Taps.Event) -> Void)? = nil) -> Taps {
        Taps(session, virtualCard: virtualCard, interval: interval, onEvent: onEvent)
    }
}
