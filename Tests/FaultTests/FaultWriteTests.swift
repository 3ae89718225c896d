import FeliCa
import FeliCaLibNFC
import FeliCaEmulators
import FeliCaSimulation
import TestSupport
import Testing

/// Write Without Encryption through real libnfc and the PN532 emulator when the reply goes
/// missing: the write reaches the card once, is never sent again, and the error says the
/// data may or may not be stored.
@Suite("ambiguous writes through libnfc", .serialized)
struct FaultWriteTests {
    static let record = [UInt8](repeating: 0xAB, count: 16)

    /// Exchange 1 is the Polling of `detect()`, exchange 2 the write. The card stores the
    /// record each time; only the reply is lost (late past the host's wait, garbled, or
    /// without its ACK).
    @Test("the card stored it but the reply was lost: ambiguous, sent once, readable afterwards",
          arguments: [PN532Fault.Kind.lateReply(.milliseconds(600)), .corruptChecksum, .dropAck])
    func replyLost(_ kind: PN532Fault.Kind) async throws {
        let card = VirtualCard(image: WritableCard.image)
        try await withEmulatedReader(card: card, options: .init(faults: [PN532Fault(kind, atExchange: 2)])) { t, server in
            let session = CardSession(transport: t)
            let target = try await session.detect()
            let start = ContinuousClock.now
            do throws(FeliCaError) {
                try await session.write(service: WritableCard.service, blocks: [(0, Self.record)], to: target)
                Issue.record("\(kind): the write reported success although its reply was lost")
            } catch {
                #expect(error.code == .ambiguousWrite, "\(kind): \(error.code) \(error.reason)")
                #expect(error.reason.contains("may or may not"), "\(error.reason)")
                #expect(error.reason.contains("\(WritableCard.service)"), "names the service: \(error.reason)")
            }
            #expect(ContinuousClock.now - start < .seconds(60), "\(kind): bounded")  // a hang guard
            // Never repeated: exactly two packets reached the card, and it holds the new
            // record once (a second write would have pushed in a second copy).
            #expect(server.cardExchanges == 2, "\(kind): \(server.cardExchanges) card exchanges")
            #expect(WritableCard.stored(card) == [Self.record] + WritableCard.records.dropLast())
            // The next commands work, and reading back (what the error advises) tells.
            let again = try await session.detect()
            let back = try await session.read(service: WritableCard.service, blocks: 0..<2, from: again)
            #expect(back == [Self.record, WritableCard.records[0]])
            #expect(await session.exchangeCount == 4)
        }
    }

    @Test("the card left before the write: ambiguous too (the reader cannot tell), and nothing is stored")
    func cardGoneBeforeWrite() async throws {
        let card = VirtualCard(image: WritableCard.image)
        try await withEmulatedReader(card: card) { t, server in
            let session = CardSession(transport: t)
            let target = try await session.detect()
            card.removeAfter(exchanges: 0)
            await #expect(throws: FeliCaError(.ambiguousWrite, "")) {
                try await session.write(service: WritableCard.service, blocks: [(0, Self.record)], to: target)
            }
            // One write packet, plus the Polling libnfc's transport sends to see whether the
            // card is still there; no second write.
            #expect(server.cardExchanges == 3, "\(server.cardExchanges) card exchanges")
            #expect(WritableCard.stored(card) == WritableCard.records)
            card.isPresent = true
            let back = try await session.read(service: WritableCard.service, blocks: 0..<5, from: try await session.detect())
            #expect(back == WritableCard.records)
        }
    }

    @Test("a refused write (status flags) is a plain failure, not an ambiguous one")
    func refusedWrite() async throws {
        let card = VirtualCard(image: WritableCard.image)
        try await withEmulatedReader(card: card) { t, _ in
            let session = CardSession(transport: t)
            let target = try await session.detect()
            do throws(FeliCaError) {
                try await session.write(service: WritableCard.service, blocks: [(9, Self.record)], to: target)
                Issue.record("a write past the end succeeded")
            } catch {
                #expect(error.code == .status, "\(error.code) \(error.reason)")
                #expect(error.statusFlags?.sf2 == 0xA8)
            }
            #expect(WritableCard.stored(card) == WritableCard.records)
        }
    }

    @Test("a lost answer is settled by reading back: done, and sent once",
          arguments: [PN532Fault.Kind.lateReply(.milliseconds(600)), .corruptChecksum, .dropAck])
    func lostReplyReadBack(_ kind: PN532Fault.Kind) async throws {
        let card = VirtualCard(image: WritableCard.image)
        try await withEmulatedReader(card: card, options: .init(faults: [PN532Fault(kind, atExchange: 2)])) { t, server in
            let session = CardSession(transport: t)
            let target = try await session.detect()
            let outcome = try await session.writeConfirmed(service: WritableCard.service, blocks: [(0, Self.record)], to: target)
            #expect(outcome == .storedDespiteLostReply, "\(kind)")
            // One write reached the card (a cyclic service would hold a second copy otherwise).
            #expect(WritableCard.stored(card) == [Self.record] + WritableCard.records.dropLast())
        }
    }

    @Test("the card left before the write and stays away: the read-back fails too, so the outcome is unknown")
    func lostReplyAndNoReadBack() async throws {
        let card = VirtualCard(image: WritableCard.image)
        try await withEmulatedReader(card: card) { t, _ in
            let session = CardSession(transport: t)
            let target = try await session.detect()
            card.removeAfter(exchanges: 0)
            do throws(FeliCaError) {
                _ = try await session.writeConfirmed(service: WritableCard.service, blocks: [(0, Self.record)], to: target)
                Issue.record("an outcome without a card")
            } catch {
                #expect(error.code == .ambiguousWrite)
                #expect(error.reason.contains("whether the write was done is unknown"), "\(error.reason)")
            }
            #expect(WritableCard.stored(card) == WritableCard.records)
        }
    }
}
