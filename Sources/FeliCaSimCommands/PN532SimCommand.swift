import FeliCa
import FeliCaReaderCodecs
import FeliCaDevices
import FeliCaEmulators
import FeliCaCLI
import FeliCaSimulation
import Synchronization

#if canImport(Glibc)
import Glibc
import FeliCaCards
#endif

/// `felica-sim pn532`: a PN532 board on a pseudo-terminal, with a virtual card in its field.
struct PN532SimCommand: CLICommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            name: "pn532",
            abstract: "Emulate a PN532 reader on a pseudo-terminal that libnfc (or any PN532 host) can open.",
            discussion: """
                Prints the libnfc connection string (pn532_uart:/dev/pts/N) on stdout, then serves \
                until interrupted. Use it as --device libnfc:pn532_uart:/dev/pts/N, or set \
                LIBNFC_DEVICE for libnfc's own tools (nfc-list).
                Faults (for testing hosts) hit the N-th packet handed to the card, once: \
                corrupt@N (bad checksum), drop-ack@N (no ACK frame), late@N[:MS] (reply MS ms late, default 1000), \
                away@N[:MS] (the port goes away mid-command, as a pulled USB serial adapter: the terminal closes and \
                --link is removed; MS ms later, default 3000, a new terminal comes up with the link pointing at it).
                SIGUSR1 puts the card back in the field (after --remove-after took it away).
                """,
            options: [
                SimOptions.card.spec,
                SimOptions.noCard,
                linkOption.spec,
                timingOption.spec,
                faultOption.spec,
                removeAfterOption.spec,
                SimOptions.taps.spec,
                SimOptions.saveWrites.spec,
            ])
    }

    static let linkOption = Option(OptionSpec("link", value: "path", help: "Also make <path> a symlink to the terminal (removed on exit; a path that exists is refused, unless it is a link to a terminal gone, which an emulator left behind).", kind: .file))
    static let timingOption = SimOptions.timing("rf: take as long as a real PN532 at 115200 baud and a real card (UART and air time; the card answers in half its PMm bound).")
    static let faultOption = Option(OptionSpec(
        "fault", value: "kind@n", help: "Inject a fault: corrupt@N, drop-ack@N, late@N[:MS], away@N[:MS] (repeatable).", repeatable: true)) { spec throws(UsageError) in
        do throws(FeliCaError) { return try PN532Fault(parsing: spec) } catch { throw UsageError("option '--fault': \(error.reason)") }
    }
    static let removeAfterOption = Option.int(OptionSpec("remove-after", value: "n", help: "Take the card away after it has answered <n> packets."), in: 0...1_000_000)

    let card: String?
    let link: String?
    let timing: CardTiming?
    let faults: [PN532Fault]
    let removeAfter: Int?
    let taps: PN532Emulator.Taps?

    let saveWrites: String?

    init(_ args: ParsedArguments) throws(UsageError) {
        card = try SimOptions.cardOrNone(args)
        saveWrites = try args.value(SimOptions.saveWrites)
        if saveWrites != nil && card == nil { throw UsageError("--save-writes needs a card") }
        link = try args.value(Self.linkOption)
        timing = SimOptions.cardTiming(try args.value(Self.timingOption))
        faults = try args.values(Self.faultOption)
        removeAfter = try args.value(Self.removeAfterOption)
        if removeAfter != nil && card == nil { throw UsageError("--remove-after needs a card") }
        taps = try args.value(SimOptions.taps)
        if taps != nil && card == nil { throw UsageError("--taps needs a card") }
    }

    func run(_ console: Console) async throws -> Int32 {
        let virtual = try card.map { name throws(FeliCaError) in try VirtualCard.named(name, timing: timing ?? .typical) }
        if let removeAfter { virtual?.removeAfter(exchanges: removeAfter) }
        // SIGUSR1 puts the card back.
        if let virtual { SignalHandling.handle(SIGUSR1) { _ in virtual.isPresent = true } }
        let opened = Result { () throws(FeliCaError) -> PN532Server in
            try PN532Server(card: virtual, options: .init(timing: timing != nil, faults: faults, taps: taps), link: link)
        }
        let server: PN532Server
        switch opened {
        case .success(let s): server = s
        // The server names the path; the option is ours to name.
        case .failure(let e) where e.code == .badInput && link != nil: throw FeliCaError(e.code, "--link " + e.reason)
        case .failure(let e): throw e
        }
        server.start()
        console.line(server.connectionString)
        console.diag("PN532 emulator on \(server.path)\(link.map { " (link \($0))" } ?? "") with \(card.map { "card \($0)" } ?? "no card")\(timing.map { ", rf timing (card: \($0.rawValue))" } ?? ""); stop with Ctrl-C")
        console.diag("  felica poll --device libnfc:\(server.connectionString)")
        console.diag("  LIBNFC_DEVICE=\(server.connectionString) nfc-list")
        let signal = await SignalHandling.waitForTermination()
        server.stop()
        try SimOptions.save(virtual, to: saveWrites, console)
        console.diag("stopped (\(signal == SIGINT ? "interrupt" : "terminate")): \(server.commandCount) commands, \(server.cardExchanges) card exchanges")
        return ExitCode.ok
    }
}
