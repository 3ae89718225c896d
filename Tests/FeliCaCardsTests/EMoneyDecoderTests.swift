import FeliCa
@testable import FeliCaCards
import Testing

// MARK: - Edy

/// Records built from the Docs/card-layouts.md table: type, sequence (3 bytes), days<<17|seconds,
/// amount, balance, all big-endian.
@Test(arguments: [
    // 2019-10-05 15:11:47 = day 7217, second 54707 -> 0x3862D5B3 (an example date and time).
    ("20000004" + "3862d5b3" + "00000096" + "00000023", "2019-10-05T15:11:47+09:00", TransactionKind.purchase, -150, 35, 4),
    // Day 0, second 0 with a type: a real record on 2000-01-01, not an empty slot.
    ("02000001" + "00000000" + "00002710" + "00002710", "2000-01-01T00:00:00+09:00", .charge, 10_000, 10_000, 1),
    // Last second of a day (86399 = 0x1517F); maximum amounts and sequence.
    ("04ffffff" + "0001517f" + "ffffffff" + "ffffffff", "2000-01-01T23:59:59+09:00", .charge, 4_294_967_295, 4_294_967_295, 0xFFFFFF),
])
func edyVectors(_ hex: String, _ date: String, _ kind: TransactionKind, _ amount: Int, _ balance: Int, _ seq: Int) throws {
    let block = bytes(hex)
    let r = try #require(try Edy.HistoryRecord.decode(block))
    #expect(r.date.iso == date)
    #expect(r.encode() == block)
    let t = try #require(Edy.decodeHistory([block]).first?.transaction)
    #expect(t.kind == kind && t.amount == amount && t.balance == balance && t.sequence == seq)
}

@Test func edySecondsBeyondADay() {
    // 0x15180 = 86400 seconds and the 17-bit maximum are impossible times.
    let block = bytes("20000001" + "00015180" + "0000000000000000")
    #expect(throws: CardDataError(.invalidDate, "")) { try Edy.HistoryRecord.decode(block) }
    let max = bytes("20000001" + "0001ffff" + "0000000000000000")
    #expect(throws: CardDataError(.invalidDate, "")) { try Edy.HistoryRecord.decode(max) }
}

@Test func edyEmptySlotAndNumber() throws {
    #expect(try Edy.HistoryRecord.decode([UInt8](repeating: 0, count: 16)) == nil)
    let p = Edy.purse(number: Edy.encodeNumber([0x19, 0x01, 0x23, 0x45, 0x67, 0x89, 0x01, 0x23]), balance: bytes("23000000000000000000000000000000"), history: nil)
    #expect(p.number == "1901 2345 6789 0123")
    #expect(p.balance == 35)
}

@Test func edyUnknownTypeTakesBalanceDifference() {
    let blocks = [bytes("7e000002" + "3862d5b3" + "00000001" + "00000064"), bytes("02000001" + "3862d5b3" + "00000032" + "00000032")]
    let t = Edy.decodeHistory(blocks).compactMap(\.transaction)
    #expect(t[0].type.description == "unknown 0x7E")
    #expect(t[0].kind == .other)
    #expect(t[0].amount == 50)
}

// MARK: - nanaco

/// type, amount(4), balance(4), packed date(4), sequence(2), all big-endian.
@Test(arguments: [
    // 2026-12-31 23:59 -> 0x0359F5FB
    ("47" + "00000174" + "00001408" + "0359f5fb" + "0030" + "00", "2026-12-31T23:59:00+09:00", TransactionKind.purchase, -372, 5_128, 0x30),
    ("6f" + "00001388" + "0000157c" + "0359f5fb" + "ffff" + "00", "2026-12-31T23:59:00+09:00", .charge, 5_000, 5_500, 0xFFFF),
    ("35" + "ffffffff" + "ffffffff" + "0359f5fb" + "0001" + "00", "2026-12-31T23:59:00+09:00", .transfer, 4_294_967_295, 4_294_967_295, 1),
    ("83" + "000000c8" + "000001f4" + "0359f5fb" + "0002" + "00", "2026-12-31T23:59:00+09:00", .points, 200, 500, 2),
])
func nanacoVectors(_ hex: String, _ date: String, _ kind: TransactionKind, _ amount: Int, _ balance: Int, _ seq: Int) throws {
    let block = bytes(hex)
    let r = try #require(try Nanaco.HistoryRecord.decode(block))
    #expect(r.date.iso == date)
    #expect(r.encode() == block)
    let t = try #require(Nanaco.decodeHistory([block]).first?.transaction)
    #expect(t.kind == kind && t.amount == amount && t.balance == balance && t.sequence == seq)
}

