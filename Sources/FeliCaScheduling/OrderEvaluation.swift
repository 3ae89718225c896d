import FeliCa
import FeliCaSimulation

/// How one order of system codes works out for a population, card by card, as the
/// polling runner sees it through virtual cards.
public struct OrderEvaluation: Sendable {
    /// What happened to one card of the population.
    public struct Landing: Hashable, Sendable {
        public var card: Population.Card
        /// Nil when the card was never detected.
        public var detection: Detection?
    }

    public var order: [SystemCode]
    public var landings: [Landing]

    /// Share of the population never detected.
    public var undetectedWeight: Double {
        landings.filter { $0.detection == nil }.reduce(0) { $0 + $1.card.weight }
    }

    /// Expected detection time (seconds) of a detected card; nil when none is.
    public var expected: Double? {
        let detected = landings.filter { $0.detection != nil }
        let w = detected.reduce(0) { $0 + $1.card.weight }
        guard w > OrderCost.tolerance else { return nil }
        return detected.reduce(0) { $0 + $1.card.weight * $1.detection!.time.seconds } / w
    }

    /// Longest detection time of a detected card with weight (seconds).
    public var worst: Double? {
        landings.filter { $0.card.weight > 0 }.compactMap { $0.detection?.time.seconds }.max()
    }

    /// Cards never detected.
    public var undetected: [Population.Card] {
        landings.filter { $0.detection == nil }.map(\.card)
    }

    /// Runs every card of `population` through the runner with `order` under `model`.
    public static func evaluate(order: [SystemCode], population: Population, model: any TimingModel) async throws(FeliCaError) -> OrderEvaluation {
        let runner = PollingRunner(model: model)
        var landings: [Landing] = []
        for card in population.cards {
            let clock = SimulatedClock()
            let transport = ModelTransport(card: ModelCards.card(systems: card.systems), model: model, clock: clock)
            let outcome = try await runner.run(codes: order, on: transport, clock: clock)
            landings.append(Landing(card: card, detection: outcome.detection))
        }
        return OrderEvaluation(order: order, landings: landings)
    }
}
