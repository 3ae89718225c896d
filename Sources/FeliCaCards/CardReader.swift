import FeliCa

/// Everything found on one card.
public struct CardReport: Hashable, Sendable {
    /// IDm and PMm of the card's first system (what Polling with the wildcard returns).
    public var idm: IDm
    /// PMm of the first system (IC type, response times).
    public var pmm: PMm
    /// Every system the card lists, in its order.
    public var systems: [SystemCode]
    /// One entry per purse found, in system order.
    public var purses: [Purse]
    /// What the reader chose not to probe, or could not, and why.
    public var notes: [String]
    /// Whether the common area was left unprobed by ``CardReader/skipsCommonArea(of:)``.
    public var skippedCommonArea = false
}

/// Finds and decodes every purse on a card by probing what the card holds, never by one
/// system code: wildcard Polling, Request System Code, then per system either a read
/// that doubles as the probe (transit layout) or one Request Service for every e-money
/// service at once (common area), then one batched read per system.
public struct CardReader: Sendable {
    /// How much to read.
    public enum Depth: Sendable {
        /// Balances, numbers and points (plus the newest transit record for the cross-check).
        case balance
        /// Everything: history, gate log, pending entry.
        case history
    }

    /// How much to read.
    public var depth: Depth
    /// Names for transit stations; nil prints codes.
    public var stations: StationTable?
    /// Probe the common area (0xFE00) of a card whose chip is a dedicated transit-card IC
    /// too. Off by default: see ``skipsCommonArea(of:)``.
    public var probeTransitCardCommonArea = false

    public init(depth: Depth, stations: StationTable? = nil) {
        self.depth = depth
        self.stations = stations
    }

    /// Polls for a card and reads it. Throws `.noCard` when none answers.
    public func read(_ session: CardSession) async throws(FeliCaError) -> CardReport {
        let first = try await session.detect()
        return try await read(session, first: first)
    }

    /// Reads a card already found by Polling (`first` = the wildcard answer).
    public func read(_ session: CardSession, first: Target) async throws(FeliCaError) -> CardReport {
        let systems = try await session.systemCodes(of: first)
        var report = CardReport(idm: first.idm, pmm: first.pmm, systems: systems, purses: [], notes: [])
        for system in systems {
            let isTransit = TransitIC.systemCodes.contains(system)
            let isCommon = system == .common
            guard isTransit || isCommon else {
                report.notes.append("system \(system) not probed: no known purse layout lives there")
                continue
            }
            if isCommon && skipsCommonArea(of: first) {
                report.notes.append("common area \(system) not probed: the chip is a transit-card IC (PMm IC \(Hex.encode([first.pmm.icCode]))), whose common area holds no e-money purse")
                report.skippedCommonArea = true
                continue
            }
            let target: Target
            if first.systemCode == system {
                target = first
            } else if let t = try await session.select(system) {
                target = t
            } else {
                report.notes.append("system \(system) is listed by the card but did not answer Polling")
                continue
            }
            if isTransit {
                if let p = try await readTransit(session, target, system) {
                    report.purses.append(p)
                } else {
                    report.notes.append("system \(system) holds none of the transit services (008B, 090F)")
                }
            } else {
                report.purses += try await readCommonArea(session, target, system)
            }
        }
        return report
    }

    /// Whether the common area is left unprobed: the card's first system is a transit
    /// system and its chip is one of the ICs made for transit cards (PMm IC 0x0B, 0x31,
    /// 0x36). Those cards are issued by transit operators; Edy, nanaco and WAON come on
    /// their own cards or on phones (mobile ICs), so probing would cost two exchanges
    /// (Polling, Request Service) on every transit card to find nothing. Set
    /// ``probeTransitCardCommonArea`` to probe anyway.
    public func skipsCommonArea(of first: Target) -> Bool {
        guard !probeTransitCardCommonArea, let own = first.systemCode, TransitIC.systemCodes.contains(own) else { return false }
        return [0x0B, 0x31, 0x36].contains(first.pmm.icCode)
    }

    // MARK: - Transit

