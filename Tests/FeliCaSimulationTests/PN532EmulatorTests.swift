import FeliCa
import FeliCaReaderCodecs
import FeliCaEmulators
import FeliCaSimulation
import Testing
import FeliCaCards

/// Drives the emulator as a host would: one command frame in, the written frames out.
struct Host {
    var chip: PN532Emulator
    var now: Duration = .zero

    init(card: VirtualCard? = try! VirtualCard.named("suica"), options: PN532Emulator.Options = .init()) {
        chip = PN532Emulator(card: card, options: options)
    }

    /// Sends a command; returns the frames written, in time order, decoded, with their times.
    mutating func send(_ data: [UInt8], raw: [UInt8]? = nil) -> [(frame: PN532Frame, at: Duration)] {
        let actions = chip.receive(raw ?? PN532Frame.command(data).encode(), at: now)
        return actions.compactMap { action in
            guard case .send(let bytes, let at) = action else { return nil }
            return (try! PN532Frame.decode(bytes[...]), at)
        }
    }

    /// Sends a command and returns the response data (after checking the ACK came first).
    mutating func command(_ data: [UInt8]) -> [UInt8]? {
        let frames = send(data)
        guard frames.count == 2, frames[0].frame == .ack else { return nil }
        switch frames[1].frame {
        case .response(let r): return r
        default: return nil
        }
    }

    /// What libnfc's initiator set-up does that matters here: field on, and a finite
    /// number of passive-activation attempts (infinite select off).
    mutating func fieldOn() {
        _ = command([0x32, 0x01, 0x01])
        _ = command([0x32, 0x05, 0x00, 0x01, 0x02])
    }
}

let pollingPayload: [UInt8] = [0x00, 0xFF, 0xFF, 0x01, 0x00]

/// (what, command, expected response) — the chip answers every documented command.
let commandVectors: [(String, [UInt8], [UInt8])] = [
    ("Diagnose communication test echoes (libnfc's check)", [0x00, 0x00] + Array("libnfc".utf8), [0x01, 0x00] + Array("libnfc".utf8)),
    ("Diagnose ROM test passes", [0x00, 0x01], [0x01, 0x00]),
    ("GetFirmwareVersion: PN532 v1.6", [0x02], [0x03, 0x32, 0x01, 0x06, 0x07]),
    ("SetParameters", [0x12, 0x14], [0x13]),
    ("SAMConfiguration normal mode (libnfc)", [0x14, 0x01], [0x15]),
    ("SAMConfiguration with timeout and IRQ bytes (other hosts)", [0x14, 0x01, 0x00, 0x00], [0x15]),
    ("SAMConfiguration with timeout only", [0x14, 0x01, 0x14], [0x15]),
    ("WriteRegister two registers", [0x08, 0x63, 0x02, 0x80, 0x63, 0x03, 0x80], [0x09]),
    ("ReadRegister of an unwritten register", [0x06, 0x63, 0x3D], [0x07, 0x00]),
    ("RFConfiguration field on", [0x32, 0x01, 0x01], [0x33]),
    ("RFConfiguration timings", [0x32, 0x02, 0x00, 0x0B, 0x0A], [0x33]),
    ("RFConfiguration MaxRetries", [0x32, 0x05, 0x00, 0x01, 0x02], [0x33]),
    ("SetSerialBaudRate 230400", [0x10, 0x05], [0x11]),
    ("InListPassiveTarget ISO14443A: nothing there", [0x4A, 0x01, 0x00], [0x4B, 0x00]),
    ("InDataExchange without a target: wrong context", [0x40, 0x01, 0x0A, 0x0C] + [UInt8](repeating: 0, count: 8), [0x41, 0x27]),
    ("InDeselect all", [0x44, 0x00], [0x45, 0x00]),
    ("InRelease all", [0x52, 0x00], [0x53, 0x00]),
    ("InRelease of a target never listed", [0x52, 0x01], [0x53, 0x27]),
    ("PowerDown", [0x16, 0xF0], [0x17, 0x00]),
    ("PowerDown with IRQ byte", [0x16, 0x20, 0x01], [0x17, 0x00]),
]

