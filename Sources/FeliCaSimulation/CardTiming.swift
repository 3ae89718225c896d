/// How long a virtual card thinks before it answers: the time from the end of a command to
/// the start of its reply, which is what the PMm bounds.
///
/// A card's PMm gives, for each kind of command, the longest it may take
/// (``FeliCa/PMm/maximumResponseTime(for:units:)``). A real card answers within that bound,
/// usually well inside it; a host may wait exactly the bound (nfcpy does) and must still be
/// answered. No published measurement of how far inside the bound cards answer was found,
/// so ``typical`` rests on a stated assumption: half the bound. ``worstCase`` answers at the
/// bound itself, the latest a card may, for figures that must hold on the slowest card.
///
/// Polling is not modelled by either: its reply comes in fixed time slots (slot 0 starts
/// 512 × 64 / fc ≈ 2.417 ms after the command), whatever the PMm says.
public enum CardTiming: String, Sendable, CaseIterable {
    /// Half the PMm bound (an assumption; see the type's documentation).
    case typical
    /// The PMm bound itself.
    case worstCase = "worst-case"

    /// The reaction time for a command whose PMm bound is `bound`.
    public func reaction(within bound: Duration) -> Duration {
        switch self {
        case .typical: bound / 2
        case .worstCase: bound
        }
    }
}
