/// Upper bounds on the weight that k codes can cover (maximum coverage), for every k:
/// what ``OrderOptimizer``'s lower bound is built from.
///
/// Each k is bounded twice by branch and bound, branching on the best remaining code,
/// and the better bound kept. Forwards, over the codes to take: a branch is pruned when
/// what it covers plus the k − c largest gains left cannot beat the threshold. Backwards,
/// over the m − k codes to leave out, minimising the weight of the cards all of whose
/// codes are left out: leaving out a set T on top of R loses at least the sum of what
/// each code of T would lose alone (cards completed by two of them come on top), so a
/// branch is pruned by its loss plus the smallest such losses. The first is quick for
/// small k, the second for k near m. Gains and losses are kept incrementally (a card
/// newly covered takes its weight off each of its other codes), so a node costs one
/// pass over the codes, and weights are integers (units of 2⁻⁴⁰), so backing out of a
/// branch restores them exactly. A search that runs out of nodes yields the largest
/// bound of the branches it left open; the budgets double, pass after pass, until
/// every k is settled or the deadline passes.
struct CoverageBounds {
    /// Weight units per unit of share.
    static let scale = 1_099_511_627_776.0   // 2^40

    let m: Int
    /// Codes by decreasing cover; for each, the cards it holds.
    let cardsOf: [[Int32]]
    /// For each card, the (re-numbered) codes it holds.
    let codesOf: [[Int32]]
    let weights: [Int64]
    /// Total weight of the cards, in units.
    let total: Int64

    /// `cards`: each card's codes (0..<m) and share; cards holding none are ignored.
    init(cards: [(codes: [Int], weight: Double)], codeCount m: Int) {
        self.m = m
        // Cards holding the same codes count as one, of their summed weight.
        var merged: [[Int]: Int64] = [:]
        var slack = 0.0
        for c in cards where !c.codes.isEmpty && c.weight > 0 {
            merged[c.codes.sorted(), default: 0] += Int64((c.weight * Self.scale).rounded(.down))
            slack += 1 / Self.scale
        }
        let kept = merged.keys.sorted { $0.lexicographicallyPrecedes($1) }.map { (codes: $0, weight: merged[$0]!) }
        let weights = kept.map(\.weight)
        var single = [Int64](repeating: 0, count: m)
        for (c, w) in zip(kept, weights) { for j in c.codes { single[j] += w } }
        let order = (0..<m).sorted { single[$0] != single[$1] ? single[$0] > single[$1] : $0 < $1 }
        var rank = [Int](repeating: 0, count: m)
        for (r, j) in order.enumerated() { rank[j] = r }
        var cardsOf = [[Int32]](repeating: [], count: m)
        var codesOf: [[Int32]] = []
        for (i, c) in kept.enumerated() {
            codesOf.append(c.codes.map { Int32(rank[$0]) })
            for j in c.codes { cardsOf[rank[j]].append(Int32(i)) }
        }
        self.cardsOf = cardsOf
        self.codesOf = codesOf
        self.weights = weights
        total = weights.reduce(0, +)
        self.slack = slack
    }

    /// Bit j set for every code.
    var allCodes: UInt64 { m >= 64 ? .max : (1 << UInt64(m)) - 1 }

    /// What rounding each weight down can hide, at most (in shares).
    let slack: Double

