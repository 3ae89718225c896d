import FeliCa
import FeliCaCLI
import FeliCaLog
import FeliCaEmulators
import FeliCaSimulation

#if canImport(Glibc)
import Glibc
import FeliCaCards
#endif

/// A desk that runs `felica watch --save` all day: N taps (`FELICA_BENCH_KIOSK_TAPS`,
/// default 20,000) of the Suica sample through real libnfc and the PN532 emulator, saved
/// into one database, with the process's RSS, the WAL and the database file and the tap
/// rate at the start and at the end; then how big the database gets per 10,000 records
/// kept (saved through the library, two new records a reading, as a commuter's card
/// brings to a daily tap).
func kioskBenchmarks() async {
    guard section("kiosk") else { return }
    setenv("LIBNFC_AUTO_SCAN", "false", 1)
    setenv("LIBNFC_LOG_LEVEL", "0", 1)
    let dir = "/tmp/felica-kiosk-bench-\(getpid())"
    mkdir(dir, 0o700)
    defer { _ = system("rm -rf '\(dir)'") }
    await kioskWatch(dir)
    kioskGrowth(dir)
}

/// A file's size in bytes, 0 when missing.
private func bytes(_ path: String) -> Int {
    var st = stat()
    return stat(path, &st) == 0 ? Int(st.st_size) : 0
}

private func kib(_ n: Int) -> String { n < 1 << 20 ? "\(n / 1024) KiB" : fixed(Double(n) / Double(1 << 20), 1) + " MiB" }

private func kioskWatch(_ dir: String) async {
    let count = getenv("FELICA_BENCH_KIOSK_TAPS").flatMap { Int(String(cString: $0)) }.flatMap { $0 > 0 ? $0 : nil } ?? 20_000
    // Suica at history depth: Polling, the balance and history reads, then Request
    // Response until the card goes (6 packets in the field, 3 away).
    let taps = CardTaps(present: 6, absent: 3)
    guard let card = try? VirtualCard.named("suica"), let server = try? PN532Server(card: card, options: .init(taps: taps)) else {
        print("cannot start the PN532 emulator: skipped")
        return
    }
    server.start()
    defer { server.stop() }
    let db = "\(dir)/kiosk.sqlite3", output = "\(dir)/watch.jsonl"
    struct Sample { var seconds: Double; var cpu: Double; var taps: Int; var rss: Int; var wal: Int; var db: Int }
    // The process's CPU time (felica and the emulator, both in it): less swayed than the
    // wall clock by the other work of a shared machine.
    func cpuSeconds() -> Double {
        var t = timespec()
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t)
        return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
    }
    let clock = ContinuousClock()
    let start = clock.now
    let sampler = Task.detached { () -> [Sample] in
        var samples: [Sample] = []
        while !Task.isCancelled {
            samples.append(Sample(seconds: seconds(clock.now - start), cpu: cpuSeconds(), taps: server.cardExchanges / (taps.present + taps.absent),
                                  rss: procStatus("VmRSS"), wal: bytes(db + "-wal"), db: bytes(db)))
            try? await Task.sleep(for: .milliseconds(100))
        }
        return samples
    }
    let status = await withStdout(to: output) {
        await FeliCaCommandLine.felica(["watch", "--save", "--db", db, "--json", "--count", String(count), "--interval", "0",
                                        "--device", "libnfc:" + server.connectionString])
    }
    let elapsed = clock.now - start
    sampler.cancel()
    let samples = await sampler.result.get()
    let lines = readLines(output)
    let saved = lines.filter { $0.contains("\"saved\":{\"read\":9,") }.count
    guard status == 0, lines.count == count, saved == count else {
        print("felica watch --save over \(count) taps: exit \(status), \(lines.count) cards printed, \(saved) saved: FAILED")
        return
    }
    let kept = (try? HistoryStore(readingAt: db)).flatMap { try? $0.count() } ?? -1
    // The start: the first tenth of the taps (after the first card's 9 records are in); the end: the last tenth.
    let tenth = max(1, count / 10)
    func window(from a: Int, to b: Int) -> (Sample, Sample)? {
        guard let first = samples.first(where: { $0.taps >= a }), let last = samples.last(where: { $0.taps <= b }), last.taps > first.taps else { return nil }
        return (first, last)
    }
    func rate(_ w: (Sample, Sample)) -> String { fixed(Double(w.1.taps - w.0.taps) / (w.1.seconds - w.0.seconds), 1) + " taps/s" }
    let largestWAL = samples.map(\.wal).max() ?? 0
    print(pad("felica watch --save, \(count) taps (Suica) via libnfc+PN532", 52)
          + "\(fixed(Double(count) / seconds(elapsed), 1)) taps/s overall (\(fixed(seconds(elapsed), 1)) s); \(kept) records kept")
    if let a = window(from: 1, to: tenth), let b = window(from: count - tenth, to: count) {
        print("  start (taps \(a.0.taps)–\(a.1.taps)):  \(rate(a)), RSS \(mib(a.1.rss)), WAL \(kib(a.1.wal)), database \(kib(a.1.db))")
        print("  end   (taps \(b.0.taps)–\(b.1.taps)):  \(rate(b)), RSS \(mib(b.1.rss)), WAL \(kib(b.1.wal)), database \(kib(b.1.db))")
    }
    // Each tenth of the run, to tell a trend from the shared machine's noise.
    let tenths = (0..<10).compactMap { k in window(from: k * tenth, to: (k + 1) * tenth) }
    print("  taps/s by tenth:  " + tenths.map { fixed(Double($0.1.taps - $0.0.taps) / ($0.1.seconds - $0.0.seconds), 0) }.joined(separator: ", "))
    print("  CPU ms per tap by tenth:  " + tenths.map { fixed(($0.1.cpu - $0.0.cpu) * 1000 / Double($0.1.taps - $0.0.taps), 2) }.joined(separator: ", "))
    print("  RSS (MiB) by tenth:  " + tenths.map { fixed(Double($0.1.rss) / 1024, 1) }.joined(separator: ", "))
    print("  largest WAL seen: \(kib(largestWAL)); database after the run: \(kib(bytes(db)))")
}

