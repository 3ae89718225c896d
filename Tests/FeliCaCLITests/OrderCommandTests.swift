@testable import FeliCaCLI
import Foundation
import FoundationXML
import FeliCa
import FeliCaEmulators
import FeliCaSimulation
import Testing

/// Goldens and checks for `felica order` and `felica bench order`.
@Suite struct OrderCommandTests {
    static let population = fixture("population.json")
    static let baseline = "fe00,0003,8b61,86a7,8008,88b4,12fc"

    @Test(arguments: [
        (["order", "--population", population, "--codes", baseline], "order_population_codes.txt"),
        (["order", "--population", population, "--codes", baseline, "--json"], "order_population_codes_json.txt"),
        (["order", "--population", population, "--codes", baseline, "--before", "0003:fe00"], "order_population_before.txt"),
        (["order", "--population", population, "--before", "0003:fe00", "--plist"], "order_population_plist.txt"),
        (["order", "--population", population, "--model", "rf", "--json"], "order_population_rf_json.txt"),
        (["bench", "order"], "bench_order.txt"),
        (["bench", "order", "--model", "rf", "--positions", "0-3,100", "--json"], "bench_order_rf_json.txt"),
    ] as [([String], String)])
    func golden(_ args: [String], _ file: String) throws {
        let r = try run(args)
        #expect(r.status == 0, "\(r.stderr)")
        // Without --before 0003:fe00 the fixture's transit cards land in FE00, which is warned about.
        let warned = args.first == "order" && !args.contains("--before")
        #expect(warned ? r.stderr.hasPrefix("warning: the best order lands cards outside") : r.stderr.isEmpty, "\(r.stderr)")
        try expectGolden(r.stdout, file)
    }

    /// The ios model reproduces the measured table within 1 %, reports
    /// positions ≥ 149 as never detected and fits about 0.30 s per code.
    @Test func benchReproducesTheIOSMeasurements() throws {
        let r = try run(["bench", "order", "--model", "ios", "--positions", "0-150", "--json"])
        #expect(r.status == 0, "\(r.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        let rows = try #require(json["rows"] as? [[String: Any]])
        #expect(rows.count == 151)
        let measured: [Int: Double] = [0: 0.045911, 1: 0.347383, 2: 0.647835, 3: 0.950227, 4: 1.250553, 5: 1.551381, 148: 44.682030]
        for row in rows {
            let position = try #require(row["position"] as? Int)
            if let expected = measured[position] {
                let mean = try #require(row["mean"] as? Double)
                #expect(abs(mean - expected) / expected < 0.01, "position \(position): \(mean) vs \(expected)")
            }
            #expect((row["detected"] as? Bool) == (position < 149), "position \(position)")
        }
        #expect((json["neverDetected"] as? [Int]) == [149, 150])
        let fit = try #require(json["fit"] as? [String: Any])
        #expect(abs((fit["perCode"] as? Double ?? 0) - 0.30) < 0.005)
        #expect((json["sessionLimit"] as? Double) == 45)
        #expect((json["model"] as? String) == "ios")
    }

    @Test func plotIsAWellFormedSVGWithAxesAndFit() throws {
        let path = temporaryPath("order.svg")
        let r = try run(["bench", "order", "--positions", "0-150", "--plot", path])
        #expect(r.status == 0, "\(r.stderr)")
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let doc = try XMLDocument(xmlString: text)
        #expect(doc.rootElement()?.name == "svg")
        #expect(text.contains("detection time (s, log scale)"))
        #expect(text.contains("position of FE00 in the list (codes polled before it), log scale"))
        #expect(text.contains("least-squares fit"))
        #expect(text.contains("never detected (2)"))
        #expect(text.components(separatedBy: "<circle").count > 149)
    }

    /// Where each mean point and never-detected cross of a plot is drawn, read from the
    /// SVG's elements that carry a <title> ("12: 3.66 s", "149: never detected").
    static func marks(_ svg: String) throws -> (points: [Int: (x: Double, y: Double)], never: [(x: Double, y: Double)]) {
        func attribute(_ name: String, _ tag: Substring) -> String? {
            let tag = " " + tag
            guard let r = tag.range(of: " \(name)=\"") else { return nil }
            return String(tag[r.upperBound...].prefix { $0 != "\"" })
        }
        func position(_ tag: Substring) -> Int? {
            guard let r = tag.range(of: "<title>") else { return nil }
            return Int(tag[r.upperBound...].prefix { $0 != ":" })
        }
        var points: [Int: (x: Double, y: Double)] = [:]
        for tag in svg.components(separatedBy: "<circle ").dropFirst().map({ Substring($0) }) {
            guard let p = position(tag), let x = attribute("cx", tag).flatMap(Double.init), let y = attribute("cy", tag).flatMap(Double.init) else { continue }
            points[p] = (x, y)
        }
        var never: [(x: Double, y: Double)] = []
        for tag in svg.components(separatedBy: "<path ").dropFirst().map({ Substring($0) }) where tag.prefix(while: { $0 != "\n" }).contains("never detected</title>") {
            // "M x-4 y-4 L ...": the cross's top-left corner.
            let numbers = (attribute("d", tag) ?? "").split(whereSeparator: { "ML ".contains($0) }).compactMap { Double($0) }
            if numbers.count >= 2 { never.append((numbers[0] + 4, numbers[1] + 4)) }
        }
        return (points, never)
    }

