import FeliCa

/// What ``NDEFTag/write(_:using:)`` did.
public struct NDEFWriteResult: Hashable, Sendable {
    public var idm: IDm
    /// The attribute block as it now stands.
    public var attributes: T3TAttributes
    /// Write Without Encryption commands sent, the two attribute block writes included.
    public var writeCommands: Int
    /// Writes whose answer was lost but whose blocks read back as written.
    public var lostReplies: Int
}

/// What ``NDEFTag/format(using:)`` did.
public struct NDEFFormatResult: Hashable, Sendable {
    public var idm: IDm
    public var attributes: T3TAttributes
    /// Whether the MC block's NDEF flag had to be set (it was not yet).
    public var setNDEFFlag: Bool
}

/// What ``NDEFTag/protect(using:)`` did.
public struct NDEFProtectResult: Hashable, Sendable {
    public var idm: IDm
    public var attributes: T3TAttributes
    /// Whether the chip's own write protection (MC block) was set too; false when the MC
    /// block is locked, so only the attribute block says read-only.
    public var lockedMemory: Bool
}

extension NDEFTag {
    /// The MC block of a FeliCa Lite or Lite-S: bytes 0-1 one bit per user block (writable),
    /// byte 2 FF while the system blocks (MC among them) can be written, byte 3 bit 0 NDEF.
    static let mcBlock = 0x88
    /// The 88B4 system of a FeliCa Lite or Lite-S.
    static let liteSystem: SystemCode = 0x88B4

    /// Writes `message` (an encoded NDEF message) to the tag on `session`, formatted for NDEF.
    ///
    /// The attribute block is written first with WriteF = 0F (writing), then the message's
    /// blocks in as few Write Without Encryption commands as Nbw and the card allow, then
    /// the attribute block with the new Ln and WriteF = 00: a tag pulled in between is left
    /// saying a write was interrupted, never showing a cut message as whole. A write whose
    /// answer is lost is read back, and carries on only when the blocks hold what was
    /// written; it is never sent twice. Throws `.unsupported` for a read-only tag (RWFlag
    /// 00) and `.invalidArgument` naming the room left when the message does not fit.
    public static func write(_ message: [UInt8], using session: CardSession) async throws(FeliCaError) -> NDEFWriteResult {
        try await session.useSlowestBitRate()
        guard let target = try await session.select(T3TAttributes.system) else { throw try await noNDEFSystem(session) }
        let old = try await attributes(session, target)
        guard old.isWritable else {
            throw FeliCaError(.unsupported, "the tag (IDm \(target.idm)) is read-only: its NDEF attribute block has RWFlag 00; nothing was written")
        }
        let room = old.nmaxb * 16
        guard message.count <= room else {
            throw FeliCaError(.invalidArgument, "the NDEF message is \(message.count) bytes and the tag holds \(room) (Nmaxb \(old.nmaxb) blocks): \(message.count - room) bytes too many; nothing was written")
        }
        var writer = BlockWriter(session: session, target: target)
        let step = max(1, min(old.nbw, await session.writeLimit(for: target)))
        var begun = old
        begun.writeFlag = T3TAttributes.writing
        try await writer.write([(0, begun.block)])
        var padded = message + [UInt8](repeating: 0, count: (16 - message.count % 16) % 16)
        if padded.isEmpty { padded = [] }
        let blocks = stride(from: 0, to: padded.count, by: 16).enumerated().map { (block: $0.offset + 1, data: Array(padded[$0.element..<($0.element + 16)])) }
        var start = 0
        while start < blocks.count {
            let chunk = Array(blocks[start..<min(start + step, blocks.count)])
            try await writer.write(chunk)
            start += chunk.count
        }
        var done = old
        done.writeFlag = 0
        done.length = message.count
        try await writer.write([(0, done.block)])
        return NDEFWriteResult(idm: target.idm, attributes: done, writeCommands: writer.commands, lostReplies: writer.lostReplies)
    }