@Test("every documented command is answered", arguments: commandVectors)
func commandAnswered(_ name: String, _ command: [UInt8], _ expected: [UInt8]) {
    var host = Host()
    host.fieldOn()
    #expect(host.command(command) == expected, "\(name)")
}

/// (what, command) — malformed or unknown: ACK, then the application error frame.
let syntaxErrors: [(String, [UInt8])] = [
    ("unknown command 0x7E", [0x7E]),
    ("SAMConfiguration mode 0", [0x14, 0x00]),
    ("SAMConfiguration too many bytes", [0x14, 0x01, 0x00, 0x00, 0x00]),
    ("ReadRegister with half an address", [0x06, 0x63]),
    ("WriteRegister missing its value", [0x08, 0x63, 0x02]),
    ("RFConfiguration item with a wrong length", [0x32, 0x05, 0x00]),
    ("RFConfiguration unknown item", [0x32, 0x03, 0x00]),
    ("SetSerialBaudRate beyond the table", [0x10, 0x09]),
    ("InListPassiveTarget FeliCa with a 4-byte payload", [0x4A, 0x01, 0x01, 0x00, 0xFF, 0xFF, 0x01]),
    ("InListPassiveTarget 3 targets", [0x4A, 0x03, 0x01] + pollingPayload),
    ("GetFirmwareVersion with a parameter", [0x02, 0x00]),
    ("empty command frame", []),
]

@Test("malformed or unknown commands get the application error frame", arguments: syntaxErrors)
func syntaxError(_ name: String, _ command: [UInt8]) {
    var host = Host()
    let frames = host.send(command)
    #expect(frames.map(\.frame) == [.ack, .applicationError], "\(name)")
}

@Test("WriteRegister values are read back")
func registers() {
    var host = Host()
    _ = host.command([0x08, 0x63, 0x02, 0x80, 0x63, 0x03, 0x81])
    #expect(host.command([0x06, 0x63, 0x03, 0x63, 0x02, 0x63, 0x05]) == [0x07, 0x81, 0x80, 0x00])
}

@Test("InListPassiveTarget FeliCa returns Tg and the Polling response; NbTg 0 for a system the card lacks",
      arguments: [(UInt8(0x01), AirTiming.BitRate.kbps212), (0x02, .kbps424)])
func inListPassiveTarget(_ brTy: UInt8, _ rate: AirTiming.BitRate) {
    let card = try! VirtualCard.named("suica")
    var host = Host(card: card)
    host.fieldOn()
    let expected = card.respond(to: [0x06] + pollingPayload)!
    #expect(host.command([0x4A, 0x01, brTy] + pollingPayload) == [0x4B, 0x01, 0x01] + expected)
    #expect(host.command([0x4A, 0x01, brTy, 0x00, 0x12, 0x34, 0x01, 0x00]) == [0x4B, 0x00])
    // Without the leading 00 (the Polling command code) no card answers.
    #expect(host.command([0x4A, 0x01, brTy, 0xFF, 0xFF, 0x01, 0x00, 0x00]) == [0x4B, 0x00])
}

@Test("InListPassiveTarget at 424 kbps finds no card that runs at 212 kbps only")
func inListPassiveTargetAt424ForASlowCard() throws {
    var image = try #require(SampleCards.image(named: "suica"))
    image.bitRates = [.kbps212]
    var host = Host(card: VirtualCard(image: image))
    host.fieldOn()
    #expect(host.command([0x4A, 0x01, 0x02] + pollingPayload) == [0x4B, 0x00])
    #expect(host.command([0x4A, 0x01, 0x01] + pollingPayload)?.prefix(3) == [0x4B, 0x01, 0x01])
}

@Test("InDataExchange and InCommunicateThru carry whole FeliCa packets; a silent card is status 01")
func exchanges() throws {
    let card = try! VirtualCard.named("suica")
    var host = Host(card: card)
    let polling = host.command([0x4A, 0x01, 0x01] + pollingPayload)!
    let idm = try PollingResponse.decode(polling[3...]).idm
    let request = RequestSystemCodeCommand(idm: idm).encode()
    let expected = card.respond(to: request)!
    #expect(host.command([0x40, 0x01] + request) == [0x41, 0x00] + expected)
    #expect(host.command([0x42] + request) == [0x43, 0x00] + expected)
    // Another IDm: the card stays silent.
    let other = RequestSystemCodeCommand(idm: IDm(rawValue: 0x0102030405060708)).encode()
    #expect(host.command([0x40, 0x01] + other) == [0x41, 0x01])
    card.isPresent = false
    #expect(host.command([0x40, 0x01] + request) == [0x41, 0x01])
    #expect(host.command([0x52, 0x01]) == [0x53, 0x00])
    card.isPresent = true
    #expect(host.command([0x40, 0x01] + request) == [0x41, 0x27], "released: no target 1 any more")
}

