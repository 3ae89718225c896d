import FeliCa
import FeliCaSimulation
import Foundation

#if canImport(Glibc)
import Glibc
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
                --device usb. Needs umockdev, gir1.2-umockdev-1.0 and python3-gi (scripts/bootstrap.sh).
                Faults hit the N-th packet handed to the card, once: corrupt@N (response frame with a bad \
                checksum), late@N[:MS] (response MS ms late, default 1000), unplug@N (the reader leaves \
                the bus mid-command). The exit status is the command's.
                """,
            arguments: [ArgumentSpec("command", help: "The command to run, after --, e.g. -- felica balance --device usb.", repeatable: true)],
            options: [
                SimOptions.card.spec,
                SimOptions.noCard,
                timingOption.spec,
                faultOption.spec,
                removeAfterOption.spec,
                productOption.spec,
                kernelDriverOption.spec,
            ])
    }

    static let timingOption = SimOptions.timing("rf: take as long as a real reader and card (USB, air and PMm time).")
    static let faultOption = Option(OptionSpec(
        "fault", value: "kind@n", help: "Inject a fault: corrupt@N, late@N[:MS], unplug@N (repeatable).", repeatable: true)) { spec throws(UsageError) in
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
    let options: RCS380Emulator.Options
    let removeAfter: Int?
    let product: String
    let kernelDriver: String?
    let command: [String]

    init(_ args: ParsedArguments) throws(UsageError) {
        card = try SimOptions.cardOrNone(args)
        options = RCS380Emulator.Options(timing: try args.value(Self.timingOption) == "rf", faults: try args.values(Self.faultOption))
        removeAfter = try args.value(Self.removeAfterOption)
        if removeAfter != nil && card == nil { throw UsageError("--remove-after needs a card") }
        product = try args.value(Self.productOption) ?? "06c1"
        kernelDriver = try args.value(Self.kernelDriverOption)
        command = args.positionals
        guard !command.isEmpty else { throw UsageError("missing the command to run: felica-sim rcs380 --card suica -- felica poll --device usb") }
    }

    func run(_ console: Console) async throws -> Int32 {
        let virtual = try card.map { name throws(FeliCaError) in try VirtualCard.named(name) }
        if let removeAfter { virtual?.removeAfter(exchanges: removeAfter) }
        guard let bridge = Self.bridgeScript() else {
            throw CLIError("felica-sim rcs380: the USB bridge script (rcs380-bridge.py) is missing from the build's resources; rebuild, or set FELICA_RCS380_BRIDGE to its path", exitCode: ExitCode.unavailable)
        }
        var pair: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0 else {
            throw CLIError("felica-sim rcs380: cannot create a socket pair: \(String(cString: strerror(errno)))")
        }
        var argv = ["umockdev-wrapper", "/usr/bin/python3", bridge, "--fd", "3", "--product", product]
        if let kernelDriver {
            argv += ["--kernel-driver", "port100"] + (kernelDriver == "detachable" ? ["--allow-detach"] : [])
        }
        argv += ["--"] + command
        let pid: pid_t
        do {
            pid = try ChildProcess.spawn(argv, passing: pair[1], as: 3)
        } catch {
            close(pair[0]); close(pair[1])
            throw error
        }
        close(pair[1])
        let server = RCS380Server(socket: pair[0], card: virtual, options: options)
        let serving = Thread { server.serve() }
        serving.name = "felica-sim rcs380"
        serving.start()
        let status = await ChildProcess.wait(pid)
        if status == 127 {
            console.diag("felica-sim rcs380: could not start the bridge (needs umockdev-wrapper and /usr/bin/python3 with gi: sudo apt-get install umockdev gir1.2-umockdev-1.0 python3-gi)")
        }
        return status
    }

    /// The bridge script: `$FELICA_RCS380_BRIDGE`, else the copy in the build's resources.
    static func bridgeScript() -> String? {
        if let path = getenv("FELICA_RCS380_BRIDGE").map({ String(cString: $0) }), !path.isEmpty { return path }
        return Bundle.module.path(forResource: "rcs380-bridge", ofType: "py")
    }
}

/// Starting and reaping a child process with one extra descriptor handed down.
enum ChildProcess {
    /// Starts `argv` (looked up on PATH) with `fd` as descriptor `target` and the rest of
    /// this process's environment and standard streams.
    static func spawn(_ argv: [String], passing fd: Int32, as target: Int32) throws(CLIError) -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, fd, target)
        var cArgs = argv.map { strdup($0) } + [nil]
        defer { for p in cArgs { free(p) } }
        var pid: pid_t = 0
        let rc = posix_spawnp(&pid, argv[0], &actions, nil, &cArgs, environ)
        guard rc == 0 else {
            throw CLIError("cannot start \(argv[0]): \(String(cString: strerror(rc)))", exitCode: ExitCode.unavailable)
        }
        return pid
    }

    /// Waits for `pid` on a thread of its own; returns its exit status (128 + signal when killed).
    static func wait(_ pid: pid_t) async -> Int32 {
        await withCheckedContinuation { (c: CheckedContinuation<Int32, Never>) in
            Thread.detachNewThread {
                var status: Int32 = 0
                while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
                let code = status & 0x7F == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
                c.resume(returning: code)
            }
        }
    }
}