let nanacoBadDateVectors: [(String, Int)] = [
    ("month 13", (26 << 21) | (13 << 17) | (1 << 12)),
    ("day 0", (26 << 21) | (1 << 17)),
    ("hour 24", (26 << 21) | (1 << 17) | (1 << 12) | (24 << 6)),
    ("minute 60", (26 << 21) | (1 << 17) | (1 << 12) | 60),
]

@Test(arguments: nanacoBadDateVectors)
func nanacoBadDates(_ name: String, _ v: Int) {
    var w = [UInt8](repeating: 0, count: 16)
    w[0] = 0x47
    for k in 0..<4 { w[9 + k] = UInt8(truncatingIfNeeded: v >> (24 - 8 * k)) }
    #expect(throws: CardDataError(.invalidDate, "")) { try Nanaco.HistoryRecord.decode(w) }
}

/// Points: block 1, bytes 0-2 plus bytes 5-7 (the disputed layout; see Nanaco.points).
@Test(arguments: [(0, 0), (123, 45), (0xFFFFFF, 0xFFFFFF)])
func nanacoPoints(_ thisYear: Int, _ lastYear: Int) throws {
    let blocks = Nanaco.encodePoints(thisYear: thisYear, lastYear: lastYear)
    #expect(blocks[1][0] == UInt8(thisYear >> 16) && blocks[1][7] == UInt8(lastYear & 0xFF))
    #expect(try Nanaco.points(blocks) == thisYear + lastYear)
    #expect(throws: CardDataError(.blockLength, "")) { try Nanaco.points([blocks[0]]) }
}

@Test func nanacoNumberAndBalance() {
    let p = Nanaco.purse(number: Nanaco.encodeNumber([0x70, 0x00, 0x12, 0x34, 0x56, 0x78, 0x90, 0x12]),
                         balance: Nanaco.encodeBalance(5_128), points: Nanaco.encodePoints(thisYear: 1, lastYear: 2), history: nil)
    #expect(p.number == "7000-1234-5678-9012")
    #expect(p.balance == 5_128)
    #expect(p.points == 3)
}

// MARK: - WAON

let waonA = bytes("41454f4e2d4d414c4c2d3031200004" + "00")  // "AEON-MALL-01 ", sequence 0x0004

/// Block B vectors computed by hand from the Docs/card-layouts.md bit layout.
@Test func waonHandVector() throws {
    // 2019-10-05 15:11, balance 35, debit 150, credit 0
    let b = bytes("00047515e580046004b0000000000000")
    let r = try #require(try WAON.HistoryRecord.decode(a: waonA, b: b))
    #expect(r.date.iso == "2019-10-05T15:11:00+09:00")
    #expect(r.balance == 35 && r.debit == 150 && r.credit == 0)
    #expect(r.terminal == "AEON-MALL-01")
    #expect(r.sequence == 4)
    #expect(r.transaction.amount == -150)
    #expect(r.transaction.kind == .purchase)
    #expect(r.encode().b == b)
}

/// Every field at its maximum at once: no bit leaks into a neighbour.
@Test func waonAllFieldsAtMaximum() throws {
    let b = bytes("007cfe7efdfffffffffffffc00000000")
    let r = try #require(try WAON.HistoryRecord.decode(a: waonA, b: b))
    #expect(r.date.iso == "2036-12-31T23:59:00+09:00")
    #expect(r.balance == 0x3FFFF && r.debit == 0x3FFFF && r.credit == 0x1FFFF)
    #expect(r.encode().b == b)
}

let waonBadDateVectors: [(String, Int)] = [
    ("month 13", (1 << 27) | (13 << 23) | (1 << 18)),
    ("day 0", (1 << 27) | (1 << 23)),
    ("hour 24", (1 << 27) | (1 << 23) | (1 << 18) | (24 << 13)),
    ("minute 60", (1 << 27) | (1 << 23) | (1 << 18) | (60 << 7)),
]

@Test(arguments: waonBadDateVectors)
func waonBadDates(_ name: String, _ x: Int) {
    var b = [UInt8](repeating: 0, count: 16)
    b[1] = 0x04
    for k in 0..<4 { b[2 + k] = UInt8(truncatingIfNeeded: x >> (24 - 8 * k)) }
    #expect(throws: CardDataError(.invalidDate, "")) { try WAON.HistoryRecord.decode(a: waonA, b: b) }
}

func waonRecord(_ seq: Int) -> WAON.HistoryRecord {
    WAON.HistoryRecord(terminal: "T\(seq)", sequence: seq, type: 0x04, date: try! CardDate(year: 2026, month: 1, day: 1, hour: 0, minute: 0),
                       balance: seq & 0xFF, debit: 1, credit: 0)
}

