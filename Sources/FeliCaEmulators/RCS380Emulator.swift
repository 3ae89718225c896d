import FeliCa
import FeliCaSimulation
import FeliCaReaderCodecs

/// A Sony RC-S380 (Port-100 chip) as its host sees it over USB, with a `VirtualCard` (or
/// no card) in its field.
///
/// A pure state machine: feed it what the host wrote to the bulk OUT endpoint and when, and
/// it returns what the reader puts on the bulk IN endpoint and when. The umockdev bridge of
/// `felica-sim rcs380` carries the bytes; tests and fuzzers drive it directly.
///
/// Every command frame is answered with an ACK, then a response frame. An ACK from the host
/// while a command runs aborts it (its response is never sent); an ACK with nothing running
/// is a soft reset and gets no answer, which is what hosts rely on when they flush stale
/// replies at open. A frame with a bad checksum is ignored, as the chip ignores line noise;
/// a well-formed frame with an unknown command gets the error frame.
///
/// Timing (``Options/timing``): USB full-speed transfer time per 64-byte packet, the card's
/// air time and reaction time (`CardTiming`), InCommRF's own timeout when the card stays
/// silent or reacts later than the timeout (counted from the end of the command to the
/// start of the reply). Without
/// timing, silence still costs InCommRF's timeout (a host cannot tell silence sooner), but
/// everything else is instant.
public struct RCS380Emulator: Sendable {
    /// How the emulated reader behaves.
    public struct Options: Sendable {
        /// Model USB, air and card time; off = answer at once.
        public var timing: Bool
        /// Misbehaviours to inject.
        public var faults: [RCS380Fault]
        /// GetFirmwareVersion's answer: major, minor (nfcpy's recorded reader says 1.11).
        public var firmware: (major: UInt8, minor: UInt8)
        /// Card taps (`--taps`): the card comes and goes; nil = it stays.
        public var taps: CardTaps?

        public init(timing: Bool = false, faults: [RCS380Fault] = [], firmware: (major: UInt8, minor: UInt8) = (1, 0x11), taps: CardTaps? = nil) {
            self.timing = timing
            self.faults = faults
            self.firmware = firmware
            self.taps = taps
        }
    }

    /// What the reader does on the bus.
    public typealias Action = EmulatorAction

    /// The card in the field; nil = no card.
    public let card: VirtualCard?
    public var options: Options

    /// Well-formed command frames received.
    public private(set) var commandCount = 0
    /// Packets sent to the card so far (what ``RCS380Fault/exchange`` counts).
    public private(set) var cardExchanges = 0
    /// Frames from the host with bad checksums or layout, ignored.
    public private(set) var invalidFrames = 0
    /// Commands aborted by a host ACK.
    public private(set) var abortedCommands = 0
    /// Whether the RF field is on.
    public private(set) var fieldOn = false
    /// Whether the reader has left the bus (an unplug fault fired).
    public private(set) var unplugged = false

    private var parser = Port100FrameParser()
    private var busyUntil: Duration = .zero
    private var firedFaults: Set<Int> = []
    private var commandType: UInt8 = 0
    /// The FeliCa bit rate set by InSetRF; nil = another technology (nothing answers).
    private var rate: AirTiming.BitRate?
    private var protocolSettings = [UInt8](repeating: 0, count: 0x14)

    /// Time that stands for "never": a command that only an abort ends.
    public static let never: Duration = .seconds(1 << 40)
    /// The RC-S380's USB identity: Sony, RC-S380/S.
    public static let vendorID: UInt16 = 0x054C
    public static let productID: UInt16 = 0x06C1

    public init(card: VirtualCard?, options: Options = Options()) {
        self.card = card
        self.options = options
    }

    /// Plugs the reader back in after an `away` fault: powered up afresh (no field, no
    /// settings, no command running), with its card, its counters and its fired faults kept.
    public mutating func plugIn() {
        var fresh = Self(card: card, options: options)
        fresh.commandCount = commandCount
        fresh.cardExchanges = cardExchanges
        fresh.invalidFrames = invalidFrames
        fresh.abortedCommands = abortedCommands
        fresh.firedFaults = firedFaults
        self = fresh
    }

    /// Whether a command is still running at `time`.
    public func isBusy(at time: Duration) -> Bool { time < busyUntil }

    /// Takes one bulk OUT transfer the host wrote at `now`; returns the reader's actions.
    public mutating func receive(_ bytes: some Sequence<UInt8>, at now: Duration) -> [Action] {
        guard !unplugged else { return [] }
        parser.append(bytes)
        var actions: [Action] = []
        while let event = parser.next() {
            switch event {
            case .invalid:
                invalidFrames += 1
            case .frame(.ack):
                if now < busyUntil {
                    abortedCommands += 1
                    actions.append(.cancel(after: now))
                    busyUntil = now
                }
            case .frame(.command(let command)):
                actions += run(command, arrivedAt: now)
            case .frame(.response), .frame(.error):
                invalidFrames += 1  // the reader's own frames have no business here
            }
            if unplugged { break }
        }
        return actions
    }

    // MARK: - Running one command

    /// What a command produced: the frame to answer with and how long the chip works on it
    /// (nil = until aborted).
    private struct Outcome {
        var frame: Port100Frame
        var work: Duration? = .zero
    }