    @Test func thePlotSpreadsTheFirstPositionsAndKeepsNeverDetectedMarksApart() throws {
        let path = temporaryPath("spread.svg")
        #expect(try run(["bench", "order", "--positions", "0-150", "--plot", path]).status == 0)
        let (points, never) = try Self.marks(try String(contentsOfFile: path, encoding: .utf8))
        let p0 = try #require(points[0]), p10 = try #require(points[10]), p1 = try #require(points[1]), p148 = try #require(points[148])
        // Positions 0-10 take a good share of the width, and their times stand apart.
        #expect((p10.x - p0.x) / (p148.x - p0.x) > 0.4)
        #expect(abs(p1.y - p0.y) > 30)
        // The two never-detected positions (149, 150) are drawn apart: no two 8 px crosses touch.
        #expect(never.count == 2)
        for i in never.indices { for j in never.indices where i < j {
            #expect(abs(never[i].x - never[j].x) >= 9 || abs(never[i].y - never[j].y) >= 9, "\(never)")
        } }
    }

    @Test func theIOSPlotNamesItsSourceWithoutIssueNumbers() throws {
        let path = temporaryPath("ios.svg")
        #expect(try run(["bench", "order", "--plot", path]).status == 0)
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(text.contains("measured on iOS 13"))
        #expect(!text.lowercased().contains("issue"))
    }

    @Test(arguments: ["plot.png", "out/plot.PDF", "x.svg.png"])
    func aPlotNamedForAnotherFormatIsRefused(_ name: String) throws {
        let r = try run(["bench", "order", "--plot", temporaryPath(name)])
        #expect(r.status == 64)
        #expect(r.stderr.hasPrefix("Error: option '--plot': "), "\(r.stderr)")
        #expect(r.stderr.contains("but the plot is SVG; give a .svg name"), "\(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: temporaryPath(name)))
    }

    @Test(arguments: ["plot.svg", "PLOT.SVG", "plot"])
    func svgOrExtensionlessPlotNamesAreWritten(_ name: String) throws {
        let path = temporaryPath(name)
        #expect(try run(["bench", "order", "--positions", "0-3", "--plot", path]).status == 0)
        #expect(try String(contentsOfFile: path, encoding: .utf8).hasPrefix("<?xml"))
    }

    @Test func benchOnATimedVirtualDevice() throws {
        let r = try run(["bench", "order", "--device", "virtual:" + fixture("two-system.json"), "--positions", "0-2", "--repeat", "2", "--json"])
        #expect(r.status == 0, "\(r.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        #expect((json["device"] as? String)?.hasPrefix("virtual:") == true)
        let rows = try #require(json["rows"] as? [[String: Any]])
        #expect(rows.map { $0["detected"] as? Bool } == [true, true, true])
        let means = rows.compactMap { $0["mean"] as? Double }
        // Real waiting: each code the card lacks costs at least a Polling window (~3.6 ms).
        // Lower bounds only: load can stretch a wait but never shorten one, whereas a
        // difference between two rows fails when the first row happens to be delayed.
        #expect(means.count == 3 && means[1] > 0.003 && means[2] > 0.006, "\(means)")
        let wildcard = try #require(json["wildcard"] as? [String: Any])
        #expect((wildcard["exchanges"] as? Int) == 2)
    }

