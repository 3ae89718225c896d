import FeliCa
import FeliCaPN532
import FeliCaReaderCodecs
@testable import FeliCaEmulators
import FeliCaSimulation
import Foundation
import TestSupport
import Testing
import FeliCaCards

/// The PN532 emulator on a pseudo-terminal holding `card`, and the native transport opened
/// on it, both closed when `body` returns.
@discardableResult
func withNativeReader<T>(card: VirtualCard?, options: PN532Emulator.Options = .init(), bitRate: AirTiming.BitRate = .kbps212,
                         _ body: (PN532SerialTransport, PN532Server) async throws -> T) async throws -> T {
    try await withEmulatedPN532(card: card, options: options, open: { try await PN532SerialTransport.open(path: $0.path, bitRate: bitRate) }, body)
}

@Suite("native PN532 transport against the PN532 emulator", .serialized)
struct PN532SerialTransportTests {
    @Test("the whole card reads the same as through the virtual transport")
    func sameAsVirtual() async throws {
        let viaVirtual = try await readEverything(VirtualTransport(card: try VirtualCard.named("suica"), name: "virtual:suica"))
        let viaPN532 = try await withNativeReader(card: try VirtualCard.named("suica")) { t, server in
            let contents = try await readEverything(t)
            #expect(server.invalidFrames == 0)
            return contents
        }
        #expect(viaPN532 == viaVirtual)
        #expect(!viaPN532.blocks.isEmpty)
    }

    @Test("with the chip's UART and RF timing, reads still match", arguments: AirTiming.BitRate.allCases)
    func timed(rate: AirTiming.BitRate) async throws {
        let card = try VirtualCard.named("suica")
        let viaVirtual = try await readEverything(VirtualTransport(card: card, name: "virtual:suica"))
        let viaPN532 = try await withNativeReader(card: card, options: .init(timing: true), bitRate: rate) { t, _ in try await readEverything(t) }
        #expect(viaPN532 == viaVirtual)
    }

    @Test("Polling comes back as the card's Polling response, at 212 and 424 kbps")
    func pollingPacket() async throws {
        let card = try VirtualCard.named("suica")
        for rate in AirTiming.BitRate.allCases {
            try await withNativeReader(card: card, bitRate: rate) { t, _ in
                for rc in PollingRequestCode.allCases {
                    let command = PollingCommand(systemCode: .wildcard, requestCode: rc).encode()
                    let reply = try await t.exchange(command, timeout: .milliseconds(20))
                    #expect(reply == card.respond(to: command), "RC \(rc) at \(rate)")
                }
            }
        }
    }

    @Test("a system the card lacks is no card, and the next Polling finds the card")
    func missingSystem() async throws {
        try await withNativeReader(card: try VirtualCard.named("suica")) { t, _ in
            let session = CardSession(transport: t)
            let missing = try await session.poll(systemCode: SystemCode(0x1234))
            #expect(missing == nil)
            let present = try await session.poll(systemCode: .transit)
            #expect(present != nil)
        }
    }

    @Test("no card: detect says so")
    func noCard() async throws {
        try await withNativeReader(card: nil) { t, _ in
            await #expect(throws: FeliCaError(.noCard, "")) { try await CardSession(transport: t).detect() }
        }
    }

