import FeliCa
import Synchronization

/// A card made of data: answers every FeliCa command as a real card would, from a
/// ``CardImage``. It is the card behind the `virtual:` device, the PN532 emulator and the
/// virtual card for pcscd.
///
/// Read and Write Without Encryption are checked as a card checks them, in this order, and a
/// malformed one is answered with status flags rather than silence (SF1 is the 1-based
/// index of the block list element at fault, 0xFF when the error is not tied to one element;
/// real cards differ here, some give a bit mask or always 0xFF):
///
/// | what is wrong | SF1 SF2 |
/// |---|---|
/// | number of services 0 or above 16, or the service list cut short | FF A1 |
/// | number of blocks 0, above what the card reads at once, or cut short | FF A2 |
/// | a block list element cut short (2- or 3-byte form), or write data not 16 × n | FF A2 |
/// | a block list element names a service beyond the list | element A3 |
/// | a listed service the card does not hold | element A6 |
/// | a service that needs a key | element A5 |
/// | a write to a service that cannot be written without a key | element A4 |
/// | an access mode the service has not (cashback on anything but a purse) | element A7 |
/// | a block number beyond the service's blocks | element A8 |
///
/// A FeliCa Lite or Lite-S answers by its own chip's rules instead (`LiteChip`): reads and
/// writes through 000B and 0009, its MC block's write bits, MAC and MAC_A, the card key.
///
/// Search Service Code walks the root area `0000`–`FFFE` first (also when the image lists
/// no areas: every system has it), then areas and services in code order, so each area
/// comes before the services in it.
public final class VirtualCard: Sendable {
    private struct State {
        var image: CardImage
        var present = true
        var exchangesUntilRemoval: Int? = nil
        var exchanges = 0
        /// The authentication a FeliCa Lite or Lite-S holds (RC written, session key).
        var lite = LiteChip.Session()
    }

    private let state: Mutex<State>
    /// The systems as the card presents them: code, IDm, PMm.
    public let systems: [(code: SystemCode, idm: IDm, pmm: PMm)]
    /// Blocks accepted in one read.
    public let readLimit: Int
    /// The bit rates the card answers at; spoken to at another, it stays silent.
    public let bitRates: [AirTiming.BitRate]
    /// How long the card thinks before it answers (used by the timed devices).
    public let timing: CardTiming