    /// bound[k] ≥ the most weight (in shares) any k codes cover, for k in 0...m.
    func bounds(deadline: ContinuousClock.Instant) -> [Double] {
        let clock = ContinuousClock()
        var bound = [Int64](repeating: total, count: m + 1)
        bound[0] = 0
        var search = Search(self)
        var drop = DropSearch(self)
        let singles = search.gain.sorted(by: >)
        var prefix: Int64 = 0
        for k in 1...max(1, m) where k <= m {
            prefix += singles[k - 1]
            bound[k] = min(bound[k], prefix)
        }
        // Covers actually found, per k, and where between found and bound the next
        // search sets its threshold: 0 is a plain search for the best; when searches run
        // out of nodes, the threshold moves up (a search only has to show that nothing
        // beats it, which prunes more), and one that finishes lowers the bound to it and
        // sends the next back to a plain search.
        var found = [Int64](repeating: 0, count: m + 1)
        var aim = [Double](repeating: 0, count: m + 1)
        // The searches keep their candidates in a 64-bit mask; past 64 codes only the
        // single covers and their consequences bound the cover.
        var open = m <= 64 ? Set(1..<max(1, m)) : []
        var budget = 256
        // A bound this close to a cover found is left as it is: at 40 codes it moves the
        // order's lower bound by well under 0.1 %.
        let closeEnough = total / 10_000
        passes: while !open.isEmpty && clock.now < deadline {
            for k in open.sorted() {
                let threshold = found[k] + Int64(Double(bound[k] - found[k]) * aim[k])
                guard let r = search.run(k: k, threshold: threshold, nodeBudget: budget, deadline: deadline) else { break passes }
                found[k] = max(found[k], r.found)
                bound[k] = min(bound[k], r.bound)
                guard let d = drop.run(r: m - k, threshold: total - threshold, nodeBudget: budget, deadline: deadline) else { break passes }
                found[k] = max(found[k], total - d.found)
                bound[k] = min(bound[k], total - d.loss)
                if bound[k] - found[k] <= closeEnough {
                    open.remove(k)
                } else if r.complete || d.complete {
                    aim[k] = 0
                } else {
                    aim[k] = aim[k] == 0 ? 0.5 : (1 + aim[k]) / 2
                }
            }
            tighten(&bound, largestSingle: singles.first ?? 0)
            for k in open where bound[k] - found[k] <= closeEnough { open.remove(k) }
            budget *= 2
        }
        tighten(&bound, largestSingle: singles.first ?? 0)
        return bound.map { min(1, Double($0) / Self.scale + slack) }
    }

    /// What the bounds imply for each other: k + 1 codes cover at most one more code's
    /// worth, and at most (k + 1)/k of the best k (drop the one adding least); fewer codes
    /// never cover more; two sets cover at most the sum of their covers; and leaving out
    /// two disjoint sets loses at least the sum of their losses (a card inside either is
    /// lost), so with r = m − k = a + b codes left out, C_k ≤ C_{m−a} + C_{m−b} − D.
    private func tighten(_ bound: inout [Int64], largestSingle: Int64) {
        guard m >= 2 else { return }
        for k in 2...m {
            var b = min(bound[k], bound[k - 1] + largestSingle, Int64((Double(bound[k - 1]) * Double(k) / Double(k - 1)).rounded(.up)), total)
            for a in 1...(k / 2) { b = min(b, bound[a] + bound[k - a]) }
            let r = m - k
            if r >= 2 { for a in 1...(r / 2) { b = min(b, bound[m - a] + bound[m - (r - a)] - total) } }
            bound[k] = b
        }
        for k in stride(from: m - 1, through: 1, by: -1) { bound[k] = min(bound[k], bound[k + 1]) }
    }

    /// The branch and bound's state: how many chosen codes hold each card, and each
    /// code's gain (weight of its cards no chosen code holds).
    struct Search {
        let problem: CoverageBounds
        var holders: [UInt8]
        var gain: [Int64]
        var scratch: [Int64]
        /// What a branch must beat: the larger of the threshold and the best cover found.
        var best: Int64 = 0
        var achieved: Int64 = 0
        var k = 0
        var budget = NodeBudget(keepsLargest: true)

        init(_ problem: CoverageBounds) {
            self.problem = problem
            holders = [UInt8](repeating: 0, count: problem.codesOf.count)
            gain = problem.cardsOf.map { $0.reduce(0) { $0 + problem.weights[Int($1)] } }
            scratch = [Int64](repeating: 0, count: problem.m)
        }

        /// Takes code j, or gives it back.
        mutating func toggle(_ j: Int, take: Bool) {
            for card in problem.cardsOf[j] {
                let c = Int(card)
                if take {
                    holders[c] += 1
                    if holders[c] == 1 { for o in problem.codesOf[c] { gain[Int(o)] -= problem.weights[c] } }
                } else {
                    holders[c] -= 1
                    if holders[c] == 0 { for o in problem.codesOf[c] { gain[Int(o)] += problem.weights[c] } }
                }
            }
        }

        /// A bound on the best cover by `k` codes (when the search completes within
        /// `nodeBudget` nodes, the larger of `threshold` and the best cover), and the best
        /// cover found; nil when the deadline passes first.
        mutating func run(k: Int, threshold: Int64, nodeBudget: Int, deadline: ContinuousClock.Instant) -> (bound: Int64, found: Int64, complete: Bool)? {
            self.k = k
            budget.start(nodes: nodeBudget, deadline: deadline)
            achieved = greedy(k)
            best = max(threshold, achieved)
            search(candidates: problem.allCodes, chosen: 0, covered: 0)
            guard let open = budget.open else { return nil }
            return (max(best, open), achieved, budget.complete)
        }

