import FeliCa
import Foundation
import Synchronization
import FeliCaReaderCodecs
import FeliCaPCSC
import FeliCaEmulators
import FeliCaSimulation
import Testing
import FeliCaCards

/// The real pcscd, the real libpcsclite and Debian's vpcd driver, with the virtual card.
@Suite("PC/SC through pcscd and vpcd", .serialized, .timeLimit(.minutes(2)))
struct PCSCEndToEndTests {
    /// A virtual card served to vpcd until ``stop()``, on a thread of its own started at
    /// once: a task would first wait for a thread of the shared pool, which other suites'
    /// blocking waits for their programs can hold for seconds while pcscd's reader waits.
    final class ServedCard: Sendable {
        let vpcd: VPCDCard
        private let end = Mutex<Result<VPCDCard.End, FeliCaError>?>(nil)

        init(_ card: VirtualCard, port: UInt16, dialect: PCSCDialect, getResponse: Bool = false, quirks: VPCDResponder.Quirks = .init()) {
            var options = VPCDCard.Options()
            options.port = port
            options.dialect = dialect
            options.getResponse = getResponse
            options.quirks = quirks
            let vpcd = VPCDCard(card: card, options: options)
            self.vpcd = vpcd
            Thread.detachNewThread { [self] in
                let result = Result { () throws(FeliCaError) -> VPCDCard.End in try vpcd.serveBlocking() }
                self.end.withLock { $0 = result }
            }
        }

        /// Takes the card away (again until serving ends: an eject that lands before the
        /// thread has begun to serve is forgotten when it begins) and says how serving ended.
        func stop() async throws -> VPCDCard.End {
            try await ended(ejecting: true)
        }

        /// How serving ended, once it has.
        func ended(ejecting: Bool = false) async throws -> VPCDCard.End {
            while true {
                if ejecting { vpcd.eject() }
                if let result = end.withLock({ $0 }) { return try result.get() }
                try await Task.sleep(for: .milliseconds(10))
            }
        }
    }

    struct Setup: Sendable, CustomStringConvertible {
        var dialect: PCSCDialect
        var forced: Bool
        var getResponse = false
        var description: String { "\(dialect)\(forced ? " forced" : " detected")\(getResponse ? " with 61 xx" : "")" }
    }

    @Test("a dump through pcscd equals the virtual device's, in every dialect", arguments: [
        Setup(dialect: .part3, forced: false), Setup(dialect: .acr122u, forced: false),
        Setup(dialect: .acr122u, forced: true, getResponse: true), Setup(dialect: .raw, forced: false),
        Setup(dialect: .sony, forced: true),
    ])
    func dump(_ s: Setup) async throws {
        let daemon = try PrivatePCSCD()
        defer { daemon.stop() }
        let expected = try await CardImage.read(using: CardSession(transport: VirtualTransport(card: try VirtualCard.named("suica"), name: "virtual:suica")))
        let card = try VirtualCard.named("suica")
        let served = ServedCard(card, port: daemon.port, dialect: s.dialect, getResponse: s.getResponse)
        let transport = try await PCSCTransport.open(.first, options: .init(dialect: s.forced ? s.dialect : nil, cardWait: .seconds(10)))
        #expect(transport.readerName == "Virtual PCD 00 00")
        #expect(transport.dialect == s.dialect)
        #expect(transport.atr?.isFeliCa == true)
        #expect(transport.idm == card.systems[0].idm)
        let image = try await CardImage.read(using: CardSession(transport: transport))
        await transport.close()
        #expect(image.jsonText() == expected.jsonText())
        #expect(try await served.stop() == .removed)
    }

    struct Quirky: Sendable, CustomStringConvertible {
        var dialect: PCSCDialect
        var quirks: VPCDResponder.Quirks
        var description: String { "\(dialect), \(quirks.summary)" }
    }

