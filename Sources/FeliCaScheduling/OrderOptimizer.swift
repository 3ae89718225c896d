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
    /// Largest number of useful codes solved exactly (2^n × n steps; 20 takes about 0.1 s).
    public static let defaultExactLimit = 20
    /// Width of the windows the heuristic re-orders exactly.
    public static let windowWidth = 12

    /// The best order: exact up to `exactLimit` useful codes, heuristic with a lower bound beyond.
    public static func optimize(_ problem: OrderProblem, exactLimit: Int = defaultExactLimit) -> OptimizedOrder {
        let (useful, tail) = reduce(problem)
        let order: [Int]
        let method: OptimizedOrder.Method
        // 24 codes already need 2^24 states of 17 bytes: the hard ceiling of the DP.
        if useful.count <= min(exactLimit, 24) {
            order = exactOrder(problem, codes: useful)
            method = .exact
        } else {
            order = iteratedSearch(problem, start: greedyIndices(problem, among: useful))
            method = .heuristic
        }
        let full = order + tail
        let cost = problem.cost(ofIndices: full)
        let bound = method == .exact ? cost.weightedTime : lowerBound(problem, useful: useful)
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
    static func subsetDP(masks: [(mask: UInt32, weight: Double)], count m: Int, times: ArraySlice<Double?>, before: [UInt32]) -> [Int] {
        let size = 1 << m
        let full = UInt32(size - 1)
        // g[T] = weight of cards whose mask ⊆ T (zeta transform); covered(S) = total − g[~S].
        var g = [Double](repeating: 0, count: size)
        var total = 0.0
        for (mask, w) in masks { g[Int(mask)] += w; total += w }
        for bit in 0..<m {
            let b = 1 << bit
            for t in 0..<size where t & b != 0 { g[t] += g[t ^ b] }
        }
        var covered = [Double](repeating: 0, count: size)
        for s in 0..<size { covered[s] = total - g[Int(full ^ UInt32(s))] }

        var undetected = [Double](repeating: .infinity, count: size)
        var weighted = [Double](repeating: .infinity, count: size)
        var last = [UInt8](repeating: 0, count: size)
        undetected[0] = 0
        weighted[0] = 0
        let base = times.startIndex
        for s in 0..<size where undetected[s] < .infinity {
            let k = s.nonzeroBitCount
            let t = base + k < times.endIndex ? times[base + k] : nil
            for c in 0..<m where s & (1 << c) == 0 && before[c] & ~UInt32(s) == 0 {
                let n = s | (1 << c)
                let newly = covered[n] - covered[s]
                var u = undetected[s], w = weighted[s]
                if let t { w += newly * t } else { u += newly }
                if OrderCost(undetected: u, weightedTime: w) < OrderCost(undetected: undetected[n], weightedTime: weighted[n]) {
                    undetected[n] = u
                    weighted[n] = w
                    last[n] = UInt8(c)
                }
            }
        }
        var order: [Int] = []
        var s = size - 1
        while s != 0 {
            let c = Int(last[s])
            order.append(c)
            s &= ~(1 << c)
        }
        return order.reversed()
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
    /// bounds what k codes can cover: exact by enumeration while that is cheap, then
    /// C_{k+1} ≤ min(C_k + largest single cover, C_k·(k+1)/k, sum of the k+1 largest covers).
    /// Nil when the session limit cuts the list or the times decrease somewhere.
    static func lowerBound(_ problem: OrderProblem, useful: [Int]) -> Double? {
        let m = useful.count
        guard m > 0 else { return 0 }
        var times: [Double] = []
        for k in 0..<m {
            guard let t = problem.positionTimes[k], times.last.map({ t >= $0 }) ?? true else { return nil }
            times.append(t)
        }
        let cards = problem.population.cards
        let words = (cards.count + 63) / 64
        var sets = [[UInt64]](repeating: [UInt64](repeating: 0, count: words), count: m)
        var bitOf = [Int: Int]()
        for (i, j) in useful.enumerated() { bitOf[j] = i }
        var detectable = 0.0
        for (card, held) in problem.cardCodes.enumerated() {
            var any = false
            for j in held { if let b = bitOf[j] { sets[b][card / 64] |= 1 << UInt64(card % 64); any = true } }
            if any { detectable += cards[card].weight }
        }
        // Weight of a card set by byte lookups: table[(word × 8 + byte) × 256 + value].
        var table = [Double](repeating: 0, count: words * 8 * 256)
        for (card, c) in cards.enumerated() where c.weight > 0 {
            let slot = card / 8, bit = card % 8
            for value in 0..<256 where value & (1 << bit) != 0 { table[slot * 256 + value] += c.weight }
        }
        func weight(_ bits: [UInt64]) -> Double {
            var w = 0.0
            for (i, word) in bits.enumerated() where word != 0 {
                var x = word
                var slot = i * 8
                while x != 0 {
                    w += table[slot * 256 + Int(x & 0xFF)]
                    x >>= 8
                    slot += 1
                }
            }
            return w
        }
        let singleWeights = sets.map(weight)
        let singles = singleWeights.sorted(by: >)
        // Codes by decreasing cover, so branch and bound meets good sets first.
        let byWeight = (0..<m).sorted { singleWeights[$0] > singleWeights[$1] }
        var bound = [Double](repeating: detectable, count: m + 1)   // bound[k] ≥ best cover by k codes
        bound[0] = 0
        let ordered = byWeight.map { sets[$0] }
        for k in 1..<m {
            let searched = maxCoverageBound(k: k, sets: ordered, weight: weight, nodeBudget: max(1000, totalNodeBudget / m))
            let chained = min(singles.prefix(k).reduce(0, +), bound[k - 1] + singles[0], k > 1 ? bound[k - 1] * Double(k) / Double(k - 1) : detectable)
            bound[k] = min(detectable, searched, chained)
        }
        var total = times[0] * detectable
        for k in 1..<m { total += (times[k] - times[k - 1]) * max(0, detectable - bound[k]) }
        return total
    }

    /// Branch-and-bound nodes spent on maximum coverage, shared by the k = 1 … m − 1
    /// searches, before each settles for a bound (keeps 150 codes to seconds).
    static let totalNodeBudget = 480_000

    /// An upper bound on the weight `k` of `sets` can cover: branch and bound over the
    /// sets (include / skip), pruning a branch when its cover plus the k − c largest
    /// marginal gains left cannot beat the best found. Exact when the search finishes
    /// within `nodeBudget` nodes; otherwise the largest bound of the branches left open.
    static func maxCoverageBound(k: Int, sets: [[UInt64]], weight: ([UInt64]) -> Double, nodeBudget: Int) -> Double {
        let m = sets.count, words = sets.first?.count ?? 0
        var best = 0.0, open = 0.0, nodes = 0
        // Greedy cover first: a good incumbent prunes most of the tree.
        var greedyUnion = [UInt64](repeating: 0, count: words)
        for _ in 0..<min(k, m) {
            var pick = 0, pickGain = -1.0
            for j in 0..<m {
                var fresh = sets[j]
                for w in 0..<words { fresh[w] &= ~greedyUnion[w] }
                let g = weight(fresh)
                if g > pickGain { pick = j; pickGain = g }
            }
            for w in 0..<words { greedyUnion[w] |= sets[pick][w] }
        }
        best = weight(greedyUnion)
        func search(_ chosen: Int, _ index: Int, _ union: [UInt64], _ covered: Double) {
            best = max(best, covered)
            guard chosen < k, index < m else { return }
            var gains: [Double] = []
            gains.reserveCapacity(m - index)
            for j in index..<m {
                var fresh = sets[j]
                for w in 0..<words { fresh[w] &= ~union[w] }
                gains.append(weight(fresh))
            }
            let optimistic = covered + gains.sorted(by: >).prefix(k - chosen).reduce(0, +)
            if optimistic <= best + 1e-12 { return }
            nodes += 1
            if nodes > nodeBudget { open = max(open, optimistic); return }
            var with = union
            for w in 0..<words { with[w] |= sets[index][w] }
            search(chosen + 1, index + 1, with, covered + gains[0])
            search(chosen, index + 1, union, covered)
        }
        search(0, 0, [UInt64](repeating: 0, count: words), 0)
        return max(best, open)
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
