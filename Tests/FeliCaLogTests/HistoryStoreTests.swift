import FeliCa
import FeliCaCards
@testable import FeliCaLog
import FeliCaEmulators
import FeliCaSimulation
import Foundation
import Testing

/// A fresh database file in a directory of its own.
func temporaryDatabase(_ name: String = #function) -> String {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("felica-history-tests-\(getpid())/\(UUID().uuidString)")
    return dir.appendingPathComponent("\(name.filter(\.isLetter)).sqlite3").path
}

/// A record from the text the database keeps, typed as ``KeptRecord`` holds it.
func kept(card: String = "0101120312345678", purse: String = "transit-ic", sequence: Int?, date: String, time: String? = nil,
          type: String = "transit", detail: String, from: String?, to: String?, amount: Int?, balance: Int) -> KeptRecord {
    let profile = PurseProfile(rawValue: purse)!
    return KeptRecord(card: try! IDm(hex: card), purse: profile, sequence: sequence,
                      date: CardDate(keptDay: date, time: time, utcOffsetMinutes: profile.utcOffsetMinutes)!,
                      kind: TransactionKind(rawValue: type)!, detail: detail, from: from, to: to, amount: amount, balance: balance)
}

/// A transit-like purse reading of `sequences` (given oldest first): one record per number,
/// balances rising by 10 per number, the oldest without an amount as on a card.
func reading(card: String = "0101120312345678", _ sequences: [Int], profile: PurseProfile = .transitIC,
             numbered: Bool = true, day: Int = 1, tag: String = "") -> Reading {
    let newestFirst = Array(sequences.reversed())
    let records = newestFirst.enumerated().map { i, s in
        kept(card: card, purse: profile.rawValue, sequence: numbered ? s : nil, date: "2026-11-\(day < 10 ? "0" : "")\(day)",
                   time: nil, type: "transit", detail: "ticket gate, fare" + tag, from: "A\(s)", to: "B\(s)",
                   amount: i == newestFirst.count - 1 ? nil : 10, balance: 1_000 + 10 * s)
    }
    return Reading(card: card, device: "test", readAt: "2026-11-30T00:00:00Z",
                   purses: [.init(profile: profile, records: records, malformed: 0, numbered: numbered)])
}

@Test func readingTheSameCardTwiceAddsNothing() throws {
    let store = try HistoryStore(path: temporaryDatabase())
    let first = try store.save(reading(Array(1...20)))
    #expect(first.added == 20 && first.alreadyKept == 0 && first.gaps.isEmpty)
    let again = try store.save(reading(Array(1...20)))
    #expect(again.added == 0 && again.alreadyKept == 20 && again.gaps.isEmpty && again.conflicts.isEmpty)
    #expect(try store.count() == 20)
}

/// Real cards through the real reader: the built-in Suica and wallet, twice each.
@Test func builtInCardsMergeIdempotently() async throws {
    let store = try HistoryStore(path: temporaryDatabase())
    var total = 0
    for card in ["suica", "wallet", "suica", "wallet"] {
        let session = CardSession(transport: VirtualTransport(card: try VirtualCard.named(card), name: "virtual:\(card)"))
        let report = try await CardReader(depth: .history, stations: .bundled).read(session)
        let r = try store.save(try Reading(report: report, device: "virtual:\(card)", readAt: "2026-11-30T00:00:00Z"))
        total += r.added
        #expect(r.read == report.purses.reduce(0) { $0 + $1.transactions.count })
    }
    #expect(total == 9 + 14)
    #expect(try store.count() == 23)
    let suica = try store.records(.init(card: IDm(hex: "0101120312345678")))
    #expect(suica.count == 9)
    let ride = suica.first { $0.sequence == 161 }
    #expect(ride?.from == "新宿" && ride?.to == "渋谷")
}

@Test func overlappingReadingsAddOnlyTheNewRecords() throws {
    let store = try HistoryStore(path: temporaryDatabase())
    _ = try store.save(reading(Array(1...20)))
    let r = try store.save(reading(Array(6...25)))
    #expect(r.added == 5 && r.alreadyKept == 15 && r.gaps.isEmpty)
}

/// Records 21-29 rolled off between the readings: reported, kept in the database.
@Test func aGapBetweenReadingsIsReported() throws {
    let store = try HistoryStore(path: temporaryDatabase())
    _ = try store.save(reading(Array(1...20)))
    let r = try store.save(reading(Array(30...49)))
    #expect(r.added == 20)
    #expect(r.gaps == [HistoryStore.Gap(card: "0101120312345678", purse: "transit-ic", afterSequence: 20, beforeSequence: 30, missing: 9)])
    #expect(r.gaps[0].description.contains("9 records between sequence 20 and 30 rolled off"))
    #expect(try store.gaps() == r.gaps)
    // The oldest record of the second reading keeps its unknown amount: the one before it is missing.
    #expect(try store.records(.init()).first { $0.sequence == 30 }?.amount == nil)
}

