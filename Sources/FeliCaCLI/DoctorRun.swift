import FeliCa
import FeliCaJSON
import FeliCaDevices
import FeliCaDiagnosis
import FeliCaUSB

#if canImport(Glibc)
import Glibc
#endif

/// The whole of one `felica doctor` run: the system checks, then a poll on each reader.
struct DoctorRun: Sendable {
    var diagnosis: Diagnosis
    /// One `poll` check per device tried.
    var polls: [DoctorCheck] = []
    /// Devices that answered the poll (with or without a card).
    var polled: [DeviceSpec] = []

    var checks: [DoctorCheck] { diagnosis.checks + polls }
    var ready: Bool { !polled.isEmpty }

    /// Reads the system under `root` and diagnoses it; polls `devices`, or every reader the
    /// stacks list when none are given. With `console` verbose, the polls' frames go to stderr.
    static func run(root: String, devices: [DeviceSpec], console: Console = Console()) async -> DoctorRun {
        let host = HostSnapshot.read(HostFiles(root: root))
        var targets = devices
        var environmentProblem: DoctorCheck?
        if targets.isEmpty {
            targets = await Device.list().compactMap(\.spec)
            // The reader the other commands would use is polled too, even when no stack lists it
            // (a serial PN532, say).
            do throws(DeviceError) {
                if let chosen = try Device.fromEnvironment(), !targets.contains(chosen) {
                    targets.insert(chosen, at: 0)
                }
            } catch {
                environmentProblem = DoctorCheck(check: "poll", verdict: .problem, summary: error.reason,
                                                 fix: "set FELICA_DEVICE to one of \(DeviceSpec.forms), or unset it")
            }
        }
        let libnfcRequested = targets.contains { if case .libnfc = $0.kind { true } else { false } }
        var run = DoctorRun(diagnosis: Diagnosis(host, libnfcRequested: libnfcRequested))
        // A reader recognised on this machine's USB bus is polled too when no stack lists it
        // (libnfc lists nothing with LIBNFC_AUTO_SCAN=false): its exact device string reaches
        // it anyway. Not for a tree under --root, whose devices are not this machine's.
        if devices.isEmpty && root == "/" {
            for reader in run.diagnosis.readers where reader.blockers.isEmpty {
                if let spec = reader.device, !targets.contains(spec) { targets.append(spec) }
            }
        }
        if let environmentProblem { run.polls.append(environmentProblem) }
        if targets.isEmpty {
            let tryVirtual = "to try the tool without hardware: felica balance --device virtual:suica"
            if root != "/" && !run.diagnosis.readers.isEmpty {
                // The readers of a tree under --root are not this machine's: nothing tried them.
                run.polls.append(DoctorCheck(
                    check: "poll", verdict: .problem,
                    summary: "no reader to poll: the readers found under \(root) are not this machine's, and neither libnfc nor PC/SC lists one",
                    fix: "name a reader of this machine with --device (`felica devices` lists them); \(tryVirtual)"))
            } else {
                run.polls.append(DoctorCheck(
                    check: "poll", verdict: .problem,
                    summary: "no reader to poll: " + (host.usb == nil ? "USB readers cannot be listed here" : "no USB reader found")
                        + ", and neither libnfc nor PC/SC lists one",
                    fix: run.above.map { "\($0), then check with `felica devices`; \(tryVirtual)" }
                        ?? "plug in a reader, then check with `felica devices`; \(tryVirtual)"))
            }
        }
        for device in targets {
            let check = await poll(device, console: console, diagnosis: run.diagnosis, host: host)
            if check.verdict == .ok { run.polled.append(device) }
            run.polls.append(check)
        }
        return run
    }

    /// What the fix of a failed poll points back to: the problems (or warnings) found above
    /// it, or nil when every system check was ok.
    var above: String? {
        if diagnosis.checks.contains(where: { $0.verdict == .problem }) || polls.contains(where: { $0.verdict == .problem }) {
            return "fix the problems above"
        }
        return diagnosis.checks.contains { $0.verdict == .warning } ? "see the warnings above" : nil
    }

