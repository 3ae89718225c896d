import FeliCa
import FeliCaEmulators
import FeliCaSimulation
import Testing
@testable import FeliCaScheduling

@Suite struct TimingModelTests {
    /// Source: the iOS 13 measurements (Edy card, mean of 3), Docs/ordering.md.
    @Test(arguments: IOSTimingModel.measurements)
    func iosModelReproducesMeasurement(_ m: IOSTimingModel.Measurement) async throws {
        let bench = OrderBenchmark(positions: [m.position])
        let card = ModelCards.card(systems: ModelCards.measuredEdySystems)
        let report = try await bench.run(on: .model(IOSTimingModel.fitted, card: card))
        let row = try #require(report.rows.first)
        if let expected = m.seconds {
            let got = try #require(row.mean)
            #expect(abs(got - expected) / expected < 0.01, "position \(m.position): \(got) s vs measured \(expected) s")
        } else {
            #expect(!row.detected, "position \(m.position) was never detected on iOS")
        }
    }

    @Test func iosFitIsAboutPointThreeSecondsPerCode() {
        let model = IOSTimingModel.fitted
        #expect(abs(model.perCode.seconds - 0.30) < 0.005)
        #expect(abs(model.firstPollLatency.seconds - 0.0459) < 0.0005)
        #expect(model.sessionLimit == .seconds(45))
    }

    @Test func iosModelRefitsFromOtherData() {
        // A different table gives a different model: the numbers are fitted, not typed in.
        let m = IOSTimingModel(measurements: [.init(position: 0, seconds: 0.1), .init(position: 10, seconds: 2.1)], sessionLimit: nil)
        #expect(abs(m.perCode.seconds - 0.2) < 1e-9)
        #expect(abs(m.firstPollLatency.seconds - 0.1) < 1e-9)
    }

    @Test func benchOverTheWholeRangeCutsAt149() async throws {
        let bench = OrderBenchmark(positions: try PositionList.parse("0-150"))
        let card = ModelCards.card(systems: ModelCards.measuredEdySystems)
        let report = try await bench.run(on: .model(IOSTimingModel.fitted, card: card))
        #expect(report.neverDetected == [149, 150])
        let fit = try #require(report.fit)
        #expect(abs(fit.slope - 0.3013) < 0.001)
        #expect(fit.r2 > 0.9999)
        #expect(report.target == .common)
        // Core NFC cannot poll the wildcard: the side-by-side figure says why instead.
        guard case .failure(let e) = report.listing else { Issue.record("ios listing should be unsupported"); return }
        #expect(e.code == .unsupported)
    }

    @Test func rfModelIsThePhysicalFloor() async throws {
        let model = RFTimingModel()
        let times = try await ModelCards.positionTimes(model: model, count: 150)
        let t0 = try #require(times[0]), t1 = try #require(times[1]), t149 = try #require(times[149])
        // Docs/protocol.md: one Polling round trip is about 4.2 ms at 212 kbps.
        #expect(abs(t0 - 0.0042) < 0.0002)
        #expect(abs((t1 - t0) - 0.0042) < 0.0002)
        // Docs/protocol.md: polling 149 codes one after another can never take less than ~0.6 s.
        #expect(t149 > 0.6 && t149 < 0.7)
        #expect(times.allSatisfy { $0 != nil }, "a PC reader has no session limit")
    }

    @Test func rfAt424IsFasterOnTheAir() async throws {
        let slow = try await ModelCards.positionTimes(model: RFTimingModel(bitRate: .kbps212), count: 3)
        let fast = try await ModelCards.positionTimes(model: RFTimingModel(bitRate: .kbps424), count: 3)
        #expect(fast[2]! < slow[2]!)
    }

    @Test func rfWildcardListingTakesTwoExchanges() async throws {
        let card = ModelCards.card(systems: ModelCards.measuredEdySystems)
        let clock = SimulatedClock()
        let listing = try await PollingRunner(model: RFTimingModel()).listSystems(on: ModelTransport(card: card, model: RFTimingModel(), clock: clock), clock: clock)
        #expect(listing.systems == ModelCards.measuredEdySystems)
        #expect(listing.exchanges == 2)
        #expect(listing.time.seconds > 0.004 && listing.time.seconds < 0.02)
        #expect(card.exchangeCount == 2)
    }