    /// Formats a FeliCa Lite or Lite-S for NDEF: sets the MC block's NDEF flag (while the
    /// MC block can still be written) and writes an attribute block from the tag's memory:
    /// Nmaxb counts the writable user blocks after block 0 (MC bytes 0-1), Nbr 4, Nbw 1, an
    /// empty message. Throws `.unsupported` for any other card, a tag whose block 0 is
    /// read-only, or one whose MC block is locked without the NDEF flag.
    public static func format(using session: CardSession) async throws(FeliCaError) -> NDEFFormatResult {
        try await session.useSlowestBitRate()
        let target = try await session.detect()
        guard target.pmm.ic.family == .lite || target.pmm.ic.family == .liteS else {
            throw FeliCaError(.unsupported, "the card (IDm \(target.idm), \(target.pmm.ic)) is no FeliCa Lite or Lite-S; only those are formatted for NDEF here; nothing was written")
        }
        var mc = try await session.read(service: T3TAttributes.readService, blocks: mcBlock..<(mcBlock + 1), from: target)[0]
        let rw = Int(mc[0]) | Int(mc[1]) << 8
        guard rw & 1 == 1 else {
            throw FeliCaError(.unsupported, "block 0 of the tag (IDm \(target.idm)) is read-only (MC block bytes 0-1 \(Hex.encode(mc[0..<2]))), so it cannot hold the NDEF attribute block; nothing was written")
        }
        var writer = BlockWriter(session: session, target: target)
        let setFlag = mc[3] & 1 == 0
        if setFlag {
            guard mc[2] == 0xFF else {
                throw FeliCaError(.unsupported, "the tag's MC block is locked (byte 2 is \(Hex.encode([mc[2]])), not FF) without the NDEF flag, so it can no longer be made an NDEF tag; nothing was written")
            }
            mc[3] |= 1
            try await writer.write([(mcBlock, mc)])
        }
        var nmaxb = 0
        while nmaxb < 13 && rw >> (nmaxb + 1) & 1 == 1 { nmaxb += 1 }
        let attributes = T3TAttributes(nbr: 4, nbw: 1, nmaxb: nmaxb, length: 0)
        try await writer.write([(0, attributes.block)])
        return NDEFFormatResult(idm: target.idm, attributes: attributes, setNDEFFlag: setFlag)
    }

    /// Makes an NDEF tag read-only: RWFlag 00 in the attribute block, and, on a FeliCa Lite or
    /// Lite-S whose MC block can still be written, the user blocks' write bits cleared and
    /// the system blocks locked (which cannot be undone).
    public static func protect(using session: CardSession) async throws(FeliCaError) -> NDEFProtectResult {
        try await session.useSlowestBitRate()
        guard let target = try await session.select(T3TAttributes.system) else { throw try await noNDEFSystem(session) }
        var a = try await attributes(session, target)
        var writer = BlockWriter(session: session, target: target)
        a.rwFlag = 0
        try await writer.write([(0, a.block)])
        var locked = false
        if target.pmm.ic.family == .lite || target.pmm.ic.family == .liteS {
            var mc = try await session.read(service: T3TAttributes.readService, blocks: mcBlock..<(mcBlock + 1), from: target)[0]
            if mc[2] == 0xFF {
                mc[0] = 0; mc[1] &= 0x40  // S_PAD0-13 read-only; REG keeps its bit
                mc[2] = 0
                try await writer.write([(mcBlock, mc)])
                locked = true
            }
        }
        return NDEFProtectResult(idm: target.idm, attributes: a, lockedMemory: locked)
    }

    /// The attribute block, read for a writer (an interrupted write's WriteF 0F is allowed).
    static func attributes(_ session: CardSession, _ target: Target) async throws(FeliCaError) -> T3TAttributes {
        let block0: [UInt8]
        do {
            block0 = try await session.read(service: T3TAttributes.readService, blocks: 0..<1, from: target)[0]
        } catch where error.code == .status {
            throw FeliCaError(.invalidField, "the card answers system 12FC (NDEF) but not a read of its attribute block (service 000B, block 0): \(error.reason)")
        }
        return try T3TAttributes(block: block0, allowingWriteInProgress: true)
    }

    /// The error for a card without system 12FC (or no card).
    static func noNDEFSystem(_ session: CardSession) async throws(FeliCaError) -> FeliCaError {
        guard let any = try await session.poll(systemCode: .wildcard, requestCode: .systemCode) else {
            return FeliCaError(.noCard, "no card answered Polling on \(session.transport.name): place a card on the reader")
        }
        let lite = any.pmm.ic.family == .lite || any.pmm.ic.family == .liteS
        return FeliCaError(.unsupported, "the card (IDm \(any.idm), \(any.pmm.ic)) has no NDEF system 12FC: it is not formatted for NDEF" + (lite ? " (a FeliCa Lite can be formatted first)" : "") + "; nothing was written")
    }
}

/// Writes through service 0009, each command once; a lost answer is settled by reading back.
struct BlockWriter {
    let session: CardSession
    let target: Target
    var commands = 0
    var lostReplies = 0

    init(session: CardSession, target: Target) {
        self.session = session
        self.target = target
    }

    mutating func write(_ blocks: [(block: Int, data: [UInt8])]) async throws(FeliCaError) {
        commands += 1
        let outcome = try await session.writeConfirmedIfLost(service: T3TAttributes.writeService, blocks: blocks,
                                                              readingThrough: T3TAttributes.readService, to: target)
        switch outcome {
        case .stored: break
        case .storedDespiteLostReply: lostReplies += 1
        case .notStored(let b), .differs(let b):
            throw FeliCaError(.ambiguousWrite, "the answer to the write of block\(b.count == 1 ? "" : "s") \(b.map(String.init).joined(separator: ",")) was lost and reading back shows the old data: the write was not done and was not sent again; the tag is left with its attribute block saying a write is under way")
        }
    }
}