    /// Real libnfc in the `felica` process against the PN532 emulator (rf timing) on a pty.
    @Test func benchThroughLibNFCAndThePN532Emulator() throws {
        let card = VirtualCard(image: CardImage(pmm: CardImage.defaultPMm, systems: [
            CardImage.System(code: 0x8B61, services: []), CardImage.System(code: 0xFE00, services: []),
        ]))
        let server = try PN532Server(card: card, options: .init(timing: true))
        server.start()
        defer { server.stop() }
        let plot = temporaryPath("libnfc.svg")
        let r = try run(["bench", "order", "--device", "libnfc:" + server.connectionString, "--positions", "0-4,12", "--repeat", "2", "--json", "--plot", plot],
                        environment: ["LIBNFC_LOG_LEVEL": "0"])
        #expect(r.status == 0, "\(r.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        #expect((json["device"] as? String)?.hasPrefix("libnfc:pn532_uart:") == true)
        #expect((json["system"] as? String) == "fe00")
        let rows = try #require(json["rows"] as? [[String: Any]])
        #expect(rows.compactMap { $0["position"] as? Int } == [0, 1, 2, 3, 4, 12])
        #expect(rows.allSatisfy { $0["detected"] as? Bool == true })
        let means = rows.compactMap { $0["mean"] as? Double }
        // Neighbouring positions can swap on a loaded machine (real clock), but 12 codes the
        // card lacks cost at least 12 Polling windows (~43 ms) of real waiting.
        #expect(means.count == 6 && means[5] - means[0] > 0.03, "detection time must grow with position: \(means)")
        // Each code the card lacks costs at least one Polling window on the air (~3.6 ms).
        let fit = try #require(json["fit"] as? [String: Any])
        #expect((fit["perCode"] as? Double ?? 0) > 0.0036)
        let wildcard = try #require(json["wildcard"] as? [String: Any])
        #expect((wildcard["exchanges"] as? Int) == 2)
        #expect((wildcard["systems"] as? [String]) == ["8b61", "fe00"])
        _ = try XMLDocument(contentsOf: URL(fileURLWithPath: plot))
    }

    @Test(arguments: [
        (["bench", "order", "--model", "ios", "--device", "virtual:suica"], "Error: choose one of '--model' and '--device'"),
        (["bench", "order", "--positions", "5-1"], "Error: --positions: range \"5-1\" runs backwards"),
        (["bench", "order", "--model", "android"], "Error: option '--model': 'android' is not one of ios, rf"),
        (["bench", "order", "--repeat", "0"], "Error: option '--repeat'"),
        (["order", "--codes", "0003,ffff"], "Error: --codes: item 2 FFFF is a wildcard"),
        (["order", "--codes", "0003,0003"], "Error: --codes: 0003 is listed twice"),
        (["order", "--json", "--plist"], "Error: choose one of '--json' and '--plist'"),
        (["order", "--codes", "0003", "--before", "0003:fe00"], "Error: --before: 0003:FE00: both codes must be among the codes to order"),
    ] as [([String], String)])
    func usageErrors(_ args: [String], _ message: String) throws {
        let r = try run(args)
        #expect(r.status == 64, "\(r.stderr)")
        #expect(r.stderr.hasPrefix(message), "\(r.stderr)")
        #expect(r.stdout.isEmpty)
    }

    @Test func badPopulationFileNamesThePlace() throws {
        let path = temporaryPath("bad-population.json")
        try #"{"cards":[{"name":"x","systems":["0003"]},{"name":"y","weight":"heavy","systems":["fe00"]}]}"#
            .write(toFile: path, atomically: true, encoding: .utf8)
        let r = try run(["order", "--population", path])
        #expect(r.status == 1)
        #expect(r.stderr == "Error: \(path): cards[1].weight: expected a number, got a string\n")
        let missing = try run(["order", "--population", "/no/such/population.json"])
        #expect(missing.status == 1)
        #expect(missing.stderr == "Error: population /no/such/population.json: cannot read it: No such file or directory\n", "\(missing.stderr)")
        let directory = try run(["order", "--population", "/tmp"])
        #expect(directory.stderr == "Error: population /tmp: cannot read it: Is a directory\n", "\(directory.stderr)")
    }

    @Test func benchTargetMustBeOnTheCard() throws {
        let r = try run(["bench", "order", "--system", "8008"])
        #expect(r.status == 1)
        #expect(r.stderr.contains("the card has no system 8008"))
    }
}

