import FeliCa
import FeliCaJSON

extension CardImage {
    /// Reads everything a card shows without keys into an image: every system, its areas
    /// and services, key versions and sizes, and the blocks of services readable without a
    /// key. `progress` receives one line per system.
    public static func read(using session: CardSession, discover: Bool = false, progress: (@Sendable (String) -> Void)? = nil) async throws(FeliCaError) -> CardImage {
        let (image, error) = await readAllowingPartial(using: session, discover: discover, progress: progress)
        if let error { throw error }
        return image!
    }

    /// Like ``read(using:discover:progress:)``, but when the card fails part-way (pulled away, a
    /// reader error) it also returns the systems read completely before the failure, marked
    /// with a `partial` member that says what happened — never passed off as complete.
    /// `discover` finds services by a Request Service sweep (``sweepServices(_:_:progress:)``)
    /// even where the card answers Search Service Code; without it the sweep runs only where
    /// the card does not.
    public static func readAllowingPartial(using session: CardSession, discover: Bool = false,
                                           progress: (@Sendable (String) -> Void)? = nil) async -> (CardImage?, FeliCaError?) {
        var systems: [System] = []
        var listed = 0
        var pmm: PMm? = nil
        do throws(FeliCaError) {
            let image = try await readSystems(session, discover, progress) { system, count, cardPMm in
                systems.append(system)
                listed = count
                pmm = cardPMm
            }
            return (image, nil)
        } catch {
            guard !systems.isEmpty else { return (nil, error) }
            var image = imageOf(systems, pmm: pmm)
            image.extra["partial"] = .object([
                "error": .string(error.reason),
                "systemsRead": .int(systems.count),
                "systemsListed": .int(listed),
            ])
            return (image, error)
        }
    }

    private static func readSystems(_ session: CardSession, _ discover: Bool, _ progress: (@Sendable (String) -> Void)?,
                                    _ done: (System, Int, PMm) -> Void) async throws(FeliCaError) -> CardImage {
        let first = try await session.detect()
        let codes = try await session.systemCodes(of: first)
        var systems: [System] = []
        for code in codes {
            progress?("reading system \(code)")
            let target: Target
            if code == first.systemCode {
                target = first
            } else if code.isWildcard {
                // A code with an FF byte cannot be polled on its own.
                continue
            } else {
                guard let t = try await session.select(code) else {
                    throw FeliCaError(.cardGone, "the card listed system \(code) but did not answer Polling for it (card moved away?)")
                }
                target = t
            }
            let system: System
            if FeliCaLite.isLite(target.pmm), let earlier = systems.first(where: { $0.idm == target.idm }) {
                // A Lite-S formatted for NDEF answers 12FC with the IDm of 88B4: one memory, read once.
                system = System(code: code, idm: target.idm, pmm: earlier.pmm, services: [])
            } else if FeliCaLite.isLite(target.pmm) {
                system = try await readLite(code, target, cardPMm: first.pmm, session)
            } else {
                system = try await readSystem(code, target, cardPMm: first.pmm, session, discover: discover, progress: progress)
            }
            systems.append(system)
            done(system, codes.count, first.pmm)
        }
        if systems.isEmpty {
            systems.append(try await readSystem(first.systemCode ?? .wildcard, first, cardPMm: first.pmm, session, discover: discover, progress: progress))
        }
        var image = imageOf(systems, pmm: first.pmm)
        let limit = await session.cardReadLimit(for: first)
        if limit < (first.pmm.ic.maximumBlocksPerRead ?? ReadWithoutEncryptionCommand.frameBlockLimit) {
            image.maxBlocksPerRead = limit
        }
        return image
    }

    /// The image of `systems`, with what each system's reading noted gathered at the top
    /// (`notes`), as complete and partial dumps both give it.
    private static func imageOf(_ systems: [System], pmm: PMm?) -> CardImage {
        var image = CardImage(pmm: pmm, systems: systems)
        let notes = systems.flatMap { s in (s.extra["notes"]?.arrayValue ?? []).compactMap(\.stringValue) }
        for i in image.systems.indices { image.systems[i].extra["notes"] = nil }
        if !notes.isEmpty { image.extra["notes"] = .array(notes.map { .string($0) }) }
        return image
    }

    /// Runs an optional command: nil when the card does not answer it (or the reader will
    /// not forward it) while the card is still there; a card that left is an error.
    private static func optional<T>(_ session: CardSession, _ target: Target, _ body: () async throws(FeliCaError) -> T) async throws(FeliCaError) -> T? {
        do {
            return try await body()
        } catch where error.code == .timeout || error.code == .refused || error.code == .unsupported {
            guard try await session.select(target.systemCode ?? .wildcard) != nil else {
                throw FeliCaError(.cardGone, "the card left the reader during the dump (\(error.reason))")
            }
            return nil
        }
    }

    /// Reads a readable service of unknown size block by block, until the card says the
    /// block is out of range.
    private static func readToEnd(_ service: ServiceCode, _ target: Target, _ session: CardSession) async throws(FeliCaError) -> [[UInt8]] {
        var blocks: [[UInt8]] = []
        while blocks.count <= 0xFFFF {
            do {
                blocks += try await session.read(service: service, blocks: blocks.count..<(blocks.count + 1), from: target)
            } catch where error.code == .status {
                break
            }
        }
        return blocks
    }

