import FeliCa
import FeliCaCards
import FeliCaLibNFC
import FeliCaEmulators
import FeliCaSimulation
import TestSupport
import Testing

/// A full history read of a card through real libnfc while the card or the reader
/// misbehaves at each exchange in turn. Every run either gives the complete report (the
/// same as through the virtual transport) or fails with an error; never a shorter report.
@Suite("history reads through libnfc with faults at every exchange", .serialized)
struct FaultHistoryTests {
    static let reader = CardReader(depth: .history)

    /// A built-in card, or `suica-short`: a Suica whose history holds 7 blocks, not the
    /// layout's 20, so the batch is refused and the history is read block by block.
    static func card(_ name: String) throws -> VirtualCard {
        guard name == "suica-short" else { return try VirtualCard.named(name) }
        var image = try #require(SampleCards.image(named: "suica"))
        image.systems[0].services = image.systems[0].services.map { s in
            s.code == TransitIC.historyService ? CardImage.Service(code: s.code, blocks: Array(s.blocks!.prefix(7))) : s
        }
        return VirtualCard(image: image)
    }

    /// The report and the card exchanges of a fault-free read through libnfc.
    static func reference(_ name: String) async throws -> (CardReport, Int) {
        let virtual = try await reader.read(CardSession(transport: VirtualTransport(card: try card(name), name: "virtual:\(name)")))
        let (viaLibNFC, exchanges) = try await withEmulatedReader(card: try card(name)) { t, server in
            (try await reader.read(CardSession(transport: t)), server.cardExchanges)
        }
        #expect(viaLibNFC == virtual)
        return (virtual, exchanges)
    }

    /// One read through a fresh emulator: the report, or the error.
    static func read(_ card: VirtualCard, faults: [PN532Fault] = []) async throws -> Result<CardReport, FeliCaError> {
        try await withEmulatedReader(card: card, options: .init(faults: faults)) { t, _ in
            do throws(FeliCaError) {
                return .success(try await reader.read(CardSession(transport: t)))
            } catch {
                return .failure(error)
            }
        }
    }

    static func check(_ outcome: Result<CardReport, FeliCaError>, _ complete: CardReport, _ what: String,
                      allowed: Set<FeliCaError.Code>) {
        switch outcome {
        case .success(let report):
            if report != complete {
                Issue.record("\(what): no error, but not the complete report: purses \(report.purses.map(\.profile)), notes \(report.notes)")
            }
        case .failure(let error):
            #expect(allowed.contains(error.code), "\(what): \(error.code): \(error.reason)")
            #expect(!error.reason.isEmpty)
        }
    }

    /// Regression (suica-short): when the card left while a refused batch was read again
    /// service by service, the block-by-block fallback stopped quietly (`try?`) and the
    /// report came out with a shorter history, no issue, exit 0.
    @Test("card removed after each exchange in turn", arguments: ["wallet", "suica", "suica-short"])
    func removal(_ name: String) async throws {
        let (complete, total) = try await Self.reference(name)
        #expect(total >= 3)  // Polling and at least two reads: something to interrupt
        for n in 0...total {
            let card = try Self.card(name)
            card.removeAfter(exchanges: n)
            let start = ContinuousClock.now
            let outcome = try await Self.read(card)
            #expect(ContinuousClock.now - start < .seconds(60), "\(name) removed after \(n): no end in sight")  // a hang guard, not a figure (parallel test suites can starve the cooperative pool for seconds)
            Self.check(outcome, complete, "\(name) removed after \(n)", allowed: n == 0 ? [.noCard] : [.cardGone])
            if n >= total, case .failure(let e) = outcome { Issue.record("\(name): removal after the last exchange (\(n)) failed: \(e.reason)") }
        }
    }

