import FeliCa
import FeliCaReaderCodecs

/// The chip behind one ``PN532SerialTransport``: its serial line, the frames in flight and
/// the RF settings last sent. Touched only on the transport's device thread.
final class PN532Connection: @unchecked Sendable {
    // @unchecked: every member is used only on the transport's DeviceThread, one call at a time.
    let label: String
    /// The bit rate the next Polling, and so every command after it, runs at.
    private(set) var bitRate: AirTiming.BitRate
    /// The rate the card in the field was last listed at (InListPassiveTarget); the chip
    /// speaks to it at that rate until the next list.
    private var listedRate: AirTiming.BitRate?
    private let port: SerialPort
    private var parser = PN532FrameParser()
    /// The RF timeout currently set on the chip; nil = the chip's default, unknown to us.
    private var chipTimeout: ChipTimeout?
    /// The last Polling packet, to tell a silent card from a card that left.
    private var lastPolling: [UInt8]?

    /// Time the frames of one command take on the line at 115200 baud, at most (a
    /// 265-byte reply and its command): what the host adds to the chip's own wait.
    static let lineTime = Duration.milliseconds(30)
    /// The speed the line is raised to after set-up unless told otherwise, when the port
    /// takes it, as nfcpy does: every frame then takes an eighth of its time at 115200
    /// baud. USB-serial adapters (FTDI, CP210x, CH340, PL2303) run it; a UART that cannot is
    /// left at 115200.
    static let fastBaud = 921_600
    /// The line's speed now.
    var baud: Int { port.baud }
    /// What the host waits beyond that before it decides the chip is not answering.
    static let hostMargin = Duration.milliseconds(100)

    /// Makes `cancel()` cut short a wait on the line (from any thread).
    var cancellation: SerialPort.Cancellation { port.cancellation }

    /// Opens `path`, wakes the chip and sets it up as a FeliCa reader: SAMConfiguration
    /// (which also proves a PN532 is there), one passive activation attempt a Polling, and
    /// the line raised to `baud` when the port takes it.
    init(path: String, bitRate: AirTiming.BitRate, baud: Int = fastBaud) throws(FeliCaError) {
        label = "pn532:" + path
        self.bitRate = bitRate
        port = try SerialPort(path: path)
        do throws(FeliCaError) {
            // An ACK first stops a command a previous host left running (its reply, if
            // it comes anyway, has another response code and is skipped).
            try port.write(PN532Commands.wakeUp + PN532Frame.ack.encode())
            var answered = try wake()
            // A host that ended without closing may have left the chip at the fast speed.
            if !answered, port.setSpeed(Self.fastBaud) { answered = try wake() }
            guard answered else {
                throw FeliCaError(.noReader, "\(label): no PN532 answered on this serial port; check the wiring (TX to RX, RX to TX), that the board's mode switches select HSU (UART), and that no other program holds the port")
            }
            _ = try call(PN532Commands.oneActivationAttempt, wait: .milliseconds(300))
            if port.baud != baud { try changeSpeed(to: baud) }
        } catch {
            port.close()
            throw error
        }
    }

    /// SAMConfiguration, twice if need be (a sleeping chip may miss the first): whether the
    /// chip answered at the line's speed.
    private func wake() throws(FeliCaError) -> Bool {
        for _ in 0..<2 {
            do throws(FeliCaError) {
                _ = try call(PN532Commands.samConfiguration, wait: .milliseconds(300))
                return true
            } catch where error.code == .timeout {
                try port.write(PN532Commands.wakeUp)
            }
        }
        return false
    }

    /// SetSerialBaudRate, the host's ACK at the old speed, then the line at the new one
    /// (UM0701 §7.2.8). A port that will not run `baud` is left as it is, and so is the chip.
    private func changeSpeed(to baud: Int) throws(FeliCaError) {
        guard let command = PN532Commands.setSerialBaudRate(baud), SerialPort.speeds[baud] != nil else { return }
        let previous = port.baud
        // Ask the line first: a speed it refuses must not be asked of the chip.
        guard port.setSpeed(baud) else { return }
        guard port.setSpeed(previous) else {
            throw FeliCaError(.noReader, "\(label): cannot set the serial port back to \(previous) baud")
        }
        _ = try call(command, wait: .milliseconds(100))
        try port.write(PN532Frame.ack.encode())
        guard port.setSpeed(baud) else {
            throw FeliCaError(.noReader, "\(label): the serial port would not switch to \(baud) baud after the PN532 did; unplug the reader and plug it back in")
        }
    }

    /// Turns the RF field off, puts the line back to 115200 baud (where the next host,
    /// libnfc among them, expects the chip), and closes it.
    func close() {
        if port.fd >= 0 {
            _ = try? call(PN532Commands.field(on: false), wait: .milliseconds(100))
            if port.baud != 115_200 { try? changeSpeed(to: 115_200) }
        }
        port.close()
    }

    // MARK: - One command

