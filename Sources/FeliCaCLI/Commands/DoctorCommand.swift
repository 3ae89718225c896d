import FeliCa
import FeliCaDevices
import FeliCaDiagnosis
import FeliCaJSON

/// `felica doctor`: checks the set-up for reading cards and names the fix for each problem.
struct DoctorCommand: CLICommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            name: "doctor",
            abstract: "Check the reader set-up (libraries, USB, kernel drivers, pcscd, permissions), poll each reader, and name each fix.",
            discussion: """
                Each check prints ok, warning or problem; a failing check is followed by the command or file \
                that fixes it. Exits 0 when at least one reader can poll, 69 otherwise. --json prints \
                {"checks": [{"check", "verdict", "summary", "fix"} ...], "readers": [...], "ready": true|false}.
                --root reads /sys, /proc, /dev, /etc, /run, /usr and /var under another directory: the tests \
                use it to run doctor on fake trees, and it diagnoses a copy of another machine's files.
                """,
            options: [
                devicesOption.spec,
                rootOption.spec,
                CommonOptions.json,
            ])
    }

    static let devicesOption = Option(OptionSpec(
        "device", short: "d", value: "device", help: "Poll this device instead of every reader found (repeatable).", repeatable: true),
        CommonOptions.parseDevice(option:))
    /// `--root DIR`, shared with `felica devices`.
    static let rootOption = Option(OptionSpec(
        "root", value: "dir", help: "Look for /sys, /proc, /dev, ... under <dir> instead of / (for tests).", kind: .directory)) { s throws(UsageError) in
        guard !s.isEmpty else { throw UsageError("option '--root' needs a directory") }
        // A root that is not there would read as a machine with nothing plugged in.
        guard HostFiles(root: "/").exists(s) else { throw UsageError("--root \(s): no such directory") }
        return s
    }

    /// The devices `--device` names, in order.
    let devices: [DeviceSpec]
    let root: String
    let json: Bool

    init(_ args: ParsedArguments) throws(UsageError) {
        devices = try args.values(Self.devicesOption)
        root = try args.value(Self.rootOption) ?? "/"
        json = args.flag(CommonOptions.json)
    }

    func run(_ console: Console) async throws -> Int32 {
        let report = await DoctorRun.run(root: root, devices: devices, console: console)
        if json {
            JSONOut.print(report.json(), console)
        } else {
            console.out(report.text(colour: Colour.enabled(fd: 1)))
        }
        return report.ready ? ExitCode.ok : ExitCode.unavailable
    }
}
