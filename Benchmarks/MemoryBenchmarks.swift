import FeliCa
import FeliCaCLI
import FeliCaEmulators
import FeliCaSimulation

#if canImport(Glibc)
import Glibc
import FeliCaCards
#endif

/// A long `felica watch` through real libnfc and the PN532 emulator, whose card is tapped
/// on and off the reader over and over (``PN532Emulator/Taps``): peak RSS over 100 taps and
/// over 10,000 must be the same, or something grows per card.
///
/// Runs the command in this process (the code of the `felica` binary, without depending on
/// a release build of it being at hand) and takes the peak from /proc/self/status VmHWM,
/// reset before each run through /proc/self/clear_refs.
func memoryBenchmarks() async {
    guard section("memory") else { return }
    setenv("LIBNFC_AUTO_SCAN", "false", 1)
    setenv("LIBNFC_LOG_LEVEL", "0", 1)
    // The wallet (four purses): per tap, Polling, Request System Code, the transit read,
    // Polling FE00, Request Service, the common-area read, then Request Response until the
    // card goes (8 packets in the field, 3 away).
    let taps = PN532Emulator.Taps(present: 8, absent: 3)
    var peaks: [Int: Int] = [:]
    // FELICA_BENCH_TAPS=100,10000,30000 runs other tap counts.
    let counts = (getenv("FELICA_BENCH_TAPS").map { String(cString: $0) } ?? "100,10000").split(separator: ",").compactMap { Int($0) }.filter { $0 > 0 }
    for count in counts {
        guard let card = try? VirtualCard.named("wallet"),
              let server = try? PN532Server(card: card, options: .init(taps: taps)) else {
            print("cannot start the PN532 emulator: skipped")
            return
        }
        server.start()
        let output = "/tmp/felica-memory-bench-\(getpid()).jsonl"
        let peakReset = resetPeakRSS()
        let before = procStatus("VmRSS")
        let clock = ContinuousClock()
        let start = clock.now
        // RSS as the taps go by (11 card exchanges a tap), to tell a steady climb from a plateau.
        let sampler = Task.detached { () -> [(taps: Int, rss: Int)] in
            var samples: [(taps: Int, rss: Int)] = []
            while !Task.isCancelled {
                samples.append((server.cardExchanges / (taps.present + taps.absent), procStatus("VmRSS")))
                try? await Task.sleep(for: .milliseconds(200))
            }
            return samples
        }
        let status = await withStdout(to: output) {
            await FeliCaCommandLine.felica(["watch", "--json", "--count", String(count), "--interval", "0",
                                            "--device", "libnfc:" + server.connectionString])
        }
        let elapsed = clock.now - start
        sampler.cancel()
        let samples = await sampler.result.get()
        let peak = procStatus("VmHWM"), after = procStatus("VmRSS")
        let exchanges = server.cardExchanges
        server.stop()
        let lines = readLines(output)
        unlink(output)
        let complete = lines.filter { l in ["transit-ic", "edy", "nanaco", "waon"].allSatisfy { l.contains("\"\($0)\"") } }.count
        guard status == 0, lines.count == count, complete == count else {
            print("felica watch over \(count) taps: exit \(status), \(lines.count) cards printed, \(complete) complete: FAILED")
            return
        }
        peaks[count] = peak
        print(pad("felica watch, \(count) taps (wallet) via libnfc+PN532", 52)
              + "peak RSS \(mib(peak))  (before \(mib(before)), after \(mib(after)); \(exchanges) card exchanges, \(fixed(seconds(elapsed), 1)) s)"
              + (peakReset ? "" : "  [peak not reset: includes earlier sections]"))
        if count >= 1_000 {
            let marks = stride(from: count / 10, through: count, by: count / 10).compactMap { mark in samples.first { $0.taps >= mark } }
            print("  RSS (MiB) by taps:           " + marks.map { "\($0.taps / 100 * 100): \(fixed(Double($0.rss) / 1024, 1))" }.joined(separator: ", "))

        }
    }
    if let small = peaks[100], let large = peaks[10_000] {
        let growth = large - small
        print(pad("  peak RSS growth from 100 to 10,000 taps", 52) + "\(growth >= 0 ? "+" : "")\(fixed(Double(growth) / 1024, 2)) MiB"
              + "  (\(fixed(Double(growth) * 1024 / 9_900, 1)) bytes per tap)")
    }
}

/// Resets the process's peak RSS to its current RSS (Linux ≥ 4.0); false when not allowed.
func resetPeakRSS() -> Bool {
    let fd = open("/proc/self/clear_refs", O_WRONLY)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    return write(fd, "5", 1) == 1
}

/// A `kB` figure from /proc/self/status (VmRSS, VmHWM), or 0.
func procStatus(_ key: String) -> Int {
    for line in readLines("/proc/self/status") where line.hasPrefix(key + ":") {
        return Int(line.dropFirst(key.count + 1).filter(\.isNumber)) ?? 0
    }
    return 0
}

func readLines(_ path: String) -> [String] {
    guard let f = fopen(path, "r") else { return [] }
    defer { fclose(f) }
    var lines: [String] = []
    var buffer: UnsafeMutablePointer<CChar>? = nil
    var size = 0
    while getline(&buffer, &size, f) > 0 {
        lines.append(String(cString: buffer!).trimmingSuffix("\n"))
    }
    free(buffer)
    return lines
}

extension String {
    fileprivate func trimmingSuffix(_ s: String) -> String { hasSuffix(s) ? String(dropLast(s.count)) : self }
}

func mib(_ kB: Int) -> String { fixed(Double(kB) / 1024, 1) + " MiB" }

func seconds(_ d: Duration) -> Double { Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18 }

/// Runs `body` with file descriptor 1 pointed at a fresh file at `path`.
func withStdout<T>(to path: String, _ body: () async -> T) async -> T {
    let saved = dup(1)
    let file = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    dup2(file, 1)
    close(file)
    let result = await body()
    dup2(saved, 1)
    close(saved)
    return result
}
