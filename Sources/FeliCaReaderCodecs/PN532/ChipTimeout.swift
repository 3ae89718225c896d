/// The PN53x's own RF timeout ("TimeOut during non-DEP communications",
/// RFConfiguration item 0x02): 100 µs × 2^(code−1), set directly or through libnfc's
/// `NP_TIMEOUT_COM`.
///
/// libnfc turns the milliseconds it is given into a code by rounding *down*; this picks
/// the smallest code whose time is at least what the card needs, and the millisecond
/// value that makes libnfc choose exactly that code.
public struct ChipTimeout: Hashable, Sendable {
    /// The chip's code, 5 (1.6 ms) to 16 (3.28 s); libnfc never sets a smaller one.
    public let code: Int

    /// The chip's timeout for this code.
    public var duration: Duration { .microseconds(100 << (code - 1)) }

    /// libnfc's code boundaries: a value above `bounds[k]` and at most `bounds[k-1]` gives code 16 − k.
    private static let bounds = [3280, 1640, 820, 410, 205, 102, 51, 25, 12, 6, 3]

    /// The value to hand `nfc_device_set_property_int(NP_TIMEOUT_COM)`.
    public var milliseconds: Int {
        let k = 16 - code
        return k >= Self.bounds.count ? 1 : Self.bounds[k] + 1
    }

    /// The shortest chip timeout that is at least `needed` (capped at 3.28 s).
    public init(atLeast needed: Duration) {
        var c = 5
        while c < 16 && Duration.microseconds(100 << (c - 1)) < needed { c += 1 }
        code = c
    }

    /// The longest chip timeout kept for a command that needs less: 102.4 ms (code 11).
    /// Keeping it saves setting the timeout again; a card that stays silent then costs at
    /// most this long, the same order as a host polling for the card's leaving.
    public static let longestKept = 11

    /// Whether this timeout, already set, serves a command that needs `wanted`: it is at
    /// least as long, and no longer than ``longestKept`` unless `wanted` itself is.
    public func suffices(for wanted: ChipTimeout) -> Bool {
        code == wanted.code || (code > wanted.code && code <= Self.longestKept)
    }

    /// The code libnfc derives from `milliseconds` (mirrors `pn53x_int_to_timeout`), for tests.
    public static func libnfcCode(milliseconds ms: Int) -> Int {
        var code = 16
        for b in bounds {
            if ms > b { break }
            code -= 1
        }
        return code
    }
}
