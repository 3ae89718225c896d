import FeliCa

/// A system the reader left unprobed, and why.
public struct SkippedSystem: Hashable, Sendable, CustomStringConvertible {
    public var system: SystemCode
    /// Why, in a few words a user can act on.
    public var reason: String
    /// Whether the card listed it (false when the plan did not ask for the card's systems).
    public var listed: Bool

    public init(system: SystemCode, reason: String, listed: Bool) {
        self.system = system; self.reason = reason; self.listed = listed
    }

    public var description: String {
        (system == .common ? "common area \(system)" : "system \(system)") + " not probed: \(reason)"
    }
}

/// Everything found on one card.
public struct CardReport: Hashable, Sendable {
    /// IDm and PMm of the card's first system (what Polling with the wildcard returns).
    public var idm: IDm
    /// PMm of the first system (IC type, response times).
    public var pmm: PMm
    /// Every system the card lists, in its order; only the first when the plan did not
    /// ask (``systemsListed``).
    public var systems: [SystemCode]
    /// Whether ``systems`` is the card's own list (Request System Code, or Polling each
    /// known code when the card does not answer it).
    public var systemsListed = true
    /// One entry per purse found, in system order.
    public var purses: [Purse]
    /// Systems the reader chose not to probe, and why.
    public var skipped: [SkippedSystem] = []
    /// What the reader chose not to probe, or could not, and why.
    public var notes: [String]
    /// What the reader (the device, not the card) kept from being probed: commands it
    /// would not forward. Always worth showing, unlike ``notes``.
    public var readerLimits: [String] = []
    /// Whether the common area was left unprobed by ``CardReader/skipsCommonArea(of:)``.
    public var skippedCommonArea: Bool { skipped.contains { $0.system == .common } }

    public init(idm: IDm, pmm: PMm, systems: [SystemCode], purses: [Purse], notes: [String]) {
        self.idm = idm; self.pmm = pmm; self.systems = systems; self.purses = purses; self.notes = notes
    }

    mutating func skip(_ s: SkippedSystem) {
        skipped.append(s)
        notes.append(s.description)
    }
}