    /// One wildcard Polling on `device`: a card, no card (the reader works) or an error.
    /// `diagnosis` and `host` (the system checks) shape the advice when the device cannot open.
    static func poll(_ device: DeviceSpec, console: Console = Console(),
                     diagnosis: Diagnosis? = nil, host: HostSnapshot? = nil) async -> DoctorCheck {
        let transport: any Transport
        do {
            transport = TraceHook.watch(try await Device.open(Self.withoutCardWait(device)).transport, console: console)
        } catch let error as FeliCaError where error.code == .noCard {
            // PC/SC connects to the card when it opens: an empty reader answers "no card".
            return DoctorCheck(check: "poll", verdict: .ok, summary: "\(device): works, no card on it (place a card to read one)")
        } catch let error as FeliCaError where error.code == .busy && error.reason.contains(USBReaders.port100Held) {
            // The library's advice reads this machine's modprobe.d; doctor's own findings
            // (the tree it read) decide whether a blacklist line is still missing.
            let reason = error.reason
            let held = reason.firstRange(of: "): ").map { String(reason[..<$0.lowerBound]) + ")" } ?? reason
            var fix = String(reason.dropFirst(min(reason.count, held.count + 2)))
            if let diagnosis, let host { fix = diagnosis.modulesFix("port100", host) }
            return DoctorCheck(check: "poll", verdict: .problem, summary: "\(device): cannot open: \(held)",
                               fix: fix + "\nthen try again: felica poll --device \(quoted(device.description))")
        } catch {
            let again = "try again: felica poll --device \(quoted(device.description))"
            let problems = diagnosis.map { DoctorRun(diagnosis: $0).above } ?? "fix the problems above"
            return DoctorCheck(check: "poll", verdict: .problem, summary: "\(device): cannot open: \(describe(error))",
                               fix: problems.map { "\($0), then \(again)" }
                                   ?? (device.isReader ? "check that the reader is connected and that the device string names it, then " : "check the device string, then ") + again)
        }
        let session = CardSession(transport: transport)
        do {
            if let r = try await session.poll() {
                let rates = try await bitRateCheck(session, Target(idm: r.idm, pmm: r.pmm, systemCode: nil))
                await transport.close()
                let summary = "\(device): a card answered (IDm \(r.idm), IC \(r.pmm.ic))" + (rates.map { "; " + $0.summary } ?? "")
                guard let rates, rates.keepSlow else {
                    return DoctorCheck(check: "poll", verdict: .ok, summary: summary)
                }
                var slow = device
                if case .usb(let selector, _) = device.kind { slow.kind = .usb(selector, rate: .kbps212) }
                return DoctorCheck(check: "poll", verdict: .problem, summary: summary,
                                   fix: "keep the reader at 212 kbps: felica balance --device \(quoted(slow.description))")
            }
            await transport.close()
            return DoctorCheck(check: "poll", verdict: .ok, summary: "\(device): polls, no card on it (place a card to read one)")
        } catch {
            await transport.close()
            return DoctorCheck(check: "poll", verdict: .problem, summary: "\(device): polling failed: \(error.reason)",
                               fix: (device.isReader ? "unplug and replug the reader, then try again: " : "try it on its own: ")
                                   + "felica poll --device \(quoted(device.description))")
        }
    }