    /// Every command of a history read is safe to repeat (Polling included), so the
    /// session rides over any single lost reply: the report is complete every time.
    @Test("a late, garbled or unacknowledged reply at each exchange in turn: the full report",
          arguments: [PN532Fault.Kind.lateReply(.milliseconds(400)), .corruptChecksum, .dropAck])
    func replyFaults(_ kind: PN532Fault.Kind) async throws {
        let (complete, total) = try await Self.reference("wallet")
        for n in 1...total {
            let start = ContinuousClock.now
            let outcome = try await Self.read(try VirtualCard.named("wallet"), faults: [PN532Fault(kind, atExchange: n)])
            #expect(ContinuousClock.now - start < .seconds(60), "\(kind) at \(n): no end in sight")  // a hang guard
            Self.check(outcome, complete, "\(kind) at exchange \(n)", allowed: [])
        }
    }

    /// Regression (found by the fault sweep): a late reply to the very first Polling came
    /// back from libnfc as a timeout, which the session took for "no card" (exit 69 with
    /// the card on the reader); a garbled one ended the command instead of being polled again.
    @Test("a lost reply to the first Polling: polled again, not 'no card'",
          arguments: [PN532Fault.Kind.lateReply(.milliseconds(400)), .corruptChecksum, .dropAck])
    func firstPollingLost(_ kind: PN532Fault.Kind) async throws {
        let card = try VirtualCard.named("suica")
        try await withEmulatedReader(card: card, options: .init(faults: [PN532Fault(kind, atExchange: 1)])) { t, server in
            let session = CardSession(transport: t)
            let target = try await session.detect()
            #expect(target.idm == card.systems[0].idm)
            #expect(server.cardExchanges == 2)
        }
    }

    /// Regression (found by the removal sweep): the card left just before the Polling for
    /// its second system; the silence was taken for "system not answering" and the report
    /// came out with the transit purse only, exit 0.
    @Test("the card leaves before its second system is polled: card gone, not a shorter report")
    func leavesBeforeSecondSystem() async throws {
        let card = try VirtualCard.named("wallet")
        card.removeAfter(exchanges: 4)  // Polling, Request System Code, the transit reads (two batches)
        let outcome = try await Self.read(card)
        guard case .failure(let error) = outcome else {
            Issue.record("expected an error, got \(try outcome.get().purses.map(\.profile))")
            return
        }
        #expect(error.code == .cardGone, "\(error.reason)")
    }

    /// Regression (found by FuzzSession, input Fuzz/Corpus/FuzzSession/regress-second-system-silent-twice):
    /// the card stayed silent for the Pollings of its second system but answered the
    /// wildcard one; the report came out without Edy, nanaco and WAON, exit 0. Here the
    /// card is out of the field for exactly those two Pollings (taps 5:2: Polling, Request
    /// System Code, two transit reads, the Request Service naming the transit brand, then
    /// two packets away).
    @Test("the card answers, but not for a system it lists: an error, not a shorter report")
    func listedSystemSilent() async throws {
        let card = try VirtualCard.named("wallet")
        let outcome = try await withEmulatedReader(card: card, options: .init(taps: .init(present: 5, absent: 2))) { t, _ in
            do throws(FeliCaError) {
                return Result<CardReport, FeliCaError>.success(try await Self.reader.read(CardSession(transport: t)))
            } catch {
                return .failure(error)
            }
        }
        guard case .failure(let error) = outcome else {
            Issue.record("expected an error, got \(try outcome.get().purses.map(\.profile))")
            return
        }
        #expect(error.code == .timeout, "\(error.reason)")
        #expect(error.reason.contains("FE00") && error.reason.contains("still on the reader"), "\(error.reason)")
    }

    /// Regression (found by the fault sweep): the Polling for the wallet's common area came
    /// back late; the report silently lacked Edy, nanaco and WAON.
    @Test("a late reply to the Polling of a listed system: polled again, full report")
    func lateSecondSystemPolling() async throws {
        let (complete, _) = try await Self.reference("wallet")
        let outcome = try await Self.read(try VirtualCard.named("wallet"), faults: [PN532Fault(.lateReply(.milliseconds(400)), atExchange: 5)])
        #expect(try outcome.get() == complete)
    }
}
