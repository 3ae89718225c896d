import FeliCa
@testable import FeliCaCards
import Testing

func bytes(_ hex: String) -> [UInt8] { Hex.decode(hex)! }

/// History records written byte by byte from the Docs/card-layouts.md layout table.
struct TransitVector: Sendable, CustomStringConvertible {
    var name: String
    var hex: String
    var date: String
    var console: Int
    var process: Int
    var cash: Bool
    var balance: Int
    var sequence: Int
    var entry: String?
    var exit: String?
    var description: String { name }
}

@Test(arguments: [
    // The lead's first sample record: 2019-09-28 (0x273C), ¥850 (52 03), sequence 10.
    TransitVector(name: "gate fare", hex: "16010002273ce322e325520300000a00", date: "2019-09-28", console: 0x16, process: 0x01, cash: false,
                  balance: 850, sequence: 10, entry: "0/227/34", exit: "0/227/37"),
    // Day 31, month 10; separate area bits: entry 2 (bits 7-6 = 10), exit 1 (bits 5-4 = 01).
    TransitVector(name: "day 31, areas 2/1", hex: "16010000355f01020203ffff00123990", date: "2026-10-31", console: 0x16, process: 0x01, cash: false,
                  balance: 65535, sequence: 0x1239, entry: "2/1/2", exit: "1/2/3"),
    // Month 12 day 31 of the last year the 7 bits hold (2127); sequence uses all 3 bytes.
    TransitVector(name: "2127-12-31, max sequence", hex: "07810000ff9f0a0000000000fffffff0", date: "2127-12-31", console: 0x07, process: 0x01, cash: true,
                  balance: 0, sequence: 0xFFFFFF, entry: "3/10/0", exit: nil),
])
func transitHistoryVectors(_ v: TransitVector) throws {
    let block = bytes(v.hex)
    let record = try #require(try TransitIC.HistoryRecord.decode(block))
    let t = record.transaction(amount: nil, stations: nil)
    #expect(t.date.iso == v.date)
    #expect(t.transit?.console.code == v.console)
    #expect(t.transit?.process.code == v.process)
    #expect(t.transit?.paidPartlyInCash == v.cash)
    #expect(t.balance == v.balance)
    #expect(t.sequence == v.sequence)
    #expect(t.transit?.entry?.description == v.entry)
    #expect(t.transit?.exit?.description == v.exit)
    #expect(record.encode() == block)
}

/// Empty slots (date 0) are skipped, whatever the other bytes hold.
@Test func emptySlotIsSkipped() throws {
    #expect(try TransitIC.HistoryRecord.decode([UInt8](repeating: 0, count: 16)) == nil)
    #expect(try TransitIC.HistoryRecord.decode(bytes("16010000000000000000520300000a00")) == nil)
}

/// Impossible dates and bad lengths become per-record errors.
@Test(arguments: [
    ("month 13", "1601000035a100000000000000000000", CardDataError.Code.invalidDate),
    ("month 0", "16010000340100000000000000000000", .invalidDate),
    ("day 0", "16010000356000000000000000000000", .invalidDate),
    ("31 April", "16010000349f00000000000000000000", .invalidDate),
    ("29 Feb 2025", "16010000325d00000000000000000000", .invalidDate),
    ("sale at 24:00", "c7460000355fc0000000000000000000", .invalidDate),
])
func transitMalformed(_ name: String, _ hex: String, _ code: CardDataError.Code) {
    let block = bytes(hex)
    #expect(block.count == 16)
    #expect(throws: CardDataError(code, "")) { try TransitIC.HistoryRecord.decode(block) }
}

@Test func leapDayIsValid() throws {
    // 2024-02-29: (24 << 9) | (2 << 5) | 29 = 0x305D
    let r = try #require(try TransitIC.HistoryRecord.decode(bytes("16010000305d00000000000000000100")))
    #expect(r.date.iso == "2024-02-29")
}

/// Every wrong block length is a `.blockLength` error, 0-15 and 17 bytes.
@Test(arguments: Array(0..<16) + [17])
func wrongLengthBlocks(_ n: Int) {
    let block = [UInt8](repeating: 0x11, count: n)
    #expect(throws: CardDataError(.blockLength, "")) { try TransitIC.HistoryRecord.decode(block) }
    #expect(throws: CardDataError(.blockLength, "")) { try TransitIC.Attributes(block: block) }
    #expect(throws: CardDataError(.blockLength, "")) { try TransitIC.GateRecord.decode(block) }
    #expect(throws: CardDataError(.blockLength, "")) { try Edy.HistoryRecord.decode(block) }
    #expect(throws: CardDataError(.blockLength, "")) { try Nanaco.HistoryRecord.decode(block) }
    #expect(throws: CardDataError(.blockLength, "")) { try WAON.HistoryRecord.decode(a: block, b: block) }
}

/// Sale records carry the time in bytes 6-7 (hour 5 bits, minute 6 bits); bus records an
/// operator/line and a stop, big-endian.
@Test func saleAndBusVariants() throws {
    // 23:59 -> (23 << 11) | (59 << 5) = 0xBF60
    let sale = try #require(try TransitIC.HistoryRecord.decode(bytes("c7460000355fbf600102d2040000a100")))
    let t = sale.transaction(amount: nil, stations: nil)
    #expect(t.date.iso == "2026-10-31T23:59:00+09:00")
    #expect(t.kind == .purchase)
    #expect(t.transit?.entry == nil)
    let bus = try #require(try TransitIC.HistoryRecord.decode(bytes("050d0000355f0a2b0103d2040000a000")))
    let b = bus.transaction(amount: nil, stations: nil)
    #expect(b.transit?.bus?.operatorLine == 0x0A2B)
    #expect(b.transit?.bus?.stop == 0x0103)
    #expect(b.kind == .transit)
}

