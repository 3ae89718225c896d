import FeliCa

/// What an order costs: the weight of cards never detected first, then the weighted sum
/// of the detection times of the others. Compared in that order.
public struct OrderCost: Hashable, Sendable, Comparable {
    /// Share of the population never detected.
    public var undetected: Double
    /// Σ weight × detection time (seconds) over detected cards.
    public var weightedTime: Double

    public init(undetected: Double, weightedTime: Double) {
        self.undetected = undetected
        self.weightedTime = weightedTime
    }

    /// Shares below this are rounding noise from normalising weights.
    static let tolerance = 1e-12

    public static func < (a: OrderCost, b: OrderCost) -> Bool {
        if abs(a.undetected - b.undetected) > tolerance { return a.undetected < b.undetected }
        return a.weightedTime < b.weightedTime - tolerance
    }

    /// Expected detection time of a detected card (seconds); nil when none is detected.
    public var expected: Double? {
        let detected = 1 - undetected
        return detected > Self.tolerance ? weightedTime / detected : nil
    }
}

/// One instance of the ordering problem: codes to order, the population, and the time
/// at which a card is detected when its first listed system sits at position k.
public struct OrderProblem: Sendable {
    public let codes: [SystemCode]
    public let population: Population
    /// Detection time in seconds at each position (index = position); nil = the session
    /// ends before a card at that position is detected. At least `codes.count` entries.
    public let positionTimes: [Double?]
    /// For each card, the indices into ``codes`` of the systems it holds, ascending.
    let cardCodes: [[Int]]

    /// Pairs of codes that must keep their order: `before` is listed ahead of `after`
    /// (so a card holding both lands in `before`).
    public let precedence: [(before: SystemCode, after: SystemCode)]
    /// For each code, the indices of the codes that must come before it.
    let predecessors: [[Int]]

    public init(codes: [SystemCode], population: Population, positionTimes: [Double?],
                precedence: [(before: SystemCode, after: SystemCode)] = []) throws(FeliCaError) {
        guard positionTimes.count >= codes.count else {
            throw FeliCaError(.invalidArgument, "order problem: \(positionTimes.count) position times for \(codes.count) codes")
        }
        var predecessors = [[Int]](repeating: [], count: codes.count)
        for (a, b) in precedence {
            guard let i = codes.firstIndex(of: a), let j = codes.firstIndex(of: b) else {
                throw FeliCaError(.invalidArgument, "\(a):\(b): both codes must be among the codes to order (\(codes.map(\.description).joined(separator: ", ")))")
            }
            guard i != j else { throw FeliCaError(.invalidArgument, "\(a):\(b): a code cannot come before itself") }
            if !predecessors[j].contains(i) { predecessors[j].append(i) }
        }
        // Kahn's algorithm: every code must become placeable, else the pairs form a cycle.
        var placed = [Bool](repeating: false, count: codes.count)
        var progress = true
        while progress {
            progress = false
            for j in codes.indices where !placed[j] && predecessors[j].allSatisfy({ placed[$0] }) {
                placed[j] = true
                progress = true
            }
        }
        if let stuck = codes.indices.first(where: { !placed[$0] }) {
            throw FeliCaError(.invalidArgument, "the order constraints form a cycle (through \(codes[stuck]))")
        }
        self.codes = codes
        self.population = population
        self.positionTimes = positionTimes
        self.precedence = precedence
        self.predecessors = predecessors
        cardCodes = population.cards.map { card in
            codes.indices.filter { j in card.systems.contains { $0.matches(codes[j]) } }
        }
    }

    /// Whether `order` keeps every ``precedence`` pair.
    public func satisfiesPrecedence(_ order: [SystemCode]) -> Bool {
        precedence.allSatisfy { p in
            guard let i = order.firstIndex(of: p.before), let j = order.firstIndex(of: p.after) else { return true }
            return i < j
        }
    }

    /// Whether an order given as indices keeps every precedence pair.
    func keepsPrecedence(_ order: [Int]) -> Bool {
        var rank = [Int](repeating: 0, count: codes.count)
        for (p, j) in order.enumerated() { rank[j] = p }
        return predecessors.indices.allSatisfy { j in predecessors[j].allSatisfy { rank[$0] < rank[j] } }
    }

    /// Position of each card's first listed system in `order`, nil when it holds none.
    public func landingPositions(of order: [SystemCode]) -> [Int?] {
        population.cards.map { card in order.firstIndex { code in card.systems.contains { $0.matches(code) } } }
    }

    /// The cost of listing the codes in `order` (a permutation of ``codes``, or a subset).
    public func cost(of order: [SystemCode]) -> OrderCost {
        var cost = OrderCost(undetected: 0, weightedTime: 0)
        for (card, position) in zip(population.cards, landingPositions(of: order)) {
            if let p = position, p < positionTimes.count, let t = positionTimes[p] {
                cost.weightedTime += card.weight * t
            } else {
                cost.undetected += card.weight
            }
        }
        return cost
    }

    /// Cost of an order given as indices into ``codes``.
    func cost(ofIndices order: [Int]) -> OrderCost {
        var rank = [Int](repeating: Int.max, count: codes.count)
        for (p, j) in order.enumerated() { rank[j] = p }
        var cost = OrderCost(undetected: 0, weightedTime: 0)
        for (card, held) in zip(population.cards, cardCodes) {
            let p = held.map { rank[$0] }.min() ?? Int.max
            if p < positionTimes.count, let t = positionTimes[p] {
                cost.weightedTime += card.weight * t
            } else {
                cost.undetected += card.weight
            }
        }
        return cost
    }
}
