import FeliCa
import FeliCaCards
import FeliCaJSON
import FeliCaDevices

/// `felica poll`: who is on the reader.
struct PollCommand: CLICommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            name: "poll",
            abstract: "Poll for a card and show its IDm, PMm, IC and systems.",
            discussion: "Without --system-code the card is polled with the wildcard FFFF and its systems are listed with Request System Code.",
            options: CommonOptions.reader + [
                systemCodeOption.spec,
                CommonOptions.json,
                CommonOptions.redact,
            ])
    }

    static let systemCodeOption = Option.systemCode(OptionSpec("system-code", value: "hex", help: "Poll this system code (FF in a byte is a wildcard)."))

    let readerOptions: ReaderOptions
    let systemCode: SystemCode
    let json: Bool

    init(_ args: ParsedArguments) throws(UsageError) {
        readerOptions = try ReaderOptions(args)
        systemCode = try args.value(Self.systemCodeOption) ?? .wildcard
        json = args.flag(CommonOptions.json)
    }

    func run(_ console: Console) async throws -> Int32 {
        let code = systemCode
        let (target, systems, id) = try await CardContext.with(readerOptions, console: console) { session in
            guard let r = try await session.poll(systemCode: code, requestCode: .systemCode) else {
                throw try await Self.whyNoAnswer(session, code: code)
            }
            let target = Target(idm: r.idm, pmm: r.pmm, systemCode: r.systemCode)
            // A Lite or Lite-S says who issued it in its ID block (one read).
            let id = FeliCaLite.isLite(r.pmm) ? try await FeliCaLite.readID(using: session, from: target) : nil
            return (target, try await session.systemCodes(of: target), id)
        }
        if json {
            var o = JSONObject()
            o.append("idm", .string(target.idm.hex))
            o.append("pmm", .string(target.pmm.hex))
            o.append("systemCode", target.systemCode.map { .string($0.hex) } ?? .null)
            o.append("systems", .array(systems.map { .string($0.hex) }))
            o.append("systemInfo", .array(systems.map { JSONOut.system($0) }))
            o.append("ic", JSONOut.ic(target.pmm))
            if let id {
                o.append("idBlock", .object(["idd": .string(Hex.encode(id.idd)), "dfc": .string(id.dfcHex), "issuer": id.issuer.map { .string($0) } ?? .null]))
            }
            JSONOut.print(.object(o), console)
        } else {
            console.line("IDm      \(target.idm)")
            console.line("PMm      \(target.pmm)")
            console.line("IC       \(target.pmm.ic)")
            if let sc = target.systemCode { console.line("System   \(sc)" + (SystemDirectory.displayName(of: sc).map { " (\($0))" } ?? "")) }
            console.line("Systems  " + systems.map { s in s.description + (SystemDirectory.displayName(of: s).map { " (\($0))" } ?? "") }.joined(separator: ", "))
            if let id { console.line("ID block IDd \(Hex.encode(id.idd))  DFC \(id.dfcHex)" + (id.issuer.map { " (\($0))" } ?? "")) }
        }
        return ExitCode.ok
    }

    /// Nothing answered a Polling for `code`: no card at all (exit 69), or a card that
    /// lacks that system (exit 1, naming the systems it has), told apart by a wildcard Polling.
    static func whyNoAnswer(_ session: CardSession, code: SystemCode) async throws -> any Error {
        let name = session.transport.name
        guard code != .wildcard, let any = try await session.poll(systemCode: .wildcard, requestCode: .systemCode) else {
            return FeliCaError(.noCard, "no card answered Polling\(code == .wildcard ? "" : " for system \(code)") on \(name): place a card on the reader")
        }
        let target = Target(idm: any.idm, pmm: any.pmm, systemCode: any.systemCode)
        let systems = try await session.systemCodes(of: target)
        let list = systems.map { s in s.description + (SystemDirectory.displayName(of: s).map { " (\($0))" } ?? "") }.joined(separator: ", ")
        return CLIError("a card is on \(name) (IDm \(target.idm)), but it has no system \(code) matching the Polling: its systems are \(list)")
    }
}
