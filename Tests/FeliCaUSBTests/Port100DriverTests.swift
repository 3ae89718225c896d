import FeliCa
import FeliCaEmulators
import FeliCaReaderCodecs
import FeliCaSimulation
import FeliCaUSB
import Testing
import FeliCaCards

/// The RC-S380 protocol in-process: ``Port100Driver`` against ``RCS380Emulator`` on a
/// simulated clock, for every fault the USB stage (scripts/test.d/55-usb.sh) puts on the
/// umockdev bus, and the move to 424 kbps.
@Suite struct Port100DriverTests {
    static let polling = PollingCommand(systemCode: .wildcard, requestCode: .none).encode()
    static let timeout: Duration = .milliseconds(100)

    /// A driver opened at `bitRate` on an emulated reader holding `card` (nil: no card).
    static func opened(_ card: VirtualCard?, faults: [RCS380Fault] = [], timing: Bool = false,
                       bitRate: AirTiming.BitRate = .kbps212) throws -> (Port100Driver, RCS380EmulatorLink) {
        var link = RCS380EmulatorLink(RCS380Emulator(card: card, options: .init(timing: timing, faults: faults)))
        var driver = Port100Driver(label: "test reader")
        try driver.open(bitRate: bitRate, &link)
        return (driver, link)
    }

    static func suica() throws -> VirtualCard { try VirtualCard.named("suica") }

    /// The commands the host sent, decoded (ACKs as nil, zero-length packets dropped).
    static func commands(_ link: RCS380EmulatorLink) -> [Port100Command?] {
        link.written.filter { !$0.isEmpty }.map { bytes in
            if case .command(let c)? = try? Port100Frame.decode(bytes[...]) { return c }
            return nil
        }
    }

    /// The card's IDm, from a Polling that must succeed.
    static func poll(_ driver: inout Port100Driver, _ link: inout RCS380EmulatorLink) throws -> IDm {
        try PollingResponse.decode(try driver.exchange(polling, timeout: timeout, &link)[...]).idm
    }

