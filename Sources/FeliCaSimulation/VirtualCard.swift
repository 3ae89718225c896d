import FeliCa
import Synchronization

/// A card made of data: answers every FeliCa command as a real card would, from a
/// ``CardImage``. It is the card behind the `virtual:` device, the PN532 emulator and the
/// virtual card for pcscd.
///
/// Status flags it returns: SF1 is the 1-based index of the block list element at fault
/// (0xFF when the error is not tied to one element); SF2 0xA6 for a service the card does
/// not hold, 0xA5 for a key-protected one, 0xA8 for a block out of range, 0xA2 for more
/// blocks than the card reads at once, 0xA7 for a bad access mode, 0xA4 for a write to a
/// service that cannot be written without a key.
public final class VirtualCard: Sendable {
    private struct State {
        var image: CardImage
        var present = true
        var exchangesUntilRemoval: Int? = nil
        var exchanges = 0
    }

    private let state: Mutex<State>
    /// The systems as the card presents them: code, IDm, PMm.
    public let systems: [(code: SystemCode, idm: IDm, pmm: PMm)]
    /// Blocks accepted in one read.
    public let readLimit: Int
    /// The bit rates the card answers at; spoken to at another, it stays silent.
    public let bitRates: [AirTiming.BitRate]

    public init(image: CardImage) {
        state = Mutex(State(image: image))
        systems = image.systems.indices.map { (image.systems[$0].code, image.idm(ofSystem: $0), image.pmm(ofSystem: $0)) }
        readLimit = image.maxBlocksPerRead
            ?? image.pmm(ofSystem: 0).ic.maximumBlocksPerRead
            ?? ReadWithoutEncryptionCommand.frameBlockLimit
        bitRates = image.answeredBitRates
    }

    /// The reply to one packet heard at `rate`: silence when the card does not run at it.
    public func respond(to packet: [UInt8], at rate: AirTiming.BitRate) -> [UInt8]? {
        bitRates.contains(rate) ? respond(to: packet) : nil
    }

    /// A built-in sample card by name, or a card image file by path.
    public static func named(_ nameOrPath: String) throws(FeliCaError) -> VirtualCard {
        if let image = SampleCards.image(named: nameOrPath) { return VirtualCard(image: image) }
        if !CardImage.isImagePath(nameOrPath) {
            throw FeliCaError(.badInput, "no built-in card named \"\(nameOrPath)\" (built-in: \(SampleCards.names.joined(separator: ", "))); a card image path must contain '/' or end in .json or .nfc")
        }
        return VirtualCard(image: try CardImage.load(path: nameOrPath))
    }

    /// The card's current contents (writes included).
    public var image: CardImage { state.withLock { $0.image } }

    /// Whether the card is in the field; false makes it silent.
    public var isPresent: Bool {
        get { state.withLock { $0.present } }
        set { state.withLock { $0.present = newValue; if newValue { $0.exchangesUntilRemoval = nil } } }
    }

    /// Removes the card after it has answered `exchanges` more commands.
    public func removeAfter(exchanges: Int) {
        state.withLock { $0.exchangesUntilRemoval = exchanges }
    }

    /// Commands answered so far.
    public var exchangeCount: Int { state.withLock { $0.exchanges } }

    /// The reply to one packet, or nil when a real card would stay silent (no system
    /// matches the Polling, another IDm is addressed, garbage, or the card is gone).
    public func respond(to packet: [UInt8]) -> [UInt8]? {
        state.withLock { s -> [UInt8]? in
            guard s.present else { return nil }
            if let left = s.exchangesUntilRemoval {
                if left <= 0 { s.present = false; s.exchangesUntilRemoval = nil; return nil }
                s.exchangesUntilRemoval = left - 1
            }
            s.exchanges += 1
            guard let command = try? Command.decode(packet[...]) else { return nil }
            return answer(command, &s.image)
        }
    }

