import FeliCa

/// Columns of text output: padding to a width, for every table the commands print.
enum TextLayout {
    /// `s` followed by spaces up to `width`; unchanged when it is as wide already.
    static func padRight(_ s: String, _ width: Int) -> String {
        s.count >= width ? s : s + String(repeating: " ", count: width - s.count)
    }

    /// `s` after `fill` up to `width` (right-aligned numbers, zero-padded digits).
    static func padLeft(_ s: String, _ width: Int, with fill: Character = " ") -> String {
        s.count >= width ? s : String(repeating: fill, count: width - s.count) + s
    }

    /// `s` as a column `width` wide that never runs into the next: at least one space follows.
    static func column(_ s: String, _ width: Int) -> String {
        s + String(repeating: " ", count: max(1, width - s.count))
    }
}

/// Four lowercase hex digits, as USB IDs are written (`054c`).
func hex4(_ v: UInt16) -> String { Hex.digits(v, count: 4) }
