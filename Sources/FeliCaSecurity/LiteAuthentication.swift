import FeliCa

/// The FeliCa Lite-S mutual authentication through a `CardSession`, and reads checked
/// with MAC_A: what proves a tag holds a card key (a copied IDm proves nothing).
///
/// 1. Internal authentication: a fresh random challenge is written to RC (0x80); the tag
///    derives the session key from it and its card key. The ID block (0x82) is read with
///    MAC_A (0x91): a MAC_A that matches the one computed under `key` shows the tag holds it.
/// 2. External authentication: STATE (0x92) is written with EXT_AUTH = 01 and a MAC_A over
///    the write counter (WCNT, 0x90); the tag takes it only from a host holding the key. A
///    read of STATE with MAC_A shows EXT_AUTH set.
public enum LiteAuthentication {
    /// How far the authentication got.
    public enum Outcome: Hashable, Sendable {
        /// Both steps passed: the tag holds the key, and took the host's proof of it.
        case mutual
        /// The MAC_A over the ID block did not match: the tag holds another key.
        case internalFailed
        /// The tag's MAC_A matched but it refused the STATE write or did not set EXT_AUTH.
        case externalFailed(reason: String)
    }

    /// The result of ``verify(key:session:target:challenge:)``.
    public struct Result: Hashable, Sendable {
        public var outcome: Outcome
        /// The ID block as read with MAC_A.
        public var idBlock: [UInt8]
        /// The session under which the tag answered (its challenge and session key).
        public var mac: LiteMAC
        public var holdsKey: Bool { outcome == .mutual }
    }

    static let writeService: ServiceCode = 0x0009
    static let readService: ServiceCode = 0x000B

    /// 16 random bytes from the system's generator.
    public static func randomChallenge() -> [UInt8] {
        var g = SystemRandomNumberGenerator()
        return (0..<16).map { _ in UInt8.random(in: 0...255, using: &g) }
    }

    /// Runs both steps; throws only when the tag does not answer as a Lite-S does (refuses
    /// RC, the ID block or WCNT), or the link fails.
    public static func verify(key: LiteCardKey, session: CardSession, target: Target,
                              challenge: [UInt8] = randomChallenge()) async throws(FeliCaError) -> Result {
        let mac = try await start(key: key, session: session, target: target, challenge: challenge)
        let (idBlock, idOK) = try await readChecked(blocks: [LiteMAC.idBlock], mac: mac, session: session, target: target)
        guard idOK else { return Result(outcome: .internalFailed, idBlock: idBlock[0], mac: mac) }
        let wcnt = Array(try await session.read(service: readService, blocks: LiteMAC.wcntBlock..<(LiteMAC.wcntBlock + 1), from: target)[0].prefix(3))
        let state: [UInt8] = [0x01] + [UInt8](repeating: 0, count: 15)
        let maca = try mac.writeMACABlock(wcnt: wcnt, block: LiteMAC.stateBlock, data: state)
        do {
            try await session.write(service: writeService, blocks: [(LiteMAC.stateBlock, state), (LiteMAC.macABlock, maca)], to: target)
        } catch where error.code == .status {
            return Result(outcome: .externalFailed(reason: "the tag refused the STATE write with MAC_A: \(error.reason)"), idBlock: idBlock[0], mac: mac)
        }
        let (stateBack, stateOK) = try await readChecked(blocks: [LiteMAC.stateBlock], mac: mac, session: session, target: target)
        guard stateOK, stateBack[0].first == 0x01 else {
            return Result(outcome: .externalFailed(reason: stateOK ? "STATE reads EXT_AUTH \(Hex.encode(stateBack[0].prefix(1))), not 01" : "the MAC_A over STATE did not match"),
                          idBlock: idBlock[0], mac: mac)
        }
        return Result(outcome: .mutual, idBlock: idBlock[0], mac: mac)
    }

    /// Writes a fresh challenge to RC: the tag starts a session under its key.
    public static func start(key: LiteCardKey, session: CardSession, target: Target,
                             challenge: [UInt8] = randomChallenge()) async throws(FeliCaError) -> LiteMAC {
        let mac = try LiteMAC(key: key, challenge: challenge)
        do {
            try await session.write(service: writeService, blocks: [(LiteMAC.rcBlockNumber, mac.rcBlock)], to: target)
        } catch where error.code == .status {
            throw FeliCaError(.unsupported, "the card refused the random challenge (RC, block 80 of service 0009), so it is no FeliCa Lite-S or its RC is closed: \(error.reason)", statusFlags: error.statusFlags)
        }
        return mac
    }

    /// Reads up to 3 blocks with MAC_A and says whether the MAC_A matched.
    public static func readChecked(blocks: [Int], mac: LiteMAC, session: CardSession, target: Target) async throws(FeliCaError) -> (blocks: [[UInt8]], macMatches: Bool) {
        guard (1...3).contains(blocks.count) else { throw FeliCaError(.invalidArgument, "a read with MAC_A takes 1 to 3 blocks, got \(blocks.count)") }
        let got = try await session.read([BlockRequest(service: readService, blocks: blocks + [LiteMAC.macABlock])], from: target)[0]
        let data = got.dropLast().flatMap { $0 }
        let expected = try mac.readMACA(blocks: blocks, data: data)
        return (Array(got.dropLast()), Array(got.last!.prefix(8)) == expected)
    }
}