    /// How long a real card takes for this exchange: command and reply on the air plus the
    /// PMm response time (the Polling slot delay for Polling).
    public func responseTime(to packet: [UInt8], reply: [UInt8]?, bitRate: AirTiming.BitRate = .kbps212) -> Duration {
        var t = AirTiming.airTime(packetLength: packet.count, at: bitRate)
        guard let reply else { return t }
        t += AirTiming.airTime(packetLength: reply.count, at: bitRate)
        guard let command = try? Command.decode(packet[...]) else { return t }
        if case .polling = command { return t + AirTiming.pollingSlotZero }
        let pmm = systems.first { $0.idm == command.idm }?.pmm ?? CardImage.defaultPMm
        let (kind, units) = command.timing
        return t + pmm.maximumResponseTime(for: kind, units: units)
    }

    // MARK: - Answers

    private func systemIndex(_ idm: IDm?) -> Int? {
        systems.firstIndex { $0.idm == idm }
    }

    private func answer(_ command: Command, _ image: inout CardImage) -> [UInt8]? {
        if image.ignores.contains(command.code) { return nil }
        if case .polling(let p) = command {
            guard let i = systems.firstIndex(where: { $0.code.matches(p.systemCode) }) else { return nil }
            let rd: UInt16? = switch p.requestCode {
            case .none: nil
            case .systemCode: systems[i].code.rawValue
            // Bit 0: 212 kbps, bit 1: 424 kbps, bit 7: the card detects the rate by itself.
            case .communicationPerformance: bitRates.contains(.kbps424) ? 0x0083 : 0x0001
            }
            return PollingResponse(idm: systems[i].idm, pmm: systems[i].pmm, requestData: rd).encode()
        }
        guard let idm = command.idm, let si = systemIndex(idm) else { return nil }
        let system = image.systems[si]
        // FeliCa Lite and Lite-S know only Polling, Read and Write Without Encryption.
        let family = systems[si].pmm.ic.family
        if family == .lite || family == .liteS {
            switch command {
            case .readWithoutEncryption, .writeWithoutEncryption: break
            default: return nil
            }
        }
        switch command {
        case .polling:
            return nil
        case .requestService(let c):
            return RequestServiceResponse(idm: idm, keyVersions: c.nodes.map { keyVersion(of: $0, in: system) }).encode()
        case .requestResponse:
            return RequestResponseResponse(idm: idm, mode: 0).encode()
        case .requestSystemCode:
            return RequestSystemCodeResponse(idm: idm, systemCodes: systems.map(\.code)).encode()
        case .searchServiceCode(let c):
            let nodes = nodeList(system)
            let node = Int(c.index) < nodes.count ? nodes[Int(c.index)] : nil
            return SearchServiceCodeResponse(idm: idm, node: node).encode()
        case .requestBlockInformation(let c):
            let counts = c.nodes.map { n -> UInt16 in
                if let s = system.services.first(where: { $0.code == n }) { return UInt16(clamping: s.size) }
                return n.isArea && (n == .root || system.areas.contains { $0.code == n }) ? 0 : 0xFFFF
            }
            return RequestBlockInformationResponse(idm: idm, blockCounts: counts).encode()
        case .readWithoutEncryption(let c):
            return read(c, system)
        case .writeWithoutEncryption(let c):
            let sf = write(c, &image.systems[si])
            return WriteWithoutEncryptionResponse(idm: idm, status: sf).encode()
        case .requestSpecificationVersion:
            // Format 0, basic version 1.00 (LE), no options.
            return RequestSpecificationVersionResponse(idm: idm, status: .success, versionData: [0x00, 0x00, 0x01, 0x00]).encode()
        case .resetMode:
            return ResetModeResponse(idm: idm, status: .success).encode()
        }
    }

    private func keyVersion(of node: NodeCode, in system: CardImage.System) -> UInt16? {
        if let s = system.services.first(where: { $0.code == node }) { return s.keyVersion ?? 0 }
        if node == .root || system.areas.contains(where: { $0.code == node }) { return 0 }
        return nil
    }