    @Test("a card that leaves during a read is reported gone")
    func cardLeaves() async throws {
        // Present for the Polling that finds it, then gone.
        try await withNativeReader(card: try VirtualCard.named("suica"), options: .init(taps: CardTaps(present: 1, absent: 1000))) { t, _ in
            let session = CardSession(transport: t)
            let target = try await session.detect()
            await #expect(throws: FeliCaError(.cardGone, "")) {
                try await session.read(service: 0x090F, blocks: 0..<1, from: target)
            }
        }
    }

    @Test("424 kbps when the card runs at it: the card is listed again at 424, and again at 212 before a command after moving down")
    func movesTo424AndBack() async throws {
        let card = try VirtualCard.named("suica")
        let expected = try await readEverything(VirtualTransport(card: card, name: "virtual:suica"))
        try await withNativeReader(card: card, options: .init(timing: true)) { t, server in
            #expect(t.bitRates == [.kbps212, .kbps424])
            let session = CardSession(transport: t)
            let target = try await session.detect()
            #expect(server.cardBitRate == .kbps212)
            #expect(try await session.useFastestBitRate(for: target) == .kbps424)
            #expect(t.bitRate == .kbps424)
            #expect(server.cardBitRate == .kbps424)
            let fast = try await session.read(service: 0x090F, blocks: 0..<10, from: target)
            #expect(server.cardBitRate == .kbps424)
            try await session.useSlowestBitRate()
            #expect(t.bitRate == .kbps212)
            // Moving down sends nothing; the next command lists the card at 212 first.
            let slow = try await session.read(service: 0x090F, blocks: 0..<10, from: target)
            #expect(server.cardBitRate == .kbps212)
            #expect(fast == slow)
            #expect(try await readEverything(t) == expected)
        }
    }

    @Test("a card that runs at 212 kbps only, or a port opened for 212 only, stays at 212")
    func staysAt212() async throws {
        var image = try VirtualCard.named("suica").image
        image.bitRates = [.kbps212]
        try await withNativeReader(card: VirtualCard(image: image)) { t, server in
            let session = CardSession(transport: t)
            let target = try await session.detect()
            #expect(try await session.useFastestBitRate(for: target) == .kbps212)
            #expect(server.cardBitRate == .kbps212)
        }
        try await withEmulatedPN532(card: try VirtualCard.named("suica"), open: { try await PN532SerialTransport.open(path: $0.path, bitRates: [.kbps212]) }) { t, _ in
            #expect(t.bitRates == [.kbps212])
            let session = CardSession(transport: t)
            let target = try await session.detect()
            let rate = try await session.useFastestBitRate(for: target)
            #expect(rate == .kbps212)
            await #expect(throws: FeliCaError(.unsupported, "")) { try await t.switchBitRate(to: .kbps424) }
        }
    }

    @Test("cancelling a command cuts the wait short, and the next command works")
    func cancellation() async throws {
        // The second card exchange is answered 3 s late.
        try await withNativeReader(card: try VirtualCard.named("suica"), options: .init(faults: [PN532Fault(.lateReply(.seconds(3)), atExchange: 2)])) { t, _ in
            let session = CardSession(transport: t)
            let target = try await session.detect()
            // A command allowed 2 s: only cancelling can end it sooner.
            let packet = try ReadWithoutEncryptionCommand(idm: target.idm, service: 0x090F, blocks: 0..<1).encode()
            let clock = ContinuousClock()
            let start = clock.now
            let read = Task { try await t.exchange(packet, timeout: .seconds(2)) }
            try await Task.sleep(for: .milliseconds(100))
            read.cancel()
            await #expect(throws: FeliCaError(.cancelled, "")) { try await read.value }
            #expect(start.duration(to: clock.now) < .seconds(1))
            #expect(try await session.detect().idm == target.idm)
        }
    }

    @Test("the RF timeout follows each command: a presence check after a long read waits its own short time")
    func timeoutFollowsTheCommand() async throws {
        try await withNativeReader(card: try VirtualCard.named("suica")) { t, server in
            let session = CardSession(transport: t)
            let target = try await session.detect()
            _ = try await session.read(service: 0x090F, blocks: 0..<15, from: target)
            let afterRead = server.rfTimeoutCode
            #expect(try await session.isPresent(target))
            let afterCheck = server.rfTimeoutCode
            #expect(afterCheck < afterRead, "RF timeout code \(afterCheck) after the presence check, \(afterRead) after the read")
        }
    }

    @Test("the line is raised to 921600 baud after set-up and put back to 115200 on close; ?baud= keeps it lower")
    func serialSpeed() async throws {
        let card = try VirtualCard.named("suica")
        let server = try PN532Server(card: card, options: .init(timing: true))
        server.start()
        defer { server.stop() }
        let fast = try await PN532SerialTransport.open(path: server.path)
        #expect(fast.baud == 921_600)
        #expect(server.baudRate == 921_600)
        let session = CardSession(transport: fast)
        let target = try await session.detect()
        let read = try await session.read(service: 0x090F, blocks: 0..<10, from: target)
        await fast.close()
        #expect(server.baudRate == 115_200)
        // The next host finds the chip at its own speed.
        let slow = try await PN532SerialTransport.open(path: server.path, baud: 115_200)
        #expect(slow.baud == 115_200)
        #expect(server.baudRate == 115_200)
        let again = CardSession(transport: slow)
        let againTarget = try await again.detect()
        #expect(try await again.read(service: 0x090F, blocks: 0..<10, from: againTarget) == read)
        await slow.close()
        await #expect(throws: FeliCaError(.badInput, "")) { try await PN532SerialTransport.open(path: server.path, baud: 9_600) }
    }

    @Test("a serial port that does not exist, or is no serial line, is a clear error")
    func badPaths() async throws {
        await #expect { try await PN532SerialTransport.open(path: "/dev/no-such-tty") } throws: { e in
            let e = e as? FeliCaError
            return e?.code == .noReader && e?.reason.contains("/dev/no-such-tty") == true
        }
        await #expect { try await PN532SerialTransport.open(path: "/dev/null") } throws: { e in
            (e as? FeliCaError)?.reason.contains("not a serial line") == true
        }
        await #expect { try await PN532SerialTransport.open(path: "") } throws: { e in (e as? FeliCaError)?.code == .badInput }
    }

    @Test("a serial line where no PN532 answers says so, within a second")
    func silentLine() async throws {
        let terminal = try PseudoTerminal()
        defer { terminal.close() }
        let start = ContinuousClock().now
        await #expect { try await PN532SerialTransport.open(path: terminal.path) } throws: { e in
            (e as? FeliCaError)?.reason.contains("no PN532 answered") == true
        }
        #expect(start.duration(to: ContinuousClock().now) < .seconds(2))
    }

    @Test("a reply a previous host left on the line is skipped")
    func staleReplySkipped() async throws {
        try await withNativeReader(card: try VirtualCard.named("suica"), options: .init(faults: [PN532Fault(.lateReply(.milliseconds(400)), atExchange: 2)])) { t, _ in
            let session = CardSession(transport: t)
            let target = try await session.detect()
            // The second card exchange answers too late: the host gives up, and the next
            // command must not take the late reply for its own.
            _ = try? await session.read(service: 0x090F, blocks: 0..<1, from: target)
            let again = try await session.detect()
            #expect(again.idm == target.idm)
        }
    }
}

