import FeliCa

/// An order found by ``OrderOptimizer`` and how good it is known to be.
public struct OptimizedOrder: Hashable, Sendable {
    /// How the order was found.
    public enum Method: String, Hashable, Sendable {
        /// Dynamic programming over subsets: no order is better.
        case exact
        /// Greedy start improved by exact re-ordering of sliding windows and seeded kicks.
        case heuristic
    }

    public var order: [SystemCode]
    public var cost: OrderCost
    public var method: Method
    /// A weighted time no order can beat (seconds), for heuristic results; equal to
    /// `cost.weightedTime` for exact ones. Nil when no bound is known (the session limit
    /// leaves cards undetected).
    public var lowerBound: Double?

    /// Relative distance to the lower bound: (cost − bound) / bound.
    public var gap: Double? {
        guard let b = lowerBound, b > 0 else { return lowerBound == nil ? nil : 0 }
        return max(0, cost.weightedTime - b) / b
    }
}

/// Finds the order of system codes that minimises the expected detection time of a
/// population — min-sum set cover, where the greedy choice (most weight first) is not
/// optimal.
///
/// Codes no card holds, and codes whose cards all hold another listed code too
/// (dominated), can only cover cards that an earlier code already covers, so they go to
/// the end; the rest is solved exactly when at most ``defaultExactLimit`` codes remain.
public enum OrderOptimizer {
    /// Largest number of useful codes solved exactly: 2^n subsets of 8 bytes each
    /// (24 codes: 128 MiB and 2^24 × 12 steps).
    public static let defaultExactLimit = 24
    /// Hard ceiling of the subset DP (its memory doubles with each code).
    public static let exactCeiling = 24
    /// Time a heuristic result may take, its lower bound's search included.
    public static let defaultTimeLimit = Duration.seconds(8)
    /// Width of the windows the heuristic re-orders exactly.
    public static let windowWidth = 12

    /// The best order: exact up to `exactLimit` useful codes, heuristic with a lower bound
    /// beyond (the bound's search stops `timeLimit` after the start; more time can only
    /// tighten it).
    public static func optimize(_ problem: OrderProblem, exactLimit: Int = defaultExactLimit, timeLimit: Duration = defaultTimeLimit) -> OptimizedOrder {
        let deadline = ContinuousClock().now.advanced(by: timeLimit)
        let (useful, tail) = reduce(problem)
        let order: [Int]
        let method: OptimizedOrder.Method
        if useful.count <= min(exactLimit, exactCeiling) {
            order = exactOrder(problem, codes: useful)
            method = .exact
        } else {
            order = iteratedSearch(problem, start: greedyIndices(problem, among: useful))
            method = .heuristic
        }
        let full = order + tail
        let cost = problem.cost(ofIndices: full)
        let bound = method == .exact ? cost.weightedTime : lowerBound(problem, useful: useful, deadline: deadline)
        return OptimizedOrder(order: full.map { problem.codes[$0] }, cost: cost, method: method, lowerBound: bound)
    }

    /// The classic greedy order: at each position the code covering the most weight not
    /// yet covered (ties: the earlier listed code); useless codes keep their order at the end.
    public static func greedy(_ problem: OrderProblem) -> [SystemCode] {
        let all = Array(problem.codes.indices)
        let picked = greedyIndices(problem, among: all)
        let rest = all.filter { !picked.contains($0) }
        return (picked + rest).map { problem.codes[$0] }
    }

    /// Tries every permutation: the reference the tests hold the optimiser to (n ≤ 9).
    public static func bruteForce(_ problem: OrderProblem) -> (order: [SystemCode], cost: OrderCost) {
        var indices = Array(problem.codes.indices)
        var best = (order: indices, cost: problem.cost(ofIndices: indices))
        // Heap's algorithm, iterative.
        var c = [Int](repeating: 0, count: indices.count)
        var i = 1
        while i < indices.count {
            if c[i] < i {
                indices.swapAt(i % 2 == 0 ? 0 : c[i], i)
                let cost = problem.cost(ofIndices: indices)
                if problem.keepsPrecedence(indices) && (!problem.keepsPrecedence(best.order) || cost < best.cost) { best = (indices, cost) }
                c[i] += 1
                i = 1
            } else {
                c[i] = 0
                i += 1
            }
        }
        return (best.order.map { problem.codes[$0] }, best.cost)
    }

