import FeliCa
import FeliCaSimulation
import FeliCaReaderCodecs

/// A PN532 NFC controller as its host sees it over the serial line (HSU), with a
/// `VirtualCard` (or no card) in its field; or, with ``Options/chip`` set to
/// ``Chip/rcs956``, Sony's RC-S956, the PN533-family chip of the RC-S330/RC-S360/RC-S370
/// readers, as its host sees it over USB (the same frames, one per bulk transfer).
///
/// A pure state machine: feed it the bytes the host wrote and the time they arrived, and
/// it returns what the chip writes back and when. ``PN532Server`` runs it on a
/// pseudo-terminal, ``USBBridgeServer`` behind the umockdev USB bridge; tests drive it
/// directly.
///
/// Like the chip it is single-threaded: a command frame that arrives while an earlier one
/// is still running waits its turn, so a reply the host gave up on still comes out first
/// (the failure libnfc meets after a host-side timeout). An ACK from the host aborts the
/// running command.
///
/// Timing (``Options/timing``): every frame takes its UART time at the current baud rate
/// (10 bits a byte; full-speed USB time on the RC-S956), card exchanges take the card's air
/// and reaction time (`CardTiming`), a silent card, or one reacting later than the chip's
/// RF timeout (RFConfiguration item 0x02, counted from the end of the command to the start
/// of the reply), costs that timeout, and a Polling nobody answers costs one Polling window
/// per passive-activation attempt (item 0x05). Without timing everything is instant, but the order of events is
/// the same.
public struct PN532Emulator: Sendable {
    /// Which chip of the family answers. The RC-S956 runs Sony's own firmware on the same
    /// hardware: the command set is the PN53x one, with these differences a host sees —
    /// GetFirmwareVersion says IC 0x33 (PN533) with ROM code 0x01, which is how libnfc tells
    /// it from a PN533; there is no SAM, so no SAMConfiguration; ResetMode (`18 01` →
    /// `19`) returns its state machine to mode 0; WriteRegister answers with a status byte;
    /// InDeselect and InRelease come in a three-byte form (`44 01 01`), as libnfc sends them.
    public enum Chip: Hashable, Sendable {
        case pn532
        case rcs956

        /// GetFirmwareVersion's answer after the response code: IC, Ver, Rev, Support.
        /// The RC-S956's is the one nfcpy's RC-S956 tests use (`33 01 30 07`, v1.48).
        public var firmware: [UInt8] {
            switch self {
            case .pn532: [0x32, 0x01, 0x06, 0x07]
            case .rcs956: [0x33, 0x01, 0x30, 0x07]
            }
        }
    }

    /// How the emulated chip behaves beyond the manual.
    public struct Options: Sendable {
        /// The chip (``Chip/pn532`` unless given).
        public var chip: Chip
        /// Model UART, air and card time (`--timing rf`); off = answer at once.
        public var timing: Bool
        /// Misbehaviours to inject.
        public var faults: [PN532Fault]
        /// GetFirmwareVersion answer after the response code: IC, Ver, Rev, Support.
        public var firmware: [UInt8]
        /// Card taps (`--taps`): the card comes and goes; nil = it stays.
        public var taps: Taps?

        /// `firmware` defaults to the chip's own answer.
        public init(chip: Chip = .pn532, timing: Bool = false, faults: [PN532Fault] = [], firmware: [UInt8]? = nil, taps: Taps? = nil) {
            self.chip = chip
            self.timing = timing
            self.faults = faults
            self.firmware = firmware ?? chip.firmware
            self.taps = taps
        }
    }

    /// Card taps (`--taps`).
    public typealias Taps = CardTaps

    /// What the chip does on the serial line (it never leaves the bus).
    public typealias Action = EmulatorAction

    /// The card in the field; nil = no card.
    public let card: VirtualCard?
    public var options: Options

    /// Host commands received (well-formed command frames).
    public private(set) var commandCount = 0
    /// Packets sent to the card so far (what ``PN532Fault/exchange`` counts).
    public private(set) var cardExchanges = 0
    /// Frames from the host with bad checksums or layout, ignored as the chip ignores them.
    public private(set) var invalidFrames = 0
    /// Serial speed in baud (changed by SetSerialBaudRate).
    public private(set) var baudRate = 115_200
    /// Whether the reader has left the bus (an unplug fault fired; USB readers only).
    public private(set) var unplugged = false
    /// The bit rate InCommunicateThru speaks to the card at now: the rate of the last
    /// FeliCa InListPassiveTarget; nil before one.
    public var cardBitRate: AirTiming.BitRate? { feliCaRate }
    /// The RF timeout code last set (RFConfiguration item 0x02, its non-DEP byte): how
    /// long InCommunicateThru waits for a silent card, 100 µs × 2^(code − 1).
    public var rfTimeoutCode: UInt8 { communicationTimeout }

