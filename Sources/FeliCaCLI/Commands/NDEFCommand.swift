import FeliCa
import FeliCaNDEF

/// `felica ndef`: the NDEF message of an NFC Forum Type 3 Tag (a FeliCa Lite-S formatted for NDEF).
struct NDEFCommand: CLICommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            name: "ndef",
            abstract: "Show the NDEF message of a tag formatted for NDEF (NFC Forum Type 3 Tag, system 12FC).",
            discussion: "URI records are shown with their prefix expanded, Text records with their language and encoding, Smart Posters with their records; media and external types with their payload. A damaged attribute block or message is an error naming the field. Writing NDEF is not supported. See Docs/cards.md.",
            options: CommonOptions.reader + [CommonOptions.json])
    }

    let readerOptions: ReaderOptions
    let json: Bool

    init(_ args: ParsedArguments) throws(UsageError) {
        readerOptions = try ReaderOptions(args)
        json = args.flag(CommonOptions.json)
    }

    func run(_ console: Console) async throws -> Int32 {
        let tag = try await CardContext.with(readerOptions, console: console) { session in try await NDEFTag.read(using: session) }
        if json {
            JSONOut.print(NDEFRendering.json(tag), console)
        } else {
            for line in NDEFRendering.lines(tag) { console.line(line) }
        }
        return ExitCode.ok
    }
}
