import FeliCa

/// How a replay failed: the code under test left its recording. Through the `Transport`
/// protocol a ``TraceReplay`` throws it inside a `FeliCaError` (code
/// `transportFailure`, the same reason); `FeliCaError.replayError` takes it out.
public struct ReplayError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong.
    public enum Code: String, Hashable, Sendable {
        /// The code sent another command than the recorded one (or at another bit rate),
        /// asked the reader for the card's identity at another point, or used fewer
        /// exchanges than were recorded.
        case divergence
        /// The code sent more commands than were recorded.
        case exhausted
    }

    public var code: Code
    public var reason: String

    public init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    public var description: String { reason }

    /// The error as a transport throws it.
    public static func failure(_ code: Code, _ reason: String) -> FeliCaError {
        FeliCaError(.transportFailure, reason, underlying: ReplayError(code, reason))
    }
}

extension FeliCaError {
    /// The replay's own error, when a replay failed.
    public var replayError: ReplayError? { underlying as? ReplayError }
}
