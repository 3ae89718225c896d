import FeliCa
import FeliCaJSON
import FeliCaScheduling
import FeliCaSimulation
import FeliCaDevices
import FeliCaCards

/// `felica bench`: measurements that print figures.
struct BenchCommand: CLICommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            name: "bench",
            abstract: "Measure readers and timing models.",
            subcommands: [BenchOrderCommand.self])
    }
}

/// `felica bench order`: detection time against the position of the card's system in the list.
struct BenchOrderCommand: CLICommand {
    static let defaultPositions = "0-5,148,149"

    static var configuration: CommandConfiguration {
        CommandConfiguration(
            name: "order",
            abstract: "Time detection of a card whose system sits at each position of the polled list.",
            discussion: """
                For each position k the list holds k system codes the card lacks, then the card's system; \
                the codes are polled in turn until the card answers, as Core NFC does. Prints the detection \
                times, a least-squares fit (base, per-code delay, r²), the positions never detected, and the \
                time wildcard Polling + Request System Code takes to find every system of the same card.
                With --model the card is virtual and the clock simulated; with --device a real clock times \
                the reader (a virtual: device answers with the air time of a 212 kbps card unless it sets ?timing=).
                """,
            options: [
                modelOption.spec,
                CommonOptions.device.spec,
                CommonOptions.trace.spec,
                cardOption.spec,
                systemOption.spec,
                positionsOption.spec,
                repeatOption.spec,
                CommonOptions.json,
                plotOption.spec,
            ])
    }

    static let modelOption = Option(OptionSpec(
        "model", value: "model", help: "Timing model: \(TimingModels.names.joined(separator: ", ")) (default: ios, unless --device is given).",
        kind: .choice(TimingModels.names)))
    static let cardOption = Option(OptionSpec(
        "card", value: "card",
        help: "Card for --model: built-in name or image path (default: the Edy card of the iOS measurement, systems 8B61 and FE00).",
        kind: .nameOrFile(SampleCards.names))) { name throws(UsageError) in try CardName.check(name, option: "card") }
    static let systemOption = Option(OptionSpec(
        "system", value: "hex", help: "The card's system to move down the list (default: FE00 when the card has it, else its first).")) { s throws(UsageError) in
        guard let c = SystemCode(hex: s) else {
            throw UsageError("option '--system': \"\(s)\" \(hexProblem(s, "system")) (4 hex digits, e.g. 0003 or fe00)")
        }
        if c.isWildcard { throw UsageError("option '--system': \(c) is a wildcard; name one system") }
        return c
    }
    static let positionsOption = Option(OptionSpec(
        "positions", value: "list", help: "Positions, comma-separated, ranges allowed (default: \(defaultPositions)).")) { s throws(UsageError) in
        do throws(FeliCaError) { return try PositionList.parse(s) } catch { throw UsageError("--positions: " + error.reason) }
    }
    static let repeatOption = Option.int(OptionSpec("repeat", value: "n", help: "Runs per position (default: 1)."), in: 1...1000)
    static let plotOption = Option(OptionSpec(
        "plot", value: "file.svg", help: "Also draw the detection times and the fit as an SVG (only SVG: convert it for other formats, e.g. rsvg-convert -o plot.png plot.svg).",
        kind: .file)) { path throws(UsageError) in
        // Only SVG is drawn: a plot.png holding SVG would not open as the picture it claims to be.
        let name = path.split(separator: "/").last.map(String.init) ?? path
        if let dot = name.lastIndex(of: "."), name[name.index(after: dot)...].lowercased() != "svg" {
            throw UsageError("option '--plot': \(path) names a .\(name[name.index(after: dot)...]) file, but the plot is SVG; give a .svg name (and convert it, e.g. rsvg-convert -o plot.png plot.svg)")
        }
        return path
    }

    let model: String?
    /// `--device`: measure this device instead of a model.
    let device: DeviceSpec?
    let trace: String?
    let card: String?
    let positions: [Int]
    let repeatCount: Int
    let system: SystemCode?
    let json: Bool
    let plot: String?

    init(_ args: ParsedArguments) throws(UsageError) {
        model = try args.value(Self.modelOption)
        device = try args.value(CommonOptions.device)
        trace = try args.value(CommonOptions.trace)
        card = try args.value(Self.cardOption)
        if model != nil && device != nil {
            throw UsageError("choose one of '--model' and '--device'")
        }
        if card != nil && device != nil {
            throw UsageError("'--card' is for --model; with --device the card is the one on the reader")
        }
        if let given = try args.value(Self.positionsOption) {
            positions = given
        } else {
            positions = try Self.positionsOption.convert(Self.defaultPositions)
        }
        repeatCount = try args.value(Self.repeatOption) ?? 1
        system = try args.value(Self.systemOption)
        json = args.flag(CommonOptions.json)
        plot = try args.value(Self.plotOption)
        var files = FileRoles()
        files.add(device: device, trace: trace)
        if let card, !SampleCards.names.contains(card) { files.reads(card, as: "the card image of --card") }
        files.writes(plot, as: "--plot")
        try files.check()
    }

