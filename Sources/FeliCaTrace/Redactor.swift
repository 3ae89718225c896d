import FeliCa

/// Replaces what identifies a card — its IDm and the card numbers the purses keep — with
/// pseudonyms, for dumps and traces people share. A pseudonym is a keyed hash of the
/// original (SipHash-2-4 with a 16-byte key): the same card gives the same pseudonym under
/// the same key, so several dumps of one card still line up, while without the key the
/// original cannot be recovered or tested for. Balances, amounts, dates, stations and the
/// PMm are kept, so what is redacted decodes to the same purses.
///
/// What is replaced (Docs/formats.md, "Dumps safe to share"):
/// - the IDm: its last 60 bits; the first 4 bits (the system's number on the card) are
///   kept, so the systems of one card stay one card;
/// - the card and member numbers at the ``numberFields`` it is given (the card profiles know
///   where their numbers sit: `FeliCaCards`' `CardNumberField.all`), digit for digit (the
///   printed numbers are decimal digits, so they stay digits);
/// - and then every other occurrence of an original, byte for byte, wherever it sits in
///   blocks, packets or text (hex, either case).
public struct Redactor: Sendable {
    /// The 16-byte key of the keyed hash.
    public let key: [UInt8]
    /// Each original replaced so far with its pseudonym, longest first (``register(_:_:)``).
    public private(set) var replacements: [(original: [UInt8], pseudonym: [UInt8])] = []

    /// Where card numbers sit in blocks, replaced digit for digit (``block(system:service:index:_:)``).
    public let numberFields: [NumberField]

    /// A redactor with a 16-byte `key`, replacing the numbers at `numberFields` besides the IDm.
    public init(key: [UInt8], numberFields: [NumberField] = []) {
        precondition(key.count == 16, "a redaction key is 16 bytes")
        self.key = key
        self.numberFields = numberFields
    }

    /// A block field holding a card number.
    public struct NumberField: Hashable, Sendable {
        /// The system the purse lives in.
        public var system: SystemCode
        /// The service whose block 0 holds the number.
        public var service: ServiceCode
        /// The bytes of block 0 the number takes.
        public var bytes: Range<Int>
        /// What it is (`Edy number`).
        public var name: String

        public init(system: SystemCode, service: ServiceCode, bytes: Range<Int>, name: String) {
            self.system = system; self.service = service; self.bytes = bytes; self.name = name
        }
    }

    // MARK: - Pseudonyms

    /// The pseudonym of an IDm: the first 4 bits kept, the other 60 from the keyed hash of
    /// those 60, so every system of a card (which differ in the first 4 bits only) maps the
    /// same way. Never the IDm itself.
    public mutating func idm(_ idm: IDm) -> IDm {
        let low = idm.rawValue & 0x0FFF_FFFF_FFFF_FFFF
        var counter: UInt8 = 0
        var out: UInt64
        repeat {
            out = idm.rawValue & 0xF000_0000_0000_0000 | hash(domain: 1, Self.bytes(low) + [counter]) & 0x0FFF_FFFF_FFFF_FFFF
            counter &+= 1
        } while out == idm.rawValue
        let pseudonym = IDm(rawValue: out)
        register(Self.bytes(idm.rawValue), Self.bytes(pseudonym.rawValue))
        return pseudonym
    }

    /// The pseudonym of a card number stored as BCD-looking bytes: every nibble a decimal
    /// digit from the keyed hash of the original. Never the number itself.
    public mutating func number(_ original: [UInt8]) -> [UInt8] {
        var counter: UInt8 = 0
        var out: [UInt8]
        repeat {
            var digits: [UInt8] = []
            var block: UInt8 = 0
            while digits.count < original.count * 2 {
                var h = hash(domain: 2, original + [counter, block])
                for _ in 0..<16 where digits.count < original.count * 2 {
                    digits.append(UInt8(h % 10))
                    h /= 10
                }
                block &+= 1
            }
            out = stride(from: 0, to: digits.count, by: 2).map { digits[$0] << 4 | digits[$0 + 1] }
            counter &+= 1
        } while out == original
        register(original, out)
        return out
    }

    /// The IDm whose pseudonym is `pseudonym`, nil when ``idm(_:)`` made none such.
    public func original(ofIDm pseudonym: IDm) -> IDm? {
        let p = Self.bytes(pseudonym.rawValue)
        return replacements.first { $0.pseudonym == p && $0.original.count == 8 }.map {
            IDm(rawValue: $0.original.reduce(0) { $0 << 8 | UInt64($1) })
        }
    }

    /// Remembers a replacement, so ``scrub(_:)`` replaces the original wherever else it sits.
    /// An original of one repeated byte (a number field of an unissued card, all 00 or FF)
    /// is not kept: it identifies no one, and scrubbing it would rewrite every empty block.
    public mutating func register(_ original: [UInt8], _ pseudonym: [UInt8]) {
        guard let first = original.first, !original.allSatisfy({ $0 == first }),
              !replacements.contains(where: { $0.original == original }) else { return }
        replacements.append((original, pseudonym))
        replacements.sort { $0.original.count > $1.original.count }
    }