    private var parser = PN532FrameParser()
    private var busyUntil: Duration = .zero
    private var lastFrame: [UInt8]?
    private var firedFaults: Set<Int> = []
    private var registers: [UInt16: UInt8] = [:]
    private var parameters: UInt8 = 0
    private var samMode: UInt8 = 0x01
    private var fieldOn = false
    private var poweredDown = false
    /// Bit rate the RF front end is set to after a FeliCa InListPassiveTarget.
    private var feliCaRate: AirTiming.BitRate?
    /// The FeliCa target listed as Tg 1, if any.
    private var target: AirTiming.BitRate?
    /// RFConfiguration item 0x02, "TimeOut during non-DEP communications" (0x0A = 51.2 ms).
    private var communicationTimeout: UInt8 = 0x0A
    /// RFConfiguration item 0x05, MxRtyPassiveActivation (0xFF = retry forever).
    private var passiveActivationRetries: UInt8 = 0xFF

    /// Time that stands for "never": a chip told to retry forever answers only when aborted.
    public static let never: Duration = .seconds(1 << 40)

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
        fresh.firedFaults = firedFaults
        self = fresh
    }

    /// Whether a command is still running at `time`.
    public func isBusy(at time: Duration) -> Bool { time < busyUntil }

    /// Takes bytes the host wrote at `now`; returns the chip's writes.
    public mutating func receive(_ bytes: some Sequence<UInt8>, at now: Duration) -> [Action] {
        guard !unplugged else { return [] }
        parser.append(bytes)
        var actions: [Action] = []
        while !unplugged, let event = parser.next() {
            switch event {
            case .invalid:
                invalidFrames += 1
            case .frame(.ack):
                if now < busyUntil {
                    actions.append(.cancel(after: now))
                    busyUntil = now
                }
            case .frame(.nack):
                if let lastFrame {
                    let at = max(now, busyUntil) + uartTime(lastFrame.count)
                    actions.append(.send(lastFrame, at: at))
                    busyUntil = at
                }
            case .frame(.command(let data)):
                actions += run(data, arrivedAt: now)
            case .frame(.response), .frame(.applicationError):
                invalidFrames += 1  // a chip-to-host frame has no business here
            }
        }
        return actions
    }

    // MARK: - Running one command

    /// What a command produced: the frame to answer with, and how long the chip works on it
    /// after the ACK (nil = until aborted).
    private struct Outcome {
        var frame: PN532Frame
        var work: Duration? = .zero
        var baudAfter: Int? = nil
    }

    private mutating func run(_ data: [UInt8], arrivedAt now: Duration) -> [Action] {
        commandCount += 1
        poweredDown = false
        let exchangesBefore = cardExchanges
        let outcome = execute(data)
        var fault: PN532Fault.Kind? = nil
        if cardExchanges > exchangesBefore,
           let f = options.faults.first(where: { $0.exchange == cardExchanges && !firedFaults.contains($0.exchange) }) {
            firedFaults.insert(f.exchange)
            fault = f.kind
        }

        let inbound = uartTime(PN532Frame.command(data).encode().count)
        var t = max(now + inbound, busyUntil)
        var actions: [Action] = []
        if fault != .dropAck {
            t += uartTime(6)
            actions.append(.send(PN532Frame.ack.encode(), at: t))
        }
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
        let frame = outcome.frame.encode()
        lastFrame = frame
        var sent = frame
        var at = t + work + uartTime(frame.count)
        switch fault {
        case .corruptChecksum?: sent[sent.count - 2] &+= 1
        case .lateReply(let d)?: at += d
        default: break
        }
        actions.append(.send(sent, at: at))
        busyUntil = at
        if let b = outcome.baudAfter { baudRate = b }
        return actions
    }

    /// How long `bytes` take on the link: the serial line at the current baud rate (10 bits
    /// a byte), or for the RC-S956, full-speed USB.
    private func uartTime(_ bytes: Int) -> Duration {
        guard options.timing else { return .zero }
        if options.chip == .rcs956 { return EmulatorTiming.fullSpeedUSB(bytes) }
        return .nanoseconds(Int64(bytes) * 10 * 1_000_000_000 / Int64(baudRate))
    }

    private func timed(_ d: Duration) -> Duration { options.timing ? d : .zero }

    /// The RF timeout of a chip timeout code: 100 µs × 2^(code-1); code 0 = none.
    static func rfTimeout(code: UInt8) -> Duration? {
        guard code > 0 else { return nil }
        return .microseconds(100 << Int(min(code, 0x10) - 1))
    }

    private static let syntaxError = Outcome(frame: .applicationError)

    private mutating func execute(_ data: [UInt8]) -> Outcome {
        guard let code = data.first else { return Self.syntaxError }
        var r = ByteReader(data.dropFirst(), frame: "PN532 command")
        let rcs956 = options.chip == .rcs956
        do throws(FeliCaError) {
            switch code {
            case 0x00: return try diagnose(&r)
            case 0x02:
                try r.finish()
                return Outcome(frame: .response([0x03] + options.firmware))
            case 0x04:
                try r.finish()
                return Outcome(frame: .response(generalStatus()))
            case 0x06: return try readRegister(&r)
            case 0x08: return try writeRegister(&r)
            case 0x10: return try setSerialBaudRate(&r)
            case 0x12:
                parameters = try r.readUInt8("flags")
                try r.finish()
                return Outcome(frame: .response([0x13]))
            case 0x14 where !rcs956: return try samConfiguration(&r)
            case 0x16: return try powerDown(&r)
            case 0x18 where rcs956:  // ResetMode: back to mode 0, nothing selected
                guard try r.readUInt8("mode") == 0x01 else { return Self.syntaxError }
                try r.finish()
                target = nil
                return Outcome(frame: .response([0x19]))
            case 0x32: return try rfConfiguration(&r)
            case 0x40: return try inDataExchange(&r)
            case 0x42: return inCommunicateThru(Array(r.readRest()))
            case 0x44, 0x52:
                let tg = try r.readUInt8("Tg")
                if rcs956 && r.count == 1 { _ = try r.readUInt8("option") }
                try r.finish()
                let known = tg == 0 || (tg == 1 && target != nil)
                if code == 0x52 && known { target = nil }
                return Outcome(frame: .response([code + 1, known ? 0x00 : 0x27]))
            case 0x4A: return try inListPassiveTarget(&r)
            case 0x60: return try inAutoPoll(&r)
            default: return Self.syntaxError
            }
        } catch {
            return Self.syntaxError
        }
    }

    /// Diagnose `00 NumTst InParam...` → `01 ...`.
    private mutating func diagnose(_ r: inout ByteReader) throws(FeliCaError) -> Outcome {
        let test = try r.readUInt8("NumTst")
        switch test {
        case 0x00:  // communication line test: echo
            return Outcome(frame: .response([0x01, test] + r.readRest()))
        case 0x01, 0x02, 0x07:  // ROM, RAM, antenna self-tests: pass
            return Outcome(frame: .response([0x01, 0x00]))
        case 0x06:  // attention request / card presence (ISO 14443-4 only): not applicable to FeliCa
            try r.finish()
            return Outcome(frame: .response([0x01, 0x27]))
        default:
            return Self.syntaxError
        }
    }

    /// ReadRegister `06 (ADRh ADRl)×n` → `07 VAL×n`.
    private mutating func readRegister(_ r: inout ByteReader) throws(FeliCaError) -> Outcome {
        guard !r.isAtEnd, r.count % 2 == 0 else { return Self.syntaxError }
        var values: [UInt8] = [0x07]
        while !r.isAtEnd {
            values.append(registers[try r.readUInt16(.bigEndian, "register address"), default: 0])
        }
        return Outcome(frame: .response(values))
    }

    /// WriteRegister `08 (ADRh ADRl VAL)×n` → `09`.
    private mutating func writeRegister(_ r: inout ByteReader) throws(FeliCaError) -> Outcome {
        guard !r.isAtEnd, r.count % 3 == 0 else { return Self.syntaxError }
        while !r.isAtEnd {
            let address = try r.readUInt16(.bigEndian, "register address")
            registers[address] = try r.readUInt8("value")
        }
        return Outcome(frame: .response(options.chip == .rcs956 ? [0x09, 0x00] : [0x09]))
    }

    /// GetGeneralStatus `04` → `05 Err Field NbTg [Tg BrRx BrTx Type]`, then on a PN532 the
    /// SAM status (the RC-S956 has no SAM). A FeliCa target is type 0x10, its rates
    /// 01 = 212 and 02 = 424 kbps.
    private func generalStatus() -> [UInt8] {
        var status: [UInt8] = [0x05, 0x00, fieldOn ? 0x01 : 0x00, target == nil ? 0x00 : 0x01]
        if let target {
            let rate: UInt8 = target == .kbps212 ? 0x01 : 0x02
            status += [0x01, rate, rate, 0x10]
        }
        if options.chip == .pn532 { status.append(0x00) }
        return status
    }

    /// SetSerialBaudRate `10 BR` → `11`; the new speed applies after the answer.
    private mutating func setSerialBaudRate(_ r: inout ByteReader) throws(FeliCaError) -> Outcome {
        let rates = [9_600, 19_200, 38_400, 57_600, 115_200, 230_400, 460_800, 921_600, 1_288_000]
        let br = try r.readUInt8("BR")
        try r.finish()
        guard Int(br) < rates.count else { return Self.syntaxError }
        return Outcome(frame: .response([0x11]), baudAfter: rates[Int(br)])
    }

    /// SAMConfiguration `14 Mode [Timeout [IRQ]]` → `15`.
    private mutating func samConfiguration(_ r: inout ByteReader) throws(FeliCaError) -> Outcome {
        let mode = try r.readUInt8("Mode")
        guard (1...4).contains(mode), r.count <= 2 else { return Self.syntaxError }
        if mode == 0x02 && r.isAtEnd { return Self.syntaxError }  // virtual card mode needs a timeout
        samMode = mode
        return Outcome(frame: .response([0x15]))
    }

    /// PowerDown `16 WakeUpEnable [GenerateIRQ]` → `17 Status`.
    private mutating func powerDown(_ r: inout ByteReader) throws(FeliCaError) -> Outcome {
        _ = try r.readUInt8("WakeUpEnable")
        guard r.count <= 1 else { return Self.syntaxError }
        target = nil
        fieldOn = false
        poweredDown = true
        return Outcome(frame: .response([0x17, 0x00]))
    }

    /// RFConfiguration `32 CfgItem ConfigurationData` → `33`.
    private mutating func rfConfiguration(_ r: inout ByteReader) throws(FeliCaError) -> Outcome {
        let item = try r.readUInt8("CfgItem")
        let data = Array(r.readRest())
        let sizes: [UInt8: Int] = [0x01: 1, 0x02: 3, 0x04: 1, 0x05: 3, 0x0A: 11, 0x0B: 8, 0x0C: 3, 0x0D: 9]
        guard let size = sizes[item], data.count == size else { return Self.syntaxError }
        switch item {
        case 0x01:
            fieldOn = data[0] & 0x01 != 0
            if !fieldOn { target = nil }
        case 0x02: communicationTimeout = data[2]
        case 0x05: passiveActivationRetries = data[2]
        default: break
        }
        return Outcome(frame: .response([0x33]))
    }

    /// Gives `packet` to the card at `rate` (when there is one and the field is on).
    private mutating func toCard(_ packet: [UInt8], at rate: AirTiming.BitRate) -> [UInt8]? {
        cardExchanges += 1
        guard fieldOn, let card else { return nil }
        if let taps = options.taps, !taps.isPresent(atExchange: cardExchanges) { return nil }
        return card.respond(to: packet, at: rate)
    }

    /// How long the chip waits for a card that stays silent (nil = forever).
    private var silentCardTime: Duration? {
        guard let t = Self.rfTimeout(code: communicationTimeout) else { return nil }
        return timed(t)
    }

    /// InListPassiveTarget `4A MaxTg BrTy [InitiatorData]` → `4B NbTg [TargetData]`.
    /// FeliCa (BrTy 01 = 212, 02 = 424 kbps): InitiatorData is the Polling payload
    /// `00 SC SC RC TSN`, TargetData `Tg POL_RES` (the whole Polling response with LEN).
    private mutating func inListPassiveTarget(_ r: inout ByteReader) throws(FeliCaError) -> Outcome {
        let maxTg = try r.readUInt8("MaxTg")
        let brTy = try r.readUInt8("BrTy")
        guard (1...2).contains(maxTg), brTy <= 0x04 else { return Self.syntaxError }
        let initiatorData = Array(r.readRest())
        fieldOn = true  // the chip switches the field on itself
        target = nil
        let attempts: Int? = passiveActivationRetries == 0xFF ? nil : Int(passiveActivationRetries) + 1
        guard brTy == 0x01 || brTy == 0x02 else {
            feliCaRate = nil
            // No card of another type here: every activation attempt times out (~1 ms each).
            return Outcome(frame: .response([0x4B, 0x00]), work: attempts.map { timed(.milliseconds(1) * $0) })
        }
        guard initiatorData.count == 5 else { return Self.syntaxError }
        let rate: AirTiming.BitRate = brTy == 0x01 ? .kbps212 : .kbps424
        feliCaRate = rate
        let packet = [UInt8(initiatorData.count + 1)] + initiatorData
        if let reply = toCard(packet, at: rate), reply.count >= 18, reply[1] == 0x01, let card {
            target = rate
            return Outcome(frame: .response([0x4B, 0x01, 0x01] + reply),
                           work: timed(card.responseTime(to: packet, reply: reply, bitRate: rate)))
        }
        let slots = Int(initiatorData[4] & 0x0F) + 1
        let attempt = AirTiming.airTime(packetLength: packet.count, at: rate) + AirTiming.pollingWindow(slots: slots)
        return Outcome(frame: .response([0x4B, 0x00]), work: attempts.map { timed(attempt * $0) })
    }

    /// InDataExchange `40 Tg DataOut` → `41 Status DataIn`; for FeliCa DataOut and DataIn
    /// are whole packets with their LEN byte.
    private mutating func inDataExchange(_ r: inout ByteReader) throws(FeliCaError) -> Outcome {
        let tg = try r.readUInt8("Tg")
        let packet = Array(r.readRest())
        guard tg & 0x3F == 1, let rate = target else {
            return Outcome(frame: .response([0x41, 0x27]))
        }
        return exchange(packet, at: rate, responseCode: 0x41)
    }

    /// InCommunicateThru `42 DataOut` → `43 Status DataIn`: raw, in whatever mode the RF
    /// front end was last set to; only a FeliCa setting reaches the card.
    private mutating func inCommunicateThru(_ packet: [UInt8]) -> Outcome {
        guard let rate = feliCaRate else {
            cardExchanges += 1
            return Outcome(frame: .response([0x43, 0x01]), work: silentCardTime)
        }
        return exchange(packet, at: rate, responseCode: 0x43)
    }

    private mutating func exchange(_ packet: [UInt8], at rate: AirTiming.BitRate, responseCode: UInt8) -> Outcome {
        guard let reply = toCard(packet, at: rate), let card else {
            return Outcome(frame: .response([responseCode, 0x01]), work: silentCardTime)
        }
        // The RF timeout runs from the end of the command to the start of the reply.
        if options.timing, let limit = Self.rfTimeout(code: communicationTimeout), card.reactionTime(to: packet) > limit {
            return Outcome(frame: .response([responseCode, 0x01]), work: limit)
        }
        return Outcome(frame: .response([responseCode, 0x00] + reply), work: timed(card.responseTime(to: packet, reply: reply, bitRate: rate)))
    }

    /// InAutoPoll `60 PollNr Period Type×n` → `61 NbTg [Type Len TargetData]`. FeliCa types
    /// (0x11 at 212, 0x12 at 424 kbps) poll for any system with the system code requested.
    private mutating func inAutoPoll(_ r: inout ByteReader) throws(FeliCaError) -> Outcome {
        let pollNr = try r.readUInt8("PollNr")
        let period = try r.readUInt8("Period")
        let types = Array(r.readRest())
        guard pollNr >= 1, (1...15).contains(period), (1...15).contains(types.count) else { return Self.syntaxError }
        fieldOn = true
        for type in types where type == 0x11 || type == 0x12 {
            let rate: AirTiming.BitRate = type == 0x11 ? .kbps212 : .kbps424
            let packet: [UInt8] = [0x06, 0x00, 0xFF, 0xFF, 0x01, 0x00]
            if let reply = toCard(packet, at: rate), reply.count >= 18, reply[1] == 0x01, let card {
                feliCaRate = rate
                target = rate
                let targetData = [0x01] + reply
                return Outcome(frame: .response([0x61, 0x01, type, UInt8(targetData.count)] + targetData),
                               work: timed(card.responseTime(to: packet, reply: reply, bitRate: rate)))
            }
        }
        if types.allSatisfy({ $0 != 0x11 && $0 != 0x12 }) { cardExchanges += 1 }
        guard pollNr != 0xFF else { return Outcome(frame: .response([0x61, 0x00]), work: nil) }
        return Outcome(frame: .response([0x61, 0x00]), work: timed(.milliseconds(150) * Int(period) * Int(pollNr)))
    }
}