@Test func unknownCodesKeepTheirNumber() throws {
    let r = try #require(try TransitIC.HistoryRecord.decode(bytes("42770000355f00000000000000000100")))
    let t = r.transaction(amount: nil, stations: nil)
    #expect(t.transit?.console.description == "unknown 0x42")
    #expect(t.transit?.process.description == "unknown 0x77")
    #expect(t.kind == .other)
}

/// Amounts come from the balance difference; the oldest record and a record whose older
/// neighbour is malformed get none; the malformed record stays in place.
@Test func historyAmountsAndMalformedRecords() {
    let d = { (day: Int, bal: Int, seq: Int) -> [UInt8] in
        TransitIC.HistoryRecord(console: 0x16, process: 0x01, date: try! CardDate(year: 2026, month: 11, day: day),
                                route: .rail(entryLine: 1, entryStation: 2, exitLine: 3, exitStation: 4), balance: bal, sequence: seq).encode()
    }
    var bad = d(5, 0, 0); bad[4] = 0x35; bad[5] = 0xA1  // month 13
    let blocks = [d(9, 800, 5), d(8, 1_000, 4), bad, d(6, 500, 2), d(5, 700, 1), [UInt8](repeating: 0, count: 16), [0x01, 0x02]]
    let h = TransitIC.decodeHistory(blocks)
    #expect(h.count == 6)
    #expect(h.compactMap(\.transaction).map(\.amount) == [-200, nil, -200, nil])
    if case .malformed(let slot, let e, _) = h[2] {
        #expect(slot == 2)
        #expect(e.code == .invalidDate)
    } else {
        Issue.record("slot 2 should be malformed")
    }
    if case .malformed(let slot, let e, let raw) = h[5] {
        #expect(slot == 6 && e.code == .blockLength && raw == [0x01, 0x02])
    } else {
        Issue.record("slot 6 should be malformed")
    }
}

@Test(arguments: [(0, 0, 0, 0), (0xF, 0xF, 0xFFFF, 0xFFFF), (2, 0, 1_234, 0x00A1)])
func attributesRoundTrip(type: Int, region: Int, balance: Int, counter: Int) throws {
    let a = TransitIC.Attributes(cardType: type, region: region, balance: balance, transactionCounter: counter)
    let block = a.encode()
    #expect(block[11] == UInt8(balance & 0xFF) && block[12] == UInt8(balance >> 8))  // LE
    #expect(block[14] == UInt8(counter >> 8) && block[15] == UInt8(counter & 0xFF))  // BE
    #expect(try TransitIC.Attributes(block: block) == a)
}

@Test func crossCheckMismatchIsNoted() {
    let attrs = TransitIC.Attributes(cardType: 0, region: 0, balance: 900, transactionCounter: 1).encode()
    let rec = TransitIC.HistoryRecord(console: 0x16, process: 0x01, date: try! CardDate(year: 2026, month: 1, day: 1),
                                      route: .rail(entryLine: 0, entryStation: 0, exitLine: 0, exitStation: 0), balance: 1_000, sequence: 1).encode()
    let p = TransitIC.purse(system: .transit, attributes: attrs, history: [rec])
    #expect(p.balance == 900)
    #expect(p.notes.count == 1)
    #expect(p.notes[0].contains("¥900") && p.notes[0].contains("¥1000"))
    let ok = TransitIC.purse(system: .transit, attributes: TransitIC.Attributes(cardType: 0, region: 0, balance: 1_000, transactionCounter: 1).encode(), history: [rec])
    #expect(ok.notes.isEmpty)
}

/// Gate log: BCD time, entry bit, fare little-endian.
@Test(arguments: [
    ("a00025140123355f2359400000000000", true, "2026-10-31T23:59:00+09:00", 0x40, nil as CardDataError.Code?),
    ("200025140123355f08470a0100000000", false, "2026-10-31T08:47:00+09:00", 0x010A, nil),
    ("200025140123355f2400000000000000", false, "", 0, .invalidDate),
    ("200025140123355f1a00000000000000", false, "", 0, .invalidField),
])
func gateLog(_ hex: String, _ entry: Bool, _ date: String, _ fare: Int, _ error: CardDataError.Code?) throws {
    let block = bytes(hex)
    #expect(block.count == 16)
    if let error {
        #expect(throws: CardDataError(error, "")) { try TransitIC.GateRecord.decode(block) }
        return
    }
    let g = try #require(try TransitIC.GateRecord.decode(block))
    #expect((g.kind & 0x80 != 0) == entry)
    #expect(g.date.iso == date)
    #expect(g.line == 0x25 && g.station == 0x14 && g.gate == 0x0123)
    #expect(g.fare == fare)
    #expect(g.encode() == block)
}

@Test func pendingEntry() throws {
    let date = try CardDate(year: 2026, month: 12, day: 31, hour: 23, minute: 59)
    let blocks = TransitIC.encodePendingEntry(line: 0x25, station: 0x14, date: date)
    let p = try #require(try TransitIC.decodePendingEntry(blocks, stations: nil))
    #expect(p.date.iso == "2026-12-31T23:59:00+09:00")
    #expect(p.station.line == 0x25 && p.station.station == 0x14)
    #expect(try TransitIC.decodePendingEntry(TransitIC.encodePendingEntry(line: 0, station: 0, date: nil), stations: nil) == nil)
}
