import FeliCa

/// The `KIND@N` / `KIND@N:MS` spelling the emulators' `--fault` options share.
enum FaultSpelling {
    /// Splits `text` into its kind, exchange number (from 1) and optional delay in ms;
    /// `examples` shows the caller's kinds in the error message.
    static func parse(_ text: String, examples: String) throws(FeliCaError) -> (kind: String, exchange: Int, milliseconds: Int?) {
        let parts = text.split(separator: "@", maxSplits: 1).map(String.init)
        guard parts.count == 2 else {
            throw FeliCaError(.badInput, "fault \"\(text)\": expected KIND@EXCHANGE, e.g. \(examples)")
        }
        var numbers = parts[1].split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        guard let n = Int(numbers.removeFirst()), n >= 1, n <= 1_000_000 else {
            throw FeliCaError(.badInput, "fault \"\(text)\": the exchange number after @ must be a whole number from 1")
        }
        guard let msText = numbers.first else { return (parts[0], n, nil) }
        guard numbers.count == 1, let ms = Int(msText), ms > 0, ms <= 3_600_000 else {
            throw FeliCaError(.badInput, "fault \"\(text)\": the delay after : must be a positive number of milliseconds")
        }
        return (parts[0], n, ms)
    }

    /// The error for a kind that is unknown or takes no delay.
    static func unknown(_ text: String, kind: String, kinds: String) -> FeliCaError {
        FeliCaError(.badInput, "fault \"\(text)\": \"\(kind)\" is not a fault kind here, or takes no delay (\(kinds))")
    }

    /// `late@N:MS` for a delay.
    static func late(_ exchange: Int, _ d: Duration) -> String {
        "late@\(exchange):\(milliseconds(d))"
    }

    /// `away@N:MS` for a reader away for `d`.
    static func away(_ exchange: Int, _ d: Duration) -> String {
        "away@\(exchange):\(milliseconds(d))"
    }

    /// How long the reader of an `away` fault stays away unless told: long enough for a
    /// host to notice and try again a few times.
    static let defaultAway: Duration = .seconds(3)

    private static func milliseconds(_ d: Duration) -> Int64 {
        d.components.seconds * 1000 + d.components.attoseconds / 1_000_000_000_000_000
    }
}
