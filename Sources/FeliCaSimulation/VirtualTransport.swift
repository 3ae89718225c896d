import FeliCa

/// The `virtual:` device: a ``VirtualCard`` behind the `Transport` protocol.
///
/// Without timing it answers at once (tests, the quick start). With timing it waits as
/// long as a real card would: air time at the bit rate plus the PMm response time, and the
/// whole timeout when the card stays silent.
public final class VirtualTransport: Transport {
    public let card: VirtualCard
    public let name: String
    /// Bit rate used for the air time; nil = answer instantly.
    public let timing: AirTiming.BitRate?
    public var linkLatency: Duration { .zero }

    public init(card: VirtualCard, name: String, timing: AirTiming.BitRate? = nil) {
        self.card = card
        self.name = name
        self.timing = timing
    }

    public func exchange(_ packet: [UInt8], timeout: Duration) async throws(FeliCaError) -> [UInt8] {
        let reply = card.respond(to: packet)
        if let timing {
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
