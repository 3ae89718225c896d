import FeliCa
import FeliCaReaderCodecs
import FeliCaEmulators
import FeliCaSimulation
import Testing
import FeliCaCards

/// Drives an ``RCS380Emulator`` as a host would over USB: one bulk OUT transfer at a time,
/// collecting the IN transfers in time order.
struct RCS380Host {
    var emulator: RCS380Emulator
    var now: Duration = .zero
    /// IN transfers not yet read, with their times.
    var pending: [(bytes: [UInt8], at: Duration)] = []
    var unpluggedAt: Duration?
    var pluggedInAt: Duration?

    init(card: VirtualCard?, options: RCS380Emulator.Options = .init()) {
        emulator = RCS380Emulator(card: card, options: options)
    }

    mutating func write(_ bytes: [UInt8]) {
        for action in emulator.receive(bytes, at: now) {
            switch action {
            case .send(let b, let at): pending.append((b, at))
            case .cancel(let after): pending.removeAll { $0.at > after }
            case .unplug(let at): unpluggedAt = at
            case .plugIn(let at): pluggedInAt = at
            }
        }
    }

    /// The next IN transfer, if one comes within `timeout`; advances the clock.
    mutating func read(timeout: Duration = .seconds(10)) -> [UInt8]? {
        guard let first = pending.first, first.at <= now + timeout else {
            now += timeout
            return nil
        }
        pending.removeFirst()
        now = max(now, first.at)
        return first.bytes
    }

    /// The next IN transfer decoded as a frame; throws when none comes.
    mutating func nextFrame(timeout: Duration = .seconds(10)) throws -> Port100Frame {
        guard let bytes = read(timeout: timeout) else { throw FeliCaError(.timeout, "nothing on the IN endpoint") }
        return try Port100Frame.decode(bytes[...])
    }

    /// Sends `command`, expects the ACK, and returns the response frame.
    mutating func send(_ command: Port100Command, timeout: Duration = .seconds(10)) throws -> Port100Response {
        write(Port100Frame.command(command).encode())
        let ack = try #require(read(timeout: timeout))
        #expect(try Port100Frame.decode(ack[...]) == .ack)
        let frame = try #require(read(timeout: timeout), "no response to \(command.name)")
        guard case .response(let r) = try Port100Frame.decode(frame[...]) else {
            throw FeliCaError(.unexpectedResponse, "not a response frame")
        }
        try r.check(answers: command)
        return r
    }

    /// nfcpy's opening: ACK, drain, SetCommandType 1, firmware, PD data, RF off.
    mutating func open() throws {
        write(Port100Frame.ack.encode())
        #expect(read(timeout: .milliseconds(10)) == nil, "an ACK with nothing running gets no answer")
        try send(.setCommandType(1)).status(of: .setCommandType(1))
        let v = try send(.getFirmwareVersion).version(of: .getFirmwareVersion)
        #expect(v.major == 1 && v.minor == 0x11)
        _ = try send(.getPDDataVersion).version(of: .getPDDataVersion)
        try send(.switchRF(on: false)).status(of: .switchRF(on: false))
    }

    /// InSetRF 212F, the protocol defaults, then a Polling through InCommRF.
    mutating func poll() throws -> [UInt8] {
        try send(.inSetRF(.kbps212)).status(of: .inSetRF(.kbps212))
        let defaults = Port100Command.inSetProtocol(Port100Command.inSetProtocolDefaults)
        try send(defaults).status(of: defaults)
        try send(.inSetProtocol([0x00, 0x18])).status(of: .inSetProtocol([0x00, 0x18]))
        return try send(.inCommRF([0x06, 0x00, 0xFF, 0xFF, 0x01, 0x00], timeout: .milliseconds(10))).inCommRFPacket()
    }
}

