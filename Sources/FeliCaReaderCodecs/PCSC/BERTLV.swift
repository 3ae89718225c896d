import FeliCa

/// One BER-TLV data object: `tag(1-3) length(1-4) value`, as PC/SC Part 3 uses them.
///
/// Tags whose low five bits are all set continue in following bytes while bit 8 is set
/// (`5F 46`); lengths above 127 use the `81 xx` / `82 xx xx` / `83 xx xx xx` forms.
public struct BERTLV: Hashable, Sendable, CustomStringConvertible {
    /// The tag bytes read big-endian (`0x5F46`).
    public var tag: UInt32
    public var value: [UInt8]

    public init(tag: UInt32, value: [UInt8]) {
        self.tag = tag
        self.value = value
    }

    /// Tag bytes, shortest form.
    public var tagBytes: [UInt8] {
        var out: [UInt8] = []
        var t = tag
        repeat {
            out.insert(UInt8(t & 0xFF), at: 0)
            t >>= 8
        } while t != 0
        return out
    }

    /// `tag length value`, the length in its shortest form, or as `82 hi lo` when
    /// `twoByteLength` (Sony writes the transceive object's length that way).
    public func encode(twoByteLength: Bool = false) -> [UInt8] {
        var out = tagBytes
        let n = value.count
        if twoByteLength && n <= 0xFFFF { return out + [0x82, UInt8(n >> 8), UInt8(n & 0xFF)] + value }
        switch n {
        case 0..<0x80: out.append(UInt8(n))
        case 0x80...0xFF: out += [0x81, UInt8(n)]
        case 0x100...0xFFFF: out += [0x82, UInt8(n >> 8), UInt8(n & 0xFF)]
        default: out += [0x83, UInt8(truncatingIfNeeded: n >> 16), UInt8(truncatingIfNeeded: n >> 8), UInt8(truncatingIfNeeded: n)]
        }
        return out + value
    }

    /// Parses a whole list of objects; every byte must belong to one.
    public static func decodeList(_ bytes: ArraySlice<UInt8>, frame: String) throws(FeliCaError) -> [BERTLV] {
        var r = ByteReader(bytes, frame: frame)
        var out: [BERTLV] = []
        while !r.isAtEnd {
            let first = try r.readUInt8("tag of data object \(out.count + 1)")
            var tag = UInt32(first)
            if first & 0x1F == 0x1F {
                var more = true
                var extra = 0
                while more {
                    guard extra < 3 else {
                        throw FeliCaError(.invalidField, "\(frame): tag of data object \(out.count + 1) runs past 4 bytes")
                    }
                    let b = try r.readUInt8("tag of data object \(out.count + 1)")
                    tag = tag << 8 | UInt32(b)
                    more = b & 0x80 != 0
                    extra += 1
                }
            }
            let tagName = Hex.encode(BERTLV(tag: tag, value: []).tagBytes, uppercase: true)
            let l0 = try r.readUInt8("length of data object \(tagName)")
            var length = 0
            if l0 < 0x80 {
                length = Int(l0)
            } else if (0x81...0x83).contains(l0) {
                for _ in 0..<Int(l0 - 0x80) {
                    length = length << 8 | Int(try r.readUInt8("length of data object \(tagName)"))
                }
            } else {
                throw FeliCaError(.invalidField, "\(frame): length byte \(Hex.encode([l0], uppercase: true)) of data object \(tagName) is not a BER length")
            }
            let value = Array(try r.readBytes(length, "value of data object \(tagName) (\(length) bytes)"))
            out.append(BERTLV(tag: tag, value: value))
        }
        return out
    }

    public var description: String {
        Hex.encode(tagBytes, uppercase: true) + "[" + Hex.encode(value, uppercase: true) + "]"
    }
}
