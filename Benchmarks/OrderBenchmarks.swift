import FeliCa
import FeliCaDevices
import FeliCaCLI
import FeliCaScheduling
import FeliCaEmulators
import FeliCaSimulation

#if canImport(Glibc)
import Glibc
#endif

/// System-code ordering figures: optimiser speed, and per-code delay and wildcard + Request
/// System Code time on the timing models and through the timed virtual card.
func orderBenchmarks() async {
    guard section("order") else { return }
    do {
        try await orderOptimiserFigures()
        try await orderTimingFigures()
    } catch {
        print("order benchmarks failed: \(error)")
    }
}


/// `cards` cards, each holding 1-4 of `codes` codes, with random shares.
private func population(codes: [SystemCode], cards: Int, seed: UInt64) throws -> Population {
    var rng = SeededRandom(state: seed)
    return try Population(cards: (0..<cards).map { i in
        let held = (0..<Int.random(in: 1...4, using: &rng)).map { _ in codes.randomElement(using: &rng)! }
        return Population.Card(name: "card\(i)", weight: Double.random(in: 0.01...1, using: &rng), systems: Array(Set(held)).sorted())
    })
}

private func orderOptimiserFigures() async throws {
    let model = IOSTimingModel.fitted
    let times = try await ModelCards.positionTimes(model: model, count: 24)
    let clock = ContinuousClock()
    for n in [16, 20, 24] {
        let codes = (0..<n).map { SystemCode(UInt16(0x8000 + $0)) }
        var elapsed: [Duration] = []
        var last: OptimizedOrder?
        var greedyCost = 0.0
        for seed in 1...5 {
            let problem = try OrderProblem(codes: codes, population: try population(codes: codes, cards: 300, seed: UInt64(seed)), positionTimes: times)
            let start = clock.now
            last = OrderOptimizer.optimize(problem)
            elapsed.append(start.duration(to: clock.now))
            greedyCost = problem.cost(of: OrderOptimizer.greedy(problem)).expected ?? 0
        }
        let r = last!
        let gap = r.gap.map { fixed($0 * 100, 3) + " % gap to the lower bound" } ?? "exact"
        print("optimiser, \(n) codes, 300 cards: median \(fixed(elapsed.sorted()[2].seconds * 1000, 3)) ms over 5 populations (\(r.method.rawValue), \(gap)); last: expected \(fixed(r.cost.expected!, 3)) s vs greedy \(fixed(greedyCost, 3)) s")
    }
}

private func orderTimingFigures() async throws {
    let edy = ModelCards.measuredEdySystems
    let positions = Array(0...10) + [20, 40]
    for model in [IOSTimingModel.fitted as any TimingModel, RFTimingModel(), RFTimingModel(bitRate: .kbps424)] {
        let report = try await OrderBenchmark(positions: positions).run(on: .model(model, card: ModelCards.card(systems: edy)))
        print("model \(model.name)\(model is RFTimingModel ? " \((model as! RFTimingModel).bitRate.rawValue) kbps" : ""): \(describe(report))")
    }
    let transport = VirtualTransport(card: ModelCards.card(systems: edy), name: "virtual (212 kbps timing)", timing: .kbps212)
    let report = try await OrderBenchmark(positions: positions, repeatCount: 3).run(on: .device(transport))
    print("device \(transport.name), real clock, 3 runs: \(describe(report))")

    // Real libnfc against the PN532 emulator on a pty, with its rf timing.
    setenv("LIBNFC_AUTO_SCAN", "false", 1)
    setenv("LIBNFC_LOG_LEVEL", "0", 1)
    guard let server = try? PN532Server(card: ModelCards.card(systems: edy), options: .init(timing: true)) else {
        print("PN532 emulator: cannot start it, skipped")
        return
    }
    server.start()
    defer { server.stop() }
    let reader = try await Device.open(DeviceSpec(.libnfc(connstring: server.connectionString))).transport
    let pn532 = try await OrderBenchmark(positions: positions, repeatCount: 3).run(on: .device(reader))
    await reader.close()
    print("device libnfc + PN532 emulator (rf timing), real clock, 3 runs: \(describe(pn532))")
}

private func describe(_ r: OrderBenchmark.Report) -> String {
    let fit = r.fit.map { "per code \(fixed($0.slope * 1000, 3)) ms, base \(fixed($0.base * 1000, 3)) ms, r² \(fixed($0.r2, 3))" } ?? "no fit"
    let listing: String
    switch r.listing {
    case .success(let l): listing = "wildcard + Request System Code \(fixed(l.time.seconds * 1000, 3)) ms"
    case .failure: listing = "wildcard + Request System Code not available"
    }
    return fit + "; " + listing
}
