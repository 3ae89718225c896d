import FeliCa
import FeliCaJSON
import FeliCaDiagnosis

/// `felica write`: blocks of one service (Write Without Encryption), confirmed by reading them back.
struct WriteCommand: CLICommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            name: "write",
            abstract: "Write blocks of one service (Write Without Encryption) and read them back to confirm.",
            discussion: """
                Give --block and --data in pairs (repeatable), or one --block with --data of 16·n bytes for n \
                consecutive blocks. A service that is read-only, needs a key or is absent is refused before anything \
                is sent. A write whose answer is lost is never sent again: the blocks are read back and the write \
                reported done or not done. On a FeliCa Lite or Lite-S, blocks are written through service 0009 one per \
                command and read back through 000B. --dry-run prints the frames without opening the reader. \
                Exit 0 when every block holds the data, 1 when not. See \(PackagedFiles.guide("writing.md")).
                """,
            options: CommonOptions.reader + [serviceOption.spec, systemOption.spec, blockOption.spec, dataOption.spec, dryRun, CommonOptions.json],
            required: ["service", "block", "data"])
    }

    static let serviceOption = Option.serviceCode(OptionSpec("service", value: "hex", help: "Service code to write, e.g. 0009 (FeliCa Lite) or 1008."))
    static let systemOption = Option.systemCode(OptionSpec("system", value: "hex", help: "System holding the service (default: the card's first system)."))
    static let blockOption = Option.int(OptionSpec("block", value: "n", help: "Block number (repeatable, paired with --data).", repeatable: true), in: 0...0xFFFF)
    static let dataOption = Option(OptionSpec("data", value: "hex", help: "32 hex digits (one block), or 32·n for n consecutive blocks (repeatable).", repeatable: true)) { s throws(UsageError) in
        guard let b = Hex.decode(s.filter { $0 != " " && $0 != ":" }), !b.isEmpty, b.count % 16 == 0 else {
            throw UsageError("option '--data': \"\(s)\" is not whole 16-byte blocks of hex (32 hex digits per block)")
        }
        return b
    }
    static let dryRun = OptionSpec.flag("dry-run", help: "Print the Write Without Encryption frames that would be sent, and send nothing.")

    let readerOptions: ReaderOptions
    let service: ServiceCode
    let system: SystemCode?
    let blocks: [(block: Int, data: [UInt8])]
    let dryRun: Bool
    let json: Bool

    init(_ args: ParsedArguments) throws(UsageError) {
        readerOptions = try ReaderOptions(args)
        service = try args.required(Self.serviceOption)
        system = try args.value(Self.systemOption)
        blocks = try Self.pairs(try args.values(Self.blockOption), try args.values(Self.dataOption))
        dryRun = args.flag(Self.dryRun)
        json = args.flag(CommonOptions.json)
    }

    /// The blocks and their data: pairs, or one start block with several blocks of data.
    static func pairs(_ numbers: [Int], _ data: [[UInt8]]) throws(UsageError) -> [(block: Int, data: [UInt8])] {
        var out: [(block: Int, data: [UInt8])] = []
        if numbers.count == 1 && data.count == 1 {
            for k in 0..<(data[0].count / 16) { out.append((numbers[0] + k, Array(data[0][(16 * k)..<(16 * k + 16)]))) }
        } else {
            guard numbers.count == data.count else {
                throw UsageError("\(numbers.count) --block and \(data.count) --data: give them in pairs, or one --block with --data of several blocks")
            }
            for (n, d) in zip(numbers, data) {
                guard d.count == 16 else { throw UsageError("option '--data' for block \(n): \(d.count) bytes; paired with --block, each --data is one block (32 hex digits)") }
                out.append((n, d))
            }
        }
        guard out.allSatisfy({ $0.block <= 0xFFFF }) else { throw UsageError("option '--block': the blocks run past 65535") }
        var seen = Set<Int>()
        for b in out where !seen.insert(b.block).inserted { throw UsageError("block \(b.block) is given twice") }
        return out
    }

    /// Why the service cannot be written, in words; nil when it can.
    static func refusal(_ service: ServiceCode) -> String? {
        service.attribute.writeRefusal.map { "service \(service) cannot be written without encryption: \($0); nothing was sent" }
    }

    func run(_ console: Console) async throws -> Int32 {
        if let why = Self.refusal(service) { throw FeliCaError(.status, why) }
        if dryRun { return try printFrames(console) }
        let (service, system, blocks) = (self.service, self.system, self.blocks)
        let (target, outcome) = try await CardContext.with(readerOptions, console: console) { session in
            var target = try await session.detect()
            if let system, system != target.systemCode {
                guard let t = try await session.select(system) else { throw try await PollCommand.whyNoAnswer(session, code: system) }
                target = t
            }
            let lite = target.pmm.ic.family == .lite || target.pmm.ic.family == .liteS
            if lite {
                guard service == 0x0009 else {
                    throw FeliCaError(.status, "a FeliCa Lite or Lite-S is written through service 0009 only (000B reads); service \(service) is not on it; nothing was sent")
                }
            } else {
                // Absent services are refused before any block is sent.
                guard let version = try? await session.keyVersions(of: [service], in: target).first, version != nil else {
                    throw FeliCaError(.status, "the card has no service \(service) in system \(target.systemCode?.description ?? "?") (Request Service answers it is absent); nothing was sent")
                }
            }
            let limit = await session.writeLimit(for: target)
            var outcomes: [WriteOutcome] = []
            var start = 0
            while start < blocks.count {
                let chunk = Array(blocks[start..<min(start + limit, blocks.count)])
                let outcome = try await session.writeConfirmed(service: service, blocks: chunk, readingThrough: lite ? 0x000B : nil, to: target)
                outcomes.append(outcome)
                start += chunk.count
                if !outcome.isStored { break }
            }
            return (target, outcomes)
        }
        let written = outcome.filter(\.isStored).count
        let failed = outcome.first { !$0.isStored }
        if json {
            var o = JSONObject()
            o.append("idm", .string(target.idm.hex))
            o.append("service", .string(service.hex))
            o.append("blocks", .array(blocks.map { .object(["block": .int($0.block), "data": .string(Hex.encode($0.data))]) }))
            o.append("stored", .bool(failed == nil))
            o.append("lostReplies", .int(outcome.filter { $0 == .storedDespiteLostReply || { if case .notStored = $0 { true } else { false } }($0) }.count))
            JSONOut.print(.object(o), console)
        } else {
            for o in outcome where o == .storedDespiteLostReply {
                console.diag("note: a write's answer was lost; reading back shows it was done (it was not sent again)")
            }
            if failed == nil { console.line("wrote \(blocks.count) block\(blocks.count == 1 ? "" : "s") of service \(service), read back and confirmed (IDm \(target.idm))") }
        }
        switch failed {
        case nil: return ExitCode.ok
        case .notStored(let b)?:
            throw FeliCaError(.ambiguousWrite, "the answer to the write of block\(b.count == 1 ? "" : "s") \(b.map(String.init).joined(separator: ",")) was lost and reading back shows the old data: the write was not done (\(written) earlier command\(written == 1 ? "" : "s") done); it was not sent again")
        case .differs(let b)?:
            throw FeliCaError(.status, "the card answered success, but block\(b.count == 1 ? "" : "s") \(b.map(String.init).joined(separator: ",")) read back differently")
        default: return ExitCode.failure
        }
    }

    /// `--dry-run`: the frames, one line each, with an IDm of zeros (no card was asked).
    private func printFrames(_ console: Console) throws -> Int32 {
        let idm = IDm(rawValue: 0)
        for b in blocks {
            let command = try WriteWithoutEncryptionCommand(idm: idm, services: [service], blocks: [try BlockListElement(serviceIndex: 0, block: b.block)], data: b.data)
            console.line(Hex.encode(command.encode()))
        }
        console.diag("dry run: \(blocks.count) frame\(blocks.count == 1 ? "" : "s") (IDm 0000000000000000 stands for the card's), nothing sent")
        return ExitCode.ok
    }
}