@Suite struct PN532CommandsTests {
    /// InListPassiveTarget and InCommunicateThru replies as the emulator writes them.
    @Test func repliesDecode() throws {
        let card = try VirtualCard.named("suica")
        let polling = PollingCommand(systemCode: .wildcard, requestCode: .none).encode()
        let response = card.respond(to: polling)!
        #expect(try PN532Commands.pollingResponse([0x4B, 0x01, 0x01] + response) == response)
        #expect(try PN532Commands.pollingResponse([0x4B, 0x00]) == nil)
        #expect(try PN532Commands.cardReply([0x43, 0x00] + response) == response)
        #expect(try PN532Commands.cardReply([0x43, 0x01]) == nil)
        #expect { try PN532Commands.cardReply([0x43, 0x02]) } throws: { ($0 as? FeliCaError)?.reason.contains("CRC") == true }
        #expect(PN532Commands.listFeliCa(polling: polling, at: .kbps424) == [0x4A, 0x01, 0x02] + polling.dropFirst())
    }

    /// Every strict prefix of a reply is refused: a cut frame never passes as a shorter one.
    @Test func prefixesAreRefused() throws {
        let card = try VirtualCard.named("suica")
        let response = card.respond(to: PollingCommand(systemCode: .wildcard, requestCode: .none).encode())!
        let listed = [0x4B, 0x01, 0x01] + response, thru = [0x43, 0x00] + response
        for n in 0..<listed.count where n != 2 {
            #expect(throws: FeliCaError.self, "InListPassiveTarget prefix \(n)") { try PN532Commands.pollingResponse(Array(listed.prefix(n))) }
        }
        for n in 0..<thru.count where n != 2 {
            #expect(throws: FeliCaError.self, "InCommunicateThru prefix \(n)") { try PN532Commands.cardReply(Array(thru.prefix(n))) }
        }
    }
}

@Suite("pn532: devices through the command line", .serialized)
struct PN532DeviceStringTests {
    @Test("felica balance --device pn532:PTY reads the balance, as libnfc:pn532_uart:PTY does")
    func balanceThroughTheCommandLine() throws {
        let server = try PN532Server(card: try VirtualCard.named("suica"))
        server.start()
        defer { server.stop() }
        let native = try runFelica(["balance", "--device", "pn532:" + server.path])
        #expect(native.status == 0, "\(native.stderr)")
        let viaLibNFC = try runFelica(["balance", "--device", "libnfc:" + server.connectionString], environment: ["LIBNFC_AUTO_SCAN": "false"])
        #expect(native.stdout == viaLibNFC.stdout && native.stdout.contains("¥"))
    }

    @Test("a pn532: port that does not exist fails with the port named, exit 69")
    func missingPort() throws {
        let r = try runFelica(["balance", "--device", "pn532:/dev/no-such-tty"])
        #expect(r.status == 69 || r.status == 1)
        #expect(r.stderr.contains("/dev/no-such-tty"))
    }
}
