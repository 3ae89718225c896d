import FeliCa
import FeliCaDevices
import FeliCaCLI
import Foundation

/// Through the RC-S380 driver and the real libusb, against the emulated RC-S380 with rf
/// timing (`felica-sim rcs380 --timing rf`): `felica balance --device usb` as a whole
/// process, and the exchanges the ordering work cares about — a Polling the card answers,
/// a Polling of a system the card lacks (the per-code delay of `felica bench order`), and
/// wildcard Polling plus Request System Code. The libnfc section prints the same figures
/// through libnfc and the PN532 emulator, for comparison.
///
/// The emulated reader exists only for a process started under umockdev, so this section
/// runs itself again under `felica-sim rcs380` (needs the release `felica` and `felica-sim`
/// next to this executable: `swift build -c release`).
func usbBenchmarks() async {
    let mode = ProcessInfo.processInfo.environment["FELICA_BENCH_UNDER_RCS380"] ?? ""
    let inner = !mode.isEmpty
    guard inner || section("usb") else { return }
    let bin = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    let felica = bin.appendingPathComponent("felica").path
    let sim = bin.appendingPathComponent("felica-sim").path
    guard inner else {
        for tool in [felica, sim] where !FileManager.default.isExecutableFile(atPath: tool) {
            print("no \(tool) next to this executable: run `swift build -c release` first; skipped")
            return
        }
        // Same executable, under the emulated reader; it prints its own figures.
        func under(_ timing: [String], _ mode: String, _ environment: [String: String] = [:]) {
            let run = runProcess(sim, ["rcs380", "--card", "suica"] + timing + ["--", CommandLine.arguments[0], "usb"],
                                 environment.merging(["FELICA_BENCH_UNDER_RCS380": mode]) { $1 })
            print(recordRows(from: run.stdout).filter { !$0.hasPrefix("#") && !$0.hasPrefix("## ") }.joined(separator: "\n"))
            if run.status != 0 { print("the emulated RC-S380 run failed (exit \(run.status)): \(run.stderr.trimmingCharacters(in: .newlines))") }
        }
        under(["--timing", "rf"], "rf")
        // nfcpy drives the same emulated reader with its own RC-S380 driver, without the
        // timing model and with it (nfcpy waits the PMm bound, which the card keeps).
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        let venv = runProcess(root.appendingPathComponent("scripts/nfcpy/venv.sh").path, [])
        let python = venv.status == 0 ? venv.stdout.trimmingCharacters(in: .whitespacesAndNewlines) : ""
        guard !python.isEmpty else { print("nfcpy unavailable: the RC-S380 comparison with nfcpy is skipped"); return }
        let nfcpy = ["FELICA_BENCH_NFCPY_PYTHON": python, "FELICA_BENCH_NFCPY_SCRIPT": root.appendingPathComponent("scripts/nfcpy/suica.py").path]
        under([], "nfcpy", nfcpy)
        under(["--timing", "rf"], "nfcpy-rf", nfcpy)
        return
    }
    let runs = Int(ProcessInfo.processInfo.environment["FELICA_BENCH_RUNS"] ?? "") ?? 9
    let environment = ProcessInfo.processInfo.environment
    currentSection.withLock { $0 = "usb" }
    if mode.hasPrefix("nfcpy") {
        let model = mode == "nfcpy-rf" ? "rf timing (typical card)" : "no timing model"
        let python = environment["FELICA_BENCH_NFCPY_PYTHON"] ?? "", script = environment["FELICA_BENCH_NFCPY_SCRIPT"] ?? ""
        var ours: [Double] = [], theirs: [Double] = []
        // Alternating, so both see the same machine load.
        for _ in 0..<runs {
            let r = runProcess(felica, ["balance", "--device", "usb"])
            guard r.status == 0, r.stdout.contains("¥1,234") else { print("felica balance --device usb failed: \(r.stderr)"); return }
            ours.append(r.ms)
            let n = runProcess(python, [script, "usb:054c:06c1"])
            guard n.status == 0, n.stdout.contains("¥1,234") else { print("nfcpy balance on the emulated RC-S380 failed: \(n.stderr)"); return }
            theirs.append(n.ms)
        }
        print(pad("felica balance --device usb, RC-S380 emulator, \(model), whole process", 62) + summary(ours))
        print(pad("nfcpy 1.0.4 balance, its own RC-S380 driver, same emulator", 62) + summary(theirs))
        print(pad("  ratio felica / nfcpy (medians)", 62) + fixed(median(ours) / median(theirs), 2) + "×")
        let cardModel = mode == "nfcpy-rf" ? CardModel.typical : CardModel.untimed
        record("felica balance `usb` against nfcpy 1.0.4 (its own Port-100 driver, libusb) on the emulated RC-S380, whole processes alternating" + (mode == "nfcpy-rf" ? "" : ", no timing model"),
               "felica " + fixed(median(ours), 1) + " ms, nfcpy " + fixed(median(theirs), 1) + " ms: **ratio " + fixed(median(ours) / median(theirs), 2) + "×**", model: cardModel)
        return
    }
    var whole: [Double] = []
    for _ in 0..<runs {
        let r = runProcess(felica, ["balance", "--device", "usb"])
        guard r.status == 0, r.stdout.contains("¥1,234") else { print("felica balance --device usb failed: \(r.stderr)"); return }
        whole.append(r.ms)
    }
    print(pad("felica balance --device usb, RC-S380 emulator, rf timing, whole process", 62) + summary(whole))
    record("felica balance `usb`, RC-S380 driver, real libusb, emulated RC-S380 (umockdev), whole process", fixed(median(whole), 1) + " ms", model: CardModel.typical)
    // 212 kbps throughout against 424 kbps when the reading pays for the switch.
    for (command, count, mark) in [("history", runs, "¥1,234"), ("dump", max(3, runs / 2), "System 0003")] {
        var figures: [String] = []
        defer {
            record("felica \(command) of the Suica sample, RC-S380 emulator, whole process: `usb?rate=212` / `usb` (auto) / `usb?rate=fastest`", figures.joined(separator: " / "), model: CardModel.typical)
        }
        for spec in ["usb?rate=212", "usb", "usb?rate=fastest"] {
            var times: [Double] = []
            for _ in 0..<count {
                let r = runProcess(felica, [command, "--device", spec])
                guard r.status == 0, r.stdout.contains(mark) else { print("felica \(command) --device \(spec) failed: \(r.stderr)"); return }
                times.append(r.ms)
            }
            print(pad("felica \(command) --device \(spec), whole process", 62) + summary(times))
            figures.append(fixed(median(times), 1) + " ms")
        }
    }

    guard let transport = try? await Device.open(DeviceSpec(.usb(.first))).transport else {
        print("cannot open the emulated RC-S380: skipped")
        return
    }
    let session = CardSession(transport: transport)
    let turn = (1...2000).first { session.fasterBitRatePays(forBlocks: $0) }
    print(pad("  link latency measured at open (median set-up command)", 50) + fixed(millis(transport.linkLatency), 3)
          + " ms; 424 kbps pays from " + (turn.map { "\($0) blocks" } ?? "never"))
    guard let target = try? await session.detect() else {
        print("no card on the emulated RC-S380: skipped")
        await transport.close()
        return
    }
    let found = await measureAsync("  Polling 0003 (card answers), rf timing", runs: 15) {
        _ = try! await session.poll(systemCode: .transit)
    }
    let failing = await measureAsync("  failing Polling (system 1234, card lacks it), rf timing", runs: 15) {
        let r = try! await session.poll(systemCode: SystemCode(0x1234))
        precondition(r == nil)
    }
    record("failing Polling (a system the card lacks: what each extra code costs), RC-S380 emulator", fixed(millis(failing), 1) + " ms per code", model: CardModel.slots)
    let listing = await measureAsync("  wildcard Polling + Request System Code, rf timing", runs: 15) {
        let t = try! await session.detect()
        _ = try! await session.systemCodes(of: t)
    }
    record("ordering, real libusb + RC-S380 emulator (real clock): first poll / per listed code / wildcard + Request System Code",
           fixed(millis(found), 1) + " ms / " + fixed(millis(failing), 1) + " ms / " + fixed(millis(listing), 1) + " ms",
           model: CardModel.typical + "; the Polling columns are fixed slots, the same under either card model")
    let slow = await measureAsync("  read 10 blocks of 090F, rf timing", runs: 15) {
        _ = try! await session.read(service: 0x090F, blocks: 0..<10, from: target)
    }
    let move = await measureAsync("  move to 424 kbps (Polling for communication performance + InSetRF) and back", runs: 15) {
        let rate = try! await session.useFastestBitRate(for: target)
        precondition(rate == .kbps424)
        try! await transport.switchBitRate(to: .kbps212)
    }
    try! await transport.switchBitRate(to: .kbps424)
    let fast = await measureAsync("  read 10 blocks of 090F at 424 kbps, rf timing", runs: 15) {
        _ = try! await session.read(service: 0x090F, blocks: 0..<10, from: target)
    }
    record("one read of 10 blocks, RC-S380 emulator, at 212 / 424 kbps", fixed(millis(slow), 1) + " / " + fixed(millis(fast), 1) + " ms", model: CardModel.typical)
    record("moving the RC-S380 to 424 kbps and back (Polling for communication performance + InSetRF ×2)",
           fixed(millis(move), 1) + " ms; link latency measured at open " + fixed(millis(transport.linkLatency), 1) + " ms, so `usb` moves up for readings from " + (turn.map { "\($0) blocks" } ?? "never"), model: CardModel.typical)
    await transport.close()
}
