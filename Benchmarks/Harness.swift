import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Keeps a value alive so the optimiser cannot drop the work that made it.
@inline(never)
func blackHole<T>(_ x: T) {
    withExtendedLifetime(x) {}
}

/// Whether this run prints the README's performance table (`Benchmarks readme`).
let readmeRun = CommandLine.arguments.dropFirst().contains("readme")

/// The sections `Benchmarks readme` runs: every one whose figures the README quotes,
/// except the long soak runs (`memory`, `kiosk`), which the README quotes apart.
let readmeSections: Set<String> = ["codec", "libnfc", "nfcpy", "usb", "order", "pcsc", "cards", "history"]

/// The benchmark sections selected on the command line (all when none given).
let selectedSections = readmeRun ? readmeSections : Set(CommandLine.arguments.dropFirst())

/// The section running now, named in each figure ``record(_:_:model:)`` keeps.
let currentSection = Mutex("")

func section(_ name: String) -> Bool {
    let run = selectedSections.isEmpty || selectedSections.contains(name)
    if run {
        print("\n## \(name)")
        currentSection.withLock { $0 = name }
    }
    return run
}

/// One row of the README's performance table: what was measured, the figure, the card
/// timing model it ran under, and the section that measured it.
struct ReportRow: Sendable {
    var what: String
    var figure: String
    var model: String
    var section: String
}

/// The rows kept so far, printed as the README table at the end of `Benchmarks readme`.
let report = Mutex<[ReportRow]>([])

/// Keeps a figure for the README table. A run of this executable under another (the
/// `usb` section under the emulated RC-S380) also prints it as a `ROW` line, which the
/// outer run reads back (``recordRows(from:)``).
func record(_ what: String, _ figure: String, model: String) {
    let row = ReportRow(what: what, figure: figure, model: model, section: currentSection.withLock { $0 })
    report.withLock { $0.append(row) }
    if ProcessInfo.processInfo.environment["FELICA_BENCH_UNDER_RCS380"] != nil {
        print(["ROW", row.what, row.figure, row.model, row.section].joined(separator: "\t"))
    }
}

/// Keeps the `ROW` lines of an inner run's output; returns the other lines.
func recordRows(from output: String) -> [Substring] {
    var rest: [Substring] = []
    for line in output.split(separator: "\n") {
        let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
        if fields.count == 5 && fields[0] == "ROW" {
            report.withLock { $0.append(ReportRow(what: fields[1], figure: fields[2], model: fields[3], section: fields[4])) }
        } else {
            rest.append(line)
        }
    }
    return rest
}

/// The card timing models, as the README names them beside each figure.
enum CardModel {
    /// No card involved.
    static let none = "none (no card)"
    /// `--timing rf`: the card answers well inside its PMm bound, the reader's link timed.
    static let typical = "rf, typical card"
    /// No timing model: the software's own overhead.
    static let untimed = "no timing model"
    /// Polling: fixed time slots, the same under every card model.
    static let slots = "rf; Polling slots (the same under either card model)"
    /// The virtual card with 212 kbps air time and the typical card's own times.
    static let virtual212 = "virtual:?timing=212, typical card"
}

/// The `ms` figure of a duration, one decimal.
func millis(_ d: Duration) -> Double {
    Double(d.components.seconds) * 1000 + Double(d.components.attoseconds) / 1e15
}

/// Runs `body` `iterations` times per run, `runs` times, prints the median rate and
/// returns it (per second).
@discardableResult
func measure(_ label: String, iterations: Int, runs: Int = 7, _ body: () -> Void) -> Double {
    let clock = ContinuousClock()
    var rates: [Double] = []
    for _ in 0..<runs {
        let start = clock.now
        for _ in 0..<iterations { body() }
        let elapsed = clock.now - start
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        rates.append(Double(iterations) / seconds)
    }
    rates.sort()
    let median = rates[rates.count / 2]
    print(pad(label, 52) + format(median) + " ops/s  (median of \(runs), min " + format(rates.first!) + ", max " + format(rates.last!) + ")")
    return median
}

/// Times an async operation `runs` times, prints the median duration and returns it.
@discardableResult
func measureAsync(_ label: String, runs: Int = 9, _ body: () async throws -> Void) async rethrows -> Duration {
    let clock = ContinuousClock()
    var times: [Duration] = []
    for _ in 0..<runs {
        let start = clock.now
        try await body()
        times.append(clock.now - start)
    }
    times.sort()
    print(pad(label, 52) + ms(times[times.count / 2]) + "  (median of \(runs), min " + ms(times.first!) + ", max " + ms(times.last!) + ")")
    return times[times.count / 2]
}

func ms(_ d: Duration) -> String {
    fixed(millis(d), 3) + " ms"
}

func fixed(_ v: Double, _ digits: Int) -> String {
    var p = 1.0
    for _ in 0..<digits { p *= 10 }
    let r = (v * p).rounded() / p
    var s = String(r)
    if let dot = s.firstIndex(of: ".") {
        let decimals = s.distance(from: dot, to: s.endIndex) - 1
        if decimals < digits { s += String(repeating: "0", count: digits - decimals) }
    }
    return s
}

func format(_ rate: Double) -> String {
    if rate >= 1e6 { return fixed(rate / 1e6, 2) + " M" }
    if rate >= 1e3 { return fixed(rate / 1e3, 2) + " k" }
    return fixed(rate, 1) + " "
}

func pad(_ s: String, _ n: Int) -> String { s.count >= n ? s + " " : s + String(repeating: " ", count: n - s.count) }

/// The machine the figures come from: cores and the load when the run starts, since other
/// work on a shared machine moves every figure.
func machineLine(at moment: String = "the start") -> String {
    let cores = sysconf(Int32(_SC_NPROCESSORS_ONLN))
    return "machine: \(cores) cores online, load average \(loadAverage()) (1, 5, 15 min) at \(moment)"
}

/// The 1, 5 and 15 minute load averages.
func loadAverage() -> String {
    var load = [Double](repeating: 0, count: 3)
    let n = getloadavg(&load, 3)
    return n == 3 ? load.map { fixed($0, 2) }.joined(separator: " ") : "unknown"
}

/// The README's performance table: every figure ``record(_:_:model:)`` kept, in the
/// order measured, each with its model and section; the machine noted above and below.
func printReadmeTable(startedWith startLine: String) {
    print("\n## readme\n")
    print("Printed by `swift build -c release && swift run -c release Benchmarks readme` (one run).")
    print(startLine.prefix(1).uppercased() + startLine.dropFirst() + "; load average \(loadAverage()) at the end.")
    print("Other work on a shared machine moves every absolute figure; ratios measured side by side in the same run move far less.\n")
    print("| what | figure | card timing model | section |")
    print("|---|---|---|---|")
    // The comparisons with nfcpy first, then each reader's own figures, the codec last.
    let order = ["nfcpy", "usb", "libnfc", "order", "pcsc", "cards", "history", "codec"]
    let rows = report.withLock { $0 }.enumerated().sorted {
        let a = order.firstIndex(of: $0.element.section) ?? order.count, b = order.firstIndex(of: $1.element.section) ?? order.count
        return a != b ? a < b : $0.offset < $1.offset
    }.map(\.element)
    for row in rows {
        print("| \(row.what) | \(row.figure) | \(row.model) | `\(row.section)` |")
    }
}
