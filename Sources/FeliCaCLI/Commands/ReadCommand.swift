import FeliCa
import FeliCaJSON

/// `felica read`: blocks of one service.
struct ReadCommand: CLICommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            name: "read",
            abstract: "Read blocks of one service (Read Without Encryption).",
            options: CommonOptions.reader + [
                serviceOption.spec,
                systemOption.spec,
                blocksOption.spec,
                CommonOptions.json,
            ],
            required: ["service"])
    }

    static let serviceOption = Option.serviceCode(OptionSpec("service", value: "hex", help: "Service code, e.g. 090f."))
    static let systemOption = Option.systemCode(OptionSpec("system", value: "hex", help: "System holding the service (default: the card's first system)."))
    static let blocksOption = Option(OptionSpec("blocks", value: "range", help: "Blocks to read: 0-11, 3, or 0,2,5-7 (default: all the service holds).")) { s throws(UsageError) in
        try parseBlocks(s)
    }

    let readerOptions: ReaderOptions
    let service: ServiceCode
    let system: SystemCode?
    let blocks: [Int]?
    let json: Bool

    init(_ args: ParsedArguments) throws(UsageError) {
        readerOptions = try ReaderOptions(args)
        service = try args.required(Self.serviceOption)
        system = try args.value(Self.systemOption)
        blocks = try args.value(Self.blocksOption)
        json = args.flag(CommonOptions.json)
    }

    /// `0-11`, `3`, `0,2,5-7`.
    static func parseBlocks(_ s: String) throws(UsageError) -> [Int] {
        var out: [Int] = []
        for part in s.split(separator: ",", omittingEmptySubsequences: false) {
            let ends = part.split(separator: "-", omittingEmptySubsequences: false)
            guard (1...2).contains(ends.count), let lo = Int(ends[0]), let hi = Int(ends.last!), lo >= 0, hi <= 0xFFFF else {
                throw UsageError("option '--blocks': \"\(part)\" is not a block number or range like 0-11")
            }
            guard hi >= lo else { throw UsageError("option '--blocks': the range \"\(part)\" runs backwards, so it holds no block; write \(hi)-\(lo)") }
            out += Array(lo...hi)
        }
        guard out.count <= 4096 else { throw UsageError("option '--blocks': \(out.count) blocks is more than 4096") }
        return out
    }

    func run(_ console: Console) async throws -> Int32 {
        let (service, system, wanted) = (self.service, self.system, self.blocks)
        let (target, data, numbers) = try await CardContext.with(readerOptions, console: console) { session in
            var target = try await session.detect()
            if let system, system != target.systemCode {
                // A card that lacks the system is no missing card (exit 1, not 69): it says which it has.
                guard let t = try await session.select(system) else { throw try await PollCommand.whyNoAnswer(session, code: system) }
                target = t
            }
            var numbers = wanted
            if numbers == nil {
                let size = try await session.blockCounts(of: [service], in: target)[0]
                guard size != 0xFFFF else {
                    throw FeliCaError(.status, "the card has no service \(service) in system \(target.systemCode?.description ?? "?")")
                }
                numbers = Array(0..<size)
            }
            let data = try await session.read([BlockRequest(service: service, blocks: numbers!)], from: target)[0]
            return (target, data, numbers!)
        }
        if json {
            var o = JSONObject()
            o.append("idm", .string(target.idm.hex))
            o.append("system", target.systemCode.map { .string($0.hex) } ?? .null)
            o.append("service", .string(service.hex))
            o.append("blocks", .array(zip(numbers, data).map { .object(["block": .int($0), "data": .string(Hex.encode($1))]) }))
            JSONOut.print(.object(o), console)
        } else {
            for (n, d) in zip(numbers, data) {
                console.line(DumpCommand.pad(String(n), 6) + DumpCommand.hexGroups(d) + "  " + DumpCommand.printable(d))
            }
        }
        return ExitCode.ok
    }
}
