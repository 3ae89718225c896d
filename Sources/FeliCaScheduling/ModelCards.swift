import FeliCa
import FeliCaSimulation

/// Virtual cards made from a list of systems, for running populations and probes through
/// the timing models.
public enum ModelCards {
    /// The card of the iOS measurements: an Edy card with systems 8B61 and FE00.
    public static let measuredEdySystems: [SystemCode] = [0x8B61, .common]

    /// A virtual card carrying `systems` (no services), with the default PMm.
    public static func card(systems: [SystemCode]) -> VirtualCard {
        VirtualCard(image: CardImage(pmm: CardImage.defaultPMm, systems: systems.map { CardImage.System(code: $0, services: []) }))
    }

    /// `count` system codes none of `systems` answers, for padding a list in front of a
    /// card's system: 0001, 0002, ... skipping wildcard bytes and the card's own codes.
    public static func fillers(lacking systems: [SystemCode], count: Int) -> [SystemCode] {
        var out: [SystemCode] = []
        out.reserveCapacity(count)
        var raw: UInt16 = 1
        while out.count < count && raw < 0xFFFF {
            let code = SystemCode(raw)
            if !code.isWildcard && !systems.contains(where: { $0.matches(code) }) { out.append(code) }
            raw += 1
        }
        return out
    }

    /// Detection time at positions 0..<count under `model`: for each k the runner polls
    /// k codes a one-system card lacks and then its system. Nil = never detected.
    public static func positionTimes(model: any TimingModel, count: Int) async throws(FeliCaError) -> [Double?] {
        let system = SystemCode.common
        let card = card(systems: [system])
        let padding = fillers(lacking: [system], count: max(0, count - 1))
        let runner = PollingRunner(model: model)
        var out: [Double?] = []
        out.reserveCapacity(count)
        for k in 0..<count {
            let clock = SimulatedClock()
            let transport = ModelTransport(card: card, model: model, clock: clock)
            let outcome = try await runner.run(codes: Array(padding.prefix(k)) + [system], on: transport, clock: clock)
            out.append(outcome.detection.map { $0.time.seconds })
        }
        return out
    }
}