@Test("no card: nothing is listed, InAutoPoll finds nothing")
func noCard() {
    var host = Host(card: nil)
    host.fieldOn()
    #expect(host.command([0x4A, 0x01, 0x01] + pollingPayload) == [0x4B, 0x00])
    #expect(host.command([0x60, 0x01, 0x01, 0x11, 0x12]) == [0x61, 0x00])
}

@Test("InAutoPoll finds the FeliCa card with its target data")
func autoPoll() {
    let card = try! VirtualCard.named("suica")
    var host = Host(card: card)
    let polling = card.respond(to: [0x06] + pollingPayload)!
    #expect(host.command([0x60, 0x02, 0x01, 0x00, 0x11]) == [0x61, 0x01, 0x11, UInt8(polling.count + 1), 0x01] + polling)
}

@Test("an ACK from the host aborts a command that runs forever; the next command is answered")
func abortByAck() {
    var host = Host(card: nil)
    // MxRtyPassiveActivation stays 0xFF (retry forever), as after power-on.
    let frames = host.send([0x4A, 0x01, 0x01] + pollingPayload)
    #expect(frames.map(\.frame) == [.ack])
    host.now = .milliseconds(300)
    let abort = host.chip.receive(PN532Frame.ack.encode(), at: host.now)
    #expect(abort == [.cancel(after: .milliseconds(300))])
    #expect(host.command([0x02]) == [0x03, 0x32, 0x01, 0x06, 0x07])
}

@Test("a command sent while the chip is busy waits its turn behind the late reply")
func busyChipQueues() {
    var host = Host(options: .init(faults: [PN532Fault(.lateReply(.seconds(1)), atExchange: 1)]))
    host.fieldOn()
    let late = host.send([0x4A, 0x01, 0x01] + pollingPayload)
    #expect(late.map(\.at) == [.zero, .seconds(1)])
    host.now = .milliseconds(400)
    let next = host.send([0x02])
    #expect(next.map(\.frame) == [.ack, .response([0x03, 0x32, 0x01, 0x06, 0x07])])
    #expect(next.allSatisfy { $0.at >= .seconds(1) }, "its ACK comes only after the late reply")
}

@Test("NACK makes the chip send its last frame again")
func nack() {
    var host = Host()
    _ = host.command([0x02])
    let again = host.chip.receive(PN532Frame.nack.encode(), at: .zero)
    #expect(again == [.send(PN532Frame.response([0x03, 0x32, 0x01, 0x06, 0x07]).encode(), at: .zero)])
}

@Test("faults: corrupt checksum, dropped ACK, late reply hit the chosen exchange once")
func faults() {
    var host = Host(options: .init(faults: [
        PN532Fault(.corruptChecksum, atExchange: 1), PN532Fault(.dropAck, atExchange: 2), PN532Fault(.lateReply(.milliseconds(700)), atExchange: 3),
    ]))
    host.fieldOn()
    let first = host.chip.receive(PN532Frame.command([0x4A, 0x01, 0x01] + pollingPayload).encode(), at: .zero)
    guard case .send(let bytes, _)? = first.last else { Issue.record("no reply"); return }
    #expect(throws: FeliCaError(.transmission, "")) { try PN532Frame.decode(bytes[...]) }
    #expect(host.send([0x4A, 0x01, 0x01] + pollingPayload).map(\.frame).first != .ack)
    host.now = .seconds(10)
    #expect(host.send([0x4A, 0x01, 0x01] + pollingPayload).map(\.at) == [.seconds(10), .seconds(10) + .milliseconds(700)])
    #expect(host.send([0x4A, 0x01, 0x01] + pollingPayload).map(\.at) == [.seconds(10) + .milliseconds(700), .seconds(10) + .milliseconds(700)])
}

