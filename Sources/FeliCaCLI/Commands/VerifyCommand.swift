import FeliCa
import FeliCaJSON
import FeliCaSecurity
import FeliCaFiles
import FeliCaTransportSupport
import FeliCaDiagnosis

/// `felica verify --card-key KEY`: whether a FeliCa Lite-S holds a card key (mutual authentication).
struct VerifyCommand: CLICommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            name: "verify",
            abstract: "Check that a FeliCa Lite-S holds a card key (mutual authentication with MAC_A).",
            discussion: """
                A fresh random challenge goes to the tag's RC block; the ID block read with MAC_A proves the tag \
                computes with the key (internal authentication), and a STATE write with MAC_A proves the key to the \
                tag (external authentication). The key is 32 hex digits in the order nfcpy's \
                FelicaLiteS.authenticate takes it (the tag's CK block holds each half reversed), or @FILE holding \
                them. Exit 0 when the tag holds the key, 1 when it does not. See \(PackagedFiles.guide("writing.md")).
                """,
            options: CommonOptions.reader + [cardKey.spec, CommonOptions.json],
            required: ["card-key"])
    }

    static let cardKey = Option(OptionSpec("card-key", value: "hex|@file", help: "The card key: 32 hex digits, or @FILE holding them.")) { s throws(UsageError) in
        try parseKey(s)
    }

    /// `KEY` or `@FILE` (whose text holds the 32 digits, spaces and newlines allowed).
    static func parseKey(_ s: String) throws(UsageError) -> LiteCardKey {
        var text = s
        var source = "option '--card-key'"
        if s.hasPrefix("@") {
            let path = String(s.dropFirst())
            switch SystemCalls.readText(path) {
            case .success(let t): text = t
            case .failure(let f): throw UsageError("option '--card-key': cannot read \(path): \(f.reason)")
            }
            source = "option '--card-key': \(path)"
        }
        let digits = text.filter { !$0.isWhitespace }
        guard digits.count == 32, let bytes = Hex.decode(digits), let key = try? LiteCardKey(bytes: bytes) else {
            throw UsageError("\(source): a card key is 32 hex digits (16 bytes), got \"\(digits.prefix(40))\"")
        }
        return key
    }

    let readerOptions: ReaderOptions
    let key: LiteCardKey
    let json: Bool

    init(_ args: ParsedArguments) throws(UsageError) {
        readerOptions = try ReaderOptions(args)
        key = try args.required(Self.cardKey)
        json = args.flag(CommonOptions.json)
    }

    func run(_ console: Console) async throws -> Int32 {
        let key = self.key
        let (target, result) = try await CardContext.with(readerOptions, console: console) { session in
            let target = try await session.detect()
            guard target.pmm.ic.family == .liteS else {
                throw FeliCaError(.unsupported, "the card (IDm \(target.idm), \(target.pmm.ic)) is no FeliCa Lite-S; only a Lite-S does the mutual authentication")
            }
            return (target, try await LiteAuthentication.verify(key: key, session: session, target: target))
        }
        let verdict: String
        switch result.outcome {
        case .mutual: verdict = "the tag holds the card key: internal and external authentication passed"
        case .internalFailed: verdict = "the tag does not hold this card key: its MAC_A over the ID block does not match"
        case .externalFailed(let reason): verdict = "the tag's MAC_A matched but external authentication failed: \(reason)"
        }
        if json {
            var o = JSONObject()
            o.append("idm", .string(target.idm.hex))
            o.append("holdsKey", .bool(result.holdsKey))
            o.append("internalAuthentication", .bool(result.outcome != .internalFailed))
            o.append("externalAuthentication", .bool(result.holdsKey))
            JSONOut.print(.object(o), console)
        } else {
            console.line("IDm \(target.idm): \(verdict)")
        }
        return result.holdsKey ? ExitCode.ok : ExitCode.failure
    }
}
