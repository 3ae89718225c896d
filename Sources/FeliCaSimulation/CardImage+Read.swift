import FeliCa
import FeliCaJSON

extension CardImage {
    /// Reads everything a card shows without keys into an image: every system, its areas
    /// and services, key versions and sizes, and the blocks of services readable without a
    /// key. `progress` receives one line per system.
    public static func read(using session: CardSession, progress: (@Sendable (String) -> Void)? = nil) async throws(FeliCaError) -> CardImage {
        let (image, error) = await readAllowingPartial(using: session, progress: progress)
        if let error { throw error }
        return image!
    }

    /// Like ``read(using:progress:)``, but when the card fails part-way (pulled away, a
    /// reader error) it also returns the systems read completely before the failure, marked
    /// with a `partial` member that says what happened — never passed off as complete.
    public static func readAllowingPartial(using session: CardSession, progress: (@Sendable (String) -> Void)? = nil) async -> (CardImage?, FeliCaError?) {
        var systems: [System] = []
        var listed = 0
        var pmm: PMm? = nil
        do throws(FeliCaError) {
            let image = try await readSystems(session, progress) { system, count, cardPMm in
                systems.append(system)
                listed = count
                pmm = cardPMm
            }
            return (image, nil)
        } catch {
            guard !systems.isEmpty else { return (nil, error) }
            var image = CardImage(pmm: pmm, systems: systems)
            image.extra["partial"] = .object([
                "error": .string(error.reason),
                "systemsRead": .int(systems.count),
                "systemsListed": .int(listed),
            ])
            return (image, error)
        }
    }

    private static func readSystems(_ session: CardSession, _ progress: (@Sendable (String) -> Void)?,
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
            let system = try await readSystem(code, target, cardPMm: first.pmm, session)
            systems.append(system)
            done(system, codes.count, first.pmm)
        }
        if systems.isEmpty {
            systems.append(try await readSystem(first.systemCode ?? .wildcard, first, cardPMm: first.pmm, session))
        }
        var image = CardImage(pmm: first.pmm, systems: systems)
        let limit = await session.cardReadLimit(for: first)
        if limit < (first.pmm.ic.maximumBlocksPerRead ?? ReadWithoutEncryptionCommand.frameBlockLimit) {
            image.maxBlocksPerRead = limit
        }
        return image
    }

    private static func readSystem(_ code: SystemCode, _ target: Target, cardPMm: PMm, _ session: CardSession) async throws(FeliCaError) -> System {
        let nodes = try await session.nodes(of: target)
        var areas: [Area] = []
        var codes: [ServiceCode] = []
        for n in nodes {
            switch n {
            case .area(let c, let end): areas.append(Area(code: c, end: end))
            case .service(let c): codes.append(c)
            }
        }
        let versions = codes.isEmpty ? [] : try await session.keyVersions(of: codes, in: target)
        let sizes = codes.isEmpty ? [] : try await session.blockCounts(of: codes, in: target)
        let readable = codes.indices.filter { codes[$0].isReadableWithoutKey && sizes[$0] > 0 }
        let data = try await session.read(readable.map { BlockRequest(service: codes[$0], blocks: 0..<sizes[$0]) }, from: target)
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
            } else {
                services.append(Service(code: c, keyVersion: kv ?? 0, blockCount: sizes[i]))
            }
        }
        return System(code: code, idm: target.idm, pmm: target.pmm == cardPMm ? nil : target.pmm, areas: areas, services: services)
    }
}
