import FeliCa
import FeliCaCards
import FeliCaCLI
import FeliCaLog
import FeliCaEmulators
import FeliCaSimulation

#if canImport(Glibc)
import Glibc
#endif

/// Station names and the history database: the bundled table's first parse and lookup
/// rate, `log add` of a full (20-record) transit card into a new and into a filled
/// database, and `log export --csv` of 100,000 kept records (time and peak RSS).
func historyBenchmarks() async {
    guard section("history") else { return }
    let clock = ContinuousClock()

    // Station table: the first use parses the bundled text.
    let parseStart = clock.now
    let table = StationTable.bundled
    let parse = clock.now - parseStart
    print(pad("bundled station table, first use (parse)", 52) + ms(parse) + "  (\(table.count) stations)")
    var keys: [(Int, Int, Int)] = []
    var x: UInt32 = 0x1234_5678
    for _ in 0..<4096 {
        x ^= x << 13; x ^= x >> 17; x ^= x << 5
        keys.append((Int(x & 3), Int(x >> 8 & 0xFF), Int(x >> 16 & 0xFF)))
    }
    var hits = 0
    for k in keys where table.name(area: k.0, line: k.1, station: k.2) != nil { hits += 1 }
    var i = 0
    let lookup = measure("station lookup (area, line, station), \(hits * 100 / keys.count)% found", iterations: 1_000_000) {
        let k = keys[i & 4095]
        blackHole(table.station(area: k.0, line: k.1, station: k.2))
        i += 1
    }
    let gateLookup = measure("station lookup without the area (gate log)", iterations: 200_000) {
        let k = keys[i & 4095]
        blackHole(table.station(area: nil, line: k.1, station: k.2))
        i += 1
    }
    record("station name lookup, bundled table (\(table.count) stations; the first use parses it: " + fixed(millis(parse), 0) + " ms)",
           format(lookup) + "/s (without the area, as for the gate log: " + format(gateLookup) + "/s)", model: CardModel.none)

    // A transit card with its 20 history slots full.
    guard var image = try? VirtualCard.named("suica").image,
          let si = image.systems.firstIndex(where: { $0.code == 0x0003 }),
          let hi = image.systems[si].services.firstIndex(where: { $0.code == TransitIC.historyService }),
          let day = try? CardDate(year: 2026, month: 11, day: 1) else {
        print("cannot build the 20-record card: skipped")
        return
    }
    image.systems[si].services[hi].blocks = (0..<20).map { k in
        TransitIC.HistoryRecord(console: 0x16, process: 0x01, date: day,
                                route: .rail(entryLine: 0x25, entryStation: 0x0A, exitLine: 0x25, exitStation: 0x07),
                                balance: 5_000 - 10 * k, sequence: 500 - k).encode()
    }
    let dir = "/tmp/felica-history-bench-\(getpid())"
    mkdir(dir, 0o700)
    defer { _ = system("rm -rf '\(dir)'") }

    func logAdd(_ path: String) async throws -> HistoryStore.SaveResult {
        let session = CardSession(transport: VirtualTransport(card: VirtualCard(image: image), name: "virtual:bench"))
        let report = try await CardReader(depth: .history, stations: .bundled).read(session)
        let store = try HistoryStore(path: path)
        return try store.save(try Reading(report: report, device: "virtual:bench", readAt: "2026-11-30T00:00:00Z"))
    }
    var n = 0
    do {
        let new = try await measureAsync("log add, 20-record card, new database (20 added)") {
            n += 1
            let r = try await logAdd("\(dir)/new-\(n).sqlite3")
            precondition(r.added == 20)
        }
        let kept = "\(dir)/kept.sqlite3"
        _ = try await logAdd(kept)
        let again = try await measureAsync("log add, 20-record card, again (20 already kept)") {
            let r = try await logAdd(kept)
            precondition(r.alreadyKept == 20)
        }
        record("`log add` of a 20-record transit card (read from a virtual card, merge, one fsync'd transaction)",
               fixed(millis(new), 1) + " ms into a new database, " + fixed(millis(again), 1) + " ms when all 20 are already kept", model: "virtual card, no timing model")
    } catch {
        print("log add: \(error)")
    }

    // 100,000 kept records, then the export.
    let big = "\(dir)/big.sqlite3"
    do {
        let store = try HistoryStore(path: big)
        let fillStart = clock.now
        for reading in 0..<5 {
            let records = (0..<20_000).reversed().map { k -> KeptRecord in
                let s = reading * 20_000 + k
                return KeptRecord(card: IDm(rawValue: 0x0101_1203_1234_5678), purse: .transitIC, sequence: s % 65_536,
                                  date: try! CardDate(year: 2026, month: s / 10_000 % 12 + 1, day: s % 28 + 1),
                                  kind: s % 5 == 0 ? .charge : .transit, detail: "ticket gate, fare", from: "新宿", to: "渋谷",
                                  amount: s % 5 == 0 ? 1_000 : -200, balance: 10_000 + s % 1000)
            }
            _ = try store.save(Reading(card: "0101120312345678", device: nil, readAt: "2026-11-30T00:00:00Z",
                                       purses: [.init(profile: .transitIC, records: records, malformed: 0, numbered: true)]))
        }
        print(pad("fill: 100,000 records in 5 saves", 52) + ms(clock.now - fillStart) + "  (\(try store.count()) kept)")
    } catch {
        print("filling the database: \(error)")
        return
    }
    for (label, extra) in [("log export --csv, 100,000 records", [String]()), ("log export --csv --excel --summary", ["--excel", "--summary"])] {
        let out = "\(dir)/export.csv"
        _ = resetPeakRSS()
        let start = clock.now
        let status = await withStdout(to: out) { await FeliCaCommandLine.felica(["log", "export", "--csv", "--db", big] + extra) }
        let took = clock.now - start
        var st = stat()
        stat(out, &st)
        print(pad(label, 52) + ms(took) + "  (exit \(status), \(st.st_size / 1024) KiB written, peak RSS \(procStatus("VmHWM") / 1024) MiB)")
        if extra.isEmpty {
            record("`log export --csv` of 100,000 kept records", fixed(millis(took) / 1000, 2) + " s, peak RSS \(procStatus("VmHWM") / 1024) MiB (rows stream from SQLite to stdout)", model: CardModel.none)
        }
    }
}