/// The sequence is 16 bits: 65535 is followed by 0. A number met again after the wrap is a
/// new record, and a gap across the wrap is counted right.
@Test func sequencesWrapAt16Bits() throws {
    let store = try HistoryStore(path: temporaryDatabase())
    _ = try store.save(reading(Array(65_520...65_535)))
    let across = try store.save(reading(Array(65_530...65_535) + Array(0...9)))
    #expect(across.added == 10 && across.alreadyKept == 6 && across.gaps.isEmpty)
    let gap = try store.save(reading(Array(20...39)))
    #expect(gap.gaps.map(\.missing) == [10])
    #expect(gap.gaps.first?.afterSequence == 9)
    // Less than half a lap on each time (30,000 records, then 30,000 more), then the numbers
    // 20...39 of the next lap: new records each time, each after a gap, the last one
    // counted across the wrap. (A jump of more than half a lap cannot be told from an old
    // record; a card would have to be used 32,768 times between two readings.)
    for (start, missing) in [(30_000, 30_000 - 40), (60_000, 30_000 - 20)] {
        let r = try store.save(reading(Array(start...start + 19), day: 2))
        #expect(r.added == 20 && r.gaps.map(\.missing) == [missing])
    }
    let nextLap = try store.save(reading(Array(20...39), day: 3, tag: " (next lap)"))
    #expect(nextLap.added == 20 && nextLap.conflicts.isEmpty)
    #expect(nextLap.gaps.map(\.missing) == [65_536 - 60_020 + 20])
    #expect(try store.count() == 16 + 10 + 20 + 20 + 20 + 20)
}

@Test(arguments: [
    ([5, 4, 3], 65_536, nil, [5, 4, 3]),
    ([1, 0, 65_535], 65_536, nil, [65_537, 65_536, 65_535]),
    ([3, 2, 1], 65_536, 65_536 + 65_534, [131_075, 131_074, 131_073]),
    ([2, 1], 65_536, 65_535, [65_538, 65_537]),
    ([10, 9], 1 << 24, 8, [10, 9]),
] as [([Int], Int, Int?, [Int])])
func unwrapPlacesTheOldestNearTheNewestKept(_ sequences: [Int], _ modulus: Int, _ kept: Int?, _ expected: [Int]) {
    #expect(HistoryStore.unwrap(sequences, modulus: modulus, after: kept) == expected.map { Optional($0) })
}

/// A purse whose records carry no usable sequence is keyed by content.
@Test func recordsWithoutSequenceAreKeyedByContent() throws {
    let store = try HistoryStore(path: temporaryDatabase())
    #expect(try store.save(reading([1, 2, 3], numbered: false)).added == 3)
    #expect(try store.save(reading([1, 2, 3], numbered: false)).added == 0)
    let more = try store.save(reading([2, 3, 4], numbered: false))
    #expect(more.added == 1 && more.alreadyKept == 2 && more.gaps.isEmpty)
}

/// A card's report with repeated sequence numbers is not numbered; distinct ones are.
@Test func aPurseIsNumberedWhenItsSequencesDiffer() async throws {
    let session = CardSession(transport: VirtualTransport(card: try VirtualCard.named("suica"), name: "virtual:suica"))
    let report = try await CardReader(depth: .history).read(session)
    #expect(try Reading(report: report, device: nil, readAt: "x").purses.map(\.numbered) == [true])
    var zeroed = report
    zeroed.purses[0].history = report.purses[0].history?.map { e in
        guard var t = e.transaction else { return e }
        t.sequence = 0
        return .transaction(t)
    }
    let r = try Reading(report: zeroed, device: nil, readAt: "x")
    #expect(r.purses[0].numbered == false && r.purses[0].records.allSatisfy { $0.sequence == nil })
}

@Test func aRecordThatChangedUnderItsKeyIsAConflictAndTheKeptOneStays() throws {
    let store = try HistoryStore(path: temporaryDatabase())
    _ = try store.save(reading([1, 2, 3]))
    let r = try store.save(reading([1, 2, 3], tag: " (changed)"))
    #expect(r.added == 0 && r.conflicts.count == 3)
    #expect(try store.records(.init()).allSatisfy { $0.detail == "ticket gate, fare" })
}

/// The oldest record of a reading has no amount on the card; the kept record before it gives one.
@Test func theOldestRecordsAmountComesFromTheKeptOneBeforeIt() throws {
    let store = try HistoryStore(path: temporaryDatabase())
    _ = try store.save(reading([1, 2, 3]))
    _ = try store.save(reading([4, 5, 6]))
    #expect(try store.records(.init()).first { $0.sequence == 4 }?.amount == 10)
    #expect(try store.records(.init()).first { $0.sequence == 1 }?.amount == nil)
}

