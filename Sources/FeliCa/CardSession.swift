/// Talks to a card over any ``Transport``: polling, system and service enumeration,
/// batched reads, writes. Timeouts come from the card's PMm plus the transport's latency;
/// only commands that are safe to repeat are retried.
public actor CardSession {
    /// Tuning knobs; the defaults suit every reader the project knows.
    public struct Options: Sendable {
        /// Extra attempts for repeatable commands after a timeout or transmission error.
        public var retries: Int = 2
        /// Lower bound of any command timeout: some cards advertise values that are too short.
        public var timeoutFloor: Duration = .milliseconds(2)
        /// Time slots used when polling.
        public var timeSlot: TimeSlot = .one
        /// System codes tried one by one when a card does not answer Request System Code.
        public var fallbackSystemCodes: [SystemCode] = [
            0x0003, 0xFE00, 0x12FC, 0x88B4, 0x8008, 0x8005, 0x80DE, 0x8592, 0x865E, 0x86A7, 0x927A, 0x8B61,
        ]
        /// When ``CardSession/useFastestBitRate(for:expectedBlocks:)`` moves up.
        public var fasterBitRate: FasterBitRate = .whenItPays
        public init() {}
    }

    /// When a session moves to a faster bit rate the card and the reader share.
    public enum FasterBitRate: Sendable {
        /// Only before a reading long enough to win back the question and the switch
        /// (``CardSession/fasterBitRatePays(forBlocks:)``).
        case whenItPays
        /// Before every reading, whatever its length.
        case always
    }

    public nonisolated let transport: any Transport
    public let options: Options

    /// Exchanges sent so far (retries included).
    public private(set) var exchangeCount = 0
    /// Commands the reader refused to forward to the card (`.refused`), so far.
    public private(set) var refusedCommands: Set<CommandCode> = []
    /// Read limits learned from cards that refused a batch (SF2 0xA2), by IDm.
    private var learnedReadLimit: [IDm: Int] = [:]

    public init(transport: any Transport, options: Options = Options()) {
        self.transport = transport
        self.options = options
    }

    // MARK: - Exchange

    /// Sends a raw packet with the given timeout, counting it. No retries.
    public func exchange(_ packet: [UInt8], timeout: Duration) async throws(FeliCaError) -> [UInt8] {
        exchangeCount += 1
        do {
            return try await transport.exchange(packet, timeout: timeout)
        } catch where error.code == .refused {
            if packet.count >= 2, let code = CommandCode(rawValue: packet[1]) { refusedCommands.insert(code) }
            throw error
        }
    }

    /// Sends `command` to the system `target` names and returns the card's response,
    /// checked to come from that system.
    ///
    /// The timeout is the card's own time from its PMm for the command
    /// (``CardCommand/timing``, with ``Options/timeoutFloor``), both frames' air time and
    /// the transport's latency; for Polling, its time slots instead of the PMm. A command
    /// that ``CardCommand/isRepeatable`` is sent again after a timeout or a transmission
    /// error, `retries` times (``Options/retries`` unless given); any other is sent once.
    /// Silence throws `.timeout`; ``poll(systemCode:requestCode:timeSlot:)`` answers nil.
    public func send<C: CardCommand>(_ command: C, to target: Target, retries: Int? = nil) async throws(FeliCaError) -> C.Response {
        let retries = C.isRepeatable ? retries ?? options.retries : 0
        return try await send(command, expecting: target.idm, timeout: timeout(for: command, pmm: target.pmm), retries: retries)
    }

    /// The one build → send → decode: `retries` more attempts after a transmission error,
    /// and after a timeout when `retryingTimeouts`.
    private func send<C: CardCommand>(_ command: C, expecting idm: IDm?, timeout: Duration, retries: Int,
                                      retryingTimeouts: Bool = true) async throws(FeliCaError) -> C.Response {
        let packet = command.encode()
        var attempt = 0
        while true {
            let reply: [UInt8]
            do {
                reply = try await exchange(packet, timeout: timeout)
            } catch where (error.code == .transmission || (retryingTimeouts && error.code == .timeout)) && attempt < retries {
                attempt += 1
                continue
            }
            return try C.Response.decode(reply[...], expecting: idm)
        }
    }

    /// The card's own time from PMm (with a floor), both frames' air time, and the
    /// transport's latency. Air time uses 212 kbps, the slower rate, a 64-byte command,
    /// and the largest reply a read can bring (64 bytes for any other command).
    private func timeout<C: CardCommand>(for command: C, pmm: PMm) -> Duration {
        if let polling = command as? PollingCommand { return pollingTimeout(polling) }
        let (kind, units) = command.timing
        let replyLength = kind == .read ? ReadWithoutEncryptionResponse.headerLength + 16 * units : 64
        return max(pmm.maximumResponseTime(for: kind, units: units), options.timeoutFloor)
            + AirTiming.airTime(packetLength: 64) + AirTiming.airTime(packetLength: replyLength)
            + transport.linkLatency
    }

    // MARK: - Polling and systems

    /// The last time slot's end, the reply's air time, the floor and the link's latency:
    /// no PMm bounds Polling.
    private func pollingTimeout(_ command: PollingCommand) -> Duration {
        AirTiming.pollingWindow(slots: command.timeSlot.slots) + AirTiming.airTime(packetLength: command.longestResponse)
            + options.timeoutFloor + transport.linkLatency
    }

    /// Polls for `systemCode` (per-byte `FF` wildcards allowed). Returns nil when no card answers.
    public func poll(systemCode: SystemCode = .wildcard, requestCode: PollingRequestCode = .systemCode, timeSlot: TimeSlot? = nil) async throws(FeliCaError) -> PollingResponse? {
        let slots = timeSlot ?? options.timeSlot
        let command = PollingCommand(systemCode: systemCode, requestCode: requestCode, timeSlot: slots)
        do {
            // A garbled frame or a reader that missed its reply is asked again; silence is no card.
            return try await send(command, expecting: nil, timeout: pollingTimeout(command), retries: options.retries, retryingTimeouts: false)
        } catch where error.code == .timeout {
            return nil
        }
    }

    /// Polls with the wildcard and returns the card's first system; throws `.noCard` when none answers.
    /// A reader that will not forward Polling gives the IDm and PMm it found itself
    /// (``Transport/readerReportedIdentity()``); the system code is then unknown.
    public func detect() async throws(FeliCaError) -> Target {
        try await useSlowestBitRate()
        let r: PollingResponse?
        do {
            r = try await poll(systemCode: .wildcard, requestCode: .systemCode)
        } catch where error.code == .refused {
            guard let (idm, pmm) = try await transport.readerReportedIdentity() else {
                throw FeliCaError(.refused, "\(transport.name) refuses to forward Polling and does not report the card's IDm and PMm itself: \(error.reason)")
            }
            return Target(idm: idm, pmm: pmm, systemCode: nil)
        }
        guard let r else {
            throw FeliCaError(.noCard, "no card answered Polling on \(transport.name): place a card on the reader")
        }
        return Target(idm: r.idm, pmm: r.pmm, systemCode: r.systemCode)
    }

    /// Moves the session to the fastest bit rate both the reader and the card offer, and
    /// returns the rate it runs at afterwards.
    ///
    /// Worth it before a long reading only: when the transport offers a rate above the one
    /// it runs at, one Polling asks the card for its communication performance (request code
    /// 2) at the current rate, and the transport switches when the card names the faster
    /// rate; a card answers at the rate it is spoken to. Frames then take half the time on
    /// the air at 424 kbps. A card that does not answer the question stays at the current rate.
    ///
    /// With `expectedBlocks`, the session moves only when the reading is long enough to win
    /// back the Polling and the switch (``fasterBitRatePays(forBlocks:)``), unless
    /// ``Options/fasterBitRate`` is ``FasterBitRate/always``.
    @discardableResult
    public func useFastestBitRate(for target: Target, expectedBlocks: Int? = nil) async throws(FeliCaError) -> AirTiming.BitRate {
        let current = transport.bitRate
        let faster = transport.bitRates.filter { $0.rawValue > current.rawValue }.sorted { $0.rawValue > $1.rawValue }
        guard !faster.isEmpty else { return current }
        if let expectedBlocks, options.fasterBitRate == .whenItPays, !fasterBitRatePays(forBlocks: expectedBlocks) { return current }
        let system = target.systemCode.flatMap { $0.isWildcard ? nil : $0 } ?? .wildcard
        let answer: PollingResponse?
        do {
            answer = try await poll(systemCode: system, requestCode: .communicationPerformance)
        } catch where error.code == .refused || error.code == .invalidField || error.code == .badLength {
            // A reader that keeps Polling to itself, or a card that garbles the question.
            return current
        }
        guard let reply = answer,
              reply.idm == target.idm || system.isWildcard,
              let data = reply.requestData,
              let rate = faster.first(where: { $0.isSupported(byCommunicationPerformance: data) }) else {
            return current
        }
        try await transport.switchBitRate(to: rate)
        return rate
    }

    /// Whether the fastest rate the transport offers saves more air time over a reading of
    /// `blocks` blocks than moving to it costs: one Polling (command, the first time slot,
    /// the reply) and the reader's switch, each with the link's latency. Each block is 16
    /// bytes in the reply and 2 in the command's block list; each read of up to 15 blocks
    /// adds its headers and framing. With 2 ms of link latency the turn comes at 19 blocks
    /// (a transit history reading moves up, a balance reading does not); with 9 ms, at 56.
    public nonisolated func fasterBitRatePays(forBlocks blocks: Int) -> Bool {
        let current = transport.bitRate
        guard let fastest = transport.bitRates.max(by: { $0.rawValue < $1.rawValue }), fastest.rawValue > current.rawValue else { return false }
        let reads = (blocks + 14) / 15
        let bytes = blocks * 18 + reads * (13 + 16 + 2 * AirTiming.framingBytes)
        let saved = AirTiming.airTime(packetLength: bytes, at: current) - AirTiming.airTime(packetLength: bytes, at: fastest)
        let cost = AirTiming.airTime(packetLength: 6, at: current) + AirTiming.pollingSlotZero
            + AirTiming.airTime(packetLength: 20, at: current) + transport.linkLatency * 2
        return saved > cost
    }

    /// Moves back to the slowest rate the transport offers, where every card answers: before
    /// looking for the next card after a session moved up for the last one. No exchange.
    public func useSlowestBitRate() async throws(FeliCaError) {
        if let slowest = transport.bitRates.min(by: { $0.rawValue < $1.rawValue }), transport.bitRate != slowest {
            try await transport.switchBitRate(to: slowest)
        }
    }

    /// Polls one system and returns it addressed by its own IDm, or nil when the card lacks it.
    public func select(_ system: SystemCode) async throws(FeliCaError) -> Target? {
        guard let r = try await poll(systemCode: system, requestCode: .systemCode) else { return nil }
        return Target(idm: r.idm, pmm: r.pmm, systemCode: r.systemCode ?? (system.isWildcard ? nil : system))
    }

    /// Every system on the card: Request System Code, or, when the card does not answer it,
    /// Polling each code of ``Options/fallbackSystemCodes``. A FeliCa Lite or Lite-S (PMm
    /// byte 1), which knows no Request System Code, is polled for its two codes only: 88B4,
    /// and 12FC when formatted for NDEF. 88B4 goes last, so the card is selected again after
    /// an unanswered Polling (a PN532 drops its target when nothing answers).
    public func systemCodes(of target: Target) async throws(FeliCaError) -> [SystemCode] {
        if target.pmm.ic.family == .lite || target.pmm.ic.family == .liteS {
            let ndef = try await poll(systemCode: .ndef, requestCode: .systemCode) != nil
            let lite = try await poll(systemCode: .liteS, requestCode: .systemCode) != nil
            var found: [SystemCode] = (lite ? [.liteS] : []) + (ndef ? [.ndef] : [])
            if let own = target.systemCode, !found.contains(own) { found.insert(own, at: 0) }
            return found
        }
        do {
            return try await send(RequestSystemCodeCommand(idm: target.idm), to: target).systemCodes
        } catch where error.code == .timeout || error.code == .unsupported || error.code == .refused {
            // A reader that refuses Polling too leaves no way to list the systems: `.refused`.
            var found: [SystemCode] = []
            for code in options.fallbackSystemCodes {
                if try await poll(systemCode: code, requestCode: .systemCode) != nil { found.append(code) }
            }
            if let own = target.systemCode, !found.contains(own) { found.insert(own, at: 0) }
            return found
        }
    }

    // MARK: - Nodes

    /// Areas and services of the system, in the card's order (Search Service Code until `FFFF`).
    public func nodes(of target: Target) async throws(FeliCaError) -> [Node] {
        var out: [Node] = []
        for index in 0..<0xFFFF {
            guard let node = try await send(SearchServiceCodeCommand(idm: target.idm, index: UInt16(index)), to: target).node else { break }
            out.append(node)
        }
        return out
    }

    /// Key versions of `nodes` (nil = the card lacks the node), 32 nodes per exchange.
    public func keyVersions(of nodes: [NodeCode], in target: Target) async throws(FeliCaError) -> [UInt16?] {
        var out: [UInt16?] = []
        out.reserveCapacity(nodes.count)
        var start = 0
        while start < nodes.count {
            let chunk = Array(nodes[start..<min(start + RequestServiceCommand.maximumNodes, nodes.count)])
            let r = try await send(try RequestServiceCommand(idm: target.idm, nodes: chunk), to: target)
            guard r.keyVersions.count == chunk.count else {
                throw FeliCaError(.invalidField, "Request Service response: \(r.keyVersions.count) key versions for \(chunk.count) nodes")
            }
            out += r.keyVersions
            start += chunk.count
        }
        return out
    }

    /// Blocks assigned to each node (Request Block Information), 32 nodes per exchange.
    public func blockCounts(of nodes: [NodeCode], in target: Target) async throws(FeliCaError) -> [Int] {
        var out: [Int] = []
        var start = 0
        while start < nodes.count {
            let chunk = Array(nodes[start..<min(start + RequestBlockInformationCommand.maximumNodes, nodes.count)])
            let r = try await send(try RequestBlockInformationCommand(idm: target.idm, nodes: chunk), to: target)
            guard r.blockCounts.count == chunk.count else {
                throw FeliCaError(.invalidField, "Request Block Information response: \(r.blockCounts.count) counts for \(chunk.count) nodes")
            }
            out += r.blockCounts.map(Int.init)
            start += chunk.count
        }
        return out
    }

    // MARK: - Reading

    /// Blocks the card itself reads at once, as far as known: what it taught us, or the
    /// IC's known limit, or the frame limit (15).
    public func cardReadLimit(for target: Target) -> Int {
        learnedReadLimit[target.idm] ?? target.pmm.ic.maximumBlocksPerRead ?? ReadWithoutEncryptionCommand.frameBlockLimit
    }

    /// Blocks this session sends per Read Without Encryption to `target` right now: the
    /// card's limit (``cardReadLimit(for:)``), and no more than the transport's longest
    /// reply holds.
    public func readLimit(for target: Target) -> Int {
        let card = cardReadLimit(for: target)
        guard let longest = transport.longestReply else { return card }
        return min(card, max(1, (longest - ReadWithoutEncryptionResponse.headerLength) / 16))
    }

    /// Reads every requested block in as few commands as the card allows, mixing services
    /// in one command (up to 16). Returns the blocks of each request, in request order.
    public func read(_ requests: [BlockRequest], from target: Target) async throws(FeliCaError) -> [[[UInt8]]] {
        // Flatten to (request, service, block) and cut into commands.
        var elements: [(request: Int, service: ServiceCode, block: Int)] = []
        for (i, r) in requests.enumerated() {
            for b in r.blocks { elements.append((i, r.service, b)) }
        }
        var out: [[[UInt8]]] = requests.map { _ in [] }
        var start = 0
        while start < elements.count {
            let end = start + ReadWithoutEncryptionCommand.fitting(
                elements[start...].lazy.map { (service: $0.service, block: $0.block) }, limit: readLimit(for: target))
            var batch: [(request: Int, BlockRequest)] = []
            for e in elements[start..<end] {
                if let last = batch.last, last.request == e.request {
                    batch[batch.count - 1].1.blocks.append(e.block)
                } else {
                    batch.append((e.request, BlockRequest(service: e.service, blocks: [e.block])))
                }
            }
            guard let blocks = try await readCommand(batch.map(\.1), from: target) else { continue }
            for (k, b) in blocks.enumerated() { out[batch[k].request] += b }
            start = end
        }
        return out
    }

    /// Sends exactly one Read Without Encryption for `requests`, which must fit one command
    /// (``ReadWithoutEncryptionCommand/fitting(_:limit:)`` with ``readLimit(for:)``).
    /// Returns the blocks of each request, or nil when the card refused the command as too
    /// many blocks, or the link found it cannot carry the reply: the session then knows a
    /// smaller limit (``readLimit(for:)``), and the caller cuts again.
    /// Any other refusal is thrown (`.status`, with the status flags).
    public func readCommand(_ requests: [BlockRequest], from target: Target) async throws(FeliCaError) -> [[[UInt8]]]? {
        var services: [ServiceCode] = []
        var list: [BlockListElement] = []
        for r in requests {
            var index = services.firstIndex(of: r.service)
            if index == nil { services.append(r.service); index = services.count - 1 }
            for b in r.blocks { list.append(try BlockListElement(serviceIndex: index!, block: b)) }
        }
        let command = try ReadWithoutEncryptionCommand(idm: target.idm, services: services, blocks: list)
        let r: ReadWithoutEncryptionResponse
        do {
            r = try await send(command, to: target)
        } catch where readLimit(for: target) < list.count {
            // The link learned it cannot carry this reply (a reader that takes only short
            // APDUs): ask again for fewer blocks. A read is safe to repeat.
            return nil
        }
        if r.status.meansTooManyBlocks && list.count > 1 {
            learnedReadLimit[target.idm] = Self.smallerBatch(than: list.count)
            return nil
        }
        guard r.status.isSuccess else {
            throw Self.readError(r.status, services: services, list: list)
        }
        guard r.blockCount == list.count else {
            throw FeliCaError(.invalidField, "Read Without Encryption response: \(r.blockCount) blocks for \(list.count) requested")
        }
        var out: [[[UInt8]]] = []
        var k = 0
        for req in requests {
            out.append((k..<(k + req.blocks.count)).map { Array(r[block: $0]) })
            k += req.blocks.count
        }
        return out
    }

    /// Reads blocks of one service.
    public func read(service: ServiceCode, blocks: Range<Int>, from target: Target) async throws(FeliCaError) -> [[UInt8]] {
        try await read([BlockRequest(service: service, blocks: blocks)], from: target)[0]
    }

    /// Batch sizes tried after a card refuses one as too large.
    static func smallerBatch(than n: Int) -> Int {
        [12, 8, 6, 4, 2, 1].first { $0 < n } ?? 1
    }

    static func readError(_ sf: StatusFlags, services: [ServiceCode], list: [BlockListElement]) -> FeliCaError {
        let names = services.map(\.description).joined(separator: ",")
        if sf.meansKeyRequired {
            return FeliCaError(.status, "service [\(names)] needs a key (the card refused reading without encryption: \(sf))", statusFlags: sf)
        }
        return FeliCaError(.status, "reading service [\(names)] failed: \(sf)", statusFlags: sf)
    }

    // MARK: - Writing

    /// Writes blocks of one service. Never retried: when the card does not answer, the
    /// error is `.ambiguousWrite` — the data may or may not be stored.
    public func write(service: ServiceCode, blocks: [(block: Int, data: [UInt8])], to target: Target) async throws(FeliCaError) {
        var list: [BlockListElement] = []
        var data: [UInt8] = []
        for b in blocks {
            guard b.data.count == 16 else {
                throw FeliCaError(.invalidArgument, "write: block \(b.block) has \(b.data.count) bytes, a block is 16")
            }
            list.append(try BlockListElement(serviceIndex: 0, block: b.block))
            data += b.data
        }
        let command = try WriteWithoutEncryptionCommand(idm: target.idm, services: [service], blocks: list, data: data)
        let r: WriteWithoutEncryptionResponse
        do {
            r = try await send(command, to: target)
        } catch where error.code == .timeout || error.code == .transmission || error.code == .cardGone || error.code == .readerGone {
            throw FeliCaError(.ambiguousWrite, "write to service \(service) got no reply (\(error.reason)): the card may or may not have stored it; read the blocks back before writing again")
        } catch where Self.malformedReply.contains(error.code) {
            throw FeliCaError(.ambiguousWrite, "write to service \(service) got a garbled reply (\(error.reason)): the card may or may not have stored it; read the blocks back before writing again")
        }
        guard r.status.isSuccess else {
            throw FeliCaError(.status, "writing service \(service) failed: \(r.status)", statusFlags: r.status)
        }
    }

    /// What a reply that does not parse throws: the card may have stored a write it answered so.
    private static let malformedReply: Set<FeliCaError.Code> = [.truncated, .trailingBytes, .badLength, .unexpectedResponse, .wrongCard, .invalidField]

    // MARK: - Presence, version, reset

    /// Whether the system still answers (Request Response).
    /// Request Response is optional: a card that does not answer it (or a reader that will
    /// not forward it) is still there when it answers a Polling with the same IDm — or, on
    /// a reader that forwards neither, when the reader still reports that IDm.
    public func isPresent(_ target: Target) async throws(FeliCaError) -> Bool {
        do {
            do {
                // Not repeated: silence falls back to Polling at once.
                _ = try await send(RequestResponseCommand(idm: target.idm), to: target, retries: 0)
                return true
            } catch where error.code == .timeout || error.code == .refused {
                do {
                    return try await poll(systemCode: target.systemCode ?? .wildcard, requestCode: .none)?.idm == target.idm
                } catch where error.code == .refused {
                    return try await transport.readerReportedIdentity()?.idm == target.idm
                }
            }
        } catch where error.code == .cardGone || error.code == .transmission {
            return false
        }
    }

    /// Request Specification Version.
    public func specificationVersion(of target: Target) async throws(FeliCaError) -> RequestSpecificationVersionResponse {
        try await send(RequestSpecificationVersionCommand(idm: target.idm), to: target)
    }

    /// Reset Mode (returns the card to mode 0).
    public func resetMode(_ target: Target) async throws(FeliCaError) -> StatusFlags {
        try await send(ResetModeCommand(idm: target.idm), to: target).status
    }
}
