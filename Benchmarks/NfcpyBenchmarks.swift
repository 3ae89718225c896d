import FeliCa
import FeliCaEmulators
import FeliCaSimulation
import Foundation
import FeliCaCards

/// felica against nfcpy, side by side in one run, through the same PN532 emulator with rf
/// timing (115200-baud UART, air time, the typical card's own times), each tool by its best
/// device string: felica's native `pn532:<pty>`, nfcpy's own PN532 driver on the same pty.
///
/// - Balance: `felica balance` as a whole process (also through `libnfc:pn532_uart:`, for
///   reference) against an nfcpy script reading the same balance, Python's start-up and
///   nfcpy's import included, as a user pays them. nfcpy warm (its byte-code compiled by a
///   run first, as for a user after their first) and cold (an empty byte-code cache) apart.
/// - Taps: `felica watch` against an nfcpy connect-and-read loop over the same card taps:
///   tap-to-output latency (from the Polling that found the card to the printed line) and
///   taps per minute (from the first line to the last, each line timed as it arrives).
///
/// nfcpy comes from PyPI into .build/nfcpy-venv (scripts/nfcpy/venv.sh); without PyPI the
/// comparison is skipped. Needs the release `felica` next to this executable:
/// `swift build -c release`.
func nfcpyBenchmarks() async {
    guard section("nfcpy") else { return }
    let bin = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    let felica = bin.appendingPathComponent("felica").path
    guard FileManager.default.isExecutableFile(atPath: felica) else {
        print("no felica next to this executable (\(felica)): run `swift build -c release` first; skipped")
        return
    }
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    let venv = runProcess(root.appendingPathComponent("scripts/nfcpy/venv.sh").path, [])
    let python: String? = venv.status == 0 ? venv.stdout.trimmingCharacters(in: .whitespacesAndNewlines) : nil
    if python == nil { print(venv.stderr.isEmpty ? "nfcpy unavailable (exit \(venv.status)): comparison skipped" : venv.stderr.trimmingCharacters(in: .newlines)) }
    let script = root.appendingPathComponent("scripts/nfcpy/suica.py").path
    let environment = ["LIBNFC_AUTO_SCAN": "false", "LIBNFC_LOG_LEVEL": "0"]

    // Balance: whole processes, alternating so all see the same machine load.
    guard let card = try? VirtualCard.named("suica"), let server = try? PN532Server(card: card, options: .init(timing: true)) else {
        print("cannot start the PN532 emulator: skipped")
        return
    }
    server.start()
    let runs = Int(ProcessInfo.processInfo.environment["FELICA_BENCH_RUNS"] ?? "") ?? 9
    var native: [Double] = [], libnfc: [Double] = [], theirs: [Double] = [], imports: [Double] = [], cold: [Double] = []
    if let python {
        // Warm: one run first compiles and caches nfcpy's byte-code. Cold: a fresh, empty
        // byte-code cache each time (Python compiles every module it imports).
        _ = runProcess(python, [script, server.path], [:])
        for i in 0..<3 {
            let cache = FileManager.default.temporaryDirectory.appendingPathComponent("felica-bench-pycache-\(getpid())-\(i)").path
            let n = runProcess(python, [script, server.path], ["PYTHONPYCACHEPREFIX": cache])
            try? FileManager.default.removeItem(atPath: cache)
            guard n.status == 0 else { print("nfcpy (cold) failed: \(n.stderr)"); break }
            cold.append(n.ms)
        }
    }
    // felica's first run pays for the page cache too; not counted.
    _ = runProcess(felica, ["balance", "--device", "pn532:" + server.path], environment)
    for _ in 0..<runs {
        let f = runProcess(felica, ["balance", "--device", "pn532:" + server.path], environment)
        guard f.status == 0, f.stdout.contains("¥1,234") else { print("felica balance (pn532:) failed: \(f.stderr)"); server.stop(); return }
        native.append(f.ms)
        let l = runProcess(felica, ["balance", "--device", "libnfc:" + server.connectionString], environment)
        guard l.status == 0, l.stdout.contains("¥1,234") else { print("felica balance (libnfc:) failed: \(l.stderr)"); server.stop(); return }
        libnfc.append(l.ms)
        guard let python else { continue }
        let n = runProcess(python, [script, server.path], [:])
        guard n.status == 0, n.stdout.contains("¥1,234") else { print("nfcpy failed: \(n.stderr)"); server.stop(); return }
        theirs.append(n.ms)
        imports.append(runProcess(python, ["-c", "import nfc.clf, nfc.tag.tt3"], [:]).ms)
    }
    server.stop()
    let what = "Suica balance through the PN532 emulator, whole process"
    print(pad("felica balance --device pn532:PTY, rf timing, whole process", 62) + summary(native))
    print(pad("felica balance --device libnfc:pn532_uart:PTY, same", 62) + summary(libnfc))
    record("felica balance, \(what): `pn532:` (native)", fixed(median(native), 1) + " ms", model: CardModel.typical)
    record("the same through `libnfc:pn532_uart:`", fixed(median(libnfc), 1) + " ms", model: CardModel.typical)
    if python != nil {
        print(pad("nfcpy 1.0.4 balance via PN532, rf timing, whole process (warm)", 62) + summary(theirs))
        if !cold.isEmpty { print(pad("  nfcpy cold (empty byte-code cache each run)", 62) + summary(cold)) }
        print(pad("  of which Python start-up + `import nfc` alone (warm)", 62) + summary(imports))
        let ratio = median(native) / median(theirs)
        print(pad("  ratio felica (pn532:) / nfcpy warm (medians)", 62) + fixed(ratio, 2) + "×")
        record("nfcpy 1.0.4, same balance, its own PN532 driver, warm (byte-code compiled)", fixed(median(theirs), 1) + " ms (Python start-up + `import nfc` alone: " + fixed(median(imports), 1) + " ms)", model: CardModel.typical)
        if !cold.isEmpty { record("nfcpy cold (an empty byte-code cache each run)", fixed(median(cold), 1) + " ms", model: CardModel.typical) }
        record("**ratio felica (`pn532:`) / nfcpy warm, balance**", "**" + fixed(ratio, 2) + "×** (`libnfc:` / nfcpy: " + fixed(median(libnfc) / median(theirs), 2) + "×)", model: CardModel.typical)
    }

    // Taps. Each tap keeps the card in the field for 4 packets (Polling, the read, two
    // presence checks), then away for 6: nfcpy's presence check tries Request Response
    // three times and then a Polling before it lets the card go, so with fewer it would
    // find the card back every time.
    let taps = Int(ProcessInfo.processInfo.environment["FELICA_BENCH_WATCH_TAPS"] ?? "") ?? 100
    let cycle = PN532Emulator.Taps(present: 4, absent: 6)
    func tapRun(_ label: String, _ path: String, _ arguments: (PN532Server) -> [String], _ env: [String: String]) -> TapFigures? {
        guard let card = try? VirtualCard.named("suica"),
              let s = try? PN532Server(card: card, options: .init(timing: true, taps: cycle)) else {
            print("cannot start the PN532 emulator: skipped")
            return nil
        }
        s.start()
        let run = runStreaming(path, arguments(s), env)
        s.stop()
        // How many times the card was placed while the tool ran: the cycles its packets
        // reached, less one when the last packets only looked for the next tap.
        let arrivals = s.cardExchanges == 0 ? 0 : (s.cardExchanges - 1) / (cycle.present + cycle.absent) + 1
        let figures = TapFigures(lines: run.lines)
        guard run.status == 0, figures.latencies.count == taps else {
            print("\(label) failed (exit \(run.status), \(figures.latencies.count) of \(taps) taps printed): \(run.stderr.prefix(300))")
            return nil
        }
        // Every tap printed once: a tool may have begun on the next tap's packets when it
        // stopped, never more; one that missed or doubled taps would show here.
        if arrivals < taps || arrivals > taps + 1 {
            print("  note: \(label): the emulator placed the card \(arrivals) times for \(taps) taps printed")
        }
        print(pad("\(label), tap to output, \(taps) taps", 62) + summary(figures.latencies))
        print(pad("  taps per minute (first line to last, \(arrivals) placements)", 62) + fixed(figures.perMinute, 0))
        return figures
    }
    guard let ours = tapRun("felica watch --device pn532:PTY", felica, {
        ["watch", "--json", "--count", String(taps), "--interval", "0", "--device", "pn532:" + $0.path]
    }, environment) else { return }
    let tapWhat = "over \(taps) taps (card in the field for 4 packets, away for 6)"
    record("`felica watch --json --device pn532:`, tap to output \(tapWhat)", fixed(median(ours.latencies), 1) + " ms (median; p90 " + fixed(p90(ours.latencies), 1) + " ms)", model: CardModel.typical)
    record("  taps per minute, same run", fixed(ours.perMinute, 0), model: CardModel.typical)
    guard let python, let theirs = tapRun("nfcpy connect-and-read loop", python, { [script, $0.path, "--taps", String(taps)] }, [:]) else { return }
    let latency = median(ours.latencies) / median(theirs.latencies), rate = ours.perMinute / theirs.perMinute
    print(pad("  ratio felica / nfcpy, tap to output (medians)", 62) + fixed(latency, 2) + "×")
    print(pad("  ratio felica / nfcpy, taps per minute", 62) + fixed(rate, 2) + "×")
    record("nfcpy 1.0.4 connect-and-read loop, same taps: tap to output", fixed(median(theirs.latencies), 1) + " ms (median; p90 " + fixed(p90(theirs.latencies), 1) + " ms)", model: CardModel.typical)
    record("  nfcpy taps per minute, same run", fixed(theirs.perMinute, 0), model: CardModel.typical)
    record("**ratio felica / nfcpy, watch**", "**tap to output " + fixed(latency, 2) + "×, taps per minute " + fixed(rate, 2) + "×**", model: CardModel.typical)
}

