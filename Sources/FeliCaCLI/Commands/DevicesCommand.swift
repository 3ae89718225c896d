import FeliCa
import FeliCaCards
import FeliCaJSON
import FeliCaSimulation
import FeliCaDevices
import FeliCaDiagnosis

/// `felica devices`: every reader from every stack, and the built-in virtual cards.
struct DevicesCommand: CLICommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            name: "devices",
            abstract: "List readers (libnfc, PC/SC, USB) and built-in virtual cards, with the --device string for each.",
            discussion: """
                Known USB readers that no stack can use right now (a kernel driver holds them, no permission, \
                an unsupported model) are listed too, with what is in the way; `felica doctor` names the fix.
                """,
            options: [
                CommonOptions.json,
                DoctorCommand.rootOption.spec,
            ])
    }

    let json: Bool
    let root: String

    init(_ args: ParsedArguments) throws(UsageError) {
        json = args.flag(CommonOptions.json)
        root = try args.value(DoctorCommand.rootOption) ?? "/"
    }

    func run(_ console: Console) async throws -> Int32 {
        let readers = await Device.list()
        let blocked = Self.blockedReaders(root: root, listed: readers)
        let rows = readers + blocked + DeviceListing.virtualCards
        if json {
            JSONOut.print(.array(rows.map { r in
                var o: JSONObject = ["stack": .string(r.stack), "name": .string(r.name), "device": .string(r.device), "state": .string(ErrorHints.state(r.availability))]
                // A built-in card's systems, with what the public lists say of each.
                if case .virtual(.builtIn(let card), _)? = r.spec?.kind, let image = SampleCards.image(named: card) {
                    o.append("systems", .array(image.systems.map { JSONOut.system($0.code) }))
                }
                return .object(o)
            }), console)
            return ExitCode.ok
        }
        let header = ("STACK", "NAME", "DEVICE", "STATE")
        let table = [header] + rows.map { ($0.stack, $0.name, $0.device, ErrorHints.state($0.availability)) }
        let w0 = table.map(\.0.count).max()!, w1 = table.map(\.1.count).max()!, w2 = table.map(\.2.count).max()!
        for r in table {
            console.line(DumpCommand.pad(r.0, w0 + 2) + DumpCommand.pad(r.1, w1 + 2) + DumpCommand.pad(r.2, w2 + 2) + r.3)
        }
        if readers.isEmpty {
            console.diag("no reader found; `felica doctor` explains why. The virtual cards work without hardware.")
        }
        return ExitCode.ok
    }

    /// Readers on USB that the stacks cannot list because something is in the way, from
    /// the same diagnosis as `felica doctor`; those a stack listed anyway are left out.
    static func blockedReaders(root: String, listed: [DeviceListing]) -> [DeviceListing] {
        let diagnosis = Diagnosis(HostSnapshot.read(HostFiles(root: root)))
        return diagnosis.readers.compactMap { r in
            guard !r.blockers.isEmpty, !listed.contains(where: { $0.spec != nil && $0.spec == r.device }) else { return nil }
            var stack = "usb"
            if case .libnfc = r.route { stack = "libnfc" }
            if case .pcsc = r.route { stack = "pcsc" }
            return DeviceListing(stack: stack, name: "\(r.model.name) (\(r.model.id))", spec: r.device,
                                 availability: .blocked(reasons: r.blockers))
        }
    }
}