    private mutating func run(_ command: Port100Command, arrivedAt now: Duration) -> [Action] {
        commandCount += 1
        let exchangesBefore = cardExchanges
        let outcome = execute(command)
        var fault: RCS380Fault.Kind? = nil
        if cardExchanges > exchangesBefore,
           let f = options.faults.first(where: { $0.exchange == cardExchanges && !firedFaults.contains($0.exchange) }) {
            firedFaults.insert(f.exchange)
            fault = f.kind
        }
        let inbound = usbTime(Port100Frame.command(command).encode().count)
        var t = max(now + inbound, busyUntil)
        t += usbTime(6)
        var actions: [Action] = fault == .dropAck ? [] : [.send(Port100Frame.ack.encode(), at: t)]
        // Unplugged for good, or away for a while: the reader leaves just after the ACK.
        let away: Duration? = if case .away(let d)? = fault { d } else { nil }
        if fault == .unplug || away != nil {
            unplugged = true
            busyUntil = Self.never
            let gone = t + timed(.milliseconds(1))
            actions.append(.unplug(at: gone))
            if let away { actions.append(.plugIn(at: gone + away)) }
            return actions
        }
        guard let work = outcome.work else {
            busyUntil = Self.never
            return actions
        }
        var frame = outcome.frame.encode()
        var at = t + work + usbTime(frame.count)
        switch fault {
        case .corruptFrame?: frame[frame.count - 2] &+= 1
        case .lateReply(let d)?: at += d
        default: break
        }
        actions.append(.send(frame, at: at))
        busyUntil = at
        return actions
    }

    /// Full-speed USB: 64-byte packets, about 1 ms frames for bulk under load; modelled as
    /// 12 Mbit/s plus one 125 µs turnaround a packet.
    private func usbTime(_ bytes: Int) -> Duration {
        options.timing ? EmulatorTiming.fullSpeedUSB(bytes) : .zero
    }

    private func timed(_ d: Duration) -> Duration { options.timing ? d : .zero }

    private static func respond(_ command: Port100Command, _ data: [UInt8]) -> Outcome {
        Outcome(frame: .response(Port100Response(to: command, data: data)))
    }

    private mutating func execute(_ command: Port100Command) -> Outcome {
        let ok = Port100Status.success.rawValue, bad = Port100Status.parameterError.rawValue
        let d = command.data
        switch command.code {
        case Port100Command.setCommandTypeCode:
            guard d.count == 1, d[0] <= 1 else { return Self.respond(command, [bad]) }
            commandType = d[0]
            return Self.respond(command, [ok])
        case Port100Command.getCommandTypeCode:
            // Bit mask of the command types the chip supports (types 0 and 1), big-endian.
            return Self.respond(command, [0, 0, 0, 0, 0, 0, 0, 0x03])
        case Port100Command.getFirmwareVersionCode:
            guard d.count <= 1 else { return Outcome(frame: .error) }
            return Self.respond(command, [options.firmware.minor, options.firmware.major])
        case Port100Command.getPDDataVersionCode:
            return Self.respond(command, [0x00, 0x01])
        case Port100Command.switchRFCode:
            guard d.count == 1, d[0] <= 1 else { return Self.respond(command, [bad]) }
            fieldOn = d[0] == 1
            return Self.respond(command, [ok])
        case Port100Command.inSetRFCode:
            guard d.count == 4 else { return Self.respond(command, [bad]) }
            // Send setting 01 is FeliCa; its bit-rate byte 01 = 212, 02 = 424 kbps.
            switch (d[0], d[1]) {
            case (0x01, 0x01): rate = .kbps212
            case (0x01, 0x02): rate = .kbps424
            case (0x01...0x05, _): rate = nil
            default: return Self.respond(command, [bad])
            }
            return Self.respond(command, [ok])
        case Port100Command.inSetProtocolCode:
            guard d.count % 2 == 0 else { return Self.respond(command, [bad]) }
            var i = 0
            while i < d.count {
                guard Int(d[i]) < protocolSettings.count else { return Self.respond(command, [bad]) }
                protocolSettings[Int(d[i])] = d[i + 1]
                i += 2
            }
            return Self.respond(command, [ok])
        case Port100Command.inGetProtocolCode:
            guard d.allSatisfy({ Int($0) < protocolSettings.count }) else { return Self.respond(command, [bad]) }
            return Self.respond(command, d.map { protocolSettings[Int($0)] })
        case Port100Command.inCommRFCode:
            return inCommRF(command)
        case Port100Command.resetDeviceCode:
            guard d.count == 2 else { return Self.respond(command, [bad]) }
            fieldOn = false
            rate = nil
            commandType = 0
            return Self.respond(command, [ok])
        default:
            return Outcome(frame: .error)
        }
    }

    /// InCommRF `04 TIMEOUT(2, LE, 0.1 ms) PACKET` → `05 STATUS(4) FLAGS PACKET`. The field
    /// comes on by itself; only a FeliCa setting reaches the card. Timeout 0 waits forever.
    private mutating func inCommRF(_ command: Port100Command) -> Outcome {
        guard command.data.count >= 2 else {
            return Self.respond(command, [Port100Status.parameterError.rawValue])
        }
        let value = UInt16(command.data[0]) | UInt16(command.data[1]) << 8
        let limit: Duration? = value == 0 ? nil : Port100Command.timeout(fromValue: value)
        let packet = Array(command.data.dropFirst(2))
        fieldOn = true
        cardExchanges += 1
        let silence = Outcome(frame: .response(.inCommRF(status: .receiveTimeout)), work: limit)
        if let taps = options.taps, !taps.isPresent(atExchange: cardExchanges) { return silence }
        guard let rate, !packet.isEmpty, let card, let reply = card.respond(to: packet, at: rate) else { return silence }
        // InCommRF's timer runs from the end of the command to the start of the reply, so a
        // card answering within its PMm bound beats a timeout of that bound (as nfcpy sets it).
        if options.timing, let limit, card.reactionTime(to: packet) > limit { return silence }
        return Outcome(frame: .response(.inCommRF(packet: reply)), work: timed(card.responseTime(to: packet, reply: reply, bitRate: rate)))
    }
}
