import FeliCa
@testable import FeliCaLibNFC
import FeliCaEmulators
import FeliCaReaderCodecs
import FeliCaSimulation
import Foundation
import TestSupport
import Testing
import FeliCaCards

@Suite("libnfc transport against the PN532 emulator", .serialized)
struct LibNFCTransportTests {
    @Test("the whole card reads the same through libnfc as through the virtual transport")
    func sameAsVirtual() async throws {
        let viaVirtual = try await readEverything(VirtualTransport(card: try VirtualCard.named("suica"), name: "virtual:suica"))
        let viaLibNFC = try await withEmulatedReader(card: try VirtualCard.named("suica")) { t, _ in
            try await readEverything(t)
        }
        #expect(viaLibNFC == viaVirtual)
        #expect(!viaLibNFC.blocks.isEmpty)
    }

    @Test("Polling is reported as the Polling packet and response, at 212 and 424 kbps")
    func pollingPacket() async throws {
        let card = try VirtualCard.named("suica")
        for rate in AirTiming.BitRate.allCases {
            let server = try PN532Server(card: card)
            server.start()
            defer { server.stop() }
            let t = try await LibNFCTransport.open(connstring: server.connectionString, bitRate: rate)
            for rc in PollingRequestCode.allCases {
                let command = PollingCommand(systemCode: .wildcard, requestCode: rc).encode()
                let expected = card.respond(to: command)
                let reply = try await t.exchange(command, timeout: .milliseconds(20))
                #expect(reply == expected, "RC \(rc) at \(rate)")
            }
            await t.close()
        }
    }

    @Test("a Polling for a system the card lacks times out, and the next command works")
    func missingSystem() async throws {
        try await withEmulatedReader(card: try VirtualCard.named("suica")) { t, _ in
            let session = CardSession(transport: t)
            let missing = try await session.poll(systemCode: SystemCode(0x1234))
            #expect(missing == nil)
            let present = try await session.poll(systemCode: .transit)
            #expect(present != nil)
        }
    }

    @Test("no card: detect says so")
    func noCard() async throws {
        try await withEmulatedReader(card: nil) { t, _ in
            await #expect(throws: FeliCaError(.noCard, "")) { try await CardSession(transport: t).detect() }
        }
    }