    /// Reads the transit services in one batch; the read is the probe. When the card
    /// refuses it, Request Service tells which services are absent or need a key.
    func readTransit(_ session: CardSession, _ target: Target, _ system: SystemCode) async throws(FeliCaError) -> Purse? {
        var wanted: [(ServiceCode, String, Int)] = [(TransitIC.attributeService, "balance", 1)]
        switch depth {
        case .balance:
            wanted.append((TransitIC.historyService, "history", 1))
        case .history:
            wanted += [(TransitIC.historyService, "history", TransitIC.historyBlocks),
                       (TransitIC.gateLogService, "gate log", TransitIC.gateLogBlocks),
                       (TransitIC.pendingEntryService, "pending entry", TransitIC.pendingEntryBlocks)]
        }
        let got = try await readServices(session, target, wanted)
        // Neither the balance nor the history is on the card, readable or keyed: the
        // system code is transit-like but the layout is not there.
        let core = got.filter { $0.service == TransitIC.attributeService || $0.service == TransitIC.historyService }
        if core.allSatisfy({ if case .failure(let i) = $0.result, i.problem == .absent { true } else { false } }) {
            return nil
        }
        var purse = TransitIC.purse(system: system, attributes: got[0].blocks?.first, history: got[1].blocks,
                                    gateLog: got.count > 2 ? got[2].blocks : nil,
                                    pendingEntry: got.count > 3 ? got[3].blocks : nil,
                                    includeHistory: depth == .history, stations: stations)
        // The gate log and pending entry are extras some regional cards lack: their
        // absence is not worth a warning; a key on them still is.
        let optional: Set<ServiceCode> = [TransitIC.gateLogService, TransitIC.pendingEntryService]
        purse.issues = got.compactMap(\.issue).filter { !($0.problem == .absent && optional.contains($0.service)) } + purse.issues
        return purse
    }

    // MARK: - Common area

    /// The services of each e-money profile: (service, content, blocks to read, needed at balance depth).
    static let commonAreaProfiles: [(PurseProfile, ServiceCode, [(ServiceCode, String, Int, Bool)])] = [
        (.edy, Edy.balanceService, [(Edy.numberService, "number", 1, true), (Edy.balanceService, "balance", 1, true),
                                    (Edy.historyService, "history", Edy.historyBlocks, false)]),
        (.nanaco, Nanaco.balanceService, [(Nanaco.numberService, "number", 1, true), (Nanaco.balanceService, "balance", 1, true),
                                          (Nanaco.pointsService, "points", Nanaco.pointsBlocks, true),
                                          (Nanaco.historyService, "history", Nanaco.historyBlocks, false)]),
        (.waon, WAON.balanceService, [(WAON.numberService, "number", 1, true), (WAON.balanceService, "balance", 1, true),
                                      (WAON.pointsService, "points", 1, true), (WAON.historyService, "history", WAON.historyBlocks, false)]),
    ]

    /// One Request Service for the balance service of every e-money profile and its
    /// key-protected twins (few nodes: Request Service time grows with each node), then one
    /// batched read of every service of the profiles present, which is also the probe for
    /// those services.
    func readCommonArea(_ session: CardSession, _ target: Target, _ system: SystemCode) async throws(FeliCaError) -> [Purse] {
        let presence = try await probe(session, target, Self.commonAreaProfiles.map(\.1))
        var plans: [(PurseProfile, [(ServiceCode, String, Int)])] = []
        for (profile, balance, services) in Self.commonAreaProfiles {
            guard presence[balance] != nil else { continue }
            plans.append((profile, services.filter { depth == .history || $0.3 }.map { ($0.0, $0.1, $0.2) }))
        }
        let results = plans.isEmpty ? [] : try await readServices(session, target, plans.flatMap(\.1))
        var purses: [Purse] = []
        var k = 0
        for (profile, services) in plans {
            let mine = Array(results[k..<(k + services.count)])
            k += services.count
            func blocks(_ s: ServiceCode) -> [[UInt8]]? { mine.first { $0.service == s }?.blocks }
            var p: Purse
            switch profile {
            case .edy:
                p = Edy.purse(system: system, number: blocks(Edy.numberService)?.first, balance: blocks(Edy.balanceService)?.first,
                              history: blocks(Edy.historyService))
            case .nanaco:
                p = Nanaco.purse(system: system, number: blocks(Nanaco.numberService)?.first, balance: blocks(Nanaco.balanceService)?.first,
                                 points: blocks(Nanaco.pointsService), history: blocks(Nanaco.historyService))
            case .waon:
                p = WAON.purse(system: system, number: blocks(WAON.numberService)?.first, balance: blocks(WAON.balanceService)?.first,
                               points: blocks(WAON.pointsService)?.first, history: blocks(WAON.historyService))
            case .transitIC:
                continue
            }
            p.issues = mine.compactMap(\.issue) + p.issues
            purses.append(p)
        }
        return purses
    }

    // MARK: - Reading with probing

    /// What became of one wanted service.
    struct ServiceResult {
        var service: ServiceCode
        var result: Result<[[UInt8]], ServiceIssue>
        var blocks: [[UInt8]]? { if case .success(let b) = result { b } else { nil } }
        var issue: ServiceIssue? { if case .failure(let i) = result { i } else { nil } }
    }

