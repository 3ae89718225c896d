import FeliCa
import Synchronization

/// The `virtual:` device: a ``VirtualCard`` behind the `Transport` protocol.
///
/// Without timing it answers at once (tests, the quick start). With timing it waits as
/// long as a real card would: air time at the bit rate plus the PMm response time, and the
/// whole timeout when the card stays silent.
public final class VirtualTransport: Transport {
    public let card: VirtualCard
    public let name: String
    /// Bit rate used for the air time at first; nil = answer instantly.
    public let timing: AirTiming.BitRate?
    public var linkLatency: Duration { .zero }
    /// The rates the session may switch to (`CardSession.useFastestBitRate(for:expectedBlocks:)`); by
    /// default only the one it starts at, as `virtual:` devices run.
    public let bitRates: [AirTiming.BitRate]
    private let rate: Mutex<AirTiming.BitRate>

    public init(card: VirtualCard, name: String, timing: AirTiming.BitRate? = nil, bitRates: [AirTiming.BitRate]? = nil) {
        self.card = card
        self.name = name
        self.timing = timing
        let start = timing ?? .kbps212
        self.bitRates = bitRates ?? [start]
        rate = Mutex(start)
    }

    public var bitRate: AirTiming.BitRate { rate.withLock { $0 } }

    /// No hand moves a virtual card: a watch loop places it and takes it away.
    public var placesCardItself: Bool { true }

    /// Puts the card in the field or takes it away (``VirtualCard/isPresent``).
    public func placeCard(_ present: Bool) { card.isPresent = present }

    public func switchBitRate(to newRate: AirTiming.BitRate) async throws(FeliCaError) {
        guard bitRates.contains(newRate) else {
            throw FeliCaError(.unsupported, "\(name) runs at \(bitRates.map { String($0.rawValue) }.joined(separator: " or ")) kbps, not \(newRate.rawValue)")
        }
        rate.withLock { $0 = newRate }
    }

    public func exchange(_ packet: [UInt8], timeout: Duration) async throws(FeliCaError) -> [UInt8] {
        let now = bitRate
        let reply = card.respond(to: packet, at: now)
        if let timing = timing.map({ _ in now }) {
            // A silent card, or one slower than the timeout, costs the whole timeout.
            let inTime = reply.map { card.responseTime(to: packet, reply: $0, bitRate: timing) }.flatMap { $0 <= timeout ? $0 : nil }
            do {
                try await Task.sleep(for: inTime ?? timeout)
            } catch {
                throw FeliCaError(.cancelled, "\(name): cancelled")
            }
            if inTime == nil { throw FeliCaError(.timeout, "\(name): no answer within \(timeout)") }
        }
        guard let reply else {
            throw FeliCaError(.timeout, "\(name): no answer within \(timeout)")
        }
        return reply
    }

    public func close() async {}
}