@Test("fault specs parse as felica-sim spells them",
      arguments: [("corrupt@3", "corrupt@3"), ("drop-ack@1", "drop-ack@1"), ("late@2", "late@2:1000"), ("late@2:250", "late@2:250")])
func faultSpecs(_ text: String, _ canonical: String) throws {
    #expect(try PN532Fault(parsing: text).description == canonical)
}

@Test("bad fault specs say what is wrong", arguments: ["corrupt", "corrupt@0", "late@2:x", "melt@1", "corrupt@2:5"])
func badFaultSpecs(_ text: String) {
    #expect(throws: FeliCaError(.badInput, "")) { try PN532Fault(parsing: text) }
}

@Test("rf timing: UART time at the baud rate, the card's time, and the Polling retries of a failing poll")
func rfTiming() {
    let card = try! VirtualCard.named("suica")
    var host = Host(card: card, options: .init(timing: true))
    host.fieldOn()  // libnfc with infinite select off: 3 attempts
    host.now = .seconds(1)
    let command = [0x4A, 0x01, 0x01] + pollingPayload
    let frames = host.send(command)
    let uart = { (n: Int) in Duration.nanoseconds(Int64(n) * 10 * 1_000_000_000 / 115_200) }
    #expect(frames[0].at == .seconds(1) + uart(PN532Frame.command(command).encode().count) + uart(6))
    let reply = card.respond(to: [0x06] + pollingPayload)!
    let response = PN532Frame.response([0x4B, 0x01, 0x01] + reply).encode()
    let cardTime = card.responseTime(to: [0x06] + pollingPayload, reply: reply, bitRate: .kbps212)
    #expect(frames[1].at == frames[0].at + cardTime + uart(response.count))

    host.now = .seconds(2)
    let failing = host.send([0x4A, 0x01, 0x01, 0x00, 0x12, 0x34, 0x01, 0x00])
    let attempt = AirTiming.airTime(packetLength: 6) + AirTiming.pollingWindow(slots: 1)
    #expect(failing[1].at == failing[0].at + attempt * 3 + uart(PN532Frame.response([0x4B, 0x00]).encode().count))
}

// MARK: - The RC-S956 variant (Sony RC-S330/RC-S360/RC-S370)

/// (what, command, expected response) where the RC-S956 differs from the PN532, in the
/// order libnfc's pn53x_usb driver meets them.
let rcs956Vectors: [(String, [UInt8], [UInt8])] = [
    ("GetFirmwareVersion: IC 33 with Sony's ROM code 01 (libnfc's RCS360 chip type)", [0x02], [0x03, 0x33, 0x01, 0x30, 0x07]),
    ("ResetMode to mode 0", [0x18, 0x01], [0x19]),
    ("WriteRegister answers with a status byte", [0x08, 0x63, 0x02, 0x80], [0x09, 0x00]),
    ("ReadRegister has no status byte", [0x06, 0x63, 0x3D], [0x07, 0x00]),
    ("GetGeneralStatus with nothing listed: no SAM status byte", [0x04], [0x05, 0x00, 0x01, 0x00]),
    ("InRelease in libnfc's three-byte form", [0x52, 0x01, 0x01], [0x53, 0x27]),
    ("InDeselect in libnfc's three-byte form", [0x44, 0x00, 0x01], [0x45, 0x00]),
]

@Test("the RC-S956 answers as libnfc expects of it", arguments: rcs956Vectors)
func rcs956Answers(_ name: String, _ command: [UInt8], _ expected: [UInt8]) {
    var host = Host(options: .init(chip: .rcs956))
    host.fieldOn()
    #expect(host.command(command) == expected, "\(name)")
}

@Test("the RC-S956 has no SAM and the PN532 no ResetMode: each refuses the other's command")
func rcs956AndPN532Differ() {
    var rcs956 = Host(options: .init(chip: .rcs956))
    #expect(rcs956.send([0x14, 0x01]).map(\.frame) == [.ack, .applicationError])
    var pn532 = Host()
    #expect(pn532.send([0x18, 0x01]).map(\.frame) == [.ack, .applicationError])
    #expect(pn532.send([0x52, 0x01, 0x01]).map(\.frame) == [.ack, .applicationError])
}

