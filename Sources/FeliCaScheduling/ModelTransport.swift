import FeliCa
import FeliCaSimulation
import Synchronization

/// A `Transport` that answers from a virtual card and charges each exchange the time a
/// ``TimingModel`` says it takes, on a ``SimulatedClock``: the modelled reader, runnable
/// through the same code as a real one.
///
/// The model owns the timing (Core NFC runs its own polling cycle), so the `timeout`
/// callers pass is not what decides how long an unanswered poll costs.
public final class ModelTransport: Transport {
    public let name: String
    public var linkLatency: Duration { .zero }
    public let card: VirtualCard
    public let model: any TimingModel
    public let clock: SimulatedClock
    /// Whether the start latency has been charged yet; guarded so any task may exchange.
    private let started = Mutex(false)

    public init(card: VirtualCard, model: any TimingModel, clock: SimulatedClock = SimulatedClock(), name: String? = nil) {
        self.card = card
        self.model = model
        self.clock = clock
        self.name = name ?? "model:\(model.name)"
    }

    public func exchange(_ packet: [UInt8], timeout: Duration) async throws(FeliCaError) -> [UInt8] {
        let first = started.withLock { s in
            defer { s = true }
            return !s
        }
        if first { clock.advance(by: model.startLatency) }
        let reply = card.respond(to: packet)
        clock.advance(by: try model.duration(of: packet, reply: reply, card: card))
        guard let reply else {
            throw FeliCaError(.timeout, "no answer from the virtual card on \(name)")
        }
        return reply
    }

    public func close() async {}
}