    func run(_ console: Console) async throws -> Int32 {
        let bench = OrderBenchmark(positions: positions, repeatCount: repeatCount, target: system)
        let progress: @Sendable (Int, Int) -> Void = { done, total in console.progress("bench order: run \(done)/\(total)") }
        let report: OrderBenchmark.Report
        if let device {
            var transport = TraceHook.watch(try await Device.open(Self.timed(device)).transport, console: console)
            if let path = trace { transport = try TraceHook.record(transport, to: path) }
            do {
                report = try await bench.run(on: .device(transport), progress: progress)
            } catch {
                console.endProgress()
                await transport.close()
                throw error
            }
            await transport.close()
        } else {
            let model = try TimingModels.named(model ?? "ios")
            let card = try card.map { c throws(FeliCaError) in try VirtualCard.named(c) } ?? ModelCards.card(systems: ModelCards.measuredEdySystems)
            report = try await bench.run(on: .model(model, card: card), progress: progress)
        }
        console.endProgress()
        if let plot {
            // The ios model's own source points go on its plot, for comparison.
            let measured = report.modelSummary != nil && report.source == "ios" && report.target == .common && card == nil
                ? IOSTimingModel.measurements.compactMap { m in m.seconds.map { (position: m.position, seconds: $0) } } : []
            try FileOutput.writeAtomically(OrderPlot.svg(report, measured: measured, measuredLabel: "measured on iOS 13"), to: plot)
        }
        if json {
            JSONOut.print(Self.json(report, isModel: device == nil), console)
        } else {
            console.out(Self.text(report))
        }
        return ExitCode.ok
    }

    /// The device to measure: a `virtual:` card without `?timing=` answers with the air
    /// time of a 212 kbps card, since an instant card would make the benchmark meaningless.
    static func timed(_ device: DeviceSpec) -> DeviceSpec {
        guard case .virtual(let card, nil) = device.kind else { return device }
        return DeviceSpec(.virtual(card, timing: .kbps212), wait: device.wait)
    }

    static func json(_ r: OrderBenchmark.Report, isModel: Bool) -> JSONValue {
        var o = JSONObject()
        o.append(isModel ? "model" : "device", .string(r.source))
        o.append("systems", .array(r.systems.map { .string($0.hex) }))
        o.append("system", .string(r.target.hex))
        o.append("rows", .array(r.rows.map { row in
            var j = JSONObject()
            j.append("position", .int(row.position))
            j.append("samples", .array(row.samples.map { $0.map { .number(OrderCommand.round($0)) } ?? .null }))
            j.append("mean", row.mean.map { .number(OrderCommand.round($0)) } ?? .null)
            j.append("detected", .bool(row.detected))
            return .object(j)
        }))
        if let fit = r.fit {
            o.append("fit", .object(["base": .number(OrderCommand.round(fit.base)), "perCode": .number(OrderCommand.round(fit.slope)),
                                     "r2": .number(OrderCommand.round(fit.r2)), "points": .int(fit.count)]))
        } else {
            o.append("fit", .null)
        }
        o.append("neverDetected", .array(r.neverDetected.map { .int($0) }))
        o.append("sessionLimit", r.sessionLimit.map { .number($0.seconds) } ?? .null)
        switch r.listing {
        case .success(let l):
            o.append("wildcard", .object(["time": .number(OrderCommand.round(l.time.seconds)), "exchanges": .int(l.exchanges),
                                          "systems": .array(l.systems.map { .string($0.hex) })]))
        case .failure(let e):
            o.append("wildcard", .object(["unavailable": .string(e.reason)]))
        }
        return .object(o)
    }

    static func text(_ r: OrderBenchmark.Report) -> String {
        var s = (r.modelSummary.map { "Model: \($0)\n" } ?? "Device: \(r.source)\n")
        s += "Card systems: \(r.systems.map(\.description).joined(separator: ", ")); \(r.target) moved down the list\n\n"
        var rows = [["position", "time (s)", "detected"]]
        for row in r.rows {
            let detected = row.samples.filter { $0 != nil }.count
            rows.append([String(row.position), row.mean.map { OrderCommand.fixed($0, 6) } ?? "never", "\(detected)/\(row.samples.count)"])
        }
        s += TextTable.render(rows, rightAligned: [0, 1, 2]) + "\n"
        if let fit = r.fit {
            s += "Fit: \(OrderCommand.fixed(fit.base, 6)) s + \(OrderCommand.fixed(fit.slope, 6)) s per code, r² \(OrderCommand.fixed(fit.r2, 6)) (\(fit.count) positions)\n"
        } else {
            s += "Fit: needs two fully detected positions\n"
        }
        s += "Never detected: " + (r.neverDetected.isEmpty ? "none" : ranges(r.neverDetected)) + (r.sessionLimit.map { " (session limit \(OrderCommand.fixed($0.seconds, 0)) s)" } ?? "") + "\n"
        switch r.listing {
        case .success(let l):
            s += "Wildcard + Request System Code: \(OrderCommand.fixed(l.time.seconds, 6)) s, \(l.exchanges) exchanges, systems \(l.systems.map(\.description).joined(separator: ", "))\n"
        case .failure(let e):
            s += "Wildcard + Request System Code: not available (\(e.reason))\n"
        }
        return s
    }

    /// `[1,2,3,7]` → `1-3, 7`.
    static func ranges(_ xs: [Int]) -> String {
        var parts: [String] = []
        var i = 0
        while i < xs.count {
            var j = i
            while j + 1 < xs.count && xs[j + 1] == xs[j] + 1 { j += 1 }
            parts.append(i == j ? "\(xs[i])" : "\(xs[i])-\(xs[j])")
            i = j + 1
        }
        return parts.joined(separator: ", ")
    }
}