    // MARK: - Applying

    /// Block `index` of `service` in `system`, redacted: a number field replaced by its
    /// pseudonym, then every known original scrubbed.
    public mutating func block(system: SystemCode, service: ServiceCode, index: Int, _ data: [UInt8]) -> [UInt8] {
        var out = data
        if index == 0 {
            for f in numberFields where f.system == system && f.service == service && f.bytes.upperBound <= out.count {
                out.replaceSubrange(f.bytes, with: number(Array(out[f.bytes])))
            }
        }
        return scrub(out)
    }

    /// `bytes` with every registered original replaced by its pseudonym.
    public func scrub(_ bytes: [UInt8]) -> [UInt8] {
        var out = bytes
        for (original, pseudonym) in replacements where original.count <= out.count {
            var i = 0
            while i + original.count <= out.count {
                if Array(out[i..<(i + original.count)]) == original {
                    out.replaceSubrange(i..<(i + original.count), with: pseudonym)
                    i += original.count
                } else {
                    i += 1
                }
            }
        }
        return out
    }

    /// `text` with every registered original written as hex (either case, optionally with
    /// a space between bytes, as Flipper files write them) replaced by its pseudonym in the
    /// same style.
    public func scrub(text: String) -> String {
        var out = text
        for (original, pseudonym) in replacements {
            // Uppercase first, exactly, so it stays uppercase; the lowercase pass without a
            // separator then ignores case and takes what is left (lowercase, mixed).
            for upper in [true, false] {
                for sep in ["", " "] {
                    let from = original.map { Hex.encode([$0], uppercase: upper) }.joined(separator: sep)
                    let to = pseudonym.map { Hex.encode([$0], uppercase: upper) }.joined(separator: sep)
                    out = Self.replacing(from, with: to, in: out, caseInsensitive: !upper && sep.isEmpty)
                }
            }
        }
        return out
    }

    /// Replaces every occurrence of `from` (ASCII) in `text`; case-insensitive keeps the
    /// case of `to` as given.
    static func replacing(_ from: String, with to: String, in text: String, caseInsensitive: Bool) -> String {
        let needle = Array(from.utf8), hay = Array(text.utf8)
        guard !needle.isEmpty, needle.count <= hay.count else { return text }
        func lower(_ c: UInt8) -> UInt8 { caseInsensitive && c >= 65 && c <= 90 ? c + 32 : c }
        var out: [UInt8] = []
        out.reserveCapacity(hay.count)
        var i = 0
        let replacement = Array(to.utf8)
        while i < hay.count {
            if i + needle.count <= hay.count, (0..<needle.count).allSatisfy({ lower(hay[i + $0]) == lower(needle[$0]) }) {
                out += replacement
                i += needle.count
            } else {
                out.append(hay[i])
                i += 1
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    // MARK: - SipHash-2-4

    /// The 8 bytes of `v`, big-endian.
    public static func bytes(_ v: UInt64) -> [UInt8] { (0..<8).map { UInt8(truncatingIfNeeded: v >> (56 - 8 * $0)) } }

    /// SipHash-2-4 of `domain` followed by `message` under ``key``.
    public func hash(domain: UInt8, _ message: [UInt8]) -> UInt64 {
        func le(_ b: ArraySlice<UInt8>) -> UInt64 { b.enumerated().reduce(0) { $0 | UInt64($1.element) << (8 * UInt64($1.offset)) } }
        let k0 = le(key[0..<8]), k1 = le(key[8..<16])
        var v0 = k0 ^ 0x736f_6d65_7073_6575, v1 = k1 ^ 0x646f_7261_6e64_6f6d
        var v2 = k0 ^ 0x6c79_6765_6e65_7261, v3 = k1 ^ 0x7465_6462_7974_6573
        func round() {
            v0 &+= v1; v1 = v1 << 13 | v1 >> 51; v1 ^= v0; v0 = v0 << 32 | v0 >> 32
            v2 &+= v3; v3 = v3 << 16 | v3 >> 48; v3 ^= v2
            v0 &+= v3; v3 = v3 << 21 | v3 >> 43; v3 ^= v0
            v2 &+= v1; v1 = v1 << 17 | v1 >> 47; v1 ^= v2; v2 = v2 << 32 | v2 >> 32
        }
        let m = [domain] + message
        let whole = m.count / 8 * 8
        for i in stride(from: 0, to: whole, by: 8) {
            let w = le(m[i..<(i + 8)])
            v3 ^= w; round(); round(); v0 ^= w
        }
        let last = le(m[whole...]) | UInt64(m.count & 0xFF) << 56
        v3 ^= last; round(); round(); v0 ^= last
        v2 ^= 0xFF
        round(); round(); round(); round()
        return v0 ^ v1 ^ v2 ^ v3
    }
}