/// A purse whose history could not be read makes the reading incomplete: nothing saved.
@Test func anIncompleteReadingIsRefused() async throws {
    let session = CardSession(transport: VirtualTransport(card: try VirtualCard.named("wallet"), name: "virtual:wallet"))
    var report = try await CardReader(depth: .history).read(session)
    report.purses[2].history = nil
    report.purses[2].issues.append(ServiceIssue(service: 0x564F, content: .history, problem: .unreadable("status A1")))
    #expect { try Reading(report: report, device: nil, readAt: "x") } throws: { ($0 as? HistoryError)?.code == .incompleteReading }
    report.purses[2].issues = []
    #expect { try Reading(report: report, device: nil, readAt: "x") } throws: { ($0 as? HistoryError)?.code == .incompleteReading }
}

/// A card pulled away mid-read: the reader throws, so there is no reading to save.
@Test func aCardPulledMidReadGivesNoReading() async throws {
    let card = try VirtualCard.named("suica")
    card.removeAfter(exchanges: 2)
    let session = CardSession(transport: VirtualTransport(card: card, name: "virtual:suica"))
    await #expect(throws: FeliCaError.self) { try await CardReader(depth: .history).read(session) }
}

@Test func queriesFilterByCardAndDay() throws {
    let store = try HistoryStore(path: temporaryDatabase())
    _ = try store.save(reading(Array(1...3), day: 1))
    _ = try store.save(reading(Array(4...6), day: 15))
    _ = try store.save(reading(card: "0102030405060708", Array(1...2), day: 20))
    let other = try IDm(hex: "0102030405060708")
    #expect(try store.records(.init(from: CardDate(year: 2026, month: 11, day: 2))).count == 5)
    #expect(try store.records(.init(to: CardDate(year: 2026, month: 11, day: 15))).count == 6)
    #expect(try store.records(.init(card: other)).count == 2)
    #expect(try store.records(.init(card: other, to: CardDate(year: 2026, month: 11, day: 19))).isEmpty)
    let newest = try store.records(.init(newestFirst: true))
    #expect(newest.first?.dayText == "2026-11-20" && newest.last?.sequence == 1)
}

// MARK: - Schema

/// A version-1 database (before gaps were kept) is migrated on open, its records intact.
@Test func aVersionOneDatabaseIsMigrated() throws {
    let path = temporaryDatabase()
    do {
        let old = try HistoryStore(path: path, upTo: 1)
        #expect(try old.version() == 1)
        try old.db.exec("""
            INSERT INTO readings(id, card, read_at, device, records, added) VALUES(1, '0101120312345678', '2026-11-01T00:00:00Z', 'x', 1, 1);
            INSERT INTO records VALUES('0101120312345678', 'transit-ic', 's20', 20, 20, '2026-11-01', NULL, 'transit',
                                       'ticket gate, fare', 'A20', 'B20', -10, 1200, '2026-11-01||transit|ticket gate, fare|A20|B20|1200', 1);
            """)
    }
    let store = try HistoryStore(path: path)
    #expect(try store.version() == HistoryStore.schemaVersion)
    #expect(try store.count() == 1)
    let r = try store.save(reading(Array(30...31)))
    #expect(r.gaps.map(\.missing) == [9])
    #expect(try store.integrityCheck() == "ok")
}

@Test func aDatabaseFromANewerVersionIsRefused() throws {
    let path = temporaryDatabase()
    try HistoryStore(path: path).db.exec("PRAGMA user_version=99")
    do {
        _ = try HistoryStore(path: path)
        Issue.record("opened a schema-99 database")
    } catch {
        #expect(error.code == .newerSchema)
        #expect(error.reason.contains("schema version 99"))
    }
}

@Test func aFileThatIsNoDatabaseIsNamed() throws {
    let path = temporaryDatabase()
    try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
    try String(repeating: "not a database\n", count: 100).write(toFile: path, atomically: true, encoding: .utf8)
    do {
        _ = try HistoryStore(path: path)
        Issue.record("opened a text file")
    } catch {
        #expect(error.code == .notADatabase, "\(error)")
        #expect(error.reason.contains(path))
    }
}

@Test func theDatabaseIsInWALMode() throws {
    let store = try HistoryStore(path: temporaryDatabase())
    #expect(try store.db.text("PRAGMA journal_mode") == "wal")
}

@Test(arguments: [
    (["XDG_DATA_HOME": "/x/data", "HOME": "/home/u"], "/x/data/felica/history.sqlite3"),
    (["HOME": "/home/u"], "/home/u/.local/share/felica/history.sqlite3"),
    (["XDG_DATA_HOME": "relative", "HOME": "/home/u"], "/home/u/.local/share/felica/history.sqlite3"),
    ([:], nil),
] as [([String: String], String?)])
func defaultPathFollowsXDG(_ env: [String: String], _ expected: String?) {
    #expect(HistoryStore.defaultPath(environment: env) == expected)
}