    static let quirky: [Quirky] = [PCSCDialect.part3, .sony].flatMap { d in
        [Set<TransparentExchange.Form>([.short, .extended]), [.short], [.extended]].flatMap { f in
            [false, true].map { Quirky(dialect: d, quirks: .init(forms: f, cutsLongReplies: $0)) }
        }
    }

    @Test("a reader that takes only short or only extended APDUs, or cuts long replies, still gives the whole card through pcscd", arguments: quirky)
    func apduForms(_ q: Quirky) async throws {
        let daemon = try PrivatePCSCD()
        defer { daemon.stop() }
        let expected = try await CardImage.read(using: CardSession(transport: VirtualTransport(card: try VirtualCard.named("suica"), name: "virtual:suica")))
        let served = ServedCard(try VirtualCard.named("suica"), port: daemon.port, dialect: q.dialect, quirks: q.quirks)
        let transport = try await PCSCTransport.open(.first, options: .init(dialect: q.dialect, cardWait: .seconds(10)))
        let image = try await CardImage.read(using: CardSession(transport: transport))
        #expect(transport.longestReply == (q.quirks.forms == [.short] ? TransparentExchange.longestPacketInShortReply : nil))
        await transport.close()
        #expect(image.jsonText() == expected.jsonText())
        #expect(try await served.stop() == .removed)
    }

