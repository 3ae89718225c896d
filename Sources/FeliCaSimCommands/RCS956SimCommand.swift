import FeliCa
import FeliCaReaderCodecs
import FeliCaDevices
import FeliCaEmulators
import FeliCaCLI
import FeliCaSimulation
import FeliCaCards

/// `felica-sim rcs956`: runs a command with an emulated Sony RC-S360 (RC-S956 chip) on its
/// USB bus, which libnfc's `pn53x_usb` driver finds and drives.
struct RCS956SimCommand: CLICommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            name: "rcs956",
            abstract: "Run a command with an emulated Sony RC-S360/RC-S370 (RC-S956 chip) on its USB bus, reached through the real libnfc.",
            discussion: """
                The command sees one USB device, Sony 054c:02e1 at bus 001 address 004 (umockdev fakes \
                the bus, sysfs and the device node; libusb and libnfc's pn53x_usb driver above it are \
                real). Use it as --device libnfc:pn53x_usb (the first such reader) or \
                libnfc:pn53x_usb:001:004. Needs umockdev, gir1.2-umockdev-1.0 and python3-gi \
                (the felica-sim package depends on them).
                Faults hit the N-th packet handed to the card, once: corrupt@N (response frame with a bad \
                checksum), drop-ack@N (no ACK frame), late@N[:MS] (response MS ms late, default 1000), \
                unplug@N (the reader leaves the bus mid-command), away@N[:MS] (it leaves the bus mid-command and \
                is plugged back in MS ms later, default 3000, powered up afresh at the next address, 001:005; what had \
                it open stays dead, so a host must open it again). The exit status is the command's.
                """,
            arguments: [ArgumentSpec("command", help: "The command to run, after --, e.g. -- felica balance --device libnfc:pn53x_usb.", repeatable: true)],
            options: [
                SimOptions.card.spec,
                SimOptions.noCard,
                RCS380SimCommand.timingOption.spec,
                faultOption.spec,
                PN532SimCommand.removeAfterOption.spec,
                SimOptions.taps.spec,
                SimOptions.saveWrites.spec,
            ])
    }

    /// The reader on the bus: libnfc's table gives its ids and endpoints (bulk OUT 0x04, IN
    /// 0x84, 64-byte packets). It has no string descriptors here, so libnfc names it from
    /// that table ("Sony / FeliCa S360 [PaSoRi]").
    static let device = EmulatedUSBDevice(vendor: 0x054C, product: 0x02E1, release: 0x0100, outEndpoint: 0x04, inEndpoint: 0x84, maxPower: 0x32)

    static let faultOption = Option(OptionSpec(
        "fault", value: "kind@n", help: "Inject a fault: corrupt@N, drop-ack@N, late@N[:MS], unplug@N, away@N[:MS] (repeatable).", repeatable: true)) { spec throws(UsageError) in
        do throws(FeliCaError) { return try PN532Fault(parsing: spec, usb: true) } catch { throw UsageError("option '--fault': \(error.reason)") }
    }

    let card: String?
    let timing: CardTiming?
    let faults: [PN532Fault]
    let removeAfter: Int?
    let taps: CardTaps?
    let command: [String]
    let saveWrites: String?

    init(_ args: ParsedArguments) throws(UsageError) {
        card = try SimOptions.cardOrNone(args)
        saveWrites = try args.value(SimOptions.saveWrites)
        if saveWrites != nil && card == nil { throw UsageError("--save-writes needs a card") }
        timing = SimOptions.cardTiming(try args.value(RCS380SimCommand.timingOption))
        faults = try args.values(Self.faultOption)
        removeAfter = try args.value(PN532SimCommand.removeAfterOption)
        if removeAfter != nil && card == nil { throw UsageError("--remove-after needs a card") }
        taps = try args.value(SimOptions.taps)
        if taps != nil && card == nil { throw UsageError("--taps needs a card") }
        command = args.positionals
        guard !command.isEmpty else { throw UsageError("missing the command to run: felica-sim rcs956 --card suica -- felica poll --device libnfc:pn53x_usb") }
    }

    func run(_ console: Console) async throws -> Int32 {
        let virtual = try card.map { name throws(FeliCaError) in try VirtualCard.named(name, timing: timing ?? .typical) }
        if let removeAfter { virtual?.removeAfter(exchanges: removeAfter) }
        let emulator = PN532Emulator(card: virtual, options: .init(chip: .rcs956, timing: timing != nil, faults: faults, taps: taps))
        let status = try await USBBridge.run(command, device: Self.device, emulator: emulator, name: "rcs956", console: console)
        try SimOptions.save(virtual, to: saveWrites, console)
        return status
    }
}
