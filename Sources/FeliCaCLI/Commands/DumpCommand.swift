import FeliCa
import FeliCaCards
import FeliCaJSON
import FeliCaSimulation

/// `felica dump`: everything a card shows without keys.
struct DumpCommand: CLICommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            name: "dump",
            abstract: "Read every system, area and service the card shows without keys.",
            discussion: "With --json the output is a felica-card/1 card image: `--device virtual:<file>` serves it back. --format flipper or metrodroid writes the image as a Flipper Zero .nfc file or a Metrodroid JSON export instead; `virtual:<file>` reads those too (and Proxmark3 hf felica dump JSON). See Docs/formats.md.",
            options: CommonOptions.reader + [
                CommonOptions.json,
                CommonOptions.redact,
                formatOption.spec,
                outputOption.spec,
            ])
    }

    static let outputOption = Option(OptionSpec(
        "output", short: "o", value: "file", help: "Write to <file> instead of stdout (replaced only once the dump is complete).", kind: .file))

    static let formatOption = Option(
        OptionSpec("format", value: "format", help: "Write the card image as felica (felica-card/1, as --json), flipper (Flipper Zero .nfc) or metrodroid (Metrodroid JSON).",
                   kind: .choice(["felica", "flipper", "metrodroid"]))
    ) { s throws(UsageError) in
        guard let f = CardImageFormat(rawValue: s), f != .proxmark else { throw UsageError("option '--format': '\(s)' is not one of felica, flipper, metrodroid") }
        return f
    }

    let readerOptions: ReaderOptions
    let json: Bool
    let format: CardImageFormat?
    let output: String?

    init(_ args: ParsedArguments) throws(UsageError) {
        readerOptions = try ReaderOptions(args)
        json = args.flag(CommonOptions.json)
        output = try args.value(Self.outputOption)
        format = try args.value(Self.formatOption)
        if json && format != nil && format != .felica { throw UsageError("--json and --format \(format!.rawValue) contradict each other: choose one") }
        if output?.isEmpty == true { throw UsageError("option '--output' needs a file name") }
        try readerOptions.files.adding { $0.writes(output, as: "--output") }.check()
    }

    func run(_ console: Console) async throws -> Int32 {
        let (image, error) = try await CardContext.with(readerOptions, console: console) { session in
            await CardImage.readAllowingPartial(using: session) { console.progress($0) }
        }
        console.endProgress()
        guard let image else { throw error! }
        let text = try format.map { f throws(FeliCaError) in try image.exported(as: f, now: HistoryOptions.now()) } ?? (json ? image.jsonText() : Self.tree(image))
        // A partial dump never replaces the output file: it goes beside it.
        let path = output.map { error == nil ? $0 : $0 + ".partial" }
        if let path {
            try FileOutput.writeAtomically(text, to: path)
        } else {
            console.out(text)
        }
        // What the card did not answer: the dump is complete without it, and says so.
        for n in image.extra["notes"]?.arrayValue ?? [] {
            if let text = n.stringValue { console.diag("note: \(text)") }
        }
        if let error {
            let systems = image.systems.map(\.code.description).joined(separator: ", ")
            console.diag("Error: \(error.reason)")
            console.diag("the dump is partial: only system\(image.systems.count == 1 ? "" : "s") \(systems) \(image.systems.count == 1 ? "was" : "were") read completely" + (path.map { "; saved to \($0)" } ?? ""))
            return error.isUnavailable ? ExitCode.unavailable : ExitCode.failure
        }
        return ExitCode.ok
    }

    /// The readable tree: systems → areas → services → blocks.
    static func tree(_ image: CardImage) -> String {
        var out = ""
        let pmm = image.pmm ?? CardImage.defaultPMm
        out += "Card  PMm \(pmm)  IC \(pmm.ic)\n"
        if let partial = image.extra["partial"], let reason = partial["error"]?.stringValue {
            out += "PARTIAL DUMP: \(reason)\n"
        }
        // What the card did not answer, as the image's `notes` carry it in JSON.
        for n in image.extra["notes"]?.arrayValue ?? [] {
            if let text = n.stringValue { out += "INCOMPLETE: \(text)\n" }
        }
        for (i, system) in image.systems.enumerated() {
            let brand = system.code == TransitIssuer.system ? image.transitIssuer.map { ", \($0)" } ?? "" : ""
            out += "System \(system.code)" + (system.code.knownName.map { " (\($0)\(brand))" } ?? "") + "  IDm \(image.idm(ofSystem: i))"
            if let p = system.pmm { out += "  PMm \(p)" }
            out += "\n"
            var depth: [AreaCode] = []  // ends of the open areas
            var nodes: [(NodeCode, String, CardImage.Service?)] = system.areas.map { ($0.code, "end \($0.end)", nil) }
            nodes += system.services.map { ($0.code, "", $0) }
            nodes.sort { $0.0 < $1.0 }
            let ends = Dictionary(system.areas.map { ($0.code, $0.end) }, uniquingKeysWith: { a, _ in a })
            for (code, _, service) in nodes {
                while let last = depth.last, code > last { depth.removeLast() }
                let indent = String(repeating: "  ", count: depth.count + 1)
                if let service {
                    out += indent + "Service \(code)  \(code.attribute)"
                    if let kv = service.keyVersion { out += "  key version \(Hex.encode([UInt8(kv >> 8), UInt8(kv & 0xFF)]))" }
                    if let blocks = service.blocks {
                        out += "  \(blocks.count) block\(blocks.count == 1 ? "" : "s")\n"
                        for (b, data) in blocks.enumerated() {
                            out += indent + "  " + pad(String(b), 4) + hexGroups(data) + "  " + printable(data) + "\n"
                        }
                    } else {
                        out += service.blockCount.map { "  \($0) blocks, needs a key\n" } ?? "  size unknown, needs a key\n"
                    }
                } else {
                    out += indent + "Area \(code)-\(ends[code] ?? code)\n"
                    depth.append(ends[code] ?? code)
                }
            }
        }
        return out
    }

    static let pad = TextLayout.column

    static func hexGroups(_ data: [UInt8]) -> String {
        stride(from: 0, to: data.count, by: 4).map { Hex.encode(data[$0..<min($0 + 4, data.count)]) }.joined(separator: " ")
    }

    static func printable(_ data: [UInt8]) -> String {
        String(decoding: data.map { (0x20...0x7E).contains($0) ? $0 : UInt8(ascii: ".") }, as: UTF8.self)
    }
}