@Test("GetGeneralStatus lists the FeliCa target at its rate until InRelease; the PN532 adds its SAM status")
func generalStatus() {
    let card = try! VirtualCard.named("suica")
    for (chip, sam) in [(PN532Emulator.Chip.rcs956, [UInt8]()), (.pn532, [0x00])] {
        var host = Host(card: card, options: .init(chip: chip))
        host.fieldOn()
        #expect(host.command([0x4A, 0x01, 0x02] + pollingPayload)?.prefix(2) == [0x4B, 0x01])
        #expect(host.command([0x04]) == [0x05, 0x00, 0x01, 0x01, 0x01, 0x02, 0x02, 0x10] + sam)
        #expect(host.command([0x52, 0x01]) == [0x53, 0x00])
        #expect(host.command([0x04]) == [0x05, 0x00, 0x01, 0x00] + sam)
    }
}

@Test("unplug@N: the RC-S956 ACKs the command, then leaves the bus and answers nothing more; only the USB reader takes it")
func rcs956Unplug() throws {
    var host = Host(options: .init(chip: .rcs956, faults: [try PN532Fault(parsing: "unplug@2", usb: true)]))
    host.fieldOn()
    #expect(host.command([0x4A, 0x01, 0x01] + pollingPayload)?.prefix(2) == [0x4B, 0x01])
    let actions = host.chip.receive(PN532Frame.command([0x40, 0x01, 0x06, 0x06] + [UInt8](repeating: 0, count: 4)).encode(), at: .zero)
    #expect(actions == [.send(PN532Frame.ack.encode(), at: .zero), .unplug(at: .zero)])
    #expect(host.chip.unplugged)
    #expect(host.send([0x02]).isEmpty)
    #expect(throws: FeliCaError(.badInput, "")) { try PN532Fault(parsing: "unplug@2") }
    #expect(try PN532Fault(parsing: "unplug@2", usb: true).description == "unplug@2")
}

@Test("away@N:MS: the chip ACKs the command, leaves, is due back MS later, and after plugIn() answers afresh with its counters kept; a serial PN532 takes it too")
func awayAndBack() throws {
    var host = Host(options: .init(faults: [try PN532Fault(parsing: "away@2:1500")]))
    host.fieldOn()
    #expect(host.command([0x4A, 0x01, 0x01] + pollingPayload)?.prefix(2) == [0x4B, 0x01])
    let actions = host.chip.receive(PN532Frame.command([0x40, 0x01, 0x06, 0x06] + [UInt8](repeating: 0, count: 4)).encode(), at: .zero)
    #expect(actions == [.send(PN532Frame.ack.encode(), at: .zero), .unplug(at: .zero), .plugIn(at: .milliseconds(1500))])
    #expect(host.chip.unplugged)
    #expect(host.send([0x02]).isEmpty)
    let exchanges = host.chip.cardExchanges
    host.chip.plugIn()
    #expect(!host.chip.unplugged)
    #expect(host.chip.cardExchanges == exchanges)
    // Powered up afresh: nothing to send again on a NACK, and the card answers once more.
    #expect(host.send([], raw: PN532Frame.nack.encode()).isEmpty)
    #expect(host.command([0x4A, 0x01, 0x01] + pollingPayload)?.prefix(2) == [0x4B, 0x01])
    #expect(try PN532Fault(parsing: "away@2").description == "away@2:3000")
    #expect(try PN532Fault(parsing: "away@7:250", usb: true).description == "away@7:250")
}

@Test("rf timing on the RC-S956: frames take full-speed USB time, not UART time")
func rcs956LinkTime() {
    var usb = Host(options: .init(chip: .rcs956, timing: true))
    // GetFirmwareVersion is a 9-byte frame, the ACK 6 bytes: 12 Mbit/s plus 125 µs a packet each.
    #expect(usb.send([0x02]).first?.at == .microseconds(6 + 125 + 4 + 125))
    var serial = Host(options: .init(timing: true))
    #expect(serial.send([0x02]).first?.at == .nanoseconds(15 * 10 * 1_000_000_000 / 115_200))
}