/// Readings of 100 cards, each bringing two new records, until 10,000 and 20,000 records
/// are kept: the database's size at each, after the run (WAL checkpointed).
private func kioskGrowth(_ dir: String) {
    let path = "\(dir)/growth.sqlite3"
    let cards = (0..<100).map { "0101" + String(0x1000_0000_0000 + $0 * 104_729, radix: 16).suffix(12) }
    var newest = [Int](repeating: 19, count: cards.count)
    let stations = [("新宿", "渋谷"), ("東京", "品川"), ("池袋", "上野"), ("横浜", "川崎")]
    func record(_ card: Int, _ s: Int) -> KeptRecord {
        let day = s / 2 % 28 + 1, (from, to) = stations[(card + s) % stations.count]
        return KeptRecord(card: try! IDm(hex: cards[card]), purse: .transitIC, sequence: s % 65_536,
                          date: try! CardDate(year: 2026, month: s / 56 % 12 + 1, day: day),
                          kind: .transit, detail: "ticket gate, fare", from: from, to: to, amount: -200 - 10 * (s % 7), balance: 10_000 - s % 5_000)
    }
    var sizes: [String] = []
    let clock = ContinuousClock()
    let start = clock.now
    var saves = 0
    for target in [10_000, 20_000] {
        var kept = 0
        do {
            let store = try HistoryStore(path: path)
            while try store.count() < target {
                for c in cards.indices {
                    newest[c] += 2
                    let records = (newest[c] - 19...newest[c]).reversed().map { record(c, $0) }
                    _ = try store.save(Reading(card: cards[c], device: "bench", readAt: "2026-11-30T00:00:00Z",
                                               purses: [.init(profile: .transitIC, records: records, malformed: 0, numbered: true)]))
                    saves += 1
                }
            }
            kept = try store.count()
        } catch {
            print("filling the database: \(error)")
            return
        }
        // The store is closed: its WAL is checkpointed into the file and removed.
        sizes.append("\(kept) records: \(kib(bytes(path)))")
    }
    let kept = (try? HistoryStore(readingAt: path)).flatMap { try? $0.count() } ?? 1
    print(pad("database size (100 cards, 2 new records a reading)", 52) + sizes.joined(separator: ", ")
          + "  (\(bytes(path) * 10_000 / kept / 1024) KiB per 10,000 records with their readings; \(saves) saves in \(fixed(seconds(clock.now - start), 1)) s)")
}