@Suite("RC-S380 emulator")
struct RCS380EmulatorTests {
    @Test("opens as nfcpy does and polls the card")
    func openAndPoll() throws {
        let card = try VirtualCard.named("suica")
        var host = RCS380Host(card: card)
        try host.open()
        let reply = try host.poll()
        #expect(reply.count == 20 && reply[1] == 0x01)
        #expect(Array(reply[2..<10]) == card.systems[0].idm.bytes)
        #expect(host.emulator.fieldOn)
        try host.send(.switchRF(on: false)).status(of: .switchRF(on: false))
        #expect(!host.emulator.fieldOn)
    }

    @Test("no card: InCommRF answers the receive-timeout status after its own timeout")
    func noCard() throws {
        var host = RCS380Host(card: nil)
        try host.open()
        let start = host.now
        #expect(throws: FeliCaError.timeout) { try host.poll() }
        #expect(host.now - start >= .milliseconds(10))
    }

    @Test("a host ACK aborts a running command: its response never comes")
    func abort() throws {
        var host = RCS380Host(card: nil)
        try host.open()
        host.write(Port100Frame.command(.inCommRF([0x06, 0x00, 0xFF, 0xFF, 0x01, 0x00], timeout: .seconds(5))).encode())
        #expect(try host.nextFrame(timeout: .milliseconds(1)) == .ack)
        #expect(host.emulator.isBusy(at: host.now))
        host.write(Port100Frame.ack.encode())
        #expect(host.read(timeout: .seconds(6)) == nil)
        #expect(host.emulator.abortedCommands == 1)
        // The next command runs normally.
        _ = try host.send(.getFirmwareVersion).version(of: .getFirmwareVersion)
    }

    @Test("bad frames: a checksum error is ignored, an unknown command gets the error frame, bad parameters a status")
    func badFrames() throws {
        var host = RCS380Host(card: try VirtualCard.named("suica"))
        var broken = Port100Frame.command(.getFirmwareVersion).encode()
        broken[broken.count - 2] &+= 1
        host.write(broken)
        #expect(host.read(timeout: .milliseconds(100)) == nil)
        #expect(host.emulator.invalidFrames == 1)
        host.write(Port100Frame.command(Port100Command(code: 0x7E)).encode())
        #expect(try host.nextFrame() == .ack)
        #expect(try host.nextFrame() == .error)
        let wrong = Port100Command(code: 0x06, data: [2])
        #expect(throws: FeliCaError(.status, "")) { try host.send(wrong).status(of: wrong) }
        let r = try host.send(Port100Command(code: 0x00, data: [9, 9, 9, 9]))
        #expect(r.data == [Port100Status.parameterError.rawValue])
    }

