import FeliCa
import FeliCaCards
import FeliCaJSON
import FeliCaScheduling
import FeliCaSimulation
import FeliCaDiagnosis

/// `felica order`: the order of an app's system codes that detects its users' cards fastest.
struct OrderCommand: CLICommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            name: "order",
            abstract: "Find the order of system codes that detects a population of cards fastest.",
            discussion: """
                Core NFC polls an app's system codes in list order, lands in the first one the card holds, \
                and spends about 0.3 s on each code the card lacks. Given the cards an app expects and their \
                shares, this finds the order with the lowest expected detection time (exact up to \
                \(OrderOptimizer.defaultExactLimit) useful codes, a bounded heuristic beyond) and compares it \
                with the current order. Times come from running each card through the timing model.
                Population file: {"cards":[{"name":"suica","weight":0.7,"systems":["0003","fe00"]}, ...]}
                (weight defaults to 1; weights are normalised). Without --population the built-in sample \
                cards that carry a purse (\(SampleCards.purseNames.joined(separator: ", "))) count the same, and \
                each is kept in the system its purse is in (a transit card's transit system ahead of its common \
                area), as --before would.
                An order that lands a card outside the system its purse is in is warned about on stderr; \
                --plist refuses to print such an order (exit 1) and names the --before that fixes it.
                """,
            options: [
                codesOption.spec,
                populationOption.spec,
                beforeOption.spec,
                modelOption.spec,
                CommonOptions.json,
                plistFlag,
            ])
    }

    static let codesOption = Option(OptionSpec(
        "codes", value: "list",
        help: "The app's current order (e.g. its Info.plist), comma-separated: the codes to order and the baseline, as hex or names (okica, kmt; see \(PackagedFiles.guide("cards.md"))). Default: every system of the population.")) { s throws(UsageError) in
        do throws(FeliCaError) { return try SystemCodeList.parse(s, what: "--codes") } catch { throw UsageError(error.reason) }
    }
    static let populationOption = Option(OptionSpec("population", value: "file", help: "Cards and their shares (JSON, see above).", kind: .file))
    static let beforeOption = Option(OptionSpec(
        "before", value: "a:b",
        help: "Keep code a ahead of code b (e.g. 0003:fe00, so a Suica card lands in its transit system, not the common area). Repeatable.",
        repeatable: true)) { pair throws(UsageError) -> Precedence in
        let parts = pair.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2 else {
            throw UsageError("option '--before': \"\(pair)\" is not two system codes joined by ':' (e.g. 0003:fe00)")
        }
        let a: SystemCode, b: SystemCode
        do throws(FeliCaError) {
            a = try SystemCodeList.code(String(parts[0]), what: "option '--before'")
            b = try SystemCodeList.code(String(parts[1]), what: "option '--before'")
        } catch {
            throw UsageError(error.reason)
        }
        return Precedence(before: a, after: b)
    }
    /// `--model ios|rf`, shared with `felica bench order`.
    static let modelOption = Option(OptionSpec("model", value: "model", help: "Timing model: \(TimingModels.names.joined(separator: ", ")) (default: ios).",
                                               kind: .choice(TimingModels.names)))
    static let plistFlag = OptionSpec.flag(
        "plist", help: "Print only the Info.plist entry (com.apple.developer.nfc.readersession.felica.systemcodes) for the best order.")

    /// `--before a:b`.
    struct Precedence: Sendable {
        var before: SystemCode
        var after: SystemCode
    }

    let codes: [SystemCode]?
    let precedence: [(before: SystemCode, after: SystemCode)]
    let populationPath: String?
    let modelName: String
    let json: Bool
    let plist: Bool

    init(_ args: ParsedArguments) throws(UsageError) {
        codes = try args.value(Self.codesOption)
        modelName = try args.value(Self.modelOption) ?? "ios"
        populationPath = try args.value(Self.populationOption)
        precedence = try args.values(Self.beforeOption).map { ($0.before, $0.after) }
        json = args.flag(CommonOptions.json)
        plist = args.flag(Self.plistFlag)
        if json && plist { throw UsageError("choose one of '--json' and '--plist'") }
    }

    func run(_ console: Console) async throws -> Int32 {
        let model = try TimingModels.named(modelName)
        let population = try populationPath.map { path throws(FeliCaError) in try Population.load(path: path) } ?? Self.samplePopulation()
        let list = codes ?? population.systemCodes
        let times = try await ModelCards.positionTimes(model: model, count: list.count)
        // The sample cards stand for an app that reads balances: each card's purse system goes first.
        let constraints = populationPath == nil ? Self.purseFirst(population, codes: list, given: precedence) : precedence
        let problem = try Self.problem(codes: list, population: population, times: times, precedence: constraints)
        let best = OrderOptimizer.optimize(problem)
        let bestRun = try await OrderEvaluation.evaluate(order: best.order, population: population, model: model)
        var baseRun: OrderEvaluation? = nil
        if let codes { baseRun = try await OrderEvaluation.evaluate(order: codes, population: population, model: model) }
        let misrouted = Self.misrouted(bestRun)
        if plist, !misrouted.isEmpty {
            // The Info.plist entry is the answer an app ships: not one that hides a card's balance.
            throw CLIError("the best order lands cards outside the system their purse is in, so no Info.plist entry is printed:\n"
                           + (Self.warning(misrouted) ?? "").split(separator: "\n").dropFirst().joined(separator: "\n"))
        }
        if let warning = Self.warning(misrouted) { console.diag(warning) }

        if plist {
            console.out(Self.plist(best.order))
        } else if json {
            var o = JSONObject()
            o.append("model", .string(model.name))
            o.append("order", .array(best.order.map { .string($0.hex) }))
            o.append("method", .string(best.method.rawValue))
            Self.append(bestRun, to: &o)
            o.append("outsideTheirPurse", .array(misrouted.map { m in
                .object(["card": .string(m.card.name), "system": .string(m.landed.hex), "purseSystem": .string(m.purse.hex)])
            }))
            if best.method == .heuristic {
                o.append("lowerBound", best.lowerBound.map { .number(Self.round(ofWeighted: $0, bestRun)) } ?? .null)
                o.append("gap", best.gap.map { .number(Self.round($0)) } ?? .null)
            }
            if let baseRun {
                var b = JSONObject()
                b.append("order", .array(baseRun.order.map { .string($0.hex) }))
                Self.append(baseRun, to: &b)
                o.append("baseline", .object(b))
            }
            JSONOut.print(.object(o), console)
        } else {
            console.line("Model: \(model.summary)")
            console.line("")
            console.line("Best order (\(best.method.rawValue)): " + best.order.map(\.description).joined(separator: ", "))
            console.line("  " + Self.summary(bestRun))
            if best.method == .heuristic {
                if let bound = best.lowerBound, let gap = best.gap {
                    console.line("  no order can beat \(Self.seconds(Self.round(ofWeighted: bound, bestRun))) expected (gap at most \(Self.percent(gap)))")
                } else {
                    console.line("  no lower bound: the session limit cuts the list")
                }
            }
            if let baseRun {
                let broken = problem.satisfiesPrecedence(baseRun.order) ? "" : " (breaks --before)"
                console.line("Baseline (--codes): " + baseRun.order.map(\.description).joined(separator: ", ") + broken)
                console.line("  " + Self.summary(baseRun))
                if let b = baseRun.expected, let e = bestRun.expected {
                    console.line("  " + Self.comparison(baseline: b, best: e, keepsOrder: broken.isEmpty))
                }
            }
            console.line("")
            var rows = [["card", "weight", "best: system", "time (s)"] + (baseRun == nil ? [] : ["baseline: system", "time (s)"])]
            for (i, landing) in bestRun.landings.enumerated() {
                var row = [landing.card.name, Self.fixed(landing.card.weight, 3)] + Self.cells(landing)
                if let baseRun { row += Self.cells(baseRun.landings[i]) }
                rows.append(row)
            }
            console.out(TextTable.render(rows, rightAligned: [1, 3, 5]))
        }
        return ExitCode.ok
    }

    /// How the baseline compares with the best order, in words that stay true when the
    /// baseline is faster only because it breaks `--before`.
    static func comparison(baseline b: Double, best e: Double, keepsOrder: Bool) -> String {
        let tolerance = 1e-9
        if abs(b - e) <= tolerance {
            return "the baseline is as fast as the best order" + (keepsOrder ? "" : ", but it breaks --before")
        }
        if b < e {
            let faster = "the baseline is faster by \(seconds(e - b)) per detection on average"
            return faster + (keepsOrder ? " (the heuristic did not find it)" : ", but only by breaking --before")
        }
        return "the best order saves \(seconds(b - e)) per detection on average (\(percent((b - e) / b)))"
    }

    /// A card detected in a system other than the one its purse lives in.
    struct Misrouted {
        var card: Population.Card
        var landed: SystemCode
        var purse: SystemCode
    }

    /// The system a card's purse lives in: its transit system when it has one (the common
    /// area of a transit card holds no purse), else the common area, where Edy, nanaco and
    /// WAON live; nil for cards with no known purse (an NDEF tag).
    static func purseSystem(_ card: Population.Card) -> SystemCode? {
        card.systems.first { TransitIC.systemCodes.contains($0) } ?? card.systems.first { $0 == .common }
    }

    /// The cards the order lands outside their purse's system: Core NFC hands the app only
    /// the system it landed in, so their balance cannot be read.
    static func misrouted(_ run: OrderEvaluation) -> [Misrouted] {
        run.landings.compactMap { l in
            guard let landed = l.detection?.system, let purse = purseSystem(l.card), landed != purse else { return nil }
            return Misrouted(card: l.card, landed: landed, purse: purse)
        }
    }

    /// The warning for misrouted cards, with the `--before` that fixes each kind.
    static func warning(_ misrouted: [Misrouted]) -> String? {
        guard !misrouted.isEmpty else { return nil }
        var lines = ["warning: the best order lands cards outside the system their purse is in; an app would not see their balance:"]
        for m in misrouted {
            let kind = TransitIC.systemCodes.contains(m.purse) ? "transit purse" : "purse"
            lines.append("  \(m.card.name) (\(percent(m.card.weight)) of cards) lands in \(m.landed); its \(kind) is in \(m.purse)")
        }
        var fixes: [String] = []
        for m in misrouted where !fixes.contains("\(m.purse.hex):\(m.landed.hex)") { fixes.append("\(m.purse.hex):\(m.landed.hex)") }
        lines.append("  keep each purse's system first with " + fixes.map { "--before \($0)" }.joined(separator: " "))
        return lines.joined(separator: "\n")
    }

    /// The problem to solve; impossible order constraints are a usage error.
    static func problem(codes: [SystemCode], population: Population, times: [Double?],
                        precedence: [(before: SystemCode, after: SystemCode)]) throws -> OrderProblem {
        let result = Result { () throws(FeliCaError) -> OrderProblem in
            try OrderProblem(codes: codes, population: population, positionTimes: times, precedence: precedence)
        }
        switch result {
        case .success(let p): return p
        case .failure(let e) where e.code == .invalidArgument: throw UsageError(ErrorHints.precedence(e))
        case .failure(let e): throw e
        }
    }

    /// `given` and, for each card, its purse system ahead of its other systems in `codes`
    /// (where `given` does not already order the pair the other way).
    static func purseFirst(_ population: Population, codes: [SystemCode],
                           given: [(before: SystemCode, after: SystemCode)]) -> [(before: SystemCode, after: SystemCode)] {
        var pairs = given
        for card in population.cards {
            guard let purse = purseSystem(card), codes.contains(purse) else { continue }
            for other in card.systems where other != purse && codes.contains(other) {
                if pairs.contains(where: { ($0.before == purse && $0.after == other) || ($0.before == other && $0.after == purse) }) { continue }
                pairs.append((purse, other))
            }
        }
        return pairs
    }

    /// Every built-in sample card that carries a purse, equally weighted.
    static func samplePopulation() throws(FeliCaError) -> Population {
        try Population(cards: SampleCards.purseNames.compactMap { name in
            SampleCards.image(named: name).map { Population.Card(name: name, weight: 1, systems: $0.systems.map(\.code)) }
        })
    }

    static func plist(_ order: [SystemCode]) -> String {
        var s = "<key>com.apple.developer.nfc.readersession.felica.systemcodes</key>\n<array>\n"
        for code in order { s += "\t<string>\(code)</string>\n" }
        return s + "</array>\n"
    }

    static func append(_ e: OrderEvaluation, to o: inout JSONObject) {
        o.append("expected", e.expected.map { .number(round($0)) } ?? .null)
        o.append("worst", e.worst.map { .number(round($0)) } ?? .null)
        o.append("undetected", .array(e.undetected.map { .string($0.name) }))
        o.append("cards", .array(e.landings.map { l in
            var c = JSONObject()
            c.append("name", .string(l.card.name))
            c.append("weight", .number(round(l.card.weight)))
            c.append("system", l.detection.map { .string($0.system.hex) } ?? .null)
            c.append("time", l.detection.map { .number(round($0.time.seconds)) } ?? .null)
            return .object(c)
        }))
    }

    static func summary(_ e: OrderEvaluation) -> String {
        let undetected = e.undetected.isEmpty ? "none" : e.undetected.map(\.name).joined(separator: ", ") + " (\(percent(e.undetectedWeight)) of cards)"
        return "expected \(e.expected.map(seconds) ?? "-"), worst \(e.worst.map(seconds) ?? "-"), never detected: \(undetected)"
    }

    static func cells(_ l: OrderEvaluation.Landing) -> [String] {
        guard let d = l.detection else { return ["never", "-"] }
        return [d.system.description, fixed(d.time.seconds, 6)]
    }

    /// The bound on the weighted time as an expected time of the detected cards.
    static func round(ofWeighted bound: Double, _ e: OrderEvaluation) -> Double {
        round(bound / max(1 - e.undetectedWeight, 1e-12))
    }

    /// Microsecond resolution: stable output, far below any reader's jitter.
    static func round(_ x: Double) -> Double { (x * 1e6).rounded() / 1e6 }
    static func seconds(_ x: Double) -> String { fixed(x, 6) + " s" }
    static func percent(_ x: Double) -> String { fixed(x * 100, 1) + " %" }

    /// `x` with `digits` decimals.
    static func fixed(_ x: Double, _ digits: Int) -> String {
        var p = 1.0
        for _ in 0..<digits { p *= 10 }
        let scaled = (abs(x) * p).rounded()
        let whole = (scaled / p).rounded(.down)
        var frac = String(Int(scaled - whole * p))
        while frac.count < digits { frac = "0" + frac }
        let sign = x < 0 && scaled > 0 ? "-" : ""
        return digits == 0 ? sign + String(Int(whole)) : sign + String(Int(whole)) + "." + frac
    }
}

/// Plain-text tables with aligned columns.
enum TextTable {
    static func render(_ rows: [[String]], rightAligned: Set<Int> = []) -> String {
        let columns = rows.map(\.count).max() ?? 0
        var widths = [Int](repeating: 0, count: columns)
        for row in rows { for (i, cell) in row.enumerated() { widths[i] = max(widths[i], cell.count) } }
        var out = ""
        for row in rows {
            var line = ""
            for (i, cell) in row.enumerated() {
                let pad = String(repeating: " ", count: widths[i] - cell.count)
                line += (i == 0 ? "" : "  ") + (rightAligned.contains(i) ? pad + cell : cell + pad)
            }
            while line.hasSuffix(" ") { line.removeLast() }
            out += line + "\n"
        }
        return out
    }
}