// MARK: - CSV

@Test func csvQuotesWhatNeedsIt() throws {
    var out = ""
    var csv = try ExpenseCSV(excel: false, summary: false) { out += $0 }
    try csv.add(kept(purse: "transit-ic", sequence: 1, date: "2026-11-01", time: nil, type: "transit",
                           detail: "ticket gate, fare", from: "say \"hi\"", to: "line\nbreak", amount: -200, balance: 5))
    try csv.finish()
    #expect(out == "date,time,type,from,to,amount,balance,sequence,card,purse,detail\n"
                 + "2026-11-01,,transit,\"say \"\"hi\"\"\",\"line\nbreak\",-200,5,1,0101120312345678,transit-ic,\"ticket gate, fare\"\n")
}

@Test func excelCSVHasABOMAndCRLF() throws {
    var out = ""
    var csv = try ExpenseCSV(excel: true, summary: true) { out += $0 }
    for (day, type, amount) in [("2026-10-31", "transit", -200), ("2026-11-01", "charge", 1000), ("2026-11-02", "purchase", -150), ("2026-11-03", "transit", -300)] {
        try csv.add(kept(purse: "transit-ic", sequence: 1, date: day, time: nil, type: type, detail: "d",
                               from: nil, to: nil, amount: amount, balance: 5))
    }
    try csv.finish()
    #expect(out.hasPrefix("\u{FEFF}date,"))
    let lines = out.dropFirst().components(separatedBy: "\r\n")
    #expect(lines.last == "")
    #expect(!out.replacingOccurrences(of: "\r\n", with: "").contains("\n"))
    #expect(lines.contains("2026-10,,month total,,,,,,0101120312345678,transit-ic,,200,0,0"))
    #expect(lines.contains("2026-11,,month total,,,,,,0101120312345678,transit-ic,,300,1000,150"))
}

// MARK: - Typed records

/// Records come back typed (the card, the purse, the day, the kind), selected by a typed
/// query; text is only what the database holds.
@Test func keptRecordsComeBackTyped() throws {
    let store = try HistoryStore(path: temporaryDatabase())
    _ = try store.save(reading(Array(1...3), day: 2))
    _ = try store.save(reading(card: "0101120312340000", Array(1...2), day: 5))
    let card = try IDm(hex: "0101120312345678")
    let day2 = try CardDate(year: 2026, month: 11, day: 2), day4 = try CardDate(year: 2026, month: 11, day: 4)
    let records = try store.records(HistoryStore.Query(card: card, purse: .transitIC, from: day2, to: day4))
    #expect(records.count == 3)
    #expect(records.allSatisfy { $0.card == card && $0.purse == .transitIC && $0.kind == .transit && $0.date == day2 })
    #expect(records.map(\.sequence) == [1, 2, 3])
    #expect(try store.records(HistoryStore.Query(from: day4)).map(\.card.hex) == ["0101120312340000", "0101120312340000"])
    #expect(try store.records(HistoryStore.Query(purse: .edy)).isEmpty)
}

/// A record's time is kept to the purse's precision: a transit record keeps the day, Edy
/// the second, nanaco the minute.
@Test func aRecordKeepsItsTimeToThePursePrecision() throws {
    let moment = try CardDate(year: 2026, month: 11, day: 30, hour: 8, minute: 30, second: 15)
    let t = Transaction(date: moment, kind: .purchase, amount: -100, balance: 900, sequence: 1, type: CodeName(0x46, "purchase"))
    let edy = KeptRecord(t, card: IDm(rawValue: 1), purse: .edy), nanaco = KeptRecord(t, card: IDm(rawValue: 1), purse: .nanaco)
    #expect(edy.timeText == "08:30:15" && edy.date.precision == .second)
    #expect(nanaco.timeText == "08:30" && nanaco.date.precision == .minute)
    #expect(KeptRecord(t, card: IDm(rawValue: 1), purse: .octopus).timeText == nil)
}

/// A row this program never wrote (changed by hand) is an error that names it, not a
/// record with an empty field.
@Test func aHandChangedRowIsAnError() throws {
    let path = temporaryDatabase()
    let store = try HistoryStore(path: path)
    _ = try store.save(reading(Array(1...2)))
    try store.db.exec("UPDATE records SET type = 'bogus' WHERE sequence = 2")
    let error = thrownHistoryError { _ = try store.records(HistoryStore.Query()) }
    #expect(error?.reason.contains("has a type this version does not know (\"bogus\")") == true, "\(String(describing: error))")
}

private func thrownHistoryError(_ body: () throws -> Void) -> HistoryError? {
    do { try body() } catch let e as HistoryError { return e } catch { return nil }
    return nil
}
