/// Which PMm byte bounds a command's response time (Docs/protocol.md, "Response time from PMm").
public enum ResponseTimeKind: Int, Sendable, CaseIterable {
    case requestService = 2
    case fixed = 3
    case mutualAuthentication = 4
    case read = 5
    case write = 6
    case other = 7
}

extension PMm {
    /// T = 256 × 16 / 13.56 MHz, in nanoseconds.
    public static let timeUnitNanoseconds: Double = 256.0 * 16.0 / 13.56e6 * 1e9

    /// Maximum response time the card advertises for a command of `kind` over `units`
    /// nodes or blocks: T × ((B + 1) × n + (A + 1)) × 4^E.
    public func maximumResponseTime(for kind: ResponseTimeKind, units: Int = 0) -> Duration {
        let p = self[byte: kind.rawValue]
        let e = Int(p >> 6), b = Int((p >> 3) & 7), a = Int(p & 7)
        let factor = Double((b + 1) * units + (a + 1)) * Double(1 << (2 * e))
        return .nanoseconds(Int64(factor * Self.timeUnitNanoseconds))
    }
}