    @Test("the chip timeout is the shortest code above what is needed, and libnfc picks that code",
          arguments: [0.0, 1.0, 1.7, 3.3, 10, 33.8, 51.2, 60, 500, 4000])
    func chipTimeout(_ ms: Double) {
        let t = ChipTimeout(atLeast: .microseconds(Int64(ms * 1000)))
        #expect(ChipTimeout.libnfcCode(milliseconds: t.milliseconds) == t.code)
        if t.code < 16 { #expect(t.duration >= .microseconds(Int64(ms * 1000))) }
        if t.code > 5 { #expect(Duration.microseconds(100 << (t.code - 2)) < .microseconds(Int64(ms * 1000))) }
    }

    @Test("a chip timeout already set is kept for a command that needs less, up to 102.4 ms")
    func chipTimeoutKept() {
        let read = ChipTimeout(atLeast: .milliseconds(40)), presence = ChipTimeout(atLeast: .milliseconds(5))
        #expect(read.suffices(for: presence))
        #expect(!presence.suffices(for: read))
        #expect(!ChipTimeout(atLeast: .milliseconds(400)).suffices(for: presence))
        #expect(ChipTimeout(atLeast: .milliseconds(400)).suffices(for: ChipTimeout(atLeast: .milliseconds(400))))
    }

    /// A watch loop reads, checks the card's presence, then reads the next card: the chip
    /// timeout is set once, not again for each read after a presence check (each setting is
    /// one more RFConfiguration round trip inside the card's time in the field).
    @Test("a read after a presence check sends the read alone")
    func readAfterPresenceCheck() async throws {
        try await withEmulatedReader(card: try VirtualCard.named("suica")) { t, server in
            let session = CardSession(transport: t)
            let first = try await session.detect()
            _ = try await session.read([BlockRequest(service: 0x008B, blocks: 0..<1), BlockRequest(service: 0x090F, blocks: 0..<1)], from: first)
            #expect(try await session.isPresent(first))
            _ = try await session.detect()
            let before = server.commandCount
            _ = try await session.read([BlockRequest(service: 0x008B, blocks: 0..<1), BlockRequest(service: 0x090F, blocks: 0..<1)], from: first)
            #expect(server.commandCount - before == 1, "\(server.commandCount - before) commands to the chip for one read")
        }
    }
}

@Suite("failure paths through real libnfc", .serialized)
struct LibNFCFailureTests {
    /// A one-block read of the Suica attribute service, as raw packet.
    func readPacket(_ idm: IDm) -> [UInt8] {
        try! ReadWithoutEncryptionCommand(idm: idm, service: 0x008B, blocks: 0..<1).encode()
    }

    @Test("card removed mid-read: card gone, then works again once it is back")
    func removal() async throws {
        let card = try VirtualCard.named("suica")
        try await withEmulatedReader(card: card) { t, _ in
            let session = CardSession(transport: t)
            let target = try await session.detect()
            card.removeAfter(exchanges: 1)
            _ = try await session.read(service: 0x008B, blocks: 0..<1, from: target)  // the last one it answers
            await #expect(throws: FeliCaError(.cardGone, "")) {
                _ = try await session.read(service: 0x090F, blocks: 0..<4, from: target)
            }
            card.isPresent = true
            let again = try await session.read(service: 0x090F, blocks: 0..<4, from: try await session.detect())
            #expect(again.count == 4)
        }
    }

    @Test("a reply later than the host waits: timeout, the device is reset, the next command works")
    func lateReply() async throws {
        let card = try VirtualCard.named("suica")
        // Exchange 1 = the Polling, 2 = the read that comes late.
        let options = PN532Emulator.Options(faults: [PN532Fault(.lateReply(.milliseconds(600)), atExchange: 2)])
        try await withEmulatedReader(card: card, options: options) { t, _ in
            let polling = try await t.exchange(PollingCommand().encode(), timeout: .milliseconds(10))
            let idm = try PollingResponse.decode(polling[...]).idm
            let start = ContinuousClock.now
            let error = await thrownError {
                _ = try await t.exchange(readPacket(idm), timeout: .milliseconds(40))
            }
            #expect(error == FeliCaError.timeout)
            // The watchdog (chip timeout 51.2 ms + 150 ms) fires and aborts the command, before
            // the reply at 600 ms; libnfc's backstop (a second later) would have let the late
            // reply through. Which one fired is in the reason, not the clock: on a loaded
            // machine the watchdog's thread can itself run a second late.
            #expect(error?.reason.contains("the command was aborted") == true, "\(String(describing: error))")
            // Only against a hang. The device thread answers on time, but this task resumes on
            // Swift's shared pool, two threads on a two-core machine; in the whole suite other
            // tests hold both while they wait for child processes, so the await has come back
            // after 5.0-5.4 s (0.3 s alone, 2.1 s next to the watch and --wait suites).
            #expect(ContinuousClock.now - start < .seconds(15))
            let reply = try await t.exchange(readPacket(idm), timeout: .milliseconds(40))
            #expect(try ReadWithoutEncryptionResponse.decode(reply[...], expecting: idm).blocks.count == 1)
        }
    }

    @Test("closing one device does not break another one's reopening (libnfc's nfc_exit frees a global)")
    func twoDevices() async throws {
        let options = PN532Emulator.Options(faults: [PN532Fault(.corruptChecksum, atExchange: 2)])
        let first = try PN532Server(card: try VirtualCard.named("suica"))
        let second = try PN532Server(card: try VirtualCard.named("suica"), options: options)
        first.start()
        second.start()
        defer { first.stop(); second.stop() }
        let a = try await LibNFCTransport.open(connstring: first.connectionString)
        let b = try await LibNFCTransport.open(connstring: second.connectionString)
        let polling = try await b.exchange(PollingCommand().encode(), timeout: .milliseconds(10))
        let idm = try PollingResponse.decode(polling[...]).idm
        await a.close()
        // The corrupt frame makes b reopen its device after a has gone.
        await #expect(throws: FeliCaError(.transmission, "")) {
            _ = try await b.exchange(readPacket(idm), timeout: .milliseconds(40))
        }
        let reply = try await b.exchange(readPacket(idm), timeout: .milliseconds(40))
        #expect(try ReadWithoutEncryptionResponse.decode(reply[...], expecting: idm).blocks.count == 1)
        await b.close()
    }

