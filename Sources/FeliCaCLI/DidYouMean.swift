/// "Did you mean" suggestions for mistyped names (commands, options, built-in cards).
enum DidYouMean {
    /// The candidate closest to `input` by edit distance, when close enough to be a typo:
    /// at most a third of the longer word's letters differ (and at least one may).
    static func suggestion(for input: String, among candidates: [String]) -> String? {
        let typed = Array(input.lowercased())
        let scored = candidates.map { c in (c, distance(typed, Array(c.lowercased()))) }
        guard let best = scored.min(by: { $0.1 < $1.1 }) else { return nil }
        let allowed = max(1, max(typed.count, best.0.count) / 3)
        return best.1 > 0 && best.1 <= allowed ? best.0 : nil
    }

    /// Edit distance counting a swap of two neighbouring letters as one edit (`suica` / `siuca`).
    static func distance(_ a: [Character], _ b: [Character]) -> Int {
        if a.isEmpty || b.isEmpty { return max(a.count, b.count) }
        var d = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { d[i][0] = i }
        for j in 0...b.count { d[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
                }
            }
        }
        return d[a.count][b.count]
    }
}