/// What one watch run printed: each tap's `elapsedMs`, and the rate of taps.
struct TapFigures {
    var latencies: [Double]
    /// Taps per minute between the first printed line and the last.
    var perMinute: Double

    init(lines: [(text: Substring, ms: Double)]) {
        let taps = lines.compactMap { line in elapsedValue(line.text).map { (line.ms, $0) } }
        latencies = taps.map(\.1)
        if let first = taps.first, let last = taps.last, last.0 > first.0 {
            perMinute = Double(taps.count - 1) / (last.0 - first.0) * 60_000
        } else {
            perMinute = .nan
        }
    }
}

/// The 90th percentile.
func p90(_ values: [Double]) -> Double {
    let s = values.sorted()
    return s.isEmpty ? .nan : s[min(s.count - 1, s.count * 9 / 10)]
}

/// `12.3 ms (median of 9, p90 14.0, min 11.8)`.
func summary(_ values: [Double]) -> String {
    let s = values.sorted()
    return fixed(median(s), 1) + " ms  (median of \(s.count), p90 " + fixed(s[min(s.count - 1, s.count * 9 / 10)], 1) + ", min " + fixed(s[0], 1) + ")"
}

func median(_ values: [Double]) -> Double {
    let s = values.sorted()
    return s.isEmpty ? .nan : s[s.count / 2]
}