    /// Areas and services in code order, as Search Service Code walks them on real cards
    /// (so a dump lists services in code order whatever order the image gave).
    private func nodeList(_ system: CardImage.System) -> [Node] {
        var nodes: [Node] = system.areas.map { .area($0.code, end: $0.end) }
        nodes += system.services.map { .service($0.code) }
        return nodes.sorted { $0.code < $1.code }
    }

    private func fail(_ element: Int?, _ sf2: UInt8) -> StatusFlags {
        StatusFlags(sf1: element.map { UInt8(clamping: $0 + 1) } ?? 0xFF, sf2: sf2)
    }

    /// Checks a block list against the service list; returns the services or the status.
    private func check(_ services: [ServiceCode], _ blocks: [BlockListElement], in system: CardImage.System, writing: Bool)
        -> Result<[CardImage.Service], StatusError>
    {
        var found: [CardImage.Service] = []
        for (k, code) in services.enumerated() {
            let element = blocks.firstIndex { Int($0.serviceIndex) == k }
            guard let s = system.services.first(where: { $0.code == code }) else { return .failure(StatusError(fail(element, 0xA6))) }
            if code.attribute.requiresKey && !(s.answersWithoutKey && !writing) { return .failure(StatusError(fail(element, 0xA5))) }
            if writing && !code.attribute.isWritableWithoutKey { return .failure(StatusError(fail(element, 0xA4))) }
            found.append(s)
        }
        for (i, b) in blocks.enumerated() {
            let s = found[Int(b.serviceIndex)]
            let purse: Bool = if case .purse = s.code.attribute.kind { true } else { false }
            if b.accessMode > (purse ? 1 : 0) { return .failure(StatusError(fail(i, 0xA7))) }
            if s.block(Int(b.blockNumber)) == nil { return .failure(StatusError(fail(i, 0xA8))) }
        }
        return .success(found)
    }

    private func read(_ c: ReadWithoutEncryptionCommand, _ system: CardImage.System) -> [UInt8] {
        if c.blocks.count > readLimit {
            return ReadWithoutEncryptionResponse(idm: c.idm, status: fail(nil, 0xA2)).encode()
        }
        switch check(c.services, c.blocks, in: system, writing: false) {
        case .failure(let e):
            return ReadWithoutEncryptionResponse(idm: c.idm, status: e.flags).encode()
        case .success(let services):
            var data: [UInt8] = []
            data.reserveCapacity(16 * c.blocks.count)
            for b in c.blocks { data += services[Int(b.serviceIndex)].block(Int(b.blockNumber))! }
            return ReadWithoutEncryptionResponse(idm: c.idm, status: .success, data: data[...]).encode()
        }
    }

    private func write(_ c: WriteWithoutEncryptionCommand, _ system: inout CardImage.System) -> StatusFlags {
        if c.blocks.count > readLimit { return fail(nil, 0xA2) }
        switch check(c.services, c.blocks, in: system, writing: true) {
        case .failure(let e):
            return e.flags
        case .success:
            for (i, b) in c.blocks.enumerated() {
                let code = c.services[Int(b.serviceIndex)]
                guard let si = system.services.firstIndex(where: { $0.code == code }) else { continue }
                let data = Array(c.data[(16 * i)..<(16 * i + 16)])
                var blocks = system.services[si].blocks ?? []
                if case .cyclic = code.attribute.kind, b.blockNumber == 0 {
                    // A cyclic write adds a record: the oldest falls off the end.
                    blocks.insert(data, at: 0)
                    blocks.removeLast()
                } else if Int(b.blockNumber) < blocks.count {
                    blocks[Int(b.blockNumber)] = data
                } else {
                    system.services[si].blocksAt[Int(b.blockNumber)] = data
                }
                system.services[si].blocks = blocks
            }
            return .success
        }
    }
}

/// Status flags carried through a `Result`.
private struct StatusError: Error {
    let flags: StatusFlags
    init(_ flags: StatusFlags) { self.flags = flags }
}
