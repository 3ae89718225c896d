import FeliCa
import FeliCaCards
import FeliCaTrace
import Testing

@Suite struct RedactorTests {
    static let key: [UInt8] = Array(0..<16)
    /// The profiles' number fields, as the command line gives them to its redactor.
    static let numbers = CardNumberField.all.map {
        Redactor.NumberField(system: $0.system, service: $0.service, bytes: $0.bytes, name: $0.name)
    }

    /// The keyed hash is SipHash-2-4: the reference vector of its paper (key 00..0f, the
    /// 15-byte message 00..0e) — our domain byte is the message's first byte.
    @Test func sipHashReferenceVector() {
        let r = Redactor(key: Self.key, numberFields: Self.numbers)
        #expect(r.hash(domain: 0x00, Array(1..<15)) == 0xA129_CA61_49BE_45E5)
        #expect(r.hash(domain: 0x00, []) == 0x74F8_39C5_93DC_67FD)  // the one-byte message 00
    }

    /// An IDm keeps its first 4 bits (the system's number), so the systems of one card map
    /// alike; it never maps to itself, and another key gives another pseudonym.
    @Test func idmPseudonyms() {
        var r = Redactor(key: Self.key, numberFields: Self.numbers)
        let a = IDm(rawValue: 0x0114_2E01_0203_0405), b = IDm(rawValue: 0x1114_2E01_0203_0405)
        let pa = r.idm(a), pb = r.idm(b)
        #expect(pa != a && pb != b)
        #expect(pa.rawValue >> 60 == 0 && pb.rawValue >> 60 == 1)
        #expect(pa.rawValue & 0x0FFF_FFFF_FFFF_FFFF == pb.rawValue & 0x0FFF_FFFF_FFFF_FFFF)
        #expect(r.idm(a) == pa)
        #expect(r.original(ofIDm: pa) == a)
        var other = Redactor(key: Array(repeating: 0xAA, count: 16), numberFields: Self.numbers)
        #expect(other.idm(a) != pa)
    }

    /// A number field of block 0 becomes decimal digits; the rest of the block stays, and
    /// an IDm sitting in another block is scrubbed.
    /// A number field of all zeros (an unissued card) is replaced where it sits, but zeros
    /// elsewhere — empty history slots — are left as they are.
    @Test func aBlankNumberIsNotScrubbedEverywhere() {
        var r = Redactor(key: Self.key, numberFields: Self.numbers)
        let blank = [UInt8](repeating: 0, count: 16)
        _ = r.block(system: .common, service: Edy.numberService, index: 0, blank)
        #expect(r.replacements.isEmpty)
        #expect(r.block(system: .common, service: 0x170F, index: 2, blank) == blank)
    }

    /// Hex keeps its case: an uppercase IDm becomes an uppercase pseudonym.
    @Test func uppercaseHexStaysUppercase() {
        var r = Redactor(key: Self.key, numberFields: Self.numbers)
        let idm = IDm(rawValue: 0x0120_0312_AB34_CD56)
        let p = r.idm(idm)
        #expect(r.scrub(text: "x \(idm.hex.uppercased()) y") == "x \(p.hex.uppercased()) y")
        #expect(r.scrub(text: "x \(idm.hex) y") == "x \(p.hex) y")
    }

    @Test func numbersAndScrubbing() {
        var r = Redactor(key: Self.key, numberFields: Self.numbers)
        let idm = IDm(rawValue: 0x0120_0312_AB34_CD56)
        let p = r.idm(idm)
        let edy = Edy.encodeNumber([0x19, 0x01, 0x23, 0x45, 0x67, 0x89, 0x01, 0x23])
        let out = r.block(system: .common, service: Edy.numberService, index: 0, edy)
        #expect(out[0..<2] == edy[0..<2] && out[10...] == edy[10...])
        #expect(out[2..<10] != edy[2..<10])
        #expect(out[2..<10].allSatisfy { $0 >> 4 <= 9 && $0 & 0xF <= 9 })
        // The same field in a system other than the common area is no number field...
        var fresh = Redactor(key: Self.key, numberFields: Self.numbers)
        #expect(fresh.block(system: 0x0003, service: Edy.numberService, index: 0, edy) == edy)
        // ...but once the number is known, it is scrubbed wherever it sits.
        #expect(r.block(system: 0x0003, service: 0x090F, index: 1, edy) == out)
        let carrying = [0xEE, 0xEE] + Redactor.bytes(idm.rawValue) + [UInt8](repeating: 0, count: 6)
        #expect(r.block(system: 0x0003, service: 0x090F, index: 3, carrying) == [0xEE, 0xEE] + Redactor.bytes(p.rawValue) + [UInt8](repeating: 0, count: 6))
        let hex = idm.hex
        let text = "a \(hex) b \(hex.uppercased()) c \(Redactor.bytes(idm.rawValue).map { Hex.encode([$0], uppercase: true) }.joined(separator: " "))"
        let scrubbed = r.scrub(text: text)
        #expect(!String(scrubbed.lowercased().filter { $0 != " " }).contains(hex), "\(scrubbed)")
        #expect(scrubbed.contains(p.hex))
    }

    /// The number fields are the caller's: a redactor given none leaves a number where it
    /// sits (the IDm is still replaced).
    @Test func numbersAreReplacedWhereTheCallerSays() {
        var bare = Redactor(key: Self.key)
        let edy = Edy.encodeNumber([0x19, 0x01, 0x23, 0x45, 0x67, 0x89, 0x01, 0x23])
        #expect(bare.block(system: .common, service: Edy.numberService, index: 0, edy) == edy)
        var told = Redactor(key: Self.key, numberFields: Self.numbers)
        #expect(told.block(system: .common, service: Edy.numberService, index: 0, edy) != edy)
    }
}
