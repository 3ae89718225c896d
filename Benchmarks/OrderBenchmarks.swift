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

/// `felica order` at the sizes apps list: 300 cards over 24, 32 and 40 codes, on the
/// fitted iOS model, three populations each: time, method and proven gap of each.
private func orderOptimiserFigures() async throws {
    let model = IOSTimingModel.fitted
    let times = try await ModelCards.positionTimes(model: model, count: 40)
    let clock = ContinuousClock()
    for n in [24, 32, 40] {
        let codes = (0..<n).map { SystemCode(UInt16(0x8000 + $0)) }
        var rows: [String] = []
        var slowest = Duration.zero, widest = 0.0
        for seed in 1...3 {
            let problem = try OrderProblem(codes: codes, population: try population(codes: codes, cards: 300, seed: UInt64(seed)), positionTimes: times)
            let start = clock.now
            let r = OrderOptimizer.optimize(problem)
            let elapsed = start.duration(to: clock.now)
            slowest = max(slowest, elapsed)
            widest = max(widest, r.gap ?? 0)
            let greedy = problem.cost(of: OrderOptimizer.greedy(problem)).expected ?? 0
            let gap = r.method == .exact ? "exact" : r.gap.map { "gap " + fixed($0 * 100, 2) + " %" } ?? "no bound"
            rows.append("\(fixed(elapsed.seconds, 2)) s \(gap) (expected \(fixed(r.cost.expected!, 3)) s, greedy \(fixed(greedy, 3)) s)")
        }
        print("optimiser, \(n) codes, 300 cards: slowest \(fixed(slowest.seconds, 2)) s, widest gap \(fixed(widest * 100, 2)) %; populations: " + rows.joined(separator: "; "))
        record("`felica order`, 300 cards over \(n) codes, three populations (fitted iOS model)",
               "slowest " + fixed(slowest.seconds, 2) + " s, " + (widest == 0 ? "exact" : "widest proven gap " + fixed(widest * 100, 2) + " %"), model: "ios model (Polling positions)")
    }
}

private func orderTimingFigures() async throws {
    let edy = ModelCards.measuredEdySystems
    let positions = Array(0...10) + [20, 40]
    for model in [IOSTimingModel.fitted as any TimingModel, RFTimingModel(), RFTimingModel(bitRate: .kbps424)] {
        let report = try await OrderBenchmark(positions: positions).run(on: .model(model, card: ModelCards.card(systems: edy)))
        let name = "\(model.name)\(model is RFTimingModel ? " \((model as! RFTimingModel).bitRate.rawValue) kbps" : "")"
        print("model \(name): \(describe(report))")
        recordOrdering("`\(name)` model", report, model: model is RFTimingModel ? "rf model, typical card" : "ios model")
    }
    let transport = VirtualTransport(card: ModelCards.card(systems: edy), name: "virtual (212 kbps timing)", timing: .kbps212)
    let report = try await OrderBenchmark(positions: positions, repeatCount: 3).run(on: .device(transport))
    print("device \(transport.name), real clock, 3 runs: \(describe(report))")
    recordOrdering("virtual card with 212 kbps timing (real clock)", report, model: CardModel.virtual212)

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
    recordOrdering("real libnfc + PN532 emulator (real clock)", pn532, model: CardModel.typical)
    let native = try await Device.open(DeviceSpec(.pn532(path: server.path))).transport
    let direct = try await OrderBenchmark(positions: positions, repeatCount: 3).run(on: .device(native))
    await native.close()
    print("device pn532: + PN532 emulator (rf timing), real clock, 3 runs: \(describe(direct))")
    recordOrdering("`pn532:` + PN532 emulator (real clock)", direct, model: CardModel.typical)
}

/// One ordering row: the first Polling, what each listed code adds, and wildcard + Request
/// System Code (the only column that depends on the card's PMm timing).
private func recordOrdering(_ source: String, _ r: OrderBenchmark.Report, model: String) {
    // The first poll as measured (position 0), not the fitted line's intercept.
    let first = r.rows.first { $0.position == 0 }?.mean.map { fixed($0 * 1000, 1) + " ms" } ?? "-"
    let fit = first + " / " + (r.fit.map { fixed($0.slope * 1000, 1) + " ms" } ?? "no fit")
    let listing: String
    switch r.listing {
    case .success(let l): listing = fixed(l.time.seconds * 1000, 1) + " ms"
    case .failure: listing = "not available"
    }
    record("ordering, \(source): first poll / per listed code / wildcard + Request System Code", fit + " / " + listing,
           model: model + "; the Polling columns are fixed slots, the same under either card model")
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
