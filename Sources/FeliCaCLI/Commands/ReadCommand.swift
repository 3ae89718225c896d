import FeliCa
import FeliCaJSON
import FeliCaSecurity

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
                macFlag,
                cardKeyOption.spec,
                CommonOptions.json,
            ],
            required: ["service"])
    }

    static let serviceOption = Option.serviceCode(OptionSpec("service", value: "hex", help: "Service code, e.g. 090f."))
    static let systemOption = Option.systemCode(OptionSpec("system", value: "hex", help: "System holding the service (default: the card's first system)."))
    static let blocksOption = Option(OptionSpec("blocks", value: "range", help: "Blocks to read: 0-11, 3, or 0,2,5-7 (default: all the service holds).")) { s throws(UsageError) in
        try parseBlocks(s)
    }

    static let macFlag = OptionSpec.flag("mac", help: "FeliCa Lite-S: read with MAC_A under a fresh challenge and check it (service 000B; key from --card-key, else 16 zero bytes).")
    static let cardKeyOption = Option(OptionSpec("card-key", value: "hex|@file", help: "With --mac: the card key, 32 hex digits or @FILE.")) { s throws(UsageError) in
        try VerifyCommand.parseKey(s)
    }

    let readerOptions: ReaderOptions
    let mac: Bool
    let cardKey: LiteCardKey?
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
        mac = args.flag(Self.macFlag)
        cardKey = try args.value(Self.cardKeyOption)
        if cardKey != nil && !mac { throw UsageError("--card-key goes with --mac") }
        if mac && service != 0x000B && service != 0x0009 { throw UsageError("--mac reads a FeliCa Lite-S, through service 000B (or 0009), not \(service)") }
    }

    /// Reads `numbers` with MAC_A, 3 blocks a command, each MAC_A checked.
    static func readWithMAC(_ numbers: [Int], key: LiteCardKey, session: CardSession, target: Target) async throws(FeliCaError) -> [[UInt8]] {
        guard target.pmm.ic.family == .liteS else {
            throw FeliCaError(.unsupported, "the card (IDm \(target.idm), \(target.pmm.ic)) is no FeliCa Lite-S; only a Lite-S reads with MAC_A")
        }
        let mac = try await LiteAuthentication.start(key: key, session: session, target: target)
        var out: [[UInt8]] = []
        var start = 0
        while start < numbers.count {
            let chunk = Array(numbers[start..<min(start + 3, numbers.count)])
            let (data, ok) = try await LiteAuthentication.readChecked(blocks: chunk, mac: mac, session: session, target: target)
            guard ok else {
                throw FeliCaError(.status, "the MAC_A of blocks \(chunk.map { Hex.digits($0, count: 2) }.joined(separator: ",")) does not match: the tag holds another card key, or the data was changed on the way")
            }
            out += data
            start += chunk.count
        }
        return out
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
        let (service, system, wanted, macKey) = (self.service, self.system, self.blocks, mac ? cardKey ?? .zero : nil)
        let (target, data, numbers) = try await CardContext.with(readerOptions, console: console) { session in
            var target = try await session.detect()
            if let system, system != target.systemCode {
                // A card that lacks the system is no missing card (exit 1, not 69): it says which it has.
                guard let t = try await session.select(system) else { throw try await PollCommand.whyNoAnswer(session, code: system) }
                target = t
            }
            var numbers = wanted
            if let macKey {
                let numbers = numbers ?? Array(0..<14)
                return (target, try await Self.readWithMAC(numbers, key: macKey, session: session, target: target), numbers)
            }
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