    // MARK: - Reduction

    /// Splits the codes into useful ones and a tail (held by no card, or dominated by an
    /// earlier-kept code whose cards are a superset), both in list order.
    static func reduce(_ problem: OrderProblem) -> (useful: [Int], tail: [Int]) {
        var cardsOf = [Set<Int>](repeating: [], count: problem.codes.count)
        for (card, held) in problem.cardCodes.enumerated() where problem.population.cards[card].weight > 0 {
            for j in held { cardsOf[j].insert(card) }
        }
        var constrained = Set<Int>()
        for (j, preds) in problem.predecessors.enumerated() where !preds.isEmpty { constrained.insert(j); constrained.formUnion(preds) }
        var useful: [Int] = [], tail: [Int] = []
        for j in problem.codes.indices {
            // Codes in an order constraint stay in the search: moving them could break it.
            if constrained.contains(j) { useful.append(j); continue }
            if cardsOf[j].isEmpty { tail.append(j); continue }
            let dominated = problem.codes.indices.contains { k in
                k != j && !constrained.contains(k) && !cardsOf[k].isEmpty && cardsOf[j].isSubset(of: cardsOf[k]) && (cardsOf[j] != cardsOf[k] || k < j)
            }
            if dominated { tail.append(j) } else { useful.append(j) }
        }
        return (useful, tail)
    }

    // MARK: - Exact

    /// Dynamic programming over subsets of m codes already placed, for cards with the
    /// given weights and masks (bit i = holds code i), position k costing `times[start + k]`.
    /// Returns the best order as code bits.
    /// `before[c]`: bits of the codes that must precede code c (0 = free).
    ///
    /// With U(S) the weight of the cards no code of S detects and t(k) the time at
    /// position k, an order S₁ ⊂ S₂ ⊂ … costs Σₖ t(k)·(U(Sₖ) − U(Sₖ₊₁)) =
    /// t(0)·U(∅) + Σ_{k≥1} (t(k) − t(k−1))·U(Sₖ) − t(L−1)·U(S_L) (Abel summation, L the
    /// positions the session reaches). So the best prefix ending in set S costs
    /// (t(|S|) − t(|S|−1))·U(S) plus the best over its predecessors S∖{c}: one value per
    /// subset, a plain minimum over its bits, and U and the values share one array
    /// (U(S) is read just before the value of S overwrites it). 24 codes: 2^24 × 9 bytes.
    static func subsetDP(masks: [(mask: UInt32, weight: Double)], count m: Int, times: ArraySlice<Double?>, before: [UInt32]) -> [Int] {
        guard m > 0 else { return [] }
        precondition(m <= 30, "subset DP over \(m) codes")
        let size = 1 << m, full = size - 1
        var t: [Double] = []
        for k in 0..<m {
            let i = times.startIndex + k
            guard i < times.endIndex, let x = times[i] else { break }
            t.append(x)
        }
        let reach = t.count           // positions the session reaches (≤ m)
        var delta = [Double](repeating: 0, count: m + 1)
        for k in stride(from: 1, to: min(reach, m), by: 1) { delta[k] = t[k] - t[k - 1] }
        let constrained = before.contains { $0 != 0 }
        /// Whether code c may be the last of set s (its predecessors are in s).
        func allowed(_ c: Int, _ s: Int) -> Bool { !constrained || Int(before[c]) & ~(s ^ (1 << c)) == 0 }
        var value = [Double](repeating: 0, count: size)
        var chosen = reach == 0 ? 0 : full   // the set whose order is rebuilt
        value.withUnsafeMutableBufferPointer { v in
            // U(S) = Σ weight of cards with mask ∩ S = ∅, i.e. S ⊆ ~mask: a sum over supersets.
            for (mask, w) in masks where mask != 0 { v[full ^ Int(mask)] += w }
            for bit in 0..<m {
                let b = 1 << bit
                for base in stride(from: 0, to: size, by: 2 * b) {
                    for i in base..<(base + b) { v[i] += v[i + b] }
                }
            }
            var bestCost = OrderCost(undetected: .infinity, weightedTime: .infinity)
            v[0] = 0
            for s in 1..<size {
                let k = s.nonzeroBitCount
                if k > reach { v[s] = .infinity; continue }
                var best = Double.infinity
                var x = s
                if constrained {
                    while x != 0 {
                        let c = x.trailingZeroBitCount
                        x &= x - 1
                        if allowed(c, s) { best = min(best, v[s ^ (1 << c)]) }
                    }
                } else {
                    while x != 0 {
                        best = min(best, v[s ^ (x & -x)])
                        x &= x - 1
                    }
                }
                let u = v[s]
                if k == reach && reach < m {
                    // The session ends here: fewest undetected first, then time.
                    let cost = OrderCost(undetected: u, weightedTime: best - t[reach - 1] * u)
                    if best < .infinity && cost < bestCost { (bestCost, chosen) = (cost, s) }
                    v[s] = .infinity
                } else {
                    v[s] = best + delta[k] * u
                }
            }
        }
        // Walk back: a set's predecessor with the smallest value is on a best path.
        var order: [Int] = []
        var s = chosen
        while s != 0 {
            var pick = -1, best = Double.infinity
            var x = s
            while x != 0 {
                let c = x.trailingZeroBitCount
                x &= x - 1
                if allowed(c, s), value[s ^ (1 << c)] <= best { (pick, best) = (c, value[s ^ (1 << c)]) }
            }
            order.append(pick)
            s ^= 1 << pick
        }
        order.reverse()
        // Codes past the session's end: any order that keeps the constraints.
        var placed = UInt32(truncatingIfNeeded: chosen)
        while order.count < m {
            let c = (0..<m).first { placed & (1 << UInt32($0)) == 0 && before[$0] & ~placed == 0 }!
            order.append(c)
            placed |= 1 << UInt32(c)
        }
        return order
    }

