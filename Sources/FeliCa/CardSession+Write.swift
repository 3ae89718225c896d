/// What became of a write that ``CardSession/writeConfirmed(service:blocks:readingThrough:to:)`` sent.
public enum WriteOutcome: Hashable, Sendable {
    /// The card answered success and the read-back shows every block.
    case stored
    /// The card's answer was lost, but the read-back shows every block: the write was done.
    case storedDespiteLostReply
    /// The card's answer was lost and the read-back shows other data in these blocks: the
    /// write was not done (and was not sent again).
    case notStored(blocks: [Int])
    /// The card answered success, but the read-back shows other data in these blocks.
    case differs(blocks: [Int])

    /// Whether every block now holds what was written.
    public var isStored: Bool {
        switch self {
        case .stored, .storedDespiteLostReply: true
        case .notStored, .differs: false
        }
    }
}

extension NodeAttribute {
    /// Why Write Without Encryption cannot write a service of this attribute, in words; nil
    /// when it can (a random or cyclic read-write service, or a purse, without a key).
    public var writeRefusal: String? {
        if isArea { return "it is an area, not a service" }
        if requiresKey { return "it is \(description): writing it needs the service key (authentication), which Write Without Encryption does not do" }
        switch kind {
        case .random(readOnly: true), .cyclic(readOnly: true), .purse(.readOnly):
            return "it is \(description): the card refuses every write to it"
        case .unknown: return "its attribute \(hexByte(rawValue)) names no service kind"
        default: return nil
        }
    }
}

extension CardSession {
    /// Blocks one Write Without Encryption carries to `target`: 1 on a FeliCa Lite or Lite-S
    /// (their only size), else the card's read limit.
    public func writeLimit(for target: Target) -> Int {
        target.pmm.ic.family == .lite || target.pmm.ic.family == .liteS ? 1 : cardReadLimit(for: target)
    }

    /// Writes `blocks` of `service` once, then reads them back (through `readingThrough`,
    /// default the service itself: a FeliCa Lite writes through 0009 and reads through
    /// 000B) and says what the card holds. A write whose answer was lost is never sent again:
    /// the read-back tells whether it was done. Throws the card's refusal (`.status`) as it
    /// comes, and `.ambiguousWrite` only when the answer was lost and the read-back failed too.
    public func writeConfirmed(service: ServiceCode, blocks: [(block: Int, data: [UInt8])], readingThrough readService: ServiceCode? = nil,
                               to target: Target) async throws(FeliCaError) -> WriteOutcome {
        try await write(service: service, blocks: blocks, readingThrough: readService, to: target, alwaysReadBack: true)
    }

    /// Writes `blocks` once and reads them back only when the answer was lost (to tell
    /// whether the write was done): a writer of many blocks that trusts the card's success.
    public func writeConfirmedIfLost(service: ServiceCode, blocks: [(block: Int, data: [UInt8])], readingThrough readService: ServiceCode? = nil,
                                     to target: Target) async throws(FeliCaError) -> WriteOutcome {
        try await write(service: service, blocks: blocks, readingThrough: readService, to: target, alwaysReadBack: false)
    }

    private func write(service: ServiceCode, blocks: [(block: Int, data: [UInt8])], readingThrough readService: ServiceCode?,
                       to target: Target, alwaysReadBack: Bool) async throws(FeliCaError) -> WriteOutcome {
        var lost: FeliCaError? = nil
        do {
            try await write(service: service, blocks: blocks, to: target)
        } catch where error.code == .ambiguousWrite {
            lost = error
        }
        if lost == nil && !alwaysReadBack { return .stored }
        let back: [[UInt8]]
        do {
            back = try await read([BlockRequest(service: readService ?? service, blocks: blocks.map(\.block))], from: target)[0]
        } catch {
            if let lost { throw FeliCaError(.ambiguousWrite, "\(lost.reason); reading the blocks back failed too (\(error.reason)), so whether the write was done is unknown") }
            throw FeliCaError(error.code, "the write was answered with success, but reading the blocks back failed: \(error.reason)", statusFlags: error.statusFlags)
        }
        let differing = zip(blocks, back).filter { $0.0.data != $0.1 }.map(\.0.block)
        switch (lost != nil, differing.isEmpty) {
        case (false, true): return .stored
        case (true, true): return .storedDespiteLostReply
        case (true, false): return .notStored(blocks: differing)
        case (false, false): return .differs(blocks: differing)
        }
    }
}