    @Test("a non-FeliCa bit rate reaches no card")
    func otherTechnology() throws {
        var host = RCS380Host(card: try VirtualCard.named("suica"))
        try host.send(Port100Command(code: 0x00, data: [0x02, 0x03, 0x0F, 0x03])).status(of: Port100Command(code: 0x00))
        #expect(throws: FeliCaError.timeout) {
            try host.send(.inCommRF([0x06, 0x00, 0xFF, 0xFF, 0x01, 0x00], timeout: .milliseconds(5))).inCommRFPacket()
        }
    }

    @Test("InSetRF 424F: a card that runs at 424 kbps answers there, one that runs at 212 kbps only stays silent")
    func fourTwoFour() throws {
        let polling: [UInt8] = [0x06, 0x00, 0xFF, 0xFF, 0x01, 0x00]
        var fast = RCS380Host(card: try VirtualCard.named("suica"))
        try fast.open()
        _ = try fast.poll()
        try fast.send(.inSetRF(.kbps424)).status(of: .inSetRF(.kbps424))
        #expect(try fast.send(.inCommRF(polling, timeout: .milliseconds(10))).inCommRFPacket().count == 20)

        var image = try #require(SampleCards.image(named: "suica"))
        image.bitRates = [.kbps212]
        var slow = RCS380Host(card: VirtualCard(image: image))
        try slow.open()
        _ = try slow.poll()
        try slow.send(.inSetRF(.kbps424)).status(of: .inSetRF(.kbps424))
        #expect(throws: FeliCaError.timeout) {
            try slow.send(.inCommRF(polling, timeout: .milliseconds(10))).inCommRFPacket()
        }
        try slow.send(.inSetRF(.kbps212)).status(of: .inSetRF(.kbps212))
        #expect(try slow.send(.inCommRF(polling, timeout: .milliseconds(10))).inCommRFPacket().count == 20)
    }

    @Test("taps: the card answers for <present> packets, then is away for <absent>")
    func taps() throws {
        var host = RCS380Host(card: try VirtualCard.named("suica"), options: .init(taps: CardTaps(present: 2, absent: 1)))
        try host.open()
        try host.send(.inSetRF(.kbps212)).status(of: .inSetRF(.kbps212))
        let polling: [UInt8] = [0x06, 0x00, 0xFF, 0xFF, 0x01, 0x00]
        func poll(_ host: inout RCS380Host) throws -> Bool {
            (try? host.send(.inCommRF(polling, timeout: .milliseconds(10))).inCommRFPacket()) != nil
        }
        #expect(try [poll(&host), poll(&host), poll(&host), poll(&host)] == [true, true, false, true])
    }

    @Test("faults: corrupt frame, late reply, unplug, card removed")
    func faults() throws {
        let polling = Port100Command.inCommRF([0x06, 0x00, 0xFF, 0xFF, 0x01, 0x00], timeout: .milliseconds(10))
        var host = RCS380Host(card: try VirtualCard.named("suica"),
                              options: .init(faults: [.init(.corruptFrame, atExchange: 1), .init(.lateReply(.milliseconds(500)), atExchange: 2),
                                                      .init(.unplug, atExchange: 4)]))
        try host.open()
        try host.send(.inSetRF(.kbps212)).status(of: .inSetRF(.kbps212))
        host.write(Port100Frame.command(polling).encode())
        _ = host.read()
        #expect(throws: FeliCaError(.transmission, "")) { try host.nextFrame() }
        host.write(Port100Frame.command(polling).encode())
        _ = host.read()
        let before = host.now
        _ = try host.nextFrame()
        #expect(host.now - before >= .milliseconds(500))
        _ = try host.send(polling).inCommRFPacket()
        host.write(Port100Frame.command(polling).encode())
        _ = host.read()
        #expect(host.read() == nil)
        #expect(host.unpluggedAt != nil && host.emulator.unplugged)
        host.write(Port100Frame.command(.getFirmwareVersion).encode())
        #expect(host.read() == nil)

        let card = try VirtualCard.named("suica")
        card.removeAfter(exchanges: 1)
        var removed = RCS380Host(card: card)
        try removed.open()
        _ = try removed.poll()
        #expect(throws: FeliCaError.timeout) { try removed.send(polling).inCommRFPacket() }
    }

    @Test("realistic timing: a Polling takes its air time, silence its full timeout")
    func timing() throws {
        var host = RCS380Host(card: try VirtualCard.named("suica"), options: RCS380Emulator.Options(timing: true))
        try host.open()
        let start = host.now
        _ = try host.poll()
        #expect(host.now - start > .milliseconds(2))
        #expect(host.now - start < .milliseconds(20))
    }

    @Test("fault spellings", arguments: ["corrupt@3", "late@4:1500", "unplug@2", "away@5:3000"])
    func spelling(_ text: String) throws {
        #expect(try RCS380Fault(parsing: text).description == text)
    }

    @Test("bad fault spellings are named", arguments: ["corrupt", "late@0", "late@2:x", "melt@1", "unplug@1:3", "away@2:0"])
    func badSpelling(_ text: String) {
        #expect(throws: FeliCaError(.badInput, "")) { try RCS380Fault(parsing: text) }
    }
}