    /// A FeliCa Lite or Lite-S: every block of its memory map through service 000B (it
    /// answers no Search Service Code), four at a time; a batch the card refuses is read
    /// block by block, and the blocks it refuses even alone (CK, the MACs) are left out.
    private static func readLite(_ code: SystemCode, _ target: Target, cardPMm: PMm, _ session: CardSession) async throws(FeliCaError) -> System {
        let numbers = FeliCaLite.blocks(of: target.pmm)
        var read: [Int: [UInt8]] = [:]
        let step = await session.readLimit(for: target)
        var start = 0
        while start < numbers.count {
            let batch = Array(numbers[start..<min(start + step, numbers.count)])
            do {
                let data = try await session.read([BlockRequest(service: FeliCaLite.readService, blocks: batch)], from: target)[0]
                for (n, d) in zip(batch, data) { read[n] = d }
            } catch where error.code == .status {
                for n in batch {
                    do {
                        read[n] = try await session.read(service: FeliCaLite.readService, blocks: n..<(n + 1), from: target)[0]
                    } catch where error.code == .status {}
                }
            }
            start += batch.count
        }
        var blocks: [[UInt8]] = []
        while let b = read[blocks.count] { blocks.append(b) }
        var service = Service(code: FeliCaLite.readService, blocks: blocks)
        for (n, d) in read where n >= blocks.count { service.blocksAt[n] = d }
        return System(code: code, idm: target.idm, pmm: target.pmm == cardPMm ? nil : target.pmm, services: [service])
    }

    private static func readSystem(_ code: SystemCode, _ target: Target, cardPMm: PMm, _ session: CardSession,
                                   discover: Bool, progress: (@Sendable (String) -> Void)?) async throws(FeliCaError) -> System {
        var notes: [String] = []
        var nodes: [Node]
        var swept: [ServiceCode: UInt16]? = nil
        let searched = discover ? nil : try await optional(session, target, { () throws(FeliCaError) in try await session.nodes(of: target) })
        if let found = searched {
            nodes = found
        } else if let sweep = try await sweepServices(session, target, progress: progress) {
            nodes = sweep.services.map { .service($0.code) }
            swept = Dictionary(uniqueKeysWithValues: sweep.services.map { ($0.code, $0.keyVersion) })
            let why = discover ? "a sweep was asked for" : "the card did not answer Search Service Code"
            var note = "system \(code): \(why), so its services were found by Request Service over all \(sweepCandidates.count) service codes (\(sweep.exchanges) exchanges, \(sweep.batch) codes each at the end); its areas are not listed"
            if !sweep.refused.isEmpty { note += "; the card answered no Request Service for \(sweep.refused.map(\.description).joined(separator: ", "))" }
            notes.append(note)
        } else {
            nodes = []
            notes.append("system \(code): the card answered neither Search Service Code nor Request Service, so its services could not be listed")
        }
        var areas: [Area] = []
        var codes: [ServiceCode] = []
        for n in nodes {
            switch n {
            case .area(let c, let end): areas.append(Area(code: c, end: end))
            case .service(let c): codes.append(c)
            }
        }
        let versions: [UInt16?]
        if let swept {
            versions = codes.map { swept[$0] }
        } else {
            versions = codes.isEmpty ? [] : try await session.keyVersions(of: codes, in: target)
        }
        let counted = codes.isEmpty ? [] : try await optional(session, target) { () throws(FeliCaError) in try await session.blockCounts(of: codes, in: target) }
        var data: [[[UInt8]]] = []
        let readable: [Int]
        if let sizes = counted {
            readable = codes.indices.filter { codes[$0].isReadableWithoutKey && sizes[$0] > 0 }
            // The blocks to read are known now: move to a faster rate if they pay for it.
            try await session.useFastestBitRate(for: target, expectedBlocks: readable.reduce(0) { $0 + sizes[$1] })
            data = try await session.read(readable.map { BlockRequest(service: codes[$0], blocks: 0..<sizes[$0]) }, from: target)
        } else {
            notes.append("system \(code): the card did not answer Request Block Information, so services were read until their last block and key-protected services have no size")
            readable = codes.indices.filter { codes[$0].isReadableWithoutKey }
            for i in readable { data.append(try await readToEnd(codes[i], target, session)) }
        }
        let sizes = counted ?? codes.map { _ in 0 }
        // Services cards answer without the key their attribute asks for: try them, and keep
        // them as keyed when the card refuses.
        var despite: [Int: [[UInt8]]] = [:]
        for i in codes.indices where readDespiteAttribute.contains(codes[i]) {
            do throws(FeliCaError) {
                let blocks = counted == nil ? try await readToEnd(codes[i], target, session)
                    : try await session.read([BlockRequest(service: codes[i], blocks: 0..<max(sizes[i], 1))], from: target)[0]
                if !blocks.isEmpty { despite[i] = blocks }
            } catch where error.code == .status {}
        }
        var services: [Service] = []
        var next = 0
        for (i, c) in codes.enumerated() {
            let kv = versions[i]
            if c.isReadableWithoutKey {
                var blocks: [[UInt8]] = []
                if next < readable.count && readable[next] == i {
                    blocks = data[next]
                    next += 1
                }
                services.append(Service(code: c, blocks: blocks, keyVersion: kv == 0 ? nil : kv))
            } else if let blocks = despite[i] {
                services.append(Service(code: c, blocks: blocks, keyVersion: kv == 0 ? nil : kv, answersWithoutKey: true))
            } else {
                services.append(Service(code: c, keyVersion: kv ?? 0, blockCount: counted == nil ? nil : sizes[i]))
            }
        }
        var system = System(code: code, idm: target.idm, pmm: target.pmm == cardPMm ? nil : target.pmm, areas: areas, services: services)
        if !notes.isEmpty { system.extra["notes"] = .array(notes.map { .string($0) }) }
        return system
    }
}