    @Test("opening clears the reader (ACK), sets it up as hosts do and sets FeliCa at 212 kbps")
    func opening() throws {
        let (driver, link) = try Self.opened(try Self.suica())
        #expect(Self.commands(link) == [nil, .setCommandType(1), .getFirmwareVersion, .getPDDataVersion, .switchRF(on: false),
                                        .inSetRF(.kbps212), .inSetProtocol(Port100Command.inSetProtocolDefaults), .inSetProtocol([0x00, 0x18])])
        #expect(driver.rate == .kbps212)
        #expect(link.emulator.abortedCommands == 0 && link.emulator.invalidFrames == 0)
    }

    @Test("the round trip measured at open is what the emulated USB link takes")
    func roundTrip() throws {
        let (driver, _) = try Self.opened(try Self.suica(), timing: true)
        #expect(driver.roundTrip > .zero && driver.roundTrip < .milliseconds(5))
    }

    @Test("a card answers Polling and the commands after it; closing switches the field off and ACKs")
    func exchanges() throws {
        let card = try Self.suica()
        var (driver, link) = try Self.opened(card)
        let idm = try Self.poll(&driver, &link)
        #expect(idm == card.systems[0].idm)
        let reply = try driver.exchange(RequestResponseCommand(idm: idm).encode(), timeout: Self.timeout, &link)
        #expect(try RequestResponseResponse.decode(reply[...]).idm == idm)
        driver.close(&link)
        #expect(Self.commands(link).suffix(2) == [.switchRF(on: false), nil])
        #expect(!link.emulator.fieldOn)
        #expect(throws: FeliCaError(.readerGone, "")) { try driver.exchange(Self.polling, timeout: Self.timeout, &link) }
    }

    @Test("no card: Polling times out as the card's silence (InCommRF's own timeout), the reader is not aborted")
    func noCard() throws {
        var (driver, link) = try Self.opened(nil)
        let start = link.now
        let error = thrownError { try driver.exchange(Self.polling, timeout: Self.timeout, &link) }
        #expect(error == FeliCaError.timeout)
        #expect(error?.reason.contains("no card answered Polling within 100 ms") == true)
        #expect(link.emulator.abortedCommands == 0)
        #expect(link.now - start >= Self.timeout)
    }

    @Test("a card that leaves mid-read: its silence, then a Polling nobody answers, is cardGone")
    func cardRemoved() throws {
        let card = try Self.suica()
        var (driver, link) = try Self.opened(card)
        let idm = try Self.poll(&driver, &link)
        card.removeAfter(exchanges: 0)
        let error = thrownError {
            try driver.exchange(RequestResponseCommand(idm: idm).encode(), timeout: Self.timeout, &link)
        }
        #expect(error == FeliCaError(.cardGone, ""))
        #expect(error?.reason.contains("the card left the reader") == true)
        // The question was a second InCommRF carrying the last Polling.
        let last = Self.commands(link).suffix(2).compactMap { $0 }
        #expect(last.count == 2 && last.allSatisfy { $0.code == Port100Command.inCommRFCode })
        #expect(last.last.map { Array($0.data.dropFirst(2)) } == Self.polling)
    }

    @Test("a card that stays but misses one answer is a timeout, not cardGone")
    func silentCardStillThere() throws {
        var image = try Self.suica().image
        image.ignores = [.requestSystemCode]
        var (driver, link) = try Self.opened(VirtualCard(image: image))
        let idm = try Self.poll(&driver, &link)
        let error = thrownError {
            try driver.exchange(RequestSystemCodeCommand(idm: idm).encode(), timeout: Self.timeout, &link)
        }
        #expect(error == FeliCaError.timeout)
        #expect(error?.reason.contains("the card did not answer within 100 ms") == true)
        #expect(try Self.poll(&driver, &link) == idm)
    }

    @Test("a late reply: the host gives up at the command's time plus the margin, aborts with an ACK, and the next command works")
    func lateReply() throws {
        var (driver, link) = try Self.opened(try Self.suica(), faults: [RCS380Fault(.lateReply(.seconds(3)), atExchange: 2)])
        _ = try Self.poll(&driver, &link)
        let start = link.now
        let error = thrownError { try driver.exchange(Self.polling, timeout: Self.timeout, &link) }
        #expect(error == FeliCaError.timeout)
        #expect(error?.reason.contains("did not send the answer to InCommRF in time; the command was aborted") == true)
        #expect(link.emulator.abortedCommands == 1)
        #expect(link.now - start < Self.timeout + Port100Driver.hostMargin + .milliseconds(50))
        _ = try Self.poll(&driver, &link)
    }

    @Test("a reply late by less than the margin is still taken")
    func slightlyLateReply() throws {
        var (driver, link) = try Self.opened(try Self.suica(), faults: [RCS380Fault(.lateReply(.milliseconds(150)), atExchange: 1)])
        _ = try Self.poll(&driver, &link)
        #expect(link.emulator.abortedCommands == 0)
    }

    @Test("a corrupt response frame is a transmission error; the reader is drained and the next command works")
    func corruptFrame() throws {
        var (driver, link) = try Self.opened(try Self.suica(), faults: [RCS380Fault(.corruptFrame, atExchange: 2)])
        _ = try Self.poll(&driver, &link)
        let error = thrownError { try driver.exchange(Self.polling, timeout: Self.timeout, &link) }
        #expect(error == FeliCaError(.transmission, ""))
        #expect(error?.reason.contains("arrived damaged") == true)
        _ = try Self.poll(&driver, &link)
    }

    @Test("a lost ACK is a transmission error; the next command works")
    func lostAck() throws {
        var (driver, link) = try Self.opened(try Self.suica(), faults: [RCS380Fault(.dropAck, atExchange: 2)])
        _ = try Self.poll(&driver, &link)
        let error = thrownError { try driver.exchange(Self.polling, timeout: Self.timeout, &link) }
        #expect(error == FeliCaError(.transmission, ""))
        #expect(error?.reason.contains("expected an ACK to InCommRF") == true)
        _ = try Self.poll(&driver, &link)
    }

    @Test("a reader unplugged mid-command: readerGone naming the link's status, and so is every later command")
    func unplugged() throws {
        var (driver, link) = try Self.opened(try Self.suica(), faults: [RCS380Fault(.unplug, atExchange: 2)])
        _ = try Self.poll(&driver, &link)
        let error = thrownError { try driver.exchange(Self.polling, timeout: Self.timeout, &link) }
        #expect(error == FeliCaError(.readerGone, ""))
        #expect(error?.reason == "test reader was unplugged (LIBUSB_ERROR_NO_DEVICE): plug it back in and run the command again")
        #expect(throws: FeliCaError(.readerGone, "")) { try driver.exchange(Self.polling, timeout: Self.timeout, &link) }
    }

    @Test("a cancelled caller: the running command is aborted with a host ACK, and the next one works")
    func cancelled() throws {
        var (driver, link) = try Self.opened(nil)
        link.cancelledAt = link.now + .milliseconds(120)
        let error = thrownError { try driver.exchange(Self.polling, timeout: .seconds(2), &link) }
        #expect(error == FeliCaError(.cancelled, ""))
        #expect(error?.reason.contains("cancelled while waiting for the answer to InCommRF") == true)
        #expect(link.emulator.abortedCommands == 1)
        #expect(link.now < .seconds(1))
        link.cancelledAt = nil
        #expect(throws: FeliCaError.timeout) { try driver.exchange(Self.polling, timeout: Self.timeout, &link) }
        #expect(link.emulator.abortedCommands == 1)
    }

    @Test("424 kbps: InSetRF alone, and the card answers at the new rate; back to 212 the same way")
    func switchTo424() throws {
        let card = try Self.suica()
        var (driver, link) = try Self.opened(card)
        let idm = try Self.poll(&driver, &link)
        let before = Self.commands(link).count
        try driver.switchRate(.kbps424, &link)
        #expect(Array(Self.commands(link).dropFirst(before)) == [.inSetRF(.kbps424)])
        #expect(driver.rate == .kbps424)
        #expect(try Self.poll(&driver, &link) == idm)
        try driver.switchRate(.kbps212, &link)
        #expect(Self.commands(link).last == .inSetRF(.kbps212))
        #expect(try Self.poll(&driver, &link) == idm)
    }

    @Test("a card that runs at 212 kbps only does not answer at 424")
    func card212Only() throws {
        var image = try Self.suica().image
        image.bitRates = [.kbps212]
        var (driver, link) = try Self.opened(VirtualCard(image: image), bitRate: .kbps424)
        #expect(throws: FeliCaError.timeout) { try driver.exchange(Self.polling, timeout: Self.timeout, &link) }
        try driver.switchRate(.kbps212, &link)
        _ = try Self.poll(&driver, &link)
    }

    @Test("a frame that fills whole USB packets is ended with a zero-length packet")
    func zeroLengthPacket() throws {
        var (driver, link) = try Self.opened(try Self.suica())
        // InCommRF's frame is 14 bytes around the packet: a 50-byte packet makes 64.
        let packet = [UInt8(50), 0x0A] + [UInt8](repeating: 0, count: 48)
        _ = try? driver.exchange(packet, timeout: Self.timeout, &link)
        let i = try #require(link.written.firstIndex { $0.count == 64 })
        #expect(link.written[i + 1] == [])
        #expect(link.written.filter(\.isEmpty).count == 1)
    }
}

@Suite struct USBLocationTests {
    @Test("a reader's place on the bus is typed; its node and label are written as lsusb numbers them")
    func location() {
        let l = USBReaders.Location(bus: 1, address: 4)
        #expect(l.node == "/dev/bus/usb/001/004")
        #expect(l.description == "USB bus 001 device 004")
    }
}
