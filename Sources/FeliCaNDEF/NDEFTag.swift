import FeliCa

/// The NDEF message of an NFC Forum Type 3 Tag (a FeliCa Lite-S formatted for NDEF, or any
/// card with system 12FC), read through a `CardSession`.
///
/// The reading: Polling for system 12FC (a card without it is told apart from no card by a
/// wildcard Polling), block 0 of service 000B (the attribute block, checked field by field
/// by ``T3TAttributes/init(block:allowingWriteInProgress:)``), then blocks 1 to ⌈Ln / 16⌉ in reads of at most Nbr
/// blocks (fewer when the reader or card takes fewer), cut to Ln bytes and parsed.
public struct NDEFTag: Hashable, Sendable {
    public var idm: IDm
    public var pmm: PMm
    public var attributes: T3TAttributes
    /// The message's bytes, exactly Ln of them.
    public var message: [UInt8]
    /// Its records, chunks joined; empty when Ln is 0 (a formatted tag holding no message).
    public var records: [NDEFRecord]

    public init(idm: IDm, pmm: PMm, attributes: T3TAttributes, message: [UInt8]) throws(FeliCaError) {
        self.idm = idm
        self.pmm = pmm
        self.attributes = attributes
        self.message = message
        records = message.isEmpty ? [] : try NDEFRecord.parseMessage(message)
        // A record whose payload breaks its type's layout (a URI, Text or Smart Poster) is
        // an error naming the record, not a record shown as raw bytes.
        for (i, record) in records.enumerated() {
            do throws(FeliCaError) {
                _ = try NDEFContent(record)
            } catch {
                throw FeliCaError(error.code, "NDEF record \(i + 1) (\(record.typeText ?? Hex.encode(record.type))): \(error.reason)")
            }
        }
    }

    /// Reads the tag on `session`. Throws `.noCard` when no card answers, `.unsupported`
    /// naming the card's systems when it has no NDEF system, `.invalidField` naming the
    /// attribute block's field at fault (or Ln, when it reaches past the card's blocks),
    /// and the message parser's errors.
    public static func read(using session: CardSession) async throws(FeliCaError) -> NDEFTag {
        try await session.useSlowestBitRate()
        guard let target = try await session.select(T3TAttributes.system) else {
            throw try await noNDEF(session)
        }
        let service = T3TAttributes.readService
        let block0: [UInt8]
        do {
            block0 = try await session.read(service: service, blocks: 0..<1, from: target)[0]
        } catch where error.code == .status {
            throw FeliCaError(.invalidField, "the card answers system 12FC (NDEF) but not a read of its attribute block (service 000B, block 0): \(error.reason)")
        }
        let attributes = try T3TAttributes(block: block0)
        var data: [UInt8] = []
        let last = attributes.messageBlocks
        let step = max(1, min(attributes.nbr, await session.readLimit(for: target)))
        var next = 1
        while next <= last {
            let end = min(next + step, last + 1)
            do {
                for b in try await session.read(service: service, blocks: next..<end, from: target) { data += b }
            } catch where error.code == .status {
                throw FeliCaError(.invalidField, "NDEF attribute block: Ln (bytes 11-13) is \(attributes.length) bytes, blocks 1-\(last), but the card refused blocks \(next)-\(end - 1): \(error.reason)")
            }
            next = end
        }
        return try NDEFTag(idm: target.idm, pmm: target.pmm, attributes: attributes, message: Array(data.prefix(attributes.length)))
    }

    /// Why Polling for 12FC went unanswered: no card at all, or a card without NDEF.
    private static func noNDEF(_ session: CardSession) async throws(FeliCaError) -> FeliCaError {
        guard let any = try await session.poll(systemCode: .wildcard, requestCode: .systemCode) else {
            return FeliCaError(.noCard, "no card answered Polling on \(session.transport.name): place a card on the reader")
        }
        let target = Target(idm: any.idm, pmm: any.pmm, systemCode: any.systemCode)
        let systems = try await session.systemCodes(of: target)
        let list = systems.map { s in s.description + (s.knownName.map { " (\($0))" } ?? "") }.joined(separator: ", ")
        return FeliCaError(.unsupported, "the card (IDm \(any.idm), \(any.pmm.ic)) has no NDEF system 12FC, so it holds no NDEF message (it is not formatted as an NFC Forum Type 3 Tag); its systems: \(list.isEmpty ? "none listed" : list)")
    }
}