/// Finds and decodes every purse on a card by probing what the card holds, never by one
/// system code. Each profile's ``PurseLayout`` says what to read and how it decodes;
/// ``ReadPlanner`` turns what is known about the card into the fewest exchanges:
/// wildcard Polling, Request System Code unless the chip is a transit-card IC (whose
/// common area is skipped), per system either a read that doubles as the probe (a layout
/// in a system of its own) or one Request Service for every common-area layout at once,
/// then batched reads. A refused batch costs one Request Service on that batch's
/// services, and only what was not read is read again.
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
    /// Names for transit stations: the bundled table (``StationTable/bundled``) unless told
    /// otherwise; nil (asked for explicitly) leaves stations as codes.
    public var stations: StationTable?
    /// The day of the reading, which decides Octopus's balance offset: today unless the card
    /// is a dump that says when it was made.
    public var readingDate: ReadingDate = .today()
    /// Probe the common area (0xFE00) of a card whose chip is a dedicated transit-card IC
    /// too. Off by default: see ``skipsCommonArea(of:)``.
    public var probeTransitCardCommonArea = false
    /// Name the brand of a transit IC card (``Purse/issuer``). On a live card that costs one
    /// Request Service (``TransitIssuer/probeNodes``); from ``knownNodes`` it costs nothing.
    /// Nil (the default) names it at history depth only: a balance reading stays as short
    /// as it can be unless asked.
    public var namesIssuer: Bool?
    /// The nodes (areas and services) of each system, when known without asking: a card
    /// image lists them. The issuer is then told from them, with no exchange.
    public var knownNodes: [SystemCode: [NodeCode]]?
    /// The layouts looked for.
    public var layouts: [PurseLayout] = PurseLayout.all
    /// Move to the fastest bit rate the card and the reader share before reading, when the
    /// reading is long enough to pay for it (`CardSession.useFastestBitRate(for:expectedBlocks:)`
    /// with ``expectedBlocks``): a history reading does, a balance reading does not.
    public var usesFastestBitRate = true

    /// A reader at `depth`; `stations` names transit stations (the bundled table by
    /// default, `nil` for codes only).
    public init(depth: Depth, stations: StationTable? = .bundled) {
        self.depth = depth
        self.stations = stations
    }

    /// Blocks the longest reading of one layout takes at this depth: what moving to a faster
    /// bit rate is weighed against.
    public var expectedBlocks: Int {
        layouts.map { $0.reads(at: depth).reduce(0) { $0 + $1.blocks(at: depth) } }.max() ?? 0
    }

    var planner: ReadPlanner { ReadPlanner(depth: depth, probeTransitCardCommonArea: probeTransitCardCommonArea) }

    /// Polls for a card and reads it. Throws `.noCard` when none answers.
    public func read(_ session: CardSession) async throws(FeliCaError) -> CardReport {
        let first = try await session.detect()
        return try await read(session, first: first)
    }

    /// Reads a card already found by Polling (`first` = the wildcard answer).
    public func read(_ session: CardSession, first: Target) async throws(FeliCaError) -> CardReport {
        if usesFastestBitRate { try await session.useFastestBitRate(for: first, expectedBlocks: expectedBlocks) }
        var report = try await readSystems(session, first: first)
        let refused = await session.refusedCommands
        if !refused.isEmpty {
            let names = refused.sorted { $0.rawValue < $1.rawValue }.map(\.description).joined(separator: ", ")
            var note = "the reader would not forward \(names) to the card"
            if refused.contains(.polling) { note += "; the IDm and PMm are the reader's own (Get Data)" }
            if !report.systemsListed && first.systemCode == nil {
                note += "; the card's systems could not be listed, so only its first system was read, by the known services of each profile"
            } else if refused.contains(.polling) && report.systems.count > 1 {
                note += "; only the card's first system could be addressed"
            }
            if refused.contains(.requestService) { note += "; services were found by reading them" }
            report.readerLimits.append(note)
        }
        return report
    }

    private func readSystems(_ session: CardSession, first reported: Target) async throws(FeliCaError) -> CardReport {
        var first = reported
        var report = CardReport(idm: first.idm, pmm: first.pmm, systems: [], purses: [], notes: [])
        var systems: [SystemCode]
        if planner.needsSystemList(first) {
            do {
                systems = try await session.systemCodes(of: first)
            } catch where error.code == .refused && first.systemCode == nil {
                // Neither Request System Code nor Polling reaches the card: read the one
                // system the reader's IDm addresses, by every profile's known services.
                report.systemsListed = false
                try await readUnlisted(session, first, into: &report)
                return report
            }
            // The reader's own IDm (Polling refused) addresses the card's first system.
            if first.systemCode == nil, let own = systems.first { first.systemCode = own }
        } else {
            // A transit-card IC: read its first system; the list would only name the
            // common area, which is skipped anyway.
            systems = first.systemCode.map { [$0] } ?? []
            report.systemsListed = false
        }
        report.systems = systems
        var k = 0
        while k < systems.count {
            let system = systems[k]
            k += 1
            let own = layouts.filter { if case .ownSystem(let codes) = $0.placement { codes.contains(system) } else { false } }
            let isCommon = system == .common
            guard !own.isEmpty || isCommon else {
                report.skip(SkippedSystem(system: system, reason: "no known purse layout lives there", listed: true))
                continue
            }
            if isCommon && skipsCommonArea(of: first) {
                report.skip(SkippedSystem(system: system, reason: Self.transitICReason(first), listed: true))
                continue
            }
            let target: Target
            if first.systemCode == system {
                target = first
            } else if reported.systemCode == nil {
                report.skip(SkippedSystem(system: system, reason: "the reader refuses Polling, which is the only way to address it", listed: true))
                continue
            } else {
                target = try await selectListed(system, session, first: first)
            }
            if isCommon {
                report.purses += try await readCommonArea(session, target, system)
                continue
            }
            for layout in own {
                if let p = try await readOwnSystem(layout, session, target, system) {
                    report.purses.append(p)
                } else {
                    let codes = layout.services.filter { !$0.optional }.map(\.service.description).joined(separator: ", ")
                    report.notes.append("system \(system) holds none of the \(layout.profile.displayName) services (\(codes))")
                    if !report.systemsListed {
                        // The plan assumed the first system held the purse: ask for the rest after all.
                        systems += try await session.systemCodes(of: first).filter { !systems.contains($0) }
                        report.systems = systems
                        report.systemsListed = true
                    }
                }
            }
        }
        if !report.systemsListed && skipsCommonArea(of: first) {
            report.skip(SkippedSystem(system: .common, reason: Self.transitICReason(first), listed: false))
        }
        return report
    }

    static func transitICReason(_ first: Target) -> String {
        "the chip is a transit-card IC (PMm IC \(Hex.encode([first.pmm.icCode]))), whose common area holds no e-money purse"
    }

    /// Polls a system the card listed. A card answers Polling for every system it lists, so
    /// silence is a failure, not an answer: the card left, or the reader lost the reply (a
    /// late or garbled frame). Skipping the system would drop its purses from a report that
    /// looks complete. So poll once more, then fail, saying whether the card is still there
    /// at all (wildcard Polling). `felica dump` treats the same silence as an error too.
    func selectListed(_ system: SystemCode, _ session: CardSession, first: Target) async throws(FeliCaError) -> Target {
        for _ in 0..<2 {
            if let t = try await session.select(system) { return t }
        }
        guard try await session.poll(systemCode: .wildcard, requestCode: .none) != nil else {
            throw FeliCaError(.cardGone, "the card left the reader while system \(system) was being read (it no longer answers Polling): hold it still on the reader and run the command again")
        }
        throw FeliCaError(.timeout, "the card lists system \(system) but did not answer two Pollings for it, although it is still on the reader: hold it still and run the command again")
    }

    /// The card's first system when its code is unknown (the reader refuses Polling and
    /// Request System Code): each layout's services are read directly, and a layout counts
    /// as present only when one of its required services could be read. The common area
    /// is left alone when a transit purse was found on a transit-card IC, as the plan does.
    func readUnlisted(_ session: CardSession, _ first: Target, into report: inout CardReport) async throws(FeliCaError) {
        var purses: [Purse] = []
        var ownFound = false
        defer { report.purses = purses }
        for layout in layouts {
            let system: SystemCode
            switch layout.placement {
            case .ownSystem(let codes):
                // The one system read holds one layout of its own: once found, the others
                // are not looked for (each would cost a read).
                guard let code = codes.first, !ownFound else { continue }
                system = code
            case .commonArea:
                if purses.contains(where: { $0.profile == .transitIC }) && !probeTransitCardCommonArea
                    && ReadPlanner.transitCardICs.contains(first.pmm.icCode) {
                    if !report.skippedCommonArea {
                        report.skip(SkippedSystem(system: .common, reason: Self.transitICReason(first), listed: false))
                    }
                    continue
                }
                system = .common
            }
            let target = Target(idm: first.idm, pmm: first.pmm, systemCode: nil)
            let wanted = layout.reads(at: depth)
            let got = try await readServices(session, target, wanted)
            let found = wanted.indices.contains { !wanted[$0].optional && got[$0].issue == nil && got[$0].blocks != nil }
            if found {
                purses.append(purse(layout, wanted, got, system))
                if case .ownSystem = layout.placement { ownFound = true }
            }
        }
    }

    /// Whether the common area is left unprobed (``ReadPlanner/skipsCommonArea(of:)``).
    /// Set ``probeTransitCardCommonArea`` to probe anyway.
    public func skipsCommonArea(of first: Target) -> Bool {
        planner.skipsCommonArea(of: first)
    }

    // MARK: - A layout in a system of its own

    /// Reads the layout's services in batches; the first read is the probe. Nil when the
    /// system holds none of the layout's required services, readable or keyed.
    func readOwnSystem(_ layout: PurseLayout, _ session: CardSession, _ target: Target, _ system: SystemCode) async throws(FeliCaError) -> Purse? {
        let wanted = layout.reads(at: depth)
        let got = try await readServices(session, target, wanted)
        let required = wanted.indices.filter { !wanted[$0].optional }
        if required.allSatisfy({ got[$0].issue?.problem == .absent }) { return nil }
        var p = purse(layout, wanted, got, system)
        if layout.profile == .transitIC && system == TransitIssuer.system && (namesIssuer ?? (depth == .history)) {
            p.issuer = try await issuer(session, target, system)
        }
        return p
    }

    /// The brand of the transit card in `system`: from ``knownNodes`` when given, else from
    /// one Request Service over the brands' nodes. Nil when they name no single brand, or
    /// when the reader will not forward Request Service.
    func issuer(_ session: CardSession, _ target: Target, _ system: SystemCode) async throws(FeliCaError) -> String? {
        if let nodes = knownNodes?[system] { return TransitIssuer.brand(nodes: nodes) }
        guard await !session.refusedCommands.contains(.requestService) else { return nil }
        do {
            return TransitIssuer.brand(answers: try await session.keyVersions(of: TransitIssuer.probeNodes, in: target))
        } catch where error.code == .refused {
            return nil
        }
    }

    /// Decodes what was read; issues of the services come first. An optional service's
    /// absence is not worth an issue, a key on it still is.
    func purse(_ layout: PurseLayout, _ wanted: [ServiceRead], _ got: [ServiceOutcome], _ system: SystemCode) -> Purse {
        var blocks = ServiceBlocks()
        for (w, g) in zip(wanted, got) { blocks.blocks[w.service] = g.blocks }
        var p = layout.decode(blocks, PurseLayout.DecodeContext(system: system, depth: depth, stations: stations, readingDate: readingDate))
        let issues = zip(wanted, got).compactMap { w, g in g.issue.flatMap { w.optional && $0.problem == .absent ? nil : $0 } }
        p.issues = issues + p.issues
        return p
    }

    // MARK: - Common area

    /// One Request Service for the presence service of every common-area layout and its
    /// key-protected twins (few nodes: Request Service time grows with each node), then one
    /// batched read of every service of the layouts present, which is also the probe for
    /// those services.
    func readCommonArea(_ session: CardSession, _ target: Target, _ system: SystemCode) async throws(FeliCaError) -> [Purse] {
        let candidates = layouts.filter { $0.placement == .commonArea }
        guard !candidates.isEmpty else { return [] }
        let present: [PurseLayout]
        do {
            let untwinned = Set(candidates.filter { !$0.keyedTwinMeansPresent }.map(\.presence))
            let presence = try await probe(session, target, candidates.map(\.presence), withoutTwins: untwinned)
            present = candidates.filter { presence[$0.presence] != nil }
        } catch where error.code == .refused {
            // The reader will not forward Request Service: the reads are the probe, and a
            // layout none of whose required services could be read is not there.
            let wanted = candidates.map { $0.reads(at: depth) }
            let results = try await readServices(session, target, wanted.flatMap { $0 })
            var purses: [Purse] = []
            var k = 0
            for (layout, services) in zip(candidates, wanted) {
                let mine = Array(results[k..<(k + services.count)])
                k += services.count
                if services.indices.contains(where: { !services[$0].optional && mine[$0].issue == nil && mine[$0].blocks != nil }) {
                    purses.append(purse(layout, services, mine, system))
                }
            }
            return purses
        }
        let wanted = present.map { $0.reads(at: depth) }
        let results = try await readServices(session, target, wanted.flatMap { $0 })
        var purses: [Purse] = []
        var k = 0
        for (layout, services) in zip(present, wanted) {
            purses.append(purse(layout, services, Array(results[k..<(k + services.count)]), system))
            k += services.count
        }
        return purses
    }

    // MARK: - Reading with probing

    /// What became of one wanted service: the blocks read (nil when none could be) and,
    /// when it could not be read in full, why.
    struct ServiceOutcome {
        var blocks: [[UInt8]]?
        var issue: ServiceIssue?
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
    /// Services in `withoutTwins` are asked about alone: their layouts are not named by a
    /// key-protected twin (``PurseLayout/keyedTwinMeansPresent``).
    func probe(_ session: CardSession, _ target: Target, _ services: [ServiceCode],
               withoutTwins: Set<ServiceCode> = []) async throws(FeliCaError) -> Presence {
        func all(_ s: ServiceCode) -> [ServiceCode] { withoutTwins.contains(s) ? [] : Self.keyTwins(s) }
        var twins = services.map { Array(all($0).prefix(1)) }
        if services.count + services.reduce(0, { $0 + all($1).count }) <= RequestServiceCommand.maximumNodes {
            twins = services.map(all)
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

    /// Reads the wanted services, as few commands as the card's limit allows. Without
    /// Request Service first, the read is the probe: when the card refuses a batch,
    /// Request Service asks about that batch's services only (those not asked about
    /// before); the services the card lacks or keeps behind a key are dropped, and what
    /// was not read yet is cut into batches again. Blocks already read are kept and never
    /// read again. When the card refuses a batch of services it says it holds (a key after
    /// all, fewer blocks than the layout), each service's share of the batch is read alone.
    func readServices(_ session: CardSession, _ target: Target, _ wanted: [ServiceRead]) async throws(FeliCaError) -> [ServiceOutcome] {
        var got: [[[UInt8]]] = wanted.map { _ in [] }
        var issues: [ServiceIssue?] = wanted.map { _ in nil }
        var asked: Set<ServiceCode> = []
        var pending = ReadPlanner.elements(wanted.map { ($0.service, $0.blocks(at: depth)) })
        while !pending.isEmpty {
            let n = ReadPlanner.nextBatch(pending, limit: await session.readLimit(for: target))
            let batch = Array(pending.prefix(n))
            let shares = Self.shares(of: batch)
            do throws(FeliCaError) {
                guard let blocks = try await session.readCommand(shares.map { BlockRequest(service: wanted[$0.want].service, blocks: $0.blocks) },
                                                                from: target) else { continue }  // a smaller limit learned: cut again
                for (share, b) in zip(shares, blocks) { got[share.want] += b }
                pending.removeFirst(n)
                continue
            } catch where error.code == .status {}
            let unasked = Self.unique(shares.map { wanted[$0.want].service }).filter { !asked.contains($0) }
            // A reader that will not forward Request Service leaves reading each share alone.
            let refusesProbe = await session.refusedCommands.contains(.requestService)
            if !unasked.isEmpty && !refusesProbe {
                var presence: Presence?
                do {
                    presence = try await probe(session, target, unasked)
                } catch where error.code == .refused {
                    // The reader will not forward Request Service: each share is read alone
                    // below, rather than the refused batch sent again to learn the same.
                }
                if let presence {
                    asked.formUnion(unasked)
                    let before = pending.count
                    for i in wanted.indices where unasked.contains(wanted[i].service) && presence.readable[wanted[i].service] == nil {
                        let problem: ServiceIssue.Problem = presence.keyOnly[wanted[i].service].map { .needsKey(keyVersion: $0) } ?? .absent
                        issues[i] = ServiceIssue(service: wanted[i].service, content: wanted[i].content, problem: problem)
                        pending.removeAll { $0.want == i }
                    }
                    if pending.count != before { continue }
                }
            }
            for share in shares {
                let outcome = try await readAlone(session, target, wanted[share.want], share.blocks, continuing: !got[share.want].isEmpty)
                got[share.want] += outcome.blocks
                if let issue = outcome.issue { issues[share.want] = issue }
                if outcome.ended || outcome.issue != nil { pending.removeAll { $0.want == share.want } }
            }
            pending.removeAll { batch.contains($0) }
        }
        return wanted.indices.map { i in
            ServiceOutcome(blocks: got[i].isEmpty && issues[i] != nil ? nil : got[i], issue: issues[i])
        }
    }

    /// The batch's blocks grouped by wanted service, in order.
    static func shares(of batch: [ReadPlanner.Element]) -> [(want: Int, blocks: [Int])] {
        var out: [(want: Int, blocks: [Int])] = []
        for e in batch {
            if let k = out.firstIndex(where: { $0.want == e.want }) { out[k].blocks.append(e.block) } else { out.append((e.want, [e.block])) }
        }
        return out
    }

    static func unique(_ codes: [ServiceCode]) -> [ServiceCode] {
        var seen: Set<ServiceCode> = []
        return codes.filter { seen.insert($0).inserted }
    }

    /// Reads one service's share of a refused batch; a block out of range ends the service
    /// at the blocks the card has (`ended`). The card's refusals (status flags) become the
    /// service's issue; anything else — the card leaving, a reader error — is thrown, as
    /// everywhere else in the read: kept as an issue it would give a report with the
    /// service cut short and the command would succeed.
    func readAlone(_ session: CardSession, _ target: Target, _ w: ServiceRead, _ blocks: [Int],
                   continuing: Bool) async throws(FeliCaError) -> (blocks: [[UInt8]], issue: ServiceIssue?, ended: Bool) {
        func issue(_ p: ServiceIssue.Problem) -> ServiceIssue { ServiceIssue(service: w.service, content: w.content, problem: p) }
        do throws(FeliCaError) {
            return (try await session.read([BlockRequest(service: w.service, blocks: blocks)], from: target)[0], nil, false)
        } catch {
            guard error.code == .status else { throw error }
            guard let sf = error.statusFlags else { return ([], issue(.unreadable(error.reason)), true) }
            if sf.meansKeyRequired { return ([], issue(.needsKey(keyVersion: nil)), true) }
            if sf.sf2 == 0xA8 {
                var read: [[UInt8]] = []
                for b in blocks {
                    do throws(FeliCaError) {
                        read += try await session.read(service: w.service, blocks: b..<(b + 1), from: target)
                    } catch where error.code == .status {
                        break  // past the card's last block
                    }
                }
                if !read.isEmpty || continuing { return (read, nil, true) }
            }
            return ([], issue(.unreadable(error.reason)), true)
        }
    }
}
