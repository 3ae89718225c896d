import FeliCa
import FeliCaReaderCodecs
import FeliCaDevices
import FeliCaEmulators
import FeliCaCLI
import FeliCaSimulation

#if canImport(Glibc)
import Glibc
import FeliCaCards
#endif

/// `felica-sim rcs380`: runs a command with an emulated Sony RC-S380 on its USB bus.
struct RCS380SimCommand: CLICommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            name: "rcs380",
            abstract: "Run a command with an emulated Sony RC-S380 (PaSoRi) on its USB bus, reached through the real libusb.",
            discussion: """
                The command sees one USB device, Sony 054c:06c1 at bus 001 address 004 (umockdev fakes \
                the bus, sysfs and the device node; libusb and everything above it are real). Use it as \
                --device usb. Needs umockdev, gir1.2-umockdev-1.0 and python3-gi (the felica-sim package depends on them).
                Faults hit the N-th packet handed to the card, once: corrupt@N (response frame with a bad \
                checksum), drop-ack@N (no ACK before the response), late@N[:MS] (response MS ms late, \
                default 1000), unplug@N (the reader leaves the bus mid-command), away@N[:MS] (it leaves the bus \
                mid-command and is plugged back in MS ms later, default 3000, powered up afresh at the next address, \
                001:005; what had it open stays dead, so a host must open it again). The exit status is the command's.
                """,
            arguments: [ArgumentSpec("command", help: "The command to run, after --, e.g. -- felica balance --device usb.", repeatable: true)],
            options: [
                SimOptions.card.spec,
                SimOptions.noCard,
                timingOption.spec,
                faultOption.spec,
                removeAfterOption.spec,
                SimOptions.taps.spec,
                SimOptions.saveWrites.spec,
                productOption.spec,
                kernelDriverOption.spec,
            ])
    }

    static let timingOption = SimOptions.timing("rf: take as long as a real reader and card (USB and air time; the card answers in half its PMm bound).")
    static let faultOption = Option(OptionSpec(
        "fault", value: "kind@n", help: "Inject a fault: corrupt@N, drop-ack@N, late@N[:MS], unplug@N, away@N[:MS] (repeatable).", repeatable: true)) { spec throws(UsageError) in
        do throws(FeliCaError) { return try RCS380Fault(parsing: spec) } catch { throw UsageError("option '--fault': \(error.reason)") }
    }
    static let removeAfterOption = Option.int(OptionSpec("remove-after", value: "n", help: "Take the card away after it has answered <n> packets."), in: 0...1_000_000)
    static let productOption = Option(OptionSpec(
        "product", value: "pid", help: "USB product ID: 06c1 (RC-S380/S, default) or 06c3 (RC-S380/P).", kind: .choice(["06c1", "06c3"])))
    static let kernelDriverOption = Option(OptionSpec(
        "kernel-driver", value: "state",
        help: "held: the kernel's port100 driver holds the reader and may not be detached; detachable: it holds it and may be.",
        kind: .choice(["held", "detachable"])))

    let card: String?
    let cardTiming: CardTiming
    let options: RCS380Emulator.Options
    let removeAfter: Int?
    let product: String
    let kernelDriver: String?
    let command: [String]

    let saveWrites: String?

    init(_ args: ParsedArguments) throws(UsageError) {
        card = try SimOptions.cardOrNone(args)
        saveWrites = try args.value(SimOptions.saveWrites)
        if saveWrites != nil && card == nil { throw UsageError("--save-writes needs a card") }
        let taps = try args.value(SimOptions.taps)
        let timing = SimOptions.cardTiming(try args.value(Self.timingOption))
        cardTiming = timing ?? .typical
        options = RCS380Emulator.Options(timing: timing != nil, faults: try args.values(Self.faultOption), taps: taps)
        removeAfter = try args.value(Self.removeAfterOption)
        if removeAfter != nil && card == nil { throw UsageError("--remove-after needs a card") }
        if taps != nil && card == nil { throw UsageError("--taps needs a card") }
        product = try args.value(Self.productOption) ?? "06c1"
        kernelDriver = try args.value(Self.kernelDriverOption)
        command = args.positionals
        guard !command.isEmpty else { throw UsageError("missing the command to run: felica-sim rcs380 --card suica -- felica poll --device usb") }
    }

    func run(_ console: Console) async throws -> Int32 {
        let virtual = try card.map { name throws(FeliCaError) in try VirtualCard.named(name, timing: cardTiming) }
        if let removeAfter { virtual?.removeAfter(exchanges: removeAfter) }
        var bridgeOptions: [String] = []
        if let kernelDriver {
            bridgeOptions += ["--kernel-driver", "port100"] + (kernelDriver == "detachable" ? ["--allow-detach"] : [])
        }
        let status = try await USBBridge.run(command, device: Self.device(product: product), emulator: RCS380Emulator(card: virtual, options: options),
                                             bridgeOptions: bridgeOptions, name: "rcs380", console: console)
        try SimOptions.save(virtual, to: saveWrites, console)
        return status
    }

    /// The RC-S380/S (06c1) or RC-S380/P (06c3) on the bus.
    static func device(product: String) -> EmulatedUSBDevice {
        EmulatedUSBDevice(vendor: RCS380Emulator.vendorID, product: product == "06c3" ? 0x06C3 : RCS380Emulator.productID, release: 0x0110,
                          outEndpoint: 0x02, inEndpoint: 0x81, maxPower: 0xFA,
                          manufacturer: "SONY", productName: product == "06c3" ? "RC-S380/P" : "RC-S380/S")
    }
}