    /// Exact order of `codes` (indices into the problem's codes).
    static func exactOrder(_ problem: OrderProblem, codes: [Int]) -> [Int] {
        guard !codes.isEmpty else { return [] }
        var bitOf = [Int: Int]()
        for (i, j) in codes.enumerated() { bitOf[j] = i }
        var byMask: [UInt32: Double] = [:]
        for (card, held) in problem.cardCodes.enumerated() {
            var mask: UInt32 = 0
            for j in held { if let b = bitOf[j] { mask |= 1 << UInt32(b) } }
            byMask[mask, default: 0] += problem.population.cards[card].weight
        }
        let masks = byMask.map { (mask: $0.key, weight: $0.value) }
        let before = codes.map { j in problem.predecessors[j].reduce(UInt32(0)) { m, p in bitOf[p].map { m | 1 << UInt32($0) } ?? m } }
        return subsetDP(masks: masks, count: codes.count, times: problem.positionTimes[...], before: before).map { codes[$0] }
    }

    // MARK: - Heuristic

    static func greedyIndices(_ problem: OrderProblem, among candidates: [Int]) -> [Int] {
        var covered = [Bool](repeating: false, count: problem.population.cards.count)
        var cardsOf = [[Int]](repeating: [], count: problem.codes.count)
        for (card, held) in problem.cardCodes.enumerated() { for j in held { cardsOf[j].append(card) } }
        var left = candidates
        var order: [Int] = []
        while !left.isEmpty {
            var best = -1, bestGain = -1.0
            for (i, j) in left.enumerated() where problem.predecessors[j].allSatisfy({ !left.contains($0) }) {
                let gain = cardsOf[j].reduce(0.0) { covered[$1] ? $0 : $0 + problem.population.cards[$1].weight }
                if gain > bestGain { best = i; bestGain = gain }
            }
            let j = left.remove(at: best)
            order.append(j)
            for card in cardsOf[j] { covered[card] = true }
        }
        return order
    }

