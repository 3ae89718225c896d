import FeliCa
import FeliCaSimulation

/// `felica bench order`: detection time of a card whose system sits at each position of
/// the list behind codes it lacks, on a timing model or a real reader, next to the time
/// wildcard Polling + Request System Code takes for the same card.
public struct OrderBenchmark: Sendable {
    /// What is measured.
    public enum Reader: Sendable {
        /// A timing model, with the virtual card it polls.
        case model(any TimingModel, card: VirtualCard)
        /// A device: whatever card is on it, timed by the real clock.
        case device(any Transport)
    }

    /// One position's runs.
    public struct Row: Hashable, Sendable {
        public var position: Int
        /// Detection time of each run in seconds; nil = that run never detected the card.
        public var samples: [Double?]
        /// Mean of the detected runs.
        public var mean: Double? {
            let d = samples.compactMap { $0 }
            return d.isEmpty ? nil : d.reduce(0, +) / Double(d.count)
        }
        /// Whether every run detected the card.
        public var detected: Bool { samples.allSatisfy { $0 != nil } }
    }

    /// Everything one benchmark found.
    public struct Report: Sendable {
        /// `ios`, `rf`, or the device string.
        public var source: String
        /// The model's parameters and their source; nil for a device.
        public var modelSummary: String?
        /// The card's systems and the one moved down the list.
        public var systems: [SystemCode]
        public var target: SystemCode
        public var rows: [Row]
        /// Least-squares line through the fully detected rows (position, mean).
        public var fit: LinearFit?
        public var sessionLimit: Duration?
        /// Wildcard Polling + Request System Code for the same card, or why it cannot run.
        public var listing: Result<SystemListing, FeliCaError>

        /// Positions where some run never detected the card.
        public var neverDetected: [Int] { rows.filter { !$0.detected }.map(\.position) }
    }

    public var positions: [Int]
    public var repeatCount: Int
    /// The system to move down the list (default: FE00 when the card has it, else its first).
    public var target: SystemCode?

    public init(positions: [Int], repeatCount: Int = 1, target: SystemCode? = nil) {
        self.positions = positions
        self.repeatCount = max(1, repeatCount)
        self.target = target
    }

    /// Runs the benchmark; `progress(done, total)` is called after every run.
    public func run(on reader: Reader, progress: (@Sendable (Int, Int) -> Void)? = nil) async throws(FeliCaError) -> Report {
        switch reader {
        case .model(let model, let card):
            let runner = PollingRunner(model: model)
            let listing: Result<SystemListing, FeliCaError>
            do {
                let clock = SimulatedClock()
                listing = .success(try await runner.listSystems(on: ModelTransport(card: card, model: model, clock: clock), clock: clock))
            } catch where error.code == .unsupported {
                listing = .failure(error)
            }
            let systems = card.systems.map(\.code)
            return try await measure(source: model.name, summary: model.summary, systems: systems, runner: runner, listing: listing, progress: progress) { codes throws(FeliCaError) in
                let clock = SimulatedClock()
                return try await runner.run(codes: codes, on: ModelTransport(card: card, model: model, clock: clock), clock: clock)
            }
        case .device(let transport):
            let runner = PollingRunner(transport: transport)
            let clock = ContinuousClock()
            let found = try await runner.listSystems(on: transport, clock: clock)
            return try await measure(source: transport.name, summary: nil, systems: found.systems, runner: runner, listing: .success(found), progress: progress) { codes throws(FeliCaError) in
                try await runner.run(codes: codes, on: transport, clock: clock)
            }
        }
    }

    private func measure(
        source: String, summary: String?, systems: [SystemCode], runner: PollingRunner,
        listing: Result<SystemListing, FeliCaError>, progress: (@Sendable (Int, Int) -> Void)?,
        poll: (_ codes: [SystemCode]) async throws(FeliCaError) -> PollingOutcome
    ) async throws(FeliCaError) -> Report {
        guard !systems.isEmpty else { throw FeliCaError(.noCard, "\(source): the card lists no systems") }
        let target = self.target ?? (systems.contains(.common) ? .common : systems[0])
        guard systems.contains(target) else {
            throw FeliCaError(.invalidArgument, "the card has no system \(target) (it has \(systems.map(\.description).joined(separator: ", ")))")
        }
        let padding = ModelCards.fillers(lacking: systems, count: positions.max() ?? 0)
        let total = positions.count * repeatCount
        var rows: [Row] = []
        var done = 0
        for position in positions {
            var row = Row(position: position, samples: [])
            for _ in 0..<repeatCount {
                let outcome = try await poll(Array(padding.prefix(position)) + [target])
                row.samples.append(outcome.detection.map { $0.time.seconds })
                done += 1
                progress?(done, total)
            }
            rows.append(row)
        }
        let points = rows.compactMap { r in r.detected ? r.mean.map { (x: Double(r.position), y: $0) } : nil }
        return Report(source: source, modelSummary: summary, systems: systems, target: target, rows: rows,
                      fit: LinearFit.fit(points), sessionLimit: runner.sessionLimit, listing: listing)
    }
}

/// Position lists: `0-150`, `0,1,2,148-150`.
public enum PositionList {
    /// Largest position accepted (a list longer than any reader session).
    public static let maximum = 1_000

    /// Parses comma-separated positions and inclusive ranges into sorted, unique positions.
    public static func parse(_ text: String) throws(FeliCaError) -> [Int] {
        var out = Set<Int>()
        let items = text.split(separator: ",", omittingEmptySubsequences: false)
        for item in items {
            let parts = item.split(separator: "-", omittingEmptySubsequences: false)
            guard (1...2).contains(parts.count), let a = Int(parts[0]), let b = Int(parts[parts.count - 1]) else {
                throw FeliCaError(.invalidArgument, "\"\(item)\" is not a position or a range like 0-150")
            }
            guard a >= 0, b <= maximum else {
                throw FeliCaError(.invalidArgument, "\"\(item)\" is outside 0-\(maximum)")
            }
            guard a <= b else {
                throw FeliCaError(.invalidArgument, "range \"\(item)\" runs backwards")
            }
            for p in a...b { out.insert(p) }
        }
        return out.sorted()
    }
}
