import FeliCa
import Testing

@Test func pmmExampleGivesThirtyFourMillisecondsForOneBlock() {
    // Docs/protocol.md: PMm 100b4b428485d0ff, byte 5 = 0x85 (E=2, B=0, A=5) → 33.8 ms for one block.
    let t = pmm.maximumResponseTime(for: .read, units: 1)
    let ms = Double(t.components.attoseconds) / 1e15 + Double(t.components.seconds) * 1000
    #expect(abs(ms - 33.8) < 0.05)
}

@Test(arguments: [
    // (PMm byte, n, expected units of T): T × ((B+1)n + (A+1)) × 4^E
    (UInt8(0x00), 0, 1.0), (0x07, 0, 8.0), (0x08, 3, 7.0), (0x40, 0, 4.0), (0xC0, 0, 64.0), (0x4B, 2, (2.0 * 2 + 4) * 4),
] as [(UInt8, Int, Double)])
func responseTimeFormula(_ byte: UInt8, _ n: Int, _ units: Double) {
    let p = PMm(rawValue: UInt64(byte) << 16)  // byte 5
    let t = p.maximumResponseTime(for: .read, units: n)
    let ns = Double(t.components.seconds) * 1e9 + Double(t.components.attoseconds) / 1e9
    #expect(abs(ns - units * PMm.timeUnitNanoseconds) < 2)
}

@Test func unknownICIsTreatedAsStandard() {
    let ic = ICType(code: 0x77)
    #expect(!ic.isKnown)
    #expect(ic.family == .standard)
    #expect(ICType(code: 0xF1).family == .liteS)
    #expect(ICType(code: 0x14).family == .mobile)
    #expect(ICType(code: 0xF0).maximumBlocksPerRead == 4)
}

@Test(arguments: [
    (UInt16(0x0003), UInt16(0xFFFF), true), (0x0003, 0x00FF, true), (0x0003, 0xFF03, true), (0x0003, 0xFE00, false),
    (0xFE00, 0xFEFF, true), (0xFE00, 0xFF00, true), (0xFE00, 0x00FF, false),
] as [(UInt16, UInt16, Bool)])
func systemCodeWildcards(_ code: UInt16, _ pattern: UInt16, _ match: Bool) {
    #expect(SystemCode(code).matches(SystemCode(pattern)) == match)
}

@Test(arguments: [
    (UInt8(0x00), true, false), (0x01, true, false), (0x09, false, false), (0x0B, false, false), (0x0F, false, false),
    (0x08, false, true), (0x0C, false, true), (0x17, false, false), (0x16, false, true),
] as [(UInt8, Bool, Bool)])
func nodeAttributes(_ attr: UInt8, _ isArea: Bool, _ needsKey: Bool) {
    let a = NodeAttribute(rawValue: attr)
    #expect(a.isArea == isArea)
    #expect(a.requiresKey == needsKey)
}

@Test func nodeCodeSplitsNumberAndAttribute() {
    let c = NodeCode(0x090F)
    #expect(c.number == 0x24)
    #expect(c.attribute.rawValue == 0x0F)
    #expect(c.attribute.kind == .cyclic(readOnly: true))
    #expect(c.isReadableWithoutKey)
    #expect(NodeCode(number: 0x24, attribute: NodeAttribute(rawValue: 0x0F)) == c)
}

@Test(arguments: [
    (UInt8(0xA1), "illegal number of services"), (0xA2, "illegal command packet (number of blocks)"),
    (0xA5, "access not allowed"), (0xA6, "illegal service code list"), (0xA8, "illegal block number (out of range)"),
    (0x70, "memory error (fatal)"), (0x01, "purse data under/overflow"), (0xC2, "command disabled"),
] as [(UInt8, String)])
func statusFlagNames(_ sf2: UInt8, _ name: String) {
    let sf = StatusFlags(sf1: 0x01, sf2: sf2)
    #expect(sf.name == name)
    #expect(!sf.isSuccess)
}

@Test func unknownStatusIsShownByNumber() {
    #expect(StatusFlags(sf1: 0xFF, sf2: 0x5E).name.contains("0x5E"))
    #expect(StatusFlags(sf1: 0xFF, sf2: 0x5E).location == "not tied to one block")
    #expect(StatusFlags(sf1: 0x01, sf2: 0xA5).meansKeyRequired)
}

@Test func hexRoundTrip() throws {
    #expect(Hex.encode([0x01, 0xAB]) == "01ab")
    #expect(Hex.decode("01AB") == [0x01, 0xAB])
    #expect(Hex.decode("01 ab:cd") == [0x01, 0xAB, 0xCD])
    #expect(Hex.decode("0") == nil)
    #expect(Hex.decode("zz") == nil)
    #expect(try IDm(hex: "0101120312345678") == idm)
    #expect(throws: FeliCaError.self) { try IDm(hex: "01") }
}

@Test func airTimeMatchesFeliCaFacts() {
    // Docs/protocol.md: a Polling with framing is 16 bytes, about 0.60 ms at 212 kbps.
    let t = AirTiming.airTime(packetLength: 6)
    #expect(abs(Double(t.components.attoseconds) / 1e15 - 0.604) < 0.01)
    #expect(abs(Double(AirTiming.pollingSlotZero.components.attoseconds) / 1e15 - 2.417) < 0.01)
}