/// The `elapsedMs` of a JSON line; nil for any other line.
private func elapsedValue(_ line: Substring) -> Double? {
    guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else { return nil }
    return (object["elapsedMs"] as? NSNumber)?.doubleValue
}

struct ProcessRun {
    var status: Int32
    var stdout: String
    var stderr: String
    var ms: Double
}

/// Runs a process to its end, timing it from launch to exit.
func runProcess(_ path: String, _ arguments: [String], _ environment: [String: String] = [:]) -> ProcessRun {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: path)
    p.arguments = arguments
    p.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
    let out = Pipe(), err = Pipe()
    p.standardOutput = out
    p.standardError = err
    let clock = ContinuousClock()
    let start = clock.now
    do { try p.run() } catch { return ProcessRun(status: -1, stdout: "", stderr: "\(path): \(error)", ms: 0) }
    let o = out.fileHandleForReading.readDataToEndOfFile()
    let e = err.fileHandleForReading.readDataToEndOfFile()
    p.waitUntilExit()
    let d = clock.now - start
    return ProcessRun(status: p.terminationStatus, stdout: String(decoding: o, as: UTF8.self), stderr: String(decoding: e, as: UTF8.self),
                      ms: millis(d))
}

/// Runs a process to its end, timing each line of its standard output as it arrives
/// (milliseconds from launch); standard error is kept apart in a file, so neither pipe can
/// fill and stall the process.
func runStreaming(_ path: String, _ arguments: [String], _ environment: [String: String] = [:]) -> (status: Int32, lines: [(text: Substring, ms: Double)], stderr: String) {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: path)
    p.arguments = arguments
    p.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
    let out = Pipe()
    let errPath = FileManager.default.temporaryDirectory.appendingPathComponent("felica-bench-stderr-\(getpid())").path
    _ = FileManager.default.createFile(atPath: errPath, contents: nil)
    defer { try? FileManager.default.removeItem(atPath: errPath) }
    p.standardOutput = out
    p.standardError = FileHandle(forWritingAtPath: errPath)
    let clock = ContinuousClock()
    let start = clock.now
    do { try p.run() } catch { return (-1, [], "\(path): \(error)") }
    var lines: [(text: Substring, ms: Double)] = []
    var pending: [UInt8] = []
    let fd = out.fileHandleForReading.fileDescriptor
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
        let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if n < 0 && errno == EINTR { continue }
        guard n > 0 else { break }
        let at = millis(clock.now - start)
        pending += buffer[0..<n]
        while let newline = pending.firstIndex(of: 0x0A) {
            lines.append((Substring(String(decoding: pending[..<newline], as: UTF8.self)), at))
            pending.removeSubrange(...newline)
        }
    }
    p.waitUntilExit()
    let stderr = (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? ""
    return (p.terminationStatus, lines, stderr)
}