    /// Sends `command` and returns the chip's reply to it (response code first), waiting
    /// at most `wait` (plus the line's time). A reply with another response code is an
    /// earlier command's, and skipped. When the chip does not answer in time the command is
    /// aborted (an ACK from the host) and whatever is left on the line dropped.
    func call(_ command: [UInt8], wait: Duration) throws(FeliCaError) -> [UInt8] {
        try port.write(PN532Frame.command(command).encode())
        let expected = PN532Commands.responseCode(of: command)
        let deadline = ContinuousClock().now.advanced(by: wait + Self.lineTime)
        while true {
            while let event = parser.next() {
                switch event {
                case .frame(.response(let data)) where data.first == expected:
                    return data
                case .frame(.ack), .frame(.response):
                    continue
                case .frame(.applicationError):
                    throw FeliCaError(.unsupported, "\(label): the PN532 refused command \(Hex.encode([command[0]])) (application error frame)")
                case .frame(.nack), .frame(.command):
                    throw FeliCaError(.transmission, "\(label): the PN532 sent a frame a chip does not send; the line is noisy or another program writes to it")
                case .invalid(let e):
                    resynchronise()
                    throw FeliCaError(.transmission, "\(label): garbled frame from the PN532 (\(e.reason)); run the command again")
                }
            }
            let bytes: [UInt8]
            do throws(FeliCaError) {
                bytes = try port.read(until: deadline)
            } catch {
                // Cancelled or gone: stop the chip's command so the next one starts clean.
                if error.code == .cancelled { resynchronise() }
                throw error
            }
            guard !bytes.isEmpty else {
                resynchronise()
                throw FeliCaError(.timeout, "\(label): the PN532 did not answer command \(Hex.encode([command[0]])) within \(wait + Self.lineTime)")
            }
            parser.append(bytes)
        }
    }

    /// Stops whatever the chip runs (an ACK aborts it) and forgets what the line held.
    private func resynchronise() {
        try? port.write(PN532Frame.ack.encode())
        parser.reset()
        port.flushInput()
    }

    // MARK: - FeliCa exchanges

    /// Sends one FeliCa packet (LEN first) and returns the card's (LEN first): Polling as
    /// InListPassiveTarget, everything else through InCommunicateThru with the chip's RF
    /// timeout set to the shortest code that covers `chipWait`.
    ///
    /// The timeout is set again whenever the code differs (one RFConfiguration round trip,
    /// about 2 ms on the line): a longer one kept would make every silent card — above all
    /// the presence check that notices a card has left — wait it out.
    func exchange(_ packet: [UInt8], chipWait: Duration) throws(FeliCaError) -> [UInt8] {
        if let polling = PollingCommand(packet: packet) {
            lastPolling = packet
            guard let reply = try poll(packet, timeout: chipWait) else {
                throw FeliCaError(.timeout, "\(label): no card answered the Polling for system \(polling.systemCode)")
            }
            return reply
        }
        // The card was listed at another rate (the session moved back down): list it again
        // at this one, so the chip speaks to it at the rate the session expects.
        if let listed = listedRate, listed != bitRate, let p = lastPolling, try poll(p, timeout: .milliseconds(20)) == nil {
            throw FeliCaError(.cardGone, "\(label): the card left the reader; hold it still on the reader and run the command again")
        }
        let wanted = ChipTimeout(atLeast: chipWait)
        if chipTimeout != wanted {
            _ = try call(PN532Commands.timeout(wanted), wait: .milliseconds(100))
            chipTimeout = wanted
        }
        let reply = try call(PN532Commands.communicateThru(packet), wait: wanted.duration + Self.hostMargin)
        if let card = try PN532Commands.cardReply(reply) { return card }
        // The card stayed silent. Is it still there? One Polling tells.
        if let p = lastPolling, try poll(p, timeout: .milliseconds(20)) == nil {
            throw FeliCaError(.cardGone, "\(label): the card left the reader during the exchange; hold it still on the reader and run the command again")
        }
        throw FeliCaError(.timeout, "\(label): the card did not answer within \(wanted.duration)")
    }

    /// Moves to `rate`. Up: the card in the field is listed again at it at once
    /// (InListPassiveTarget with the last Polling), so a card that does not answer there is
    /// found out now; the chip then speaks to it at that rate. Down: nothing is sent until
    /// the next command, which lists the card again first when it is not a Polling.
    func switchRate(to rate: AirTiming.BitRate) throws(FeliCaError) {
        let previous = bitRate
        bitRate = rate
        guard rate.rawValue > previous.rawValue, let p = lastPolling else { return }
        if try poll(p, timeout: .milliseconds(20)) == nil {
            bitRate = previous
            _ = try? poll(p, timeout: .milliseconds(20))
            throw FeliCaError(.timeout, "\(label): the card did not answer at \(rate.rawValue) kbps; it stays at \(previous.rawValue) kbps")
        }
    }

    /// One InListPassiveTarget: the card's Polling response, or nil when none answered.
    private func poll(_ polling: [UInt8], timeout: Duration) throws(FeliCaError) -> [UInt8]? {
        let reply = try call(PN532Commands.listFeliCa(polling: polling, at: bitRate), wait: timeout + Self.hostMargin)
        let card = try PN532Commands.pollingResponse(reply)
        listedRate = card == nil ? nil : bitRate
        return card
    }
}
