#if canImport(Glibc)
import Glibc
#endif

/// Keeps a value alive so the optimiser cannot drop the work that made it.
@inline(never)
func blackHole<T>(_ x: T) {
    withExtendedLifetime(x) {}
}

/// The benchmark sections selected on the command line (all when none given).
let selectedSections = Set(CommandLine.arguments.dropFirst())

func section(_ name: String) -> Bool {
    let run = selectedSections.isEmpty || selectedSections.contains(name)
    if run { print("\n## \(name)") }
    return run
}

/// Runs `body` `iterations` times per run, `runs` times, and prints the median rate.
func measure(_ label: String, iterations: Int, runs: Int = 7, _ body: () -> Void) {
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
}

/// Times an async operation `runs` times and prints the median duration.
func measureAsync(_ label: String, runs: Int = 9, _ body: () async throws -> Void) async rethrows {
    let clock = ContinuousClock()
    var times: [Duration] = []
    for _ in 0..<runs {
        let start = clock.now
        try await body()
        times.append(clock.now - start)
    }
    times.sort()
    print(pad(label, 52) + ms(times[times.count / 2]) + "  (median of \(runs), min " + ms(times.first!) + ", max " + ms(times.last!) + ")")
}

func ms(_ d: Duration) -> String {
    let v = Double(d.components.seconds) * 1000 + Double(d.components.attoseconds) / 1e15
    return fixed(v, 3) + " ms"
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
func machineLine() -> String {
    let cores = sysconf(Int32(_SC_NPROCESSORS_ONLN))
    var load = [Double](repeating: 0, count: 3)
    let n = getloadavg(&load, 3)
    let loads = n == 3 ? load.map { fixed($0, 2) }.joined(separator: " ") : "unknown"
    return "machine: \(cores) cores online, load average \(loads) (1, 5, 15 min) at the start"
}
