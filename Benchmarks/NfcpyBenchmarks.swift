import FeliCa
import FeliCaEmulators
import FeliCaSimulation
import Foundation

/// felica against nfcpy, side by side in one run, through the same PN532 emulator with rf
/// timing (115200-baud UART, air time, the card's PMm times): `felica balance` as a whole
/// process against an nfcpy script reading the same balance (Python's start-up and nfcpy's
/// import included, as a user pays them), and `felica watch` tap-to-output latency over
/// card taps against an nfcpy connect-and-read loop. nfcpy comes from PyPI into
/// .build/nfcpy-venv (scripts/nfcpy/venv.sh); without PyPI the comparison is skipped.
///
/// Needs the release `felica` next to this executable: `swift build -c release`.
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

    // Balance: whole processes, alternating so both see the same machine load.
    guard let card = try? VirtualCard.named("suica"), let server = try? PN532Server(card: card, options: .init(timing: true)) else {
        print("cannot start the PN532 emulator: skipped")
        return
    }
    server.start()
    let runs = Int(ProcessInfo.processInfo.environment["FELICA_BENCH_RUNS"] ?? "") ?? 9
    var ours: [Double] = [], theirs: [Double] = [], imports: [Double] = [], cold: [Double] = []
    if let python {
        // Warm: nfcpy's byte-code compiled and cached by one run first, as it is for a user
        // after their first. Cold: a fresh, empty byte-code cache each time (Python compiles
        // every module it imports), stated apart.
        _ = runProcess(python, [script, server.path], [:])
        for i in 0..<3 {
            let cache = FileManager.default.temporaryDirectory.appendingPathComponent("felica-bench-pycache-\(getpid())-\(i)").path
            let n = runProcess(python, [script, server.path], ["PYTHONPYCACHEPREFIX": cache])
            try? FileManager.default.removeItem(atPath: cache)
            guard n.status == 0 else { print("nfcpy (cold) failed: \(n.stderr)"); break }
            cold.append(n.ms)
        }
    }
    for _ in 0..<runs {
        let f = runProcess(felica, ["balance", "--device", "libnfc:" + server.connectionString], environment)
        guard f.status == 0, f.stdout.contains("¥1,234") else { print("felica balance failed: \(f.stderr)"); server.stop(); return }
        ours.append(f.ms)
        guard let python else { continue }
        let n = runProcess(python, [script, server.path], [:])
        guard n.status == 0, n.stdout.contains("¥1,234") else { print("nfcpy failed: \(n.stderr)"); server.stop(); return }
        theirs.append(n.ms)
        imports.append(runProcess(python, ["-c", "import nfc.clf, nfc.tag.tt3"], [:]).ms)
    }
    server.stop()
    print(pad("felica balance via libnfc+PN532, rf timing, whole process", 62) + summary(ours))
    if python != nil {
        print(pad("nfcpy 1.0.4 balance via PN532, rf timing, whole process (warm)", 62) + summary(theirs))
        if !cold.isEmpty { print(pad("  nfcpy cold (empty byte-code cache each run)", 62) + summary(cold)) }
        print(pad("  of which Python start-up + `import nfc` alone", 62) + summary(imports))
        print(pad("  ratio felica / nfcpy (medians)", 62) + fixed(median(ours) / median(theirs), 2) + "×")
    }

    // Watch: tap-to-output latency. Each tap keeps the card in the field for 4 packets
    // (Polling, the read, two presence checks), then away for 6: nfcpy's presence check
    // tries Request Response three times and then a Polling before it lets the card go,
    // so with fewer it would find the card back every time.
    let taps = Int(ProcessInfo.processInfo.environment["FELICA_BENCH_WATCH_TAPS"] ?? "") ?? 100
    func tapServer() -> PN532Server? {
        guard let card = try? VirtualCard.named("suica") else { return nil }
        let s = try? PN532Server(card: card, options: .init(timing: true, taps: PN532Emulator.Taps(present: 4, absent: 6)))
        s?.start()
        return s
    }
    guard let watchServer = tapServer() else { print("cannot start the PN532 emulator: skipped"); return }
    let w = runProcess(felica, ["watch", "--json", "--count", String(taps), "--interval", "0", "--device", "libnfc:" + watchServer.connectionString], environment)
    watchServer.stop()
    let felicaLatency = elapsedValues(w.stdout)
    guard w.status == 0, felicaLatency.count == taps else { print("felica watch failed (\(felicaLatency.count) cards): \(w.stderr)"); return }
    print(pad("felica watch, tap to output, \(taps) taps", 62) + summary(felicaLatency))
    guard let python, let nfcpyServer = tapServer() else { return }
    let n = runProcess(python, [script, nfcpyServer.path, "--taps", String(taps)], [:])
    nfcpyServer.stop()
    let nfcpyLatency = elapsedValues(n.stdout)
    guard n.status == 0, nfcpyLatency.count == taps else { print("nfcpy loop failed (\(nfcpyLatency.count) cards): \(n.stderr)"); return }
    print(pad("nfcpy connect-and-read loop, tap to output, \(taps) taps", 62) + summary(nfcpyLatency))
    print(pad("  ratio felica / nfcpy (medians)", 62) + fixed(median(felicaLatency) / median(nfcpyLatency), 2) + "×")
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

/// The `elapsedMs` of every JSON line.
private func elapsedValues(_ output: String) -> [Double] {
    output.split(separator: "\n").compactMap { line in
        guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else { return nil }
        return (object["elapsedMs"] as? NSNumber)?.doubleValue
    }
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
                      ms: Double(d.components.seconds) * 1000 + Double(d.components.attoseconds) / 1e15)
}
