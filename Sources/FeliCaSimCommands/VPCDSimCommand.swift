import FeliCa
import FeliCaDevices
import FeliCaEmulators
import FeliCaCLI
import FeliCaReaderCodecs
import FeliCaSimulation
import Synchronization

#if canImport(Glibc)
import Glibc
import FeliCaCards
#endif

/// `felica-sim vpcd`: a virtual FeliCa card in pcscd's vsmartcard-vpcd reader.
struct VPCDSimCommand: CLICommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            name: "vpcd",
            abstract: "Put a virtual FeliCa card into pcscd's virtual reader (vsmartcard-vpcd).",
            discussion: """
                Connects to vpcd on 127.0.0.1 and answers pcscd as a contactless reader holding the card would, \
                in the chosen reader dialect. The card shows in "Virtual PCD 00 00" (port 35963) or \
                "Virtual PCD 00 01" (35964); read it with: felica balance --device pcsc. Stopping this command \
                removes the card.
                """,
            options: [
                SimOptions.card.spec,
                portOption.spec,
                dialectOption.spec,
                t0Flag,
                refuseOption.spec,
                apduOption.spec,
                cutFlag,
                removeAfterOption.spec,
                stallAfterOption.spec,
                waitOption.spec,
            ],
            required: [SimOptions.card.spec.long])
    }

    static let portOption = Option.int(OptionSpec("port", value: "port", help: "vpcd's TCP port (default 35963)."), in: 1...65535)
    static let dialectOption = Option(OptionSpec(
        "dialect", value: "dialect", help: "Reader dialect to answer in: \(PCSCDialect.names) (default part3).",
        kind: .choice(PCSCDialect.allCases.map(\.rawValue)))) { d throws(UsageError) in
        guard let dialect = PCSCDialect(name: d) else {
            throw UsageError("option '--dialect': '\(d)' is not a PC/SC dialect (\(PCSCDialect.names))")
        }
        return dialect
    }
    static let t0Flag = OptionSpec.flag("t0", help: "acr122u: answer 61 xx and wait for GET RESPONSE, as a T=0 reader does.")
    static let refuseOption = Option(OptionSpec(
        "refuse", value: "commands",
        help: "part3, sony: FeliCa commands the reader will not forward, comma-separated (e.g. polling,request-service,request-system-code); it answers C0 03 01 6A 80.")) { list throws(UsageError) in
        var refused: Set<CommandCode> = []
        for name in list.split(separator: ",", omittingEmptySubsequences: false) {
            guard let code = CommandCode(name: String(name)) else {
                throw UsageError("option '--refuse': '\(name)' is not a FeliCa command (\(CommandCode.names))")
            }
            refused.insert(code)
        }
        return refused
    }
    static let apduOption = Option(OptionSpec(
        "apdu", value: "form", help: "part3, sony: take transparent exchanges only as short or only as extended APDUs (the other form gets 67 00); default both.",
        kind: .choice(TransparentExchange.Form.allCases.map(\.description)))) { form throws(UsageError) in
        guard let only = TransparentExchange.Form.allCases.first(where: { $0.description == form }) else {
            throw UsageError("option '--apdu': '\(form)' is not an APDU form (short, extended)")
        }
        return only
    }
    static let cutFlag = OptionSpec.flag("cut-long-replies", help: "part3, sony: cut a reply to a short APDU to 256 bytes, as a reader that cannot carry more would.")
    static let removeAfterOption = Option.int(OptionSpec(
        "remove-after", value: "n", help: "Take the card away after it answered <n> FeliCa commands (closes the connection mid-command)."), in: 0...1_000_000)
    static let stallAfterOption = Option.int(OptionSpec(
        "stall-after", value: "n", help: "Answer <n> FeliCa commands, then never again (a wedged card; the connection stays open)."), in: 0...1_000_000)
    static let waitOption = Option.int(OptionSpec(
        "wait", value: "seconds", help: "How long to keep trying while vpcd does not accept the card yet (default 10)."), in: 0...3600)

    let card: String
    let options: VPCDCard.Options
    let removeAfter: Int?

    init(_ args: ParsedArguments) throws(UsageError) {
        card = try args.required(SimOptions.card)
        var o = VPCDCard.Options()
        if let port = try args.value(Self.portOption) { o.port = UInt16(port) }
        if let dialect = try args.value(Self.dialectOption) { o.dialect = dialect }
        o.getResponse = args.flag(Self.t0Flag)
        if o.getResponse && o.dialect != .acr122u {
            throw UsageError("option '--t0' applies to --dialect acr122u only")
        }
        if let refused = try args.value(Self.refuseOption) { o.quirks.refused = refused }
        if let only = try args.value(Self.apduOption) { o.quirks.forms = [only] }
        o.quirks.cutsLongReplies = args.flag(Self.cutFlag)
        if o.quirks != VPCDResponder.Quirks() && o.dialect != .part3 && o.dialect != .sony {
            throw UsageError("options '--refuse', '--apdu' and '--cut-long-replies' apply to --dialect part3 and sony only")
        }
        if let wait = try args.value(Self.waitOption) { o.connectWait = .seconds(wait) }
        o.stallAfter = try args.value(Self.stallAfterOption)
        options = o
        removeAfter = try args.value(Self.removeAfterOption)
    }

    func run(_ console: Console) async throws -> Int32 {
        let virtual = try VirtualCard.named(card)
        if let n = removeAfter { virtual.removeAfter(exchanges: n) }
        var options = options
        if let n = options.stallAfter {
            options.onStall = { console.diag("felica-sim vpcd: card stalled after \(n) exchanges") }
        }
        let vpcd = VPCDCard(card: virtual, options: options)
        // Debian's /etc/reader.conf.d/vpcd serves two slots from 35963.
        let slot = options.port == VPCDCard.defaultPort ? "00" : options.port == VPCDCard.defaultPort + 1 ? "01" : nil
        let reader = slot.map { " (reader \"Virtual PCD 00 \($0)\")" } ?? ""
        console.diag("felica-sim vpcd: card \(card) on \(options.host):\(options.port)\(reader), dialect \(options.dialect)\(options.getResponse ? " with 61 xx" : "")\(options.quirks == VPCDResponder.Quirks() ? "" : ", quirks: " + options.quirks.summary)")
        // Serve until the card leaves, vpcd hangs up, or SIGINT/SIGTERM stops the emulator
        // (then the card is taken out cleanly, and the exit status is 0, as for pn532).
        let stop: Stop = await withCheckedContinuation { (c: CheckedContinuation<Stop, Never>) in
            let once = ResumeOnce(c)
            Task { once.resume(.signal(await SignalHandling.waitForTermination())) }
            Task {
                do throws(FeliCaError) {
                    once.resume(.served(.success(try await vpcd.serve())))
                } catch {
                    once.resume(.served(.failure(error)))
                }
            }
        }
        switch stop {
        case .signal(let signal):
            vpcd.eject()
            console.diag("felica-sim vpcd: stopped (\(signal == SIGINT ? "interrupt" : "terminate")) after \(virtual.exchangeCount) exchanges")
        case .served(.success(.removed)):
            console.diag("felica-sim vpcd: card removed after \(virtual.exchangeCount) exchanges")
        case .served(.success(.readerClosed)):
            console.diag("felica-sim vpcd: vpcd closed the connection (pcscd stopped)")
        case .served(.failure(let error)):
            throw error
        }
        return ExitCode.ok
    }

    /// How serving ended: by itself, or by a signal.
    enum Stop: Sendable {
        case served(Result<VPCDCard.End, FeliCaError>)
        case signal(Int32)
    }

    /// Resumes its continuation with the first outcome; later ones are dropped.
    final class ResumeOnce: Sendable {
        private let continuation: Mutex<CheckedContinuation<Stop, Never>?>
        init(_ c: CheckedContinuation<Stop, Never>) { continuation = Mutex(c) }
        func resume(_ stop: Stop) {
            continuation.withLock { c in
                c?.resume(returning: stop)
                c = nil
            }
        }
    }
}