    @Test("a corrupt frame or a missing ACK: transmission error, the next command works",
          arguments: [PN532Fault.Kind.corruptChecksum, .dropAck])
    func garbled(_ kind: PN532Fault.Kind) async throws {
        let card = try VirtualCard.named("suica")
        try await withEmulatedReader(card: card, options: .init(faults: [PN532Fault(kind, atExchange: 2)])) { t, _ in
            let polling = try await t.exchange(PollingCommand().encode(), timeout: .milliseconds(10))
            let idm = try PollingResponse.decode(polling[...]).idm
            await #expect(throws: FeliCaError(.transmission, "")) {
                _ = try await t.exchange(readPacket(idm), timeout: .milliseconds(40))
            }
            let reply = try await t.exchange(readPacket(idm), timeout: .milliseconds(40))
            #expect(try ReadWithoutEncryptionResponse.decode(reply[...], expecting: idm).blocks.count == 1)
        }
    }

    @Test("the session's retry rides over one corrupt frame")
    func sessionRetries() async throws {
        let card = try VirtualCard.named("suica")
        try await withEmulatedReader(card: card, options: .init(faults: [PN532Fault(.corruptChecksum, atExchange: 2)])) { t, _ in
            let session = CardSession(transport: t)
            let target = try await session.detect()
            let blocks = try await session.read(service: 0x008B, blocks: 0..<1, from: target)
            #expect(blocks.count == 1)
        }
    }

    @Test("the reader goes away mid-session: reader gone, in plain words")
    func readerGone() async throws {
        // Through a link, which goes away with the emulator like /dev/ttyUSB0 with its board
        // (a bare /dev/pts/N could be handed to another program meanwhile).
        let link = FileManager.default.temporaryDirectory.appendingPathComponent("felica-pn532-\(getpid())-gone").path
        let server = try PN532Server(card: try VirtualCard.named("suica"), link: link)
        server.start()
        let t = try await LibNFCTransport.open(connstring: "pn532_uart:" + link)
        let polling = try await t.exchange(PollingCommand().encode(), timeout: .milliseconds(10))
        let idm = try PollingResponse.decode(polling[...]).idm
        server.stop()
        do {
            _ = try await t.exchange(readPacket(idm), timeout: .milliseconds(40))
            Issue.record("expected an error")
        } catch {
            #expect(error.code == .readerGone, "\(error.reason)")
            #expect(error.reason.contains("plug"), "\(error.reason)")
        }
        await t.close()
    }

    @Test("no reader at the path: says the device does not exist")
    func noReader() async throws {
        do {
            _ = try await LibNFCTransport.open(connstring: "pn532_uart:/dev/felica-no-such-tty")
            Issue.record("expected an error")
        } catch {
            #expect(error.code == .noReader)
            #expect(error.reason.contains("/dev/felica-no-such-tty does not exist"), "\(error.reason)")
        }
    }

    @Test("cancelling the task aborts the libnfc call at once, and the next command works")
    func cancellation() async throws {
        let card = try VirtualCard.named("suica")
        let options = PN532Emulator.Options(faults: [PN532Fault(.lateReply(.seconds(3)), atExchange: 2)])
        try await withEmulatedReader(card: card, options: options) { t, _ in
            let polling = try await t.exchange(PollingCommand().encode(), timeout: .milliseconds(10))
            let idm = try PollingResponse.decode(polling[...]).idm
            // A chip timeout of 3.28 s keeps libnfc waiting for the late reply.
            let packet = readPacket(idm)
            let task = Task { () async throws(FeliCaError) -> [UInt8] in
                try await t.exchange(packet, timeout: .seconds(4))
            }
            try await Task.sleep(for: .milliseconds(100))
            let start = ContinuousClock.now
            task.cancel()
            await #expect(throws: FeliCaError(.cancelled, "")) { _ = try await task.value }
            #expect(ContinuousClock.now - start < .milliseconds(1500), "well before the 3 s late reply")
            let reply = try await t.exchange(readPacket(idm), timeout: .milliseconds(40))
            #expect(try ReadWithoutEncryptionResponse.decode(reply[...], expecting: idm).blocks.count == 1)
        }
    }
}

@Suite("plain-words reasons for a missing reader")
struct LibNFCDiagnosisTests {
    @Test("serial connection strings name their tty", arguments: [
        ("pn532_uart:/dev/ttyUSB0", "/dev/ttyUSB0"), ("pn532_uart:/dev/ttyUSB0:115200", "/dev/ttyUSB0"),
        ("arygon:/dev/ttyS1", "/dev/ttyS1"), ("pn53x_usb:", nil), ("pn532_uart:", nil), ("acr122_usb:001:004", nil),
    ] as [(String, String?)])
    func serialPath(_ connstring: String, _ path: String?) {
        #expect(LibNFCDiagnosis.serialPath(connstring) == path)
    }

    @Test("a kernel driver holding USB readers is named with the command that frees them")
    func kernelModules() {
        let text = LibNFCDiagnosis.reason(nil, loaded: ["pn533_usb", "pn533"])
        #expect(text.contains("pn533_usb, pn533 drivers are loaded"), "\(text)")
        #expect(text.contains("sudo modprobe -r pn533_usb pn533"), "\(text)")
        // The library names no option of the CLI; felica adds its own hint when it prints this.
        #expect(!text.contains("--device"), "\(text)")
    }

    @Test("a serial path that does not exist is said so")
    func missingTTY() {
        let text = LibNFCDiagnosis.reason("pn532_uart:/dev/felica-missing", loaded: [])
        #expect(text.hasPrefix("/dev/felica-missing does not exist"), "\(text)")
    }
}