    /// Re-orders every window of ``windowWidth`` consecutive positions exactly, given the
    /// codes before it, until a full pass improves nothing (at most 100 passes).
    static func improveWindows(_ problem: OrderProblem, order start: [Int]) -> [Int] {
        var order = start
        let w = min(windowWidth, order.count)
        guard w >= 2 else { return order }
        for _ in 0..<100 {
            var improved = false
            for s in 0...(order.count - w) {
                let window = Array(order[s..<(s + w)])
                let before = Set(order[..<s])
                var bitOf = [Int: Int]()
                for (i, j) in window.enumerated() { bitOf[j] = i }
                var byMask: [UInt32: Double] = [:]
                for (card, held) in problem.cardCodes.enumerated() where !held.contains(where: before.contains) {
                    var mask: UInt32 = 0
                    for j in held { if let b = bitOf[j] { mask |= 1 << UInt32(b) } }
                    if mask != 0 { byMask[mask, default: 0] += problem.population.cards[card].weight }
                }
                let masks = byMask.map { (mask: $0.key, weight: $0.value) }
                let constraints = window.map { j in problem.predecessors[j].reduce(UInt32(0)) { m, p in bitOf[p].map { m | 1 << UInt32($0) } ?? m } }
                let local = subsetDP(masks: masks, count: w, times: problem.positionTimes[s...], before: constraints).map { window[$0] }
                var candidate = order
                candidate.replaceSubrange(s..<(s + w), with: local)
                if problem.cost(ofIndices: candidate) < problem.cost(ofIndices: order) {
                    order = candidate
                    improved = true
                }
            }
            if !improved { break }
        }
        return order
    }

    /// Kicks tried by `iteratedSearch` after the first local optimum.
    public static let kicks = 24

    /// Iterated local search: window improvement, then repeatedly move a random block of
    /// codes elsewhere and improve again, keeping the best order seen. The random
    /// numbers are seeded, so results are reproducible.
    static func iteratedSearch(_ problem: OrderProblem, start: [Int]) -> [Int] {
        var best = improveWindows(problem, order: start)
        var bestCost = problem.cost(ofIndices: best)
        guard best.count > windowWidth else { return best }
        var rng = SeededRandom(state: 0x5EED_F31C_A000_0000 ^ UInt64(best.count))
        for _ in 0..<kicks {
            var candidate = best
            let length = Int.random(in: 1...3, using: &rng)
            let from = Int.random(in: 0...(candidate.count - length), using: &rng)
            let block = Array(candidate[from..<(from + length)])
            candidate.removeSubrange(from..<(from + length))
            candidate.insert(contentsOf: block, at: Int.random(in: 0...candidate.count, using: &rng))
            guard problem.keepsPrecedence(candidate) else { continue }
            candidate = improveWindows(problem, order: candidate)
            let cost = problem.cost(ofIndices: candidate)
            if cost < bestCost { best = candidate; bestCost = cost }
        }
        return best
    }

    // MARK: - Lower bound

    /// A weighted time no order of the useful codes can beat. With t(k) the time at
    /// position k (non-decreasing) and U_k the weight still uncovered after k codes,
    /// any order costs t(0)·D + Σ_{k≥1} (t(k) − t(k−1))·U_k, and U_k ≥ D − C_k where C_k
    /// bounds what any k codes can cover (``CoverageBounds``, searched until `deadline`).
    /// Nil when the session limit cuts the list or the times decrease somewhere.
    static func lowerBound(_ problem: OrderProblem, useful: [Int], deadline: ContinuousClock.Instant) -> Double? {
        let m = useful.count
        guard m > 0 else { return 0 }
        var times: [Double] = []
        for k in 0..<m {
            guard let t = problem.positionTimes[k], times.last.map({ t >= $0 }) ?? true else { return nil }
            times.append(t)
        }
        var bitOf = [Int: Int]()
        for (i, j) in useful.enumerated() { bitOf[j] = i }
        let cards = zip(problem.cardCodes, problem.population.cards).map { held, card in
            (codes: held.compactMap { bitOf[$0] }, weight: card.weight)
        }
        let detectable = cards.reduce(0.0) { $1.codes.isEmpty ? $0 : $0 + $1.weight }
        let cover = CoverageBounds(cards: cards, codeCount: m).bounds(deadline: deadline)
        var total = times[0] * detectable
        for k in 1..<m { total += (times[k] - times[k - 1]) * max(0, detectable - cover[k]) }
        return total
    }
}

/// SplitMix64: a small seeded generator, so the heuristic gives the same order every run
/// (and benchmarks and tests draw the same populations).
public struct SeededRandom: RandomNumberGenerator, Sendable {
    public var state: UInt64
    public init(state: UInt64) { self.state = state }
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