    /// Presence of services: readable-without-key code → key version; a key-only twin
    /// (attribute bit 0 clear) is recorded under the readable code with `keyOnly`.
    struct Presence {
        var readable: [ServiceCode: UInt16] = [:]
        var keyOnly: [ServiceCode: UInt16] = [:]
        subscript(s: ServiceCode) -> UInt16? { readable[s] ?? keyOnly[s] }
    }

    /// Key-protected twins of a readable service: same number, the attribute with bit 0
    /// clear (same access, with key) and, for random and cyclic services, also bit 1 clear
    /// (read-write with key) — the two ways cards hide a layout's data behind a key.
    static func keyTwins(_ s: ServiceCode) -> [ServiceCode] {
        let a = ServiceCode(s.rawValue & ~1), b = ServiceCode(s.rawValue & ~3)
        return a == b ? [a] : [a, b]
    }

    /// One Request Service (32 nodes per exchange) for the services and their twins;
    /// second twins are left out when they would cost another exchange.
    func probe(_ session: CardSession, _ target: Target, _ services: [ServiceCode]) async throws(FeliCaError) -> Presence {
        var twins = services.map { Array(Self.keyTwins($0).prefix(1)) }
        if services.count + services.reduce(0, { $0 + Self.keyTwins($1).count }) <= RequestServiceCommand.maximumNodes {
            twins = services.map(Self.keyTwins)
        }
        let nodes = services + twins.flatMap { $0 }
        let versions = try await session.keyVersions(of: nodes, in: target)
        var p = Presence()
        var k = services.count
        for (i, s) in services.enumerated() {
            let mine = versions[k..<(k + twins[i].count)]
            k += twins[i].count
            if let kv = versions[i] { p.readable[s] = kv } else if let kv = mine.compactMap({ $0 }).first { p.keyOnly[s] = kv }
        }
        return p
    }

    /// Reads the wanted services in one batch. Without `presence`, the read itself is the
    /// probe: when the card refuses it, Request Service sorts out which services are
    /// absent or need a key, and the rest are read again.
    func readServices(_ session: CardSession, _ target: Target, _ wanted: [(ServiceCode, String, Int)],
                      presence known: Presence? = nil) async throws(FeliCaError) -> [ServiceResult] {
        var presence = known
        if presence == nil {
            do throws(FeliCaError) {
                let blocks = try await session.read(wanted.map { BlockRequest(service: $0.0, blocks: 0..<$0.2) }, from: target)
                return zip(wanted, blocks).map { ServiceResult(service: $0.0.0, result: .success($0.1)) }
            } catch where error.code == .status {
                presence = try await probe(session, target, wanted.map(\.0))
            }
        }
        guard let presence else { return [] }
        var results: [ServiceResult] = wanted.map { w in
            if presence.readable[w.0] != nil { return ServiceResult(service: w.0, result: .success([])) }
            let problem: ServiceIssue.Problem = presence.keyOnly[w.0].map { .needsKey(keyVersion: $0) } ?? .absent
            return ServiceResult(service: w.0, result: .failure(ServiceIssue(service: w.0, content: w.1, problem: problem)))
        }
        let readable = wanted.indices.filter { presence.readable[wanted[$0].0] != nil }
        guard !readable.isEmpty else { return results }
        do throws(FeliCaError) {
            let blocks = try await session.read(readable.map { BlockRequest(service: wanted[$0].0, blocks: 0..<wanted[$0].2) }, from: target)
            for (k, i) in readable.enumerated() { results[i].result = .success(blocks[k]) }
        } catch where error.code == .status {
            // Some service refused the batch (a key after all, or fewer blocks than the
            // layout says): read each one alone so the others still show.
            for i in readable {
                results[i].result = await readAlone(session, target, wanted[i])
            }
        }
        return results
    }

    /// Reads one service; a block out of range ends the read at the blocks the card has.
    func readAlone(_ session: CardSession, _ target: Target, _ w: (ServiceCode, String, Int)) async -> Result<[[UInt8]], ServiceIssue> {
        do throws(FeliCaError) {
            return .success(try await session.read(service: w.0, blocks: 0..<w.2, from: target))
        } catch {
            guard error.code == .status, let sf = error.statusFlags else {
                return .failure(ServiceIssue(service: w.0, content: w.1, problem: .unreadable(error.reason)))
            }
            if sf.meansKeyRequired {
                return .failure(ServiceIssue(service: w.0, content: w.1, problem: .needsKey(keyVersion: nil)))
            }
            if sf.sf2 == 0xA8 && w.2 > 1 {
                var blocks: [[UInt8]] = []
                for b in 0..<w.2 {
                    guard let one = try? await session.read(service: w.0, blocks: b..<(b + 1), from: target) else { break }
                    blocks += one
                }
                if !blocks.isEmpty { return .success(blocks) }
            }
            return .failure(ServiceIssue(service: w.0, content: w.1, problem: .unreadable(error.reason)))
        }
    }
}