/// Ring order by sequence number, wrapping at 0x10000, whatever the slot order.
@Test(arguments: [
    ([0xFFFF, 0x0000, 0x0001], [0x0001, 0x0000, 0xFFFF]),
    ([0x0000, 0x0001, 0xFFFF], [0x0001, 0x0000, 0xFFFF]),
    ([0x0001, 0xFFFE, 0xFFFF], [0x0001, 0xFFFF, 0xFFFE]),
    ([5, 7, 6], [7, 6, 5]),
    ([0x7FFF, 0x8000, 0x8001], [0x8001, 0x8000, 0x7FFF]),
])
func waonRingOrder(_ slots: [Int], _ newestFirst: [Int]) {
    var blocks: [[UInt8]] = []
    for s in slots { let (a, b) = waonRecord(s).encode(); blocks += [a, b] }
    blocks.append([UInt8](repeating: 0, count: 16))  // the 9th block the service exposes
    #expect(WAON.decodeHistory(blocks).compactMap(\.transaction).map(\.sequence) == newestFirst)
}

@Test func waonEmptyAndMalformedSlots() {
    let (a0, b0) = waonRecord(3).encode()
    var badB = waonRecord(2).encode().b
    badB[2] |= 0x06; badB[3] |= 0x80  // month 13
    let zero = [UInt8](repeating: 0, count: 16)
    let h = WAON.decodeHistory([a0, b0, waonRecord(2).encode().a, badB, zero, zero])
    #expect(h.count == 2)
    #expect(h[0].transaction?.sequence == 3)
    if case .malformed(let slot, let e, let raw) = h[1] {
        #expect(slot == 1 && e.code == .invalidDate && raw.count == 32)
    } else {
        Issue.record("record 1 should be malformed")
    }
}

/// Balance: bytes 0-1 little-endian (the disputed width, see WAON.purse); non-zero bytes
/// 2-3 are reported with the 4-byte reading.
@Test func waonBalanceWidth() {
    #expect(WAON.purse(number: nil, balance: WAON.encodeBalance(50_000), points: nil, history: nil).balance == 50_000)
    let odd = WAON.purse(number: nil, balance: bytes("3a070100000000000000000000000000"), points: nil, history: nil)
    #expect(odd.balance == 1_850)
    #expect(odd.notes.count == 1 && odd.notes[0].contains("¥67386"))
    let p = WAON.purse(number: WAON.encodeNumber([0x69, 0, 0, 0x12, 0x34, 0x56, 0x78, 0x90]), balance: nil, points: WAON.encodePoints(0xFFFFFF), history: nil)
    #expect(p.number == "6900 0012 3456 7890")
    #expect(p.points == 0xFFFFFF)
}

// MARK: - Dates

@Test(arguments: [(0, "2000-01-01"), (59, "2000-02-29"), (365, "2000-12-31"), (366, "2001-01-01"), (9_828, "2026-11-28"), (32_767, "2089-09-17")])
func daysSince2000(_ days: Int, _ iso: String) throws {
    let d = try CardDate(daysSince2000: days)
    #expect(d.iso == iso)
    #expect(d.daysSince2000 == days)
}

// MARK: - Arbitrary bytes

/// Deterministic pseudo-random blocks (xorshift) through every decoder: each block either
/// decodes or becomes a malformed entry; nothing traps, nothing is dropped silently.
@Test func arbitraryBlocksNeverTrap() {
    var x: UInt64 = 0x9E37_79B9_7F4A_7C15
    func next() -> UInt8 {
        x ^= x << 13; x ^= x >> 7; x ^= x << 17
        return UInt8(truncatingIfNeeded: x)
    }
    for round in 0..<2_000 {
        let n = round % 23 == 0 ? Int(next() % 20) : 16
        let blocks = (0..<20).map { _ in (0..<n).map { _ in next() } }
        let transit = TransitIC.purse(system: .transit, attributes: blocks[0], history: blocks, gateLog: Array(blocks.prefix(3)),
                                      pendingEntry: Array(blocks.prefix(2)))
        // Every non-empty slot is kept: as a transaction or as a malformed entry.
        let nonEmpty = blocks.filter { $0.count != 16 || $0[4] != 0 || $0[5] != 0 }.count
        #expect(transit.history?.count == nonEmpty)
        _ = Edy.purse(number: blocks[0], balance: blocks[1], history: Array(blocks.prefix(6)))
        _ = Nanaco.purse(number: blocks[0], balance: blocks[1], points: Array(blocks.prefix(2)), history: Array(blocks.prefix(5)))
        let waon = WAON.purse(number: blocks[0], balance: blocks[1], points: blocks[2], history: Array(blocks.prefix(6)))
        #expect((waon.history?.count ?? 0) <= 3)
    }
}