    @Test(arguments: ["ios", "rf"])
    func modelsByName(_ name: String) throws {
        #expect(try TimingModels.named(name).name == name)
    }

    @Test func unknownModelNamesTheChoices() {
        #expect { try TimingModels.named("android") } throws: { ($0 as? FeliCaError)?.reason.contains("ios, rf") == true }
    }
}

@Suite struct LinearFitTests {
    @Test func exactLine() throws {
        let fit = try #require(LinearFit.fit([(0, 1), (1, 3), (2, 5)]))
        #expect(abs(fit.base - 1) < 1e-12 && abs(fit.slope - 2) < 1e-12 && abs(fit.r2 - 1) < 1e-12)
    }

    /// Hand-computed: x 0,1,2,3; y 1,2,2,4 → slope 0.9, base 0.9, r² = 0.81/0.9... (ssRes 0.7, ssTot 4.75).
    @Test func noisyLine() throws {
        let fit = try #require(LinearFit.fit([(0, 1), (1, 2), (2, 2), (3, 4)]))
        #expect(abs(fit.slope - 0.9) < 1e-12)
        #expect(abs(fit.base - 0.9) < 1e-12)
        #expect(abs(fit.r2 - (1 - 0.7 / 4.75)) < 1e-12)
    }

    @Test func needsTwoDistinctX() {
        #expect(LinearFit.fit([(1, 1), (1, 2)]) == nil)
        #expect(LinearFit.fit([]) == nil)
    }
}

@Suite struct PollingRunnerTests {
    @Test func landsInTheFirstListedSystemTheCardHolds() async throws {
        let card = ModelCards.card(systems: [.transit, .common])
        let transport = VirtualTransport(card: card, name: "virtual:test")
        let outcome = try await PollingRunner(transport: transport).run(codes: [0x8B61, .common, .transit], on: transport, clock: ContinuousClock())
        let d = try #require(outcome.detection)
        #expect(d.system == .common && d.position == 1 && outcome.polls == 2)
        #expect(d.idm == card.systems[1].idm)
    }

    @Test func neverDetectedWhenNoCodeMatches() async throws {
        let card = ModelCards.card(systems: [.transit])
        let transport = VirtualTransport(card: card, name: "virtual:test")
        let outcome = try await PollingRunner(transport: transport).run(codes: [0x8B61, .common], on: transport, clock: ContinuousClock())
        #expect(outcome.detection == nil && outcome.polls == 2 && !outcome.endedBySessionLimit)
    }

    @Test func sessionLimitStopsBeforeAPollThatCannotFinish() async throws {
        let model = IOSTimingModel.fitted
        let card = ModelCards.card(systems: [.common])
        let clock = SimulatedClock()
        let codes = ModelCards.fillers(lacking: [.common], count: 200) + [.common]
        let outcome = try await PollingRunner(model: model).run(codes: codes, on: ModelTransport(card: card, model: model, clock: clock), clock: clock)
        #expect(outcome.detection == nil && outcome.endedBySessionLimit)
        #expect(outcome.polls == 149)
        #expect(outcome.elapsed <= .seconds(45))
        #expect(card.exchangeCount == 149, "the virtual card saw every poll")
    }

    @Test func realClockWithTimedVirtualCard() async throws {
        let card = ModelCards.card(systems: [.common])
        let transport = VirtualTransport(card: card, name: "virtual:timed", timing: .kbps212)
        let outcome = try await PollingRunner(transport: transport).run(codes: [0x0001, 0x0002, .common], on: transport, clock: ContinuousClock())
        let d = try #require(outcome.detection)
        #expect(d.position == 2)
        // Two unanswered polls wait out the session's Polling timeout; the hit takes ~4 ms.
        #expect(d.time > .milliseconds(8))
    }

    @Test func fillersAvoidTheCardsSystemsAndWildcards() {
        let f = ModelCards.fillers(lacking: [0x0001, 0x0003], count: 300)
        #expect(f.count == 300 && !f.contains(0x0001) && !f.contains(0x0003) && !f.contains { $0.isWildcard })
        #expect(Set(f).count == 300)
    }

    @Test func simulatedClockOnlyMovesWhenTold() async throws {
        let clock = SimulatedClock()
        let start = clock.now
        clock.advance(by: .milliseconds(5))
        try await clock.sleep(for: .seconds(1))
        #expect(start.duration(to: clock.now) == .milliseconds(1005))
    }
}