    public init(image: CardImage, timing: CardTiming = .typical) {
        state = Mutex(State(image: image))
        self.timing = timing
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
            if let access = BlockAccess.Kind(packet: packet) { return answer(access, packet, &s.image, &s.lite) }
            guard let command = try? Command.decode(packet[...]) else { return nil }
            return answer(command, &s.image)
        }
    }

    /// How long the card waits between the end of `packet` and the start of its reply: the
    /// Polling slot 0 delay for Polling, else what ``timing`` makes of the PMm bound.
    public func reactionTime(to packet: [UInt8]) -> Duration {
        if PollingCommand.isPolling(packet) { return AirTiming.pollingSlotZero }
        let idm = packet.count >= 10 ? IDm(rawValue: packet[2..<10].reduce(0) { $0 << 8 | UInt64($1) }) : nil
        let pmm = systems.first { $0.idm == idm }?.pmm ?? CardImage.defaultPMm
        let (kind, units) = Self.timingParameters(packet)
        return timing.reaction(within: pmm.maximumResponseTime(for: kind, units: units))
    }

    /// How long a real card takes for this exchange, as its reader sees it: the command on
    /// the air, ``reactionTime(to:)``, then the reply on the air.
    public func responseTime(to packet: [UInt8], reply: [UInt8]?, bitRate: AirTiming.BitRate = .kbps212) -> Duration {
        let t = AirTiming.airTime(packetLength: packet.count, at: bitRate)
        guard let reply else { return t }
        return t + reactionTime(to: packet) + AirTiming.airTime(packetLength: reply.count, at: bitRate)
    }

    /// Which PMm byte and how many units bound `packet`'s response time; a read or write
    /// too malformed to decode still counts the blocks it names.
    private static func timingParameters(_ packet: [UInt8]) -> (kind: ResponseTimeKind, units: Int) {
        if let command = try? Command.decode(packet[...]) { return command.timing }
        guard packet.count >= 2, let code = CommandCode(rawValue: packet[1]) else { return (.other, 0) }
        switch code {
        case .readWithoutEncryption, .writeWithoutEncryption:
            let n = packet.count > 10 ? 11 + 2 * Int(packet[10]) : packet.count
            return (code == .readWithoutEncryption ? .read : .write, n < packet.count ? Int(packet[n]) : 1)
        default:
            return (code.timing, 0)
        }
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
            if let limit = image.maxNodesPerRequest, c.nodes.count > limit { return nil }
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
        case .readWithoutEncryption, .writeWithoutEncryption:
            return nil  // answered from the packet itself (BlockAccess)
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

    /// The root area, then areas and services in code order, as Search Service Code walks
    /// them on real cards (so a dump lists services in code order whatever order the image
    /// gave). An area's code is below those of the services in it, so each area comes
    /// before its services. Every system has the root area, listed or not.
    private func nodeList(_ system: CardImage.System) -> [Node] {
        var nodes: [Node] = system.areas.map { .area($0.code, end: $0.end) }
        if !system.areas.contains(where: { $0.code == .root }) { nodes.append(.area(.root, end: Self.rootAreaEnd)) }
        nodes += system.services.map { .service($0.code) }
        return nodes.sorted { $0.code < $1.code }
    }

    /// The last code of the root area (0000–FFFE).
    static let rootAreaEnd: NodeCode = 0xFFFE

    private func fail(_ element: Int?, _ sf2: UInt8) -> StatusFlags {
        StatusFlags(sf1: element.map { UInt8(clamping: $0 + 1) } ?? 0xFF, sf2: sf2)
    }

    /// Read or Write Without Encryption, from the packet as the card parses it.
    private func answer(_ kind: BlockAccess.Kind, _ packet: [UInt8], _ image: inout CardImage, _ lite: inout LiteChip.Session) -> [UInt8]? {
        if image.ignores.contains(kind.code) { return nil }
        guard let (idm, parsed) = BlockAccess.parse(packet, kind), let si = systemIndex(idm) else { return nil }
        let family = systems[si].pmm.ic.family
        if family == .lite || family == .liteS, case .success(let access) = parsed {
            let request = BlockAccessRequest(services: access.services, blocks: access.blocks, data: access.data)
            return LiteChip(isLiteS: family == .liteS).answer(request, writing: kind == .write, idm: idm, image: &image, system: si, session: &lite)
        }
        let outcome = parsed.flatMap { access in check(access, in: image.systems[si], writing: kind == .write).map { (access, $0) } }
        switch (kind, outcome) {
        case (.read, .failure(let e)):
            return ReadWithoutEncryptionResponse(idm: idm, status: e.flags).encode()
        case (.read, .success(let (access, services))):
            var data: [UInt8] = []
            data.reserveCapacity(16 * access.blocks.count)
            for b in access.blocks { data += services[Int(b.serviceIndex)].block(Int(b.blockNumber))! }
            return ReadWithoutEncryptionResponse(idm: idm, status: .success, data: data[...]).encode()
        case (.write, .failure(let e)):
            return WriteWithoutEncryptionResponse(idm: idm, status: e.flags).encode()
        case (.write, .success(let (access, _))):
            write(access, &image.systems[si])
            return WriteWithoutEncryptionResponse(idm: idm, status: .success).encode()
        }
    }

    /// Checks a block list against the service list and the card, in the order of the table
    /// in the type's documentation; returns the services or the status.
    private func check(_ access: BlockAccess, in system: CardImage.System, writing: Bool)
        -> Result<[CardImage.Service], StatusError>
    {
        let services = access.services, blocks = access.blocks
        if blocks.count > readLimit { return .failure(StatusError(fail(nil, 0xA2))) }
        if let i = blocks.firstIndex(where: { Int($0.serviceIndex) >= services.count }) {
            return .failure(StatusError(fail(i, 0xA3)))
        }
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

    /// Applies a checked write.
    private func write(_ access: BlockAccess, _ system: inout CardImage.System) {
        for (i, b) in access.blocks.enumerated() {
            let code = access.services[Int(b.serviceIndex)]
            guard let si = system.services.firstIndex(where: { $0.code == code }) else { continue }
            let start = access.data.startIndex + 16 * i
            let data = Array(access.data[start..<(start + 16)])
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
    }
}

/// A Read or Write Without Encryption packet as a card parses it: loosely, so that what is
/// wrong is answered with status flags (the codec's decoder refuses such packets outright).
/// Layout: `LEN code IDm m service(2 LE)×m n element×n [data(16×n)]`.
private struct BlockAccess {
    enum Kind {
        case read, write

        /// The kind of a packet by its command code; nil for any other command.
        init?(packet: [UInt8]) {
            guard packet.count >= 2 else { return nil }
            switch packet[1] {
            case CommandCode.readWithoutEncryption.rawValue: self = .read
            case CommandCode.writeWithoutEncryption.rawValue: self = .write
            default: return nil
            }
        }

        var code: CommandCode { self == .read ? .readWithoutEncryption : .writeWithoutEncryption }
    }

    var services: [ServiceCode] = []
    var blocks: [BlockListElement] = []
    /// The blocks' data (writes).
    var data: ArraySlice<UInt8> = []

    /// The addressed IDm and the request or the status it earns; nil when the frame is too
    /// broken to be for this card at all (LEN disagrees, no IDm).
    static func parse(_ packet: [UInt8], _ kind: Kind) -> (IDm, Result<BlockAccess, StatusError>)? {
        guard packet.count >= 10, Int(packet[0]) == packet.count else { return nil }
        var r = ByteReader(packet[2...], frame: "block access")
        guard let idm = try? IDm(rawValue: r.readUInt64BigEndian("IDm")) else { return nil }
        let servicesWrong = StatusError(StatusFlags(sf1: 0xFF, sf2: 0xA1))
        let blocksWrong = StatusError(StatusFlags(sf1: 0xFF, sf2: 0xA2))
        var access = BlockAccess()
        guard let m = try? r.readUInt8("number of services"), (1...16).contains(m) else { return (idm, .failure(servicesWrong)) }
        for i in 0..<Int(m) {
            guard let code = try? r.readUInt16(.littleEndian, "service code \(i)") else { return (idm, .failure(servicesWrong)) }
            access.services.append(ServiceCode(code))
        }
        guard let n = try? r.readUInt8("number of blocks"), n >= 1 else { return (idm, .failure(blocksWrong)) }
        for i in 0..<Int(n) {
            guard let element = try? Self.element(&r, i) else { return (idm, .failure(blocksWrong)) }
            access.blocks.append(element)
        }
        if kind == .write {
            access.data = r.readRest()
            guard access.data.count == 16 * Int(n) else { return (idm, .failure(blocksWrong)) }
        }
        return (idm, .success(access))
    }

    /// One block list element, 2-byte (`1 AAA SSSS | block`) or 3-byte (`0 AAA SSSS | block LE`).
    private static func element(_ r: inout ByteReader, _ i: Int) throws(FeliCaError) -> BlockListElement {
        let head = try r.readUInt8("block list element \(i)")
        let block = head & 0x80 != 0
            ? Int(try r.readUInt8("block number \(i)"))
            : Int(try r.readUInt16(.littleEndian, "block number \(i)"))
        return try BlockListElement(serviceIndex: Int(head & 0x0F), block: block, accessMode: (head >> 4) & 7)
    }
}

/// Status flags carried through a `Result`.
private struct StatusError: Error {
    let flags: StatusFlags
    init(_ flags: StatusFlags) { self.flags = flags }
}