/// Orders that would hide a card's purse, and baselines compared truthfully.
@Suite struct OrderWarningTests {
    /// The default population stands for an app that reads balances: every sample card with
    /// a purse is detected in its purse's system, with no warning, in text, JSON and plist.
    @Test func theDefaultOrderDetectsEachSampleCardInItsPurseSystem() throws {
        let r = try run(["order"])
        #expect(r.status == 0)
        #expect(r.stderr.isEmpty, "\(r.stderr)")
        let order = try run(["order", "--json"])
        #expect(order.stderr.isEmpty, "\(order.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(order.stdout.utf8)) as? [String: Any])
        #expect((json["outsideTheirPurse"] as? [Any])?.isEmpty == true)
        let cards = try #require(json["cards"] as? [[String: Any]])
        let landed = Dictionary(uniqueKeysWithValues: cards.map { ($0["name"] as? String ?? "", ($0["system"] as? String ?? "never").uppercased()) })
        // The dual card carries two purses; the Octopus one, listed first, is its app's.
        let purse = ["suica": "0003", "edy": "FE00", "nanaco": "FE00", "waon": "FE00", "wallet": "0003", "octopus": "8008", "octopus-shenzhen": "8008"]
        #expect(landed == purse)
        let orderCodes = (json["order"] as? [String] ?? []).map { $0.uppercased() }
        #expect(r.stdout.contains("Best order (exact): " + orderCodes.joined(separator: ", ")), "\(r.stdout)")
        let plist = try run(["order", "--plist"])
        #expect(plist.status == 0)
        #expect(plist.stderr.isEmpty)
        #expect(plist.stdout == OrderCommand.plist(orderCodes.compactMap { SystemCode(hex: $0) }))
        // The help says which cards make the default population.
        let help = try run(["order", "--help"], environment: ["COLUMNS": "400"])
        #expect(help.stdout.contains("the built-in sample cards that carry a purse (suica, edy, nanaco, waon, wallet, octopus, octopus-shenzhen) count the same"), "\(help.stdout)")
        #expect(!help.stdout.contains("every built-in sample card"))
    }

    /// A transit card landing in its common area (the list leaves its transit system out):
    /// warned about in text and JSON; --plist prints nothing and fails.
    @Test func aTransitCardLandingInItsCommonAreaIsWarnedAbout() throws {
        let r = try run(["order", "--before", "fe00:0003"])
        #expect(r.status == 0)
        #expect(r.stdout.contains("Best order (exact): FE00, "), "\(r.stdout)")
        #expect(r.stderr == """
            warning: the best order lands cards outside the system their purse is in; an app would not see their balance:
              suica (14.3 % of cards) lands in FE00; its transit purse is in 0003
              wallet (14.3 % of cards) lands in FE00; its transit purse is in 0003
              keep each purse's system first with --before 0003:fe00

            """, "\(r.stderr)")
        let order = try run(["order", "--json", "--before", "fe00:0003"])
        let json = try #require(try JSONSerialization.jsonObject(with: Data(order.stdout.utf8)) as? [String: Any])
        let outside = try #require(json["outsideTheirPurse"] as? [[String: String]])
        #expect(outside.map { $0["card"] } == ["suica", "wallet"])
        #expect(outside.first?["purseSystem"] == "0003")
        let plist = try run(["order", "--population", OrderCommandTests.population, "--plist"])
        #expect(plist.status == 1)
        #expect(plist.stdout.isEmpty, "\(plist.stdout)")
        #expect(plist.stderr.hasPrefix("Error: the best order lands cards outside the system their purse is in, so no Info.plist entry is printed:\n  suica (50.0 % of cards) lands in FE00; its transit purse is in 0003\n"), "\(plist.stderr)")
        #expect(plist.stderr.contains("  keep each purse's system first with --before 0003:fe00"), "\(plist.stderr)")
    }

    @Test func keepingTheTransitSystemFirstSilencesTheWarning() throws {
        let r = try run(["order", "--before", "0003:fe00"])
        #expect(r.status == 0)
        #expect(r.stdout.contains("Best order (exact): 0003, FE00"))
        #expect(r.stderr.isEmpty, "\(r.stderr)")
    }

    @Test func aFasterBaselineThatBreaksTheConstraintSaysSo() throws {
        let r = try run(["order", "--codes", "fe00,0003,8b61", "--before", "0003:fe00"])
        #expect(r.status == 0)
        #expect(r.stdout.contains("Baseline (--codes): FE00, 0003, 8B61 (breaks --before)"))
        #expect(r.stdout.contains("  the baseline is faster by 0.180773 s per detection on average, but only by breaking --before\n"), "\(r.stdout)")
        #expect(!r.stdout.contains("as fast as"))
    }

    @Test(arguments: [
        (0.2, 0.2, true, "the baseline is as fast as the best order"),
        (0.2, 0.2, false, "the baseline is as fast as the best order, but it breaks --before"),
        (0.1, 0.2, false, "the baseline is faster by 0.100000 s per detection on average, but only by breaking --before"),
        (0.3, 0.2, true, "the best order saves 0.100000 s per detection on average (33.3 %)"),
    ] as [(Double, Double, Bool, String)])
    func comparisonWording(_ baseline: Double, _ best: Double, _ keeps: Bool, _ words: String) {
        #expect(OrderCommand.comparison(baseline: baseline, best: best, keepsOrder: keeps) == words)
    }
}