    /// `x` as C's `%.1f` writes it (`vsnprintf`, so ties round as printf rounds them).
    static func oneDecimal(_ x: Double) -> String {
        var buffer = [CChar](repeating: 0, count: 64)
        _ = withVaList([x]) { vsnprintf(&buffer, buffer.count, "%.1f", $0) }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// On a reader that can run faster than 212 kbps: which rates the card names, and whether
    /// it answers at the fastest through this reader. Nil on a reader with one rate.
    static func bitRateCheck(_ session: CardSession, _ target: Target) async throws(FeliCaError) -> (summary: String, keepSlow: Bool)? {
        let transport = session.transport
        guard let slowest = transport.bitRates.min(by: { $0.rawValue < $1.rawValue }), transport.bitRates.count > 1 else { return nil }
        let latency = Self.oneDecimal(Double(transport.linkLatency.components.attoseconds) / 1e15 + Double(transport.linkLatency.components.seconds) * 1000)
        let rate = try await session.useFastestBitRate(for: target)
        guard rate != slowest else {
            return ("it runs at \(slowest.rawValue) kbps only (the reader adds \(latency) ms per command)", false)
        }
        let answered = try await session.poll(systemCode: .wildcard, requestCode: .none)?.idm == target.idm
        try await transport.switchBitRate(to: slowest)
        guard answered else {
            return ("it says it runs at \(rate.rawValue) kbps but did not answer there", true)
        }
        return ("it answered at \(rate.rawValue) kbps too (the reader adds \(latency) ms per command)", false)
    }

    /// A reader that does not say how long to wait for a card gets no wait: doctor asks
    /// whether the reader works, not for a card to be placed.
    static func withoutCardWait(_ device: DeviceSpec) -> DeviceSpec {
        guard device.isReader, device.wait == nil else { return device }
        var quick = device
        quick.wait = .zero
        return quick
    }

    static func describe(_ error: any Error) -> String {
        switch error {
        case let e as FeliCaError: e.reason
        case let e as CLIError: e.message
        case let e as UsageError: e.message
        case let e as DeviceError: e.reason
        default: "\(error)"
        }
    }

    /// Shell-quotes a device string when it needs it (PC/SC names have spaces).
    static func quoted(_ s: String) -> String {
        s.allSatisfy { $0.isLetter || $0.isNumber || ":/._-=?".contains($0) } ? s : "'\(s)'"
    }

    // MARK: - Output

    /// The report as text: one line per check, the fix indented under it, a closing line.
    /// With `colour`, verdicts are green, yellow or red.
    func text(colour: Bool = false) -> String {
        var out = ""
        for c in checks {
            let word = c.verdict.rawValue
            let painted = colour ? Colour.paint(word, c.verdict.colour) : word
            // A reason can span lines (a replay's expected and actual packets): keep them under the summary.
            out += painted + String(repeating: " ", count: max(1, 9 - word.count)) + c.summary.split(separator: "\n", omittingEmptySubsequences: false)
                .joined(separator: "\n         ") + "\n"
            if let fix = c.fix {
                let lines = fix.split(separator: "\n", omittingEmptySubsequences: false)
                out += "         fix: " + lines[0] + "\n"
                for line in lines.dropFirst() { out += "              " + line + "\n" }
            }
        }
        let problems = checks.filter { $0.verdict == .problem }.count
        let warnings = checks.filter { $0.verdict == .warning }.count
        var tally: [String] = []
        if problems > 0 { tally.append("\(problems) problem\(problems == 1 ? "" : "s")") }
        if warnings > 0 { tally.append("\(warnings) warning\(warnings == 1 ? "" : "s")") }
        out += "\n" + (tally.isEmpty ? "no problems" : tally.joined(separator: ", ")) + "; "
        out += ready ? "ready: \(polled.count) reader\(polled.count == 1 ? "" : "s") can poll (\(polled.map(\.description).joined(separator: ", ")))\n"
                     : "not ready: no reader can poll\n"
        return out
    }

    static let pad = TextLayout.column

    /// The report as JSON (stable keys: `checks`, `readers`, `ready`).
    func json() -> JSONValue {
        .object([
            "checks": .array(checks.map { c in
                .object(["check": .string(c.check), "verdict": .string(c.verdict.rawValue), "summary": .string(c.summary),
                         "fix": c.fix.map { .string($0) } ?? .null])
            }),
            "readers": .array(diagnosis.readers.map { r in
                var stack: JSONValue = .null
                if case .libnfc = r.route { stack = .string("libnfc") }
                if case .pcsc = r.route { stack = .string("pcsc") }
                return .object([
                    "name": .string(r.model.name), "id": .string(r.model.id),
                    "bus": .number(Double(r.usb.bus)), "devnum": .number(Double(r.usb.device)),
                    "node": .string(r.usb.node), "stack": stack, "device": r.device.map { .string($0.description) } ?? .null,
                    "blockers": .array(r.blockers.map { .string($0) }),
                ])
            }),
            "ready": .bool(ready),
        ])
    }
}

extension Verdict {
    /// How a terminal shows it.
    var colour: Colour {
        switch self {
        case .ok: .green
        case .warning: .yellow
        case .problem: .red
        }
    }
}
