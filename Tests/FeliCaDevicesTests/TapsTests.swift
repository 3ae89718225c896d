import FeliCa
@testable import FeliCaDevices
import FeliCaEmulators
import FeliCaSimulation
import FeliCaTrace
import Foundation
import Testing
import FeliCaCards

@Suite("Taps", .serialized)
struct TapsTests {
    /// The next card is looked for at 212 kbps even when the last one was read at 424 kbps:
    /// a card that runs at 212 kbps only would never answer otherwise.
    @Test func theNextCardIsLookedForAtTheSlowestRate() async throws {
        var image = try #require(SampleCards.image(named: "suica"))
        image.bitRates = [.kbps212]
        let link = VirtualTransport(card: VirtualCard(image: image), name: "virtual:slow", bitRates: [.kbps212, .kbps424])
        try await link.switchBitRate(to: .kbps424)
        let taps = Taps(CardSession(transport: link), interval: .milliseconds(1))
        let wait = Task { try await taps.waitForCard().target }
        // At 424 kbps the card stays silent and the wait never ends: give it two seconds.
        let guardTask = Task {
            try await Task.sleep(for: .seconds(2))
            wait.cancel()
        }
        defer { guardTask.cancel() }
        let found = try await wait.value
        #expect(found.systemCode == 0x0003)
        #expect(link.bitRate == .kbps212)
    }

    /// A virtual card is taken away after each tap and placed again after the interval, so
    /// taps come at the interval, not as fast as the loop runs.
    @Test func aVirtualCardIsTappedAtTheInterval() async throws {
        let device = try await Device.open("virtual:suica")
        let interval = Duration.milliseconds(40)
        let clock = ContinuousClock()
        let start = clock.now
        var seen: [IDm] = []
        for try await tap in device.taps(device.session(), interval: interval) {
            seen.append(tap.target.idm)
            if seen.count == 4 { break }
        }
        await device.close()
        #expect(seen.count == 4)
        #expect(Set(seen).count == 1)
        // Three gaps between four taps, each at least the interval.
        #expect(clock.now - start >= interval * 3)
    }

