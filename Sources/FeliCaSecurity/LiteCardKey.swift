import FeliCa

/// The card key of a FeliCa Lite or Lite-S: 16 bytes, K1 ‖ K2 of its 2-key Triple-DES, in
/// the order a host hands it to the cipher (nfcpy's `FelicaLiteS.authenticate` takes it
/// so). The tag's CK block (0x87) holds each 8-byte half reversed: the chip works little-endian.
public struct LiteCardKey: Hashable, Sendable {
    /// K1 ‖ K2, host order.
    public let bytes: [UInt8]

    public init(bytes: [UInt8]) throws(FeliCaError) {
        guard bytes.count == 16 else { throw FeliCaError(.invalidArgument, "a FeliCa Lite card key is 16 bytes (32 hex digits), got \(bytes.count)") }
        self.bytes = bytes
    }

    /// From the CK block's 16 bytes (each half reversed).
    public init(ckBlock: [UInt8]) throws(FeliCaError) {
        try self.init(bytes: LiteMAC.reversedHalves(ckBlock))
    }

    /// From 32 hex digits (spaces allowed), host order.
    public init(hex: String) throws(FeliCaError) {
        guard let b = Hex.decode(hex.filter { $0 != " " }) else {
            throw FeliCaError(.invalidArgument, "a FeliCa Lite card key is 32 hex digits; \"\(hex)\" is not hex")
        }
        try self.init(bytes: b)
    }

    /// The key as the CK block holds it.
    public var ckBlock: [UInt8] { LiteMAC.reversedHalves(bytes) }

    /// 32 hex digits, host order.
    public var hex: String { Hex.encode(bytes) }

    /// 16 zero bytes: the key nfcpy assumes on a tag nobody gave one.
    public static let zero = try! LiteCardKey(bytes: [UInt8](repeating: 0, count: 16))
}

/// The session of one authentication on a FeliCa Lite or Lite-S and the MACs computed
/// under it, both on the host's side and the tag's (the virtual card computes what a tag does).
///
/// The host writes a random challenge RC (16 bytes; the RC block 0x80 holds each half
/// reversed). The session key is the Triple-DES CBC encryption of RC under the card key
/// with a zero IV. A MAC is computed over 8-byte pieces, each reversed, encrypted in CBC
/// under the session key from RC's first half; the MAC is the last cipher block, reversed.
/// - MAC (block 0x81, read after the blocks it covers): over the blocks' data.
/// - MAC_A (block 0x91, Lite-S) on a read: over an 8-byte header naming the blocks read
///   (`b1 00 b2 00 … 91 00`, filled with FF), then the data.
/// - MAC_A on a write (Lite-S): over `WCNT(3) 00 block 00 91 00`, then the data, under the
///   session key with its halves swapped.
public struct LiteMAC: Hashable, Sendable {
    /// RC, host order (RC1 ‖ RC2).
    public let challenge: [UInt8]
    /// The session key SK1 ‖ SK2.
    public let sessionKey: [UInt8]

    public init(key: LiteCardKey, challenge: [UInt8]) throws(FeliCaError) {
        guard challenge.count == 16 else { throw FeliCaError(.invalidArgument, "a FeliCa Lite challenge is 16 bytes, got \(challenge.count)") }
        self.challenge = challenge
        sessionKey = try TripleDES.encryptCBC(challenge, key: key.bytes, iv: [UInt8](repeating: 0, count: 8))
    }

    /// From the RC block as written to the tag (each half reversed).
    public init(key: LiteCardKey, rcBlock: [UInt8]) throws(FeliCaError) {
        try self.init(key: key, challenge: Self.reversedHalves(rcBlock))
    }

    /// The RC block to write for this challenge.
    public var rcBlock: [UInt8] { Self.reversedHalves(challenge) }

    /// The MAC the tag returns in block 0x81 after `data` (whole blocks).
    public func mac(_ data: [UInt8]) throws(FeliCaError) -> [UInt8] {
        try Self.generate(data, key: sessionKey, iv: Array(challenge.prefix(8)))
    }

    /// The MAC_A the tag returns in block 0x91 after reading `blocks` (their numbers) with `data`.
    public func readMACA(blocks: [Int], data: [UInt8]) throws(FeliCaError) -> [UInt8] {
        var header: [UInt8] = []
        for b in blocks + [Self.macABlock] { header += [UInt8(truncatingIfNeeded: b), 0] }
        header += [UInt8](repeating: 0xFF, count: max(0, 8 - header.count))
        return try Self.generate(header + data, key: sessionKey, iv: Array(challenge.prefix(8)))
    }

    /// The MAC_A a host writes with `data` to `block`, the tag's write counter being `wcnt`
    /// (the WCNT block's first 3 bytes).
    public func writeMACA(wcnt: [UInt8], block: Int, data: [UInt8]) throws(FeliCaError) -> [UInt8] {
        let header = Array(wcnt.prefix(3)) + [0, UInt8(truncatingIfNeeded: block), 0, UInt8(Self.macABlock), 0]
        return try Self.generate(header + data, key: Array(sessionKey[8..<16] + sessionKey[0..<8]), iv: Array(challenge.prefix(8)))
    }

    /// The MAC_A block of a write: the MAC, then WCNT (3 bytes), then zeros.
    public func writeMACABlock(wcnt: [UInt8], block: Int, data: [UInt8]) throws(FeliCaError) -> [UInt8] {
        try writeMACA(wcnt: wcnt, block: block, data: data) + Array(wcnt.prefix(3)) + [UInt8](repeating: 0, count: 5)
    }

    /// Block numbers of the MAC, MAC_A, RC, ID, WCNT, STATE and CK blocks.
    public static let macBlock = 0x81, macABlock = 0x91, rcBlockNumber = 0x80, idBlock = 0x82
    public static let wcntBlock = 0x90, stateBlock = 0x92, ckBlock = 0x87

    /// The chip's MAC of `data` under `key` from `iv`: each 8-byte piece reversed,
    /// CBC-encrypted, the last cipher block reversed.
    public static func generate(_ data: [UInt8], key: [UInt8], iv: [UInt8]) throws(FeliCaError) -> [UInt8] {
        guard data.count % 8 == 0, !data.isEmpty else { throw FeliCaError(.invalidArgument, "a FeliCa Lite MAC covers whole 8-byte pieces, got \(data.count) bytes") }
        var text: [UInt8] = []
        text.reserveCapacity(data.count)
        for start in stride(from: 0, to: data.count, by: 8) { text += data[start..<(start + 8)].reversed() }
        let cipher = try TripleDES.encryptCBC(text, key: key, iv: iv)
        return Array(cipher.suffix(8).reversed())
    }

    /// Each 8-byte half reversed (16 bytes), as the chip stores keys and challenges.
    public static func reversedHalves(_ b: [UInt8]) -> [UInt8] {
        guard b.count == 16 else { return b }
        return Array(b[0..<8].reversed()) + Array(b[8..<16].reversed())
    }
}