        /// Cover by `k` codes picked greedily: the incumbent the search starts from.
        mutating func greedy(_ k: Int) -> Int64 {
            var taken: [Int] = [], covered: Int64 = 0
            for _ in 0..<min(k, problem.m) {
                var pick = -1
                for j in 0..<problem.m where !taken.contains(j) && (pick < 0 || gain[j] > gain[pick]) { pick = j }
                covered += gain[pick]
                toggle(pick, take: true)
                taken.append(pick)
            }
            for j in taken.reversed() { toggle(j, take: false) }
            return covered
        }

        /// Branches on the candidate of largest gain (`candidates`: bit j = code j may
        /// still be taken): take it, or rule it out.
        mutating func search(candidates: UInt64, chosen: Int, covered: Int64) {
            if covered > achieved { achieved = covered; best = max(best, covered) }
            guard chosen < k, candidates != 0, !budget.aborted else { return }
            let r = k - chosen
            var optimistic = covered, pick = -1, count = 0
            var x = candidates
            while x != 0 {
                let j = x.trailingZeroBitCount
                x &= x - 1
                if pick < 0 || gain[j] > gain[pick] { pick = j }
                count += 1
            }
            if r >= count {
                x = candidates
                while x != 0 { optimistic += gain[x.trailingZeroBitCount]; x &= x - 1 }
            } else {
                optimistic += largest(r, of: gain, at: candidates, sign: 1, into: &scratch)
            }
            if optimistic <= best || !budget.expand(optimistic) { return }
            let g = gain[pick], rest = candidates & ~(1 << UInt64(pick))
            toggle(pick, take: true)
            search(candidates: rest, chosen: chosen + 1, covered: covered + g)
            toggle(pick, take: false)
            search(candidates: rest, chosen: chosen, covered: covered)
        }
    }

    /// Backwards: which `r` codes to leave out so that the least weight is lost. State:
    /// how many of each card's codes are still in, and for each code the weight that
    /// leaving it out next would lose (its cards with no other code left).
    struct DropSearch {
        let problem: CoverageBounds
        var remaining: [UInt8]
        var out: [Bool]
        var marginal: [Int64]
        var scratch: [Int64]
        /// What a branch must beat: the smaller of the threshold and the least loss found.
        var best: Int64 = 0
        var achieved: Int64 = 0
        var r = 0
        var budget = NodeBudget(keepsLargest: false)

        init(_ problem: CoverageBounds) {
            self.problem = problem
            remaining = problem.codesOf.map { UInt8(clamping: $0.count) }
            out = [Bool](repeating: false, count: problem.m)
            marginal = [Int64](repeating: 0, count: problem.m)
            for (c, codes) in problem.codesOf.enumerated() where codes.count == 1 { marginal[Int(codes[0])] += problem.weights[c] }
            scratch = [Int64](repeating: 0, count: problem.m)
        }

        /// Leaves code j out, or puts it back; returns the weight lost (or regained).
        mutating func toggle(_ j: Int, leave: Bool) -> Int64 {
            var lost: Int64 = 0
            out[j] = leave
            for card in problem.cardsOf[j] {
                let c = Int(card), w = problem.weights[c]
                if leave {
                    remaining[c] -= 1
                    if remaining[c] == 0 { lost += w }
                    if remaining[c] == 1, let last = problem.codesOf[c].first(where: { !out[Int($0)] }) { marginal[Int(last)] += w }
                } else {
                    if remaining[c] == 1, let last = problem.codesOf[c].first(where: { !out[Int($0)] && Int($0) != j }) { marginal[Int(last)] -= w }
                    if remaining[c] == 0 { lost += w }
                    remaining[c] += 1
                }
            }
            return lost
        }

        /// A bound below the least weight lost by leaving out `r` codes (when the search
        /// completes within `nodeBudget` nodes, the smaller of `threshold` and the least
        /// loss), and the least loss found; nil when the deadline passes first.
        mutating func run(r: Int, threshold: Int64, nodeBudget: Int, deadline: ContinuousClock.Instant) -> (loss: Int64, found: Int64, complete: Bool)? {
            self.r = r
            budget.start(nodes: nodeBudget, deadline: deadline)
            achieved = greedy(r)
            best = min(threshold, achieved)
            search(candidates: problem.allCodes, dropped: 0, lost: 0)
            guard let open = budget.open else { return nil }
            return (min(best, open), achieved, budget.complete)
        }