    /// The card's presence is its transport's: a session on a virtual card wrapped as the
    /// command line wraps it (a recorder here) is tapped the same, with no `Device` telling
    /// the loop which card to move, and the card is in the field while the loop waits for it.
    @Test func aWrappedVirtualTransportMovesItsOwnCard() async throws {
        let card = try VirtualCard.named("suica")
        let link = VirtualTransport(card: card, name: "virtual:suica")
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("taps-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let recorder = try TraceRecorder(wrapping: link, path: dir.appendingPathComponent("t.jsonl").path)
        #expect(recorder.placesCardItself)
        let taps = Taps(CardSession(transport: recorder), interval: .milliseconds(5))
        var count = 0
        for try await _ in taps {
            #expect(card.isPresent)
            count += 1
            if count == 3 { break }
        }
        #expect(count == 3)
        await recorder.close()
    }

    /// Opening hands on what it opened: the image of a `virtual:<file>` (loaded once), the
    /// virtual card, the replay; nothing of the kind for a built-in card.
    @Test func openingHandsOnTheImageAndTheReplay() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("device-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("card.json").path
        let suica = try #require(SampleCards.image(named: "suica"))
        try suica.jsonText().write(toFile: path, atomically: true, encoding: .utf8)
        let fromFile = try await Device.open("virtual:" + path)
        #expect(fromFile.image?.systems.map(\.code) == suica.systems.map(\.code))
        #expect(fromFile.virtualCard != nil && fromFile.replay == nil)
        await fromFile.close()
        let builtIn = try await Device.open("virtual:suica")
        #expect(builtIn.image == nil && builtIn.virtualCard != nil)
        await builtIn.close()
    }

    /// Through the real libnfc against the PN532 emulator whose card comes and goes: each
    /// arrival is one tap, and a card held in the field is not counted twice.
    @Test func tapsThroughLibnfc() async throws {
        setenv("LIBNFC_AUTO_SCAN", "false", 1)
        let card = try VirtualCard.named("suica")
        // In the field for 6 packets, away for 4: with Polling and presence checks each tap
        // is a handful of packets.
        let server = try PN532Server(card: card, options: .init(taps: CardTaps(present: 6, absent: 4)))
        server.start()
        defer { server.stop() }
        let device = try await Device.open("libnfc:" + server.connectionString, options: .init(requiresCard: false))
        let session = device.session()
        var events: [Taps.Event] = []
        var count = 0
        let recorded = EventLog()
        for try await tap in device.taps(session, interval: .milliseconds(1), onEvent: { recorded.add($0) }) {
            #expect(tap.target.idm == card.image.systems[0].idm)
            count += 1
            if count == 3 { break }
        }
        await device.close()
        events = recorded.events
        #expect(count == 3)
        // Waiting for a card, then for its leaving, in turn.
        #expect(Array(events.prefix(5)) == [.waitingForCard, .waitingForRemoval, .waitingForCard, .waitingForRemoval, .waitingForCard])
    }

    /// A PN532 whose port goes away for 0.8 s (the pseudo-terminal closes, its link is
    /// removed, then a new one comes up at the same link), through the native serial
    /// transport and through libnfc: the loop says the reader was lost once, opens it again
    /// by the same device string, says it is back once, and reads the next cards.
    @Test(arguments: ["pn532:", "libnfc:pn532_uart:"])
    func aReaderThatGoesAwayIsOpenedAgain(prefix: String) async throws {
        setenv("LIBNFC_AUTO_SCAN", "false", 1)
        let card = try VirtualCard.named("suica")
        let link = NSTemporaryDirectory() + "felica-taps-\(getpid())-\(prefix.count)"
        let away = try PN532Fault(parsing: "away@14:800")
        let server = try PN532Server(card: card, options: .init(faults: [away], taps: CardTaps(present: 6, absent: 4)), link: link)
        server.start()
        defer { server.stop() }
        let device = try await Device.open(prefix + link, options: .init(requiresCard: false, reconnectInterval: .milliseconds(100)))
        let recorded = EventLog()
        var count = 0
        let start = ContinuousClock.now
        for try await tap in device.taps(device.session(), interval: .milliseconds(1), onEvent: { recorded.add($0) }) {
            #expect(tap.target.idm == card.image.systems[0].idm)
            count += 1
            if count == 4 { break }
        }
        await device.close()
        #expect(count == 4)
        let losses = recorded.events.compactMap { event -> FeliCaError? in
            if case .readerLost(let name, let error) = event, name == prefix + link { return error }
            return nil
        }
        #expect(losses.map(\.code) == [.readerGone])
        #expect(recorded.events.filter { $0 == .readerBack(device: prefix + link) }.count == 1)
        // Lost before back, and cards read after it.
        let lost = try #require(recorded.events.firstIndex { if case .readerLost = $0 { true } else { false } })
        let back = try #require(recorded.events.firstIndex(of: .readerBack(device: prefix + link)))
        #expect(lost < back && recorded.events[back...].contains(.waitingForRemoval))
        #expect(ContinuousClock.now - start >= .milliseconds(800))
        // Away 0.8 s, tried every 0.1 s: the failed tries are told, once per code in a row
        // (about eight tries, one or two codes).
        let stillAway = recorded.events[lost..<back].compactMap { event -> FeliCaError.Code? in
            if case .readerStillAway(let name, let error) = event, name == prefix + link { return error.code }
            return nil
        }
        #expect(!stillAway.isEmpty && stillAway.count < 4, "\(recorded.events)")
        #expect(zip(stillAway, stillAway.dropFirst()).allSatisfy { $0 != $1 }, "\(stillAway)")
    }

    /// Without a reconnect interval the loss ends the loop with the reader's error, as before.
    @Test func withoutReconnectingALostReaderEndsTheLoop() async throws {
        let card = try VirtualCard.named("suica")
        let link = NSTemporaryDirectory() + "felica-taps-\(getpid())-once"
        let server = try PN532Server(card: card, options: .init(faults: [try PN532Fault(parsing: "away@3:800")]), link: link)
        server.start()
        defer { server.stop() }
        let device = try await Device.open("pn532:" + link, options: .init(requiresCard: false))
        let recorded = EventLog()
        await #expect(throws: FeliCaError(.readerGone, "")) {
            for try await _ in device.taps(device.session(), interval: .milliseconds(1), onEvent: { recorded.add($0) }) {}
        }
        await device.close()
        #expect(!recorded.events.contains { if case .readerLost = $0 { true } else { false } })
    }

    /// A device string that does not parse is the devices layer's own error, naming the string.
    @Test func aBadStringIsADeviceError() async throws {
        await #expect(throws: DeviceError(.badDeviceString, "")) { try await Device.open("usbb") }
        do {
            _ = try await Device.open("virtual:suca")
        } catch let error as DeviceError {
            #expect(error.reason.contains("virtual:suca"))
            #expect(error.reason.contains("Did you mean virtual:suica?"))
        }
    }

    /// A dialect is for PC/SC readers only.
    @Test func aDialectForAnotherKindIsRefused() async throws {
        await #expect(throws: DeviceError(.inapplicableOption, "")) {
            try await Device.open("virtual:suica", options: .init(dialect: .sony))
        }
    }
}

/// Events seen by the loop's callback, in order.
final class EventLog: @unchecked Sendable {
    // Guarded by `lock`; the callback and the test read it from different tasks.
    private let lock = NSLock()
    private var list: [Taps.Event] = []
    func add(_ event: Taps.Event) { lock.withLock { list.append(event) } }
    var events: [Taps.Event] { lock.withLock { list } }
}