    @Test("reader names: exact, unique prefix, ambiguous, unknown, empty slot")
    func readerNames() async throws {
        let daemon = try PrivatePCSCD()
        defer { daemon.stop() }
        let served = ServedCard(try VirtualCard.named("suica"), port: daemon.port, dialect: .part3)
        let exact = try await PCSCTransport.open(.named("Virtual PCD 00 00"), options: .init(cardWait: .seconds(10)))
        #expect(exact.dialect == .part3)
        await exact.close()
        await #expect(throws: FeliCaError(.badInput, "")) {
            try await PCSCTransport.open(.named("Virtual PCD 00 0"))
        }
        await #expect(throws: FeliCaError(.noReader, "")) {
            try await PCSCTransport.open(.named("No Such Reader"))
        }
        await #expect(throws: FeliCaError(.noCard, "")) {
            try await PCSCTransport.open(.named("Virtual PCD 00 01"))
        }
        // The listing sees the card in one slot and nothing in the other.
        let list = try await PCSCReaderInfo.list()
        #expect(list.map(\.name) == ["Virtual PCD 00 00", "Virtual PCD 00 01"])
        #expect(list.first?.state == .feliCa(atr: ATR.feliCa()))
        #expect(list.last?.state == .empty)
        _ = try await served.stop()
    }

    @Test("a card removed in the middle of a read is a clear error, quickly")
    func removedMidRead() async throws {
        let daemon = try PrivatePCSCD()
        defer { daemon.stop() }
        let card = try VirtualCard.named("suica")
        let served = ServedCard(card, port: daemon.port, dialect: .part3)
        let transport = try await PCSCTransport.open(.first, options: .init(cardWait: .seconds(10)))
        card.removeAfter(exchanges: 5)
        let clock = ContinuousClock()
        let start = clock.now
        do throws(FeliCaError) {
            _ = try await CardImage.read(using: CardSession(transport: transport))
            Issue.record("the read finished although the card left")
        } catch {
            #expect(error.code == .cardGone)
            #expect(error.reason.contains("removed"))
        }
        #expect(clock.now - start < .seconds(5))
        await transport.close()
        #expect(try await served.ended() == .removed)
    }

    @Test("waits for a card to arrive, and re-insertion works")
    func waitAndReinsert() async throws {
        let daemon = try PrivatePCSCD()
        defer { daemon.stop() }
        async let opened = PCSCTransport.open(.first, options: .init(cardWait: .seconds(10)))
        let served = ServedCard(try VirtualCard.named("suica"), port: daemon.port, dialect: .raw)
        let first = try await opened
        #expect(first.dialect == .raw)
        await first.close()
        #expect(try await served.stop() == .removed)
        // The same reader takes the card back.
        let again = ServedCard(try VirtualCard.named("suica"), port: daemon.port, dialect: .acr122u)
        let second = try await PCSCTransport.open(.first, options: .init(cardWait: .seconds(10)))
        #expect(second.dialect == .acr122u)
        let session = CardSession(transport: second)
        #expect(try await session.detect().systemCode == 0x0003)
        await second.close()
        _ = try await again.stop()
    }

    @Test("opened without a card, the transport takes each card placed, one after another")
    func followsCards() async throws {
        let daemon = try PrivatePCSCD()
        defer { daemon.stop() }
        let transport = try await PCSCTransport.open(.first, options: .init(requiresCard: false))
        let session = CardSession(transport: transport)
        #expect(try await session.poll()?.idm == nil)
        #expect(transport.dialect == nil)
        await #expect(throws: FeliCaError(.cardGone, "")) {
            try await transport.exchange(RequestResponseCommand(idm: IDm(rawValue: 0x0101_1203_1234_5678)).encode(), timeout: .milliseconds(100))
        }
        var targets: [Target] = []
        for (name, dialect) in [("suica", PCSCDialect.part3), ("edy", .part3), ("nanaco", .part3)] {
            let card = try VirtualCard.named(name)
            let served = ServedCard(card, port: daemon.port, dialect: dialect)
            let target = try await Self.detect(session, within: .seconds(10))
            #expect(target.idm == card.systems[0].idm, "\(name)")
            #expect(try await session.isPresent(target))
            targets.append(target)
            #expect(try await served.stop() == .removed)
            let clock = ContinuousClock()
            let start = clock.now
            while try await session.isPresent(target), clock.now - start < .seconds(10) {
                try await Task.sleep(for: .milliseconds(100))
            }
            #expect(try await !session.isPresent(target), "\(name) still seen after it left")
            // pcscd looks at vpcd's reader every 400 ms: a swap faster than that goes unseen.
            try await Task.sleep(for: .seconds(1))
        }
        #expect(transport.dialect == .part3)
        #expect(Set(targets.map(\.idm)).count == 3, "three different cards were read")
        await transport.close()
    }

    /// Polls (as `felica watch` does) until a card answers.
    static func detect(_ session: CardSession, within limit: Duration) async throws -> Target {
        let clock = ContinuousClock()
        let start = clock.now
        while true {
            let found: Target
            do throws(FeliCaError) {
                found = try await session.detect()
            } catch {
                guard error.code == .noCard, clock.now - start < limit else { throw error }
                try await Task.sleep(for: .milliseconds(100))
                continue
            }
            return found
        }
    }

    @Test("cancelling the wait for a card ends it at once (SCardCancel)")
    func cancelWait() async throws {
        let daemon = try PrivatePCSCD()
        defer { daemon.stop() }
        let clock = ContinuousClock()
        let start = clock.now
        let task = Task { try await PCSCTransport.open(.first, options: .init(cardWait: .seconds(60))) }
        try await Task.sleep(for: .milliseconds(300))
        task.cancel()
        await #expect(throws: FeliCaError(.cancelled, "")) { try await task.value }
        #expect(clock.now - start < .seconds(5))
        // Cancelled before the wait even starts: still no full wait.
        let early = Task { try await PCSCTransport.open(.first, options: .init(cardWait: .seconds(60))) }
        early.cancel()
        await #expect(throws: FeliCaError(.cancelled, "")) { try await early.value }
        #expect(clock.now - start < .seconds(10))
    }

    @Test("a reader held by another program is reported as in use")
    func inUse() async throws {
        let daemon = try PrivatePCSCD()
        defer { daemon.stop() }
        let served = ServedCard(try VirtualCard.named("suica"), port: daemon.port, dialect: .part3)
        let holder = try await PCSCTransport.open(.named("Virtual PCD 00 00"), options: .init(cardWait: .seconds(10)))
        do throws(FeliCaError) {
            _ = try await PCSCTransport.open(.named("Virtual PCD 00 00"))
            Issue.record("a second exclusive connection succeeded")
        } catch {
            #expect(error.code == .busy)
            #expect(error.reason.contains("in use by another program"))
        }
        #expect(try await PCSCReaderInfo.list().first?.inUse == true)
        await holder.close()
        _ = try await served.stop()
    }

    @Test("no reader connected: says so in plain words, with PC/SC's own code and no CLI word")
    func noReaderConnected() async throws {
        let daemon = try PrivatePCSCD(readers: false)
        defer { daemon.stop() }
        do throws(FeliCaError) {
            _ = try await PCSCTransport.open(.first, options: .init(cardWait: .milliseconds(200)))
            Issue.record("opened a reader where none is connected")
        } catch {
            #expect(error.code == .noReader && error.isUnavailable)
            #expect(error.pcscError?.code == .noReaders, "\(error.reason)")
            #expect(error.reason.hasPrefix("no PC/SC reader is connected"), "\(error.reason)")
            #expect(!error.reason.contains("--") && !error.reason.contains("felica "), "\(error.reason)")
        }
    }

    @Test("no daemon: says so and names the command that starts it")
    func noDaemon() async throws {
        let daemon = try PrivatePCSCD()
        daemon.stop()
        do throws(FeliCaError) {
            _ = try await PCSCTransport.open(.first)
            Issue.record("opened a reader without a daemon")
        } catch {
            #expect(error.code == .noReader && error.isUnavailable)
            #expect(error.pcscError?.code == .noService)
            #expect(error.reason.contains("sudo systemctl start pcscd"))
        }
        do throws(FeliCaError) {
            _ = try await PCSCReaderInfo.list()
            Issue.record("listed readers without a daemon")
        } catch {
            #expect(error.pcscError?.code == .noService)
        }
    }

    @Test("a pcscd that asks polkit, with no polkit daemon to answer, refuses: said as a refusal, not as no reader",
          .enabled(if: PrivatePCSCD.refusesWithoutPolkit))
    func refusedByPolkit() async throws {
        let daemon = try PrivatePCSCD(polkit: true)
        defer { daemon.stop() }
        do throws(FeliCaError) {
            _ = try await PCSCTransport.open(.first)
            Issue.record("pcscd let a client in with no polkit daemon to ask")
        } catch {
            #expect(error.code == .noReader)
            #expect(error.pcscError?.code == .accessDenied, "\(error.reason)")
            #expect(error.reason.contains("SCARD_W_SECURITY_VIOLATION") && error.reason.contains("polkit"), "\(error.reason)")
        }
        do throws(FeliCaError) {
            _ = try await PCSCReaderInfo.list()
            Issue.record("listed the readers of a pcscd that refuses")
        } catch {
            #expect(error.pcscError?.code == .accessDenied, "\(error.reason)")
        }
    }

    @Test("the daemon dying mid-session fails the next exchange without hanging")
    func daemonDies() async throws {
        let daemon = try PrivatePCSCD()
        let served = ServedCard(try VirtualCard.named("suica"), port: daemon.port, dialect: .part3)
        let transport = try await PCSCTransport.open(.first, options: .init(cardWait: .seconds(10)))
        daemon.stop()
        let session = CardSession(transport: transport)
        do throws(FeliCaError) {
            _ = try await session.detect()
            Issue.record("an exchange succeeded after pcscd stopped")
        } catch {
            #expect([.readerGone, .noReader, .cardGone].contains(error.code), "\(error.code): \(error.reason)")
            #expect(error.reason.contains("pcscd"), "\(error.reason)")
        }
        await transport.close()
        _ = try? await served.stop()
    }
}
