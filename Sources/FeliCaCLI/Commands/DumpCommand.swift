import FeliCa
import FeliCaCards
import FeliCaJSON
import FeliCaSimulation
import FeliCaDiagnosis

/// `felica dump`: everything a card shows without keys.
struct DumpCommand: CLICommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            name: "dump",
            abstract: "Read every system, area and service the card shows without keys.",
            discussion: "With --json the output is a felica-card/1 card image: `--device virtual:<file>` serves it back. --format flipper or metrodroid writes the image as a Flipper Zero .nfc file or a Metrodroid JSON export instead; `virtual:<file>` reads those too (and Proxmark3 hf felica dump JSON). See \(PackagedFiles.guide("formats.md")). A card that does not answer Search Service Code has its services found by Request Service over every service code instead (--discover forces it); see \(PackagedFiles.guide("cards.md")).",
            options: CommonOptions.reader + [
                CommonOptions.json,
                CommonOptions.redact,
                formatOption.spec,
                outputOption.spec,
                discoverFlag,
            ])
    }

    static let discoverFlag = OptionSpec.flag(
        "discover", help: "Find services by Request Service over every service code (512 exchanges a system) even where the card answers Search Service Code.")

    static let outputOption = Option(OptionSpec(
        "output", short: "o", value: "file", help: "Write to <file> instead of stdout (replaced only once the dump is complete).", kind: .file))

    static let formatOption = Option(
        OptionSpec("format", value: "format", help: "Write the card image as felica (felica-card/1, as --json), flipper (Flipper Zero .nfc) or metrodroid (Metrodroid JSON).",
                   kind: .choice(["felica", "flipper", "metrodroid"]))
    ) { s throws(UsageError) in
        guard let f = CardImageFormat(rawValue: s), f != .proxmark, f != .metrodroidXML, f != .metroflip else { throw UsageError("option '--format': '\(s)' is not one of felica, flipper, metrodroid") }
        return f
    }

    let readerOptions: ReaderOptions
    let json: Bool
    let format: CardImageFormat?
    let output: String?
    let discover: Bool

    init(_ args: ParsedArguments) throws(UsageError) {
        discover = args.flag(Self.discoverFlag)
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
            await CardImage.readAllowingPartial(using: session, discover: discover) { console.progress($0) }
        }
        console.endProgress()
        guard var image else { throw error! }
        if format == nil || format == .felica {
            // What the public lists say of each system: informational, ignored when the image is read.
            for i in image.systems.indices { image.systems[i].extra["directory"] = JSONOut.system(image.systems[i].code, withCode: false) }
        }
        let text = try format.map { f throws(FeliCaError) in try image.exported(as: f, now: HistoryOptions.now()) } ?? (json ? image.jsonText() : image.outline())
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

    static let pad = TextLayout.column
    static let hexGroups = CardImage.hexGroups
    static let printable = CardImage.printable
}
