/// Hex helpers shared by the codec, formats and the command line.
public enum Hex {
    private static let digits: [UInt8] = Array("0123456789abcdef".utf8)

    /// Lowercase hex without separators.
    public static func encode(_ bytes: some Sequence<UInt8>, uppercase: Bool = false, separator: String = "") -> String {
        var out = ""
        var first = true
        for b in bytes {
            if !first { out += separator }
            first = false
            let hi = digits[Int(b >> 4)], lo = digits[Int(b & 0xF)]
            out.unicodeScalars.append(Unicode.Scalar(uppercase ? upper(hi) : hi))
            out.unicodeScalars.append(Unicode.Scalar(uppercase ? upper(lo) : lo))
        }
        return out
    }

    private static func upper(_ c: UInt8) -> UInt8 { c >= 0x61 ? c - 0x20 : c }

    /// A non-negative number in hex, zero-padded to `count` digits (more when it needs
    /// them): `digits(0x54c, count: 4)` is `054c`. The one place numbers become hex text.
    public static func digits(_ value: some BinaryInteger, count: Int, uppercase: Bool = false) -> String {
        let text = String(value, radix: 16, uppercase: uppercase)
        return String(repeating: "0", count: max(0, count - text.count)) + text
    }

    /// Parses hex digits (either case; spaces, `:` and `-` between bytes are ignored).
    /// Returns nil with no partial result when a character is not hex or a digit is left over.
    public static func decode(_ text: some StringProtocol) -> [UInt8]? {
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count / 2)
        var pending: UInt8? = nil
        for c in text.utf8 {
            let v: UInt8
            switch c {
            case 0x30...0x39: v = c - 0x30
            case 0x41...0x46: v = c - 0x41 + 10
            case 0x61...0x66: v = c - 0x61 + 10
            case 0x20, 0x3A, 0x2D:
                if pending != nil { return nil }
                continue
            default: return nil
            }
            if let p = pending { out.append(p << 4 | v); pending = nil } else { pending = v }
        }
        return pending == nil ? out : nil
    }
}

/// `0x0A`-style rendering of one byte, for messages.
@inline(__always)
func hexByte(_ b: UInt8) -> String { "0x" + Hex.encode([b], uppercase: true) }

/// Four uppercase hex digits, for codes in messages.
@inline(__always)
func hex16(_ v: UInt16) -> String { Hex.digits(v, count: 4, uppercase: true) }
