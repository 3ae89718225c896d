import FeliCa
import FeliCaNDEF
import FeliCaDevices
import FeliCaFiles
import FeliCaTransportSupport

#if canImport(Glibc)
import Glibc
import FeliCaDiagnosis
#endif

/// `felica ndef [write|format|protect]`: the NDEF message of an NFC Forum Type 3 Tag (a FeliCa
/// Lite-S formatted for NDEF): shown, written, the tag formatted or made read-only.
struct NDEFCommand: CLICommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            name: "ndef",
            abstract: "Show, write, format or protect the NDEF message of a tag (NFC Forum Type 3 Tag, system 12FC).",
            discussion: """
                Without an action: URI records are shown with their prefix expanded, Text records with their language \
                and encoding, Smart Posters with their records; media and external types with their payload. A damaged \
                attribute block or message is an error naming the field, and a tag left by an interrupted write says so. \
                write: one of --uri, --text [--lang], --smart-poster [--title], --mime with --file, or --message (a raw \
                NDEF message file); the attribute block is marked "writing" first and updated last. \
                format: a FeliCa Lite or Lite-S made an NDEF tag (MC block and attribute block). \
                protect: the tag made read-only. format and protect cannot be undone on a real tag: they ask for \
                --yes, or for confirmation on a terminal. See \(PackagedFiles.guide("writing.md")).
                """,
            arguments: [ArgumentSpec("action", help: "write, format or protect (default: show the message).", optional: true, kind: .choice(actions))],
            options: CommonOptions.reader + [CommonOptions.json, uri.spec, text.spec, lang.spec, smartPoster.spec, title.spec, mime.spec, file.spec, message.spec, yes])
    }

    static let actions = ["write", "format", "protect"]
    static let uri = Option(OptionSpec("uri", value: "url", help: "write: a URI record."))
    static let text = Option(OptionSpec("text", value: "text", help: "write: a Text record (UTF-8)."))
    static let lang = Option(OptionSpec("lang", value: "tag", help: "write: the Text record's or title's language (default: en).")) { s throws(UsageError) in
        guard !s.isEmpty, s.utf8.count < 64, s.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
            throw UsageError("option '--lang': \"\(s)\" is not a language tag (printable ASCII, 1-63 characters, e.g. en or ja-JP)")
        }
        return s
    }
    static let smartPoster = Option(OptionSpec("smart-poster", value: "url", help: "write: a Smart Poster for this URI."))
    static let title = Option(OptionSpec("title", value: "text", help: "write: the Smart Poster's title."))
    static let mime = Option(OptionSpec("mime", value: "type", help: "write: a record of this media type (e.g. text/plain), payload from --file."))
    static let file = Option(OptionSpec("file", value: "path", help: "write: the --mime record's payload.", kind: .file))
    static let message = Option(OptionSpec("message", value: "path", help: "write: a file holding a whole NDEF message, written as it is.", kind: .file))
    static let yes = OptionSpec.flag("yes", help: "format, protect: go ahead without asking (they cannot be undone).")

    enum Action: Equatable { case show, write([UInt8]), format, protect }

    let readerOptions: ReaderOptions
    let json: Bool
    let action: Action
    let confirmed: Bool

    init(_ args: ParsedArguments) throws(UsageError) {
        readerOptions = try ReaderOptions(args)
        json = args.flag(CommonOptions.json)
        confirmed = args.flag(Self.yes)
        let name = args.positionals.first
        let uri = try args.value(Self.uri), text = try args.value(Self.text), lang = try args.value(Self.lang)
        let poster = try args.value(Self.smartPoster), title = try args.value(Self.title)
        let mime = try args.value(Self.mime), file = try args.value(Self.file), message = try args.value(Self.message)
        let content: [(String, Bool)] = [("uri", uri != nil), ("text", text != nil), ("smart-poster", poster != nil), ("mime", mime != nil), ("message", message != nil)]
        let given = content.filter(\.1).map { "--" + $0.0 }
        switch name {
        case "write"?:
            guard given.count == 1 else {
                throw UsageError(given.isEmpty ? "ndef write needs what to write: --uri, --text, --smart-poster, --mime with --file, or --message"
                                               : "ndef write takes one of \(given.joined(separator: ", ")), not several")
            }
            if lang != nil && text == nil && poster == nil { throw UsageError("--lang goes with --text or --smart-poster --title") }
            if title != nil && poster == nil { throw UsageError("--title goes with --smart-poster") }
            if (mime == nil) != (file == nil) && message == nil { throw UsageError(mime == nil ? "--file goes with --mime" : "--mime needs --file (its payload)") }
            action = .write(try Self.build(uri: uri, text: text, lang: lang ?? "en", poster: poster, title: title, mime: mime, file: file, message: message))
        case nil, "format"?, "protect"?:
            guard given.isEmpty, lang == nil, title == nil, file == nil else {
                throw UsageError("\(given.first ?? (lang != nil ? "--lang" : title != nil ? "--title" : "--file")) is for ndef write")
            }
            action = name == nil ? .show : name == "format" ? .format : .protect
        case let other?:
            throw UsageError("unknown action '\(other)' (write, format or protect)" + Suggestion.didYouMean(other, Self.actions))
        }
        if confirmed && (action == .show || { if case .write = $0 { true } else { false } }(action)) {
            throw UsageError("--yes is for ndef format and ndef protect")
        }
    }

    /// The NDEF message to write.
    static func build(uri: String?, text: String?, lang: String, poster: String?, title: String?, mime: String?, file: String?, message: String?) throws(UsageError) -> [UInt8] {
        if let uri { return NDEFRecord.encodeMessage([NDEFRecord(wellKnown: "U", payload: NDEFURI.payload(uri))]) }
        if let text { return NDEFRecord.encodeMessage([NDEFRecord(wellKnown: "T", payload: NDEFText(language: lang, text: text).payload)]) }
        if let poster {
            var inner = [NDEFRecord(wellKnown: "U", payload: NDEFURI.payload(poster))]
            if let title { inner.append(NDEFRecord(wellKnown: "T", payload: NDEFText(language: lang, text: title).payload)) }
            return NDEFRecord.encodeMessage([NDEFRecord(wellKnown: "Sp", payload: NDEFRecord.encodeMessage(inner))])
        }
        if let mime, let file {
            guard mime.contains("/"), mime.utf8.count < 256, mime.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
                throw UsageError("option '--mime': \"\(mime)\" is not a media type like text/plain")
            }
            return NDEFRecord.encodeMessage([NDEFRecord(tnf: .media, type: Array(mime.utf8), payload: try read(file, "--file"))])
        }
        if let message {
            let bytes = try read(message, "--message")
            do throws(FeliCaError) {
                _ = try NDEFRecord.parseMessage(bytes)
            } catch {
                throw UsageError("option '--message': \(message) is not an NDEF message: \(error.reason)")
            }
            return bytes
        }
        throw UsageError("ndef write needs what to write")
    }

    static func read(_ path: String, _ option: String) throws(UsageError) -> [UInt8] {
        switch SystemCalls.readBytes(path) {
        case .success(let b): return b
        case .failure(let f): throw UsageError("option '\(option)': cannot read \(path): \(f.reason)")
        }
    }

    func run(_ console: Console) async throws -> Int32 {
        switch action {
        case .show:
            let tag = try await CardContext.with(readerOptions, console: console) { session in try await NDEFTag.read(using: session) }
            if json {
                JSONOut.print(NDEFRendering.json(tag), console)
            } else {
                for line in NDEFRendering.lines(tag) { console.line(line) }
            }
        case .write(let message):
            let r = try await CardContext.with(readerOptions, console: console) { session in try await NDEFTag.write(message, using: session) }
            console.line("wrote an NDEF message of \(message.count) bytes to IDm \(r.idm) in \(r.writeCommands) Write commands (\(r.attributes.nmaxb * 16 - message.count) bytes left)")
        case .format:
            try confirm("format the tag for NDEF", console)
            let r = try await CardContext.with(readerOptions, console: console) { session in try await NDEFTag.format(using: session) }
            console.line("formatted IDm \(r.idm) for NDEF: \(r.attributes.nmaxb) blocks (\(r.attributes.nmaxb * 16) bytes) for the message\(r.setNDEFFlag ? "; the MC block's NDEF flag was set" : "")")
        case .protect:
            try confirm("make the tag read-only", console)
            let r = try await CardContext.with(readerOptions, console: console) { session in try await NDEFTag.protect(using: session) }
            console.line("IDm \(r.idm) is read-only: the attribute block's RWFlag is 00" + (r.lockedMemory ? " and the MC block locks its user blocks" : "; its MC block was already locked, so the blocks themselves stay writable to a writer that ignores RWFlag"))
        }
        return ExitCode.ok
    }

    /// `--yes`, or "yes" typed on a terminal; anything else stops before the reader is opened.
    private func confirm(_ what: String, _ console: Console) throws {
        if confirmed { return }
        guard isatty(0) != 0 else {
            throw FeliCaError(.invalidArgument, "ndef \(what == "make the tag read-only" ? "protect" : "format") cannot be undone on a real tag: give --yes to go ahead (stdin is not a terminal to ask on)")
        }
        console.diag("This will \(what); it cannot be undone on a real tag. Type yes to go ahead:")
        var line: [UInt8] = []
        var byte: UInt8 = 0
        while Glibc.read(0, &byte, 1) == 1, byte != 0x0A { line.append(byte) }
        guard String(decoding: line, as: UTF8.self).trimmingSpaces == "yes" else {
            throw FeliCaError(.cancelled, "not confirmed; nothing was written")
        }
    }
}

private extension String {
    var trimmingSpaces: String {
        var s = Substring(self)
        while s.first == " " || s.first == "\r" { s = s.dropFirst() }
        while s.last == " " || s.last == "\r" { s = s.dropLast() }
        return String(s)
    }
}
