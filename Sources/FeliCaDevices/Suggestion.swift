/// "Did you mean" for a mistyped command, option or value.
public enum Suggestion {
    /// `; did you mean 'x'?` when one candidate is close to `word`, else empty.
    public static func didYouMean(_ word: String, _ candidates: [String]) -> String {
        nearest(word, candidates).map { "; did you mean '\($0)'?" } ?? ""
    }

    /// The candidate closest to `word` within a few typing slips, or the only one it begins.
    public static func nearest(_ word: String, _ candidates: [String]) -> String? {
        guard !word.isEmpty else { return nil }
        let lower = word.lowercased()
        let prefixed = candidates.filter { $0.lowercased().hasPrefix(lower) && $0.count > word.count }
        if prefixed.count == 1, word.count >= 2 { return prefixed[0] }
        let allowed = word.count <= 4 ? 1 : word.count <= 8 ? 2 : 3
        let scored = candidates.map { ($0, distance(lower, $0.lowercased())) }.filter { $0.1 <= allowed && $0.1 > 0 }
        guard let best = scored.min(by: { $0.1 < $1.1 }) else { return nil }
        // Two equally close candidates: no guess.
        return scored.filter { $0.1 == best.1 }.count == 1 ? best.0 : nil
    }

    /// Edit distance counting an insertion, deletion, substitution or swap of neighbours as one.
    public static func distance(_ a: String, _ b: String) -> Int {
        let x = Array(a), y = Array(b)
        if x.isEmpty { return y.count }
        if y.isEmpty { return x.count }
        var d = [[Int]](repeating: [Int](repeating: 0, count: y.count + 1), count: x.count + 1)
        for i in 0...x.count { d[i][0] = i }
        for j in 0...y.count { d[0][j] = j }
        for i in 1...x.count {
            for j in 1...y.count {
                let cost = x[i - 1] == y[j - 1] ? 0 : 1
                d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost)
                if i > 1, j > 1, x[i - 1] == y[j - 2], x[i - 2] == y[j - 1] {
                    d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
                }
            }
        }
        return d[x.count][y.count]
    }
}