        /// Loss of leaving out `r` codes greedily (each time the one losing least).
        mutating func greedy(_ r: Int) -> Int64 {
            var left: [Int] = [], lost: Int64 = 0
            for _ in 0..<min(r, problem.m) {
                var pick = -1
                for j in 0..<problem.m where !out[j] && (pick < 0 || marginal[j] < marginal[pick]) { pick = j }
                lost += toggle(pick, leave: true)
                left.append(pick)
            }
            for j in left.reversed() { _ = toggle(j, leave: false) }
            return lost
        }

        /// Branches on the candidate losing least (`candidates`: bit j = code j may
        /// still be left out): leave it out, or keep it.
        mutating func search(candidates: UInt64, dropped: Int, lost: Int64) {
            guard !budget.aborted else { return }
            if dropped == r {
                if lost < achieved { achieved = lost; best = min(best, lost) }
                return
            }
            let need = r - dropped
            guard candidates.nonzeroBitCount >= need else { return }
            var pick = -1
            var x = candidates
            while x != 0 {
                let j = x.trailingZeroBitCount
                x &= x - 1
                if pick < 0 || marginal[j] < marginal[pick] { pick = j }
            }
            let optimistic = lost - largest(need, of: marginal, at: candidates, sign: -1, into: &scratch)
            if optimistic >= best || !budget.expand(optimistic) { return }
            let rest = candidates & ~(1 << UInt64(pick))
            let l = toggle(pick, leave: true)
            search(candidates: rest, dropped: dropped + 1, lost: lost + l)
            _ = toggle(pick, leave: false)
            search(candidates: rest, dropped: dropped, lost: lost)
        }
    }
}

/// What a budgeted branch and bound spends: nodes expanded against a budget, the bound
/// of the branches left open when it runs out (the largest for a maximisation, the
/// smallest for a minimisation), and a deadline checked every 4,096 nodes.
struct NodeBudget {
    let keepsLargest: Bool
    private var nodes = 0
    private var limit = 0
    private var openBound: Int64 = 0
    private(set) var aborted = false
    private var deadline: ContinuousClock.Instant
    private let clock = ContinuousClock()

    init(keepsLargest: Bool) {
        self.keepsLargest = keepsLargest
        deadline = clock.now
    }

    mutating func start(nodes limit: Int, deadline: ContinuousClock.Instant) {
        self.limit = limit
        self.deadline = deadline
        nodes = 0
        openBound = keepsLargest ? 0 : .max
        aborted = false
    }

    /// Counts a node whose branches could reach `optimistic`: false when it is not to be
    /// expanded (the budget is spent, so its bound is kept open, or the deadline passed).
    mutating func expand(_ optimistic: Int64) -> Bool {
        nodes += 1
        if nodes > limit {
            openBound = keepsLargest ? max(openBound, optimistic) : min(openBound, optimistic)
            return false
        }
        if nodes & 4095 == 0 && clock.now >= deadline { aborted = true; return false }
        return true
    }

    /// The bound of the branches left open; nil when the deadline passed first.
    var open: Int64? { aborted ? nil : openBound }
    /// Whether the search finished within the budget (nothing left open).
    var complete: Bool { nodes <= limit }
}

/// Sum of the `r` largest of `sign` × `values[j]` over the set bits j of `mask` (r ≤ their
/// count), kept in `buffer` by insertion: a node's codes are few (≤ 64) and nearly in
/// order, where this beats a general sort.
func largest(_ r: Int, of values: [Int64], at mask: UInt64, sign: Int64, into buffer: inout [Int64]) -> Int64 {
    guard r > 0 else { return 0 }
    return buffer.withUnsafeMutableBufferPointer { top in
        var n = 0
        var bits = mask
        while bits != 0 {
            let v = sign * values[bits.trailingZeroBitCount]
            bits &= bits - 1
            if n == r {
                guard v > top[r - 1] else { continue }
                n -= 1
            }
            var i = n
            while i > 0 && top[i - 1] < v { top[i] = top[i - 1]; i -= 1 }
            top[i] = v
            n += 1
        }
        var sum: Int64 = 0
        for i in 0..<n { sum += top[i] }
        return sum
    }
}
