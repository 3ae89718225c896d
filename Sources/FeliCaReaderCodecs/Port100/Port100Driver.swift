import FeliCa

/// The host side of Sony's Port-100 protocol (the chip of the RC-S380), over any
/// ``Port100Link``: no USB stack here, so the same logic runs against a real reader through
/// libusb and against an emulated one in memory.
///
/// Every command goes out as a frame, the reader answers with an ACK and then the response;
/// a response that does not come within the command's own time plus ``hostMargin``, or a
/// caller the link reports cancelled, is aborted with a host ACK and the reader's leftovers
/// are drained, so the next command starts clean. FeliCa packets ride in InCommRF with the
/// exchange's timeout as the chip's own; when a card that answered Polling falls silent, one
/// more Polling tells a card that left (`cardGone`) from one that was slow (`timeout`).
public struct Port100Driver: Sendable {
    /// Names the reader in messages, e.g. `Sony RC-S380/S (USB bus 001 device 004)`.
    public let label: String
    /// The FeliCa bit rate set on the reader; nil before ``open(bitRate:_:)`` and after ``close(_:)``.
    public private(set) var rate: AirTiming.BitRate?
    /// One command's round trip (frame out, ACK and answer in), the median of the set-up
    /// commands at open: what the reader and its link add to every exchange.
    public private(set) var roundTrip: Duration = .milliseconds(2)
    /// The last Polling sent, to ask whether a silent card is still there.
    private var lastPolling: [UInt8]?

    /// Bulk packets are this long: a transfer of a multiple of it needs a zero-length packet
    /// after it, or the reader waits for more.
    public static let packetSize = 64
    /// How long the reader may take beyond a command's own time before the host gives up:
    /// USB transfers take a few ms at most.
    public static let hostMargin: Duration = .milliseconds(250)
    /// A configuration command's own time.
    public static let commandTime: Duration = .milliseconds(100)
    /// A read waits in slices this long, so a cancelled caller is noticed.
    public static let slice: Duration = .milliseconds(50)
    /// Draining stops once the reader has been quiet this long.
    static let drainQuiet: Duration = .milliseconds(10)
    /// The Polling that asks whether a silent card is still there gets this long.
    static let presenceTimeout: Duration = .milliseconds(10)

    public init(label: String) {
        self.label = label
    }

    // MARK: - Opening and closing

    /// Clears what a previous host left behind, then sets the chip up as hosts do:
    /// SetCommandType 1, the versions, RF off, then FeliCa at `bitRate` (``setRate(_:_:)``).
    public mutating func open(bitRate: AirTiming.BitRate, _ link: inout some Port100Link) throws(FeliCaError) {
        // An ACK with nothing running resets the chip's command state; then drop any
        // response a killed host never read.
        try write(Port100Frame.ack.encode(), &link)
        drain(&link)
        var times: [Duration] = []
        for c in [Port100Command.setCommandType(1), .getFirmwareVersion, .getPDDataVersion, .switchRF(on: false)] {
            let start = link.now
            let response = try command(c, &link)
            if c.code == Port100Command.getFirmwareVersionCode || c.code == Port100Command.getPDDataVersionCode {
                _ = try response.version(of: c)
            } else {
                try response.status(of: c)
            }
            times.append(link.now - start)
        }
        roundTrip = times.sorted()[times.count / 2]
        try setRate(bitRate, &link)
    }

    /// InSetRF for FeliCa at `newRate`, then the initiator defaults with FeliCa's guard time.
    public mutating func setRate(_ newRate: AirTiming.BitRate, _ link: inout some Port100Link) throws(FeliCaError) {
        for c in [Port100Command.inSetRF(newRate), .inSetProtocol(Port100Command.inSetProtocolDefaults), .inSetProtocol([0x00, 0x18])] {
            try command(c, &link).status(of: c)
        }
        rate = newRate
    }

    /// InSetRF alone: the field stays on and the protocol settings stay as
    /// ``setRate(_:_:)`` left them; the card answers at the rate it is spoken to.
    public mutating func switchRate(_ newRate: AirTiming.BitRate, _ link: inout some Port100Link) throws(FeliCaError) {
        guard rate != nil else { throw closed }
        try command(.inSetRF(newRate), &link).status(of: .inSetRF(newRate))
        rate = newRate
    }

    /// RF off and an ACK, when the reader was set up; best effort (the reader is let go anyway).
    public mutating func close(_ link: inout some Port100Link) {
        if rate != nil {
            _ = try? command(.switchRF(on: false), &link)
            try? write(Port100Frame.ack.encode(), &link)
        }
        rate = nil
    }

    private var closed: FeliCaError { FeliCaError(.readerGone, "\(label): the device is closed") }

    // MARK: - Exchanging

    /// Sends one FeliCa packet through InCommRF with `timeout` as the chip's own timeout and
    /// returns the card's packet. A reader that does not answer in time throws `.timeout`
    /// (the command aborted); a card that stays silent throws `.timeout`, or `.cardGone`
    /// when a Polling right after finds no card either.
    public mutating func exchange(_ packet: [UInt8], timeout: Duration, _ link: inout some Port100Link) throws(FeliCaError) -> [UInt8] {
        guard rate != nil else { throw closed }
        let isPolling = PollingCommand.isPolling(packet)
        if isPolling { lastPolling = packet }
        // A reader that does not answer in time fails in command(); only the reader's own
        // receive-timeout status, the card's silence, reaches the catch.
        let response = try command(.inCommRF(packet, timeout: timeout), chipTime: timeout, &link)
        do throws(FeliCaError) {
            return try response.inCommRFPacket()
        } catch where error.code == .timeout {
            let ms = Self.milliseconds(timeout)
            if isPolling {
                throw FeliCaError(.timeout, "\(label): no card answered Polling within \(ms) ms")
            }
            if let p = lastPolling, !cardAnswers(p, &link) {
                throw FeliCaError(.cardGone, "\(label): the card left the reader during the exchange; hold it still on the reader and run the command again")
            }
            throw FeliCaError(.timeout, "\(label): the card did not answer within \(ms) ms")
        }
    }

    /// Whether a card answers `polling` within ``presenceTimeout``; a reader that fails counts as no.
    private func cardAnswers(_ polling: [UInt8], _ link: inout some Port100Link) -> Bool {
        guard let response = try? command(.inCommRF(polling, timeout: Self.presenceTimeout), chipTime: Self.presenceTimeout, &link) else {
            return false
        }
        return (try? response.inCommRFPacket()) != nil
    }

    /// `12`, `0.5`: milliseconds to a tenth, for messages.
    static func milliseconds(_ d: Duration) -> String {
        let us = d.components.seconds * 1_000_000 + d.components.attoseconds / 1_000_000_000_000
        if us % 1000 == 0 { return String(us / 1000) }
        let tenths = (us + 50) / 100
        return "\(tenths / 10).\(tenths % 10)"
    }

    // MARK: - One command

    /// Runs one command: its frame out, the ACK in, then the response within `chipTime`
    /// plus ``hostMargin``. A response that does not come in time, or a cancelled caller,
    /// aborts the command with a host ACK.
    @discardableResult
    public func command(_ c: Port100Command, chipTime: Duration = Port100Driver.commandTime, _ link: inout some Port100Link) throws(FeliCaError) -> Port100Response {
        try write(Port100Frame.command(c).encode(), &link)
        let deadline = link.now + chipTime + Self.hostMargin
        let ack = try read(until: deadline, what: "the ACK to \(c.name)", &link)
        guard (try? Port100Frame.decode(ack[...])) == .ack else {
            drain(&link)
            throw FeliCaError(.transmission, "\(label): expected an ACK to \(c.name), got \(Hex.encode(ack)); run the command again")
        }
        let bytes = try read(until: deadline, what: "the answer to \(c.name)", &link)
        let frame: Port100Frame
        do throws(FeliCaError) {
            frame = try Port100Frame.decode(bytes[...])
        } catch {
            drain(&link)
            throw FeliCaError(.transmission, "\(label): the reader's answer to \(c.name) arrived damaged (\(error.reason)); run the command again")
        }
        switch frame {
        case .response(let r):
            guard r.code == c.code &+ 1 else {
                drain(&link)
                throw FeliCaError(.unexpectedResponse, "\(label): answer code \(Hex.encode([r.code])) does not belong to \(c.name); run the command again")
            }
            return r
        case .error:
            throw FeliCaError(.status, "\(label): the reader refused \(c.name) as malformed")
        case .ack, .command:
            drain(&link)
            throw FeliCaError(.transmission, "\(label): expected the answer to \(c.name), got \(Hex.encode(bytes)); run the command again")
        }
    }

    /// One whole OUT transfer, ended with a zero-length packet when its size is a multiple
    /// of ``packetSize``.
    private func write(_ bytes: [UInt8], _ link: inout some Port100Link) throws(FeliCaError) {
        let n: Int
        do throws(Port100LinkError) {
            n = try link.write(bytes)
            if n == bytes.count && bytes.count % Self.packetSize == 0 { _ = try link.write([]) }
        } catch {
            throw linkError(error, "sending to the reader")
        }
        guard n == bytes.count else {
            throw FeliCaError(.transmission, "\(label): only \(n) of \(bytes.count) bytes went out; run the command again")
        }
    }

    /// The next IN transfer before `deadline`, waiting in ``slice``s so a cancelled caller
    /// is noticed; on expiry or cancellation aborts the running command and throws.
    private func read(until deadline: Duration, what: String, _ link: inout some Port100Link) throws(FeliCaError) -> [UInt8] {
        while true {
            if link.isCancelled {
                abortCommand(&link)
                throw FeliCaError(.cancelled, "\(label): cancelled while waiting for \(what)")
            }
            let left = deadline - link.now
            guard left > .zero else {
                abortCommand(&link)
                throw FeliCaError(.timeout, "\(label): the reader did not send \(what) in time; the command was aborted")
            }
            do throws(Port100LinkError) {
                if let bytes = try link.read(timeout: min(left, Self.slice)), !bytes.isEmpty { return bytes }
            } catch {
                throw linkError(error, "waiting for \(what)")
            }
        }
    }

    /// Aborts the running command with a host ACK, then drops what the reader still sends.
    private func abortCommand(_ link: inout some Port100Link) {
        try? write(Port100Frame.ack.encode(), &link)
        drain(&link)
    }

    /// Reads and drops IN transfers until the reader stays quiet for ``drainQuiet``.
    private func drain(_ link: inout some Port100Link) {
        for _ in 0..<16 {
            guard let bytes = try? link.read(timeout: Self.drainQuiet), !bytes.isEmpty else { return }
        }
    }

    private func linkError(_ error: Port100LinkError, _ doing: String) -> FeliCaError {
        if error.isUnplugged { return Self.unplugged(label, status: error.status) }
        return FeliCaError(.transmission, "\(label): USB error while \(doing) (\(error.status)); run the command again, and replug the reader if it persists")
    }

    /// The error for a reader that left the bus; `status` is the link's name for it.
    public static func unplugged(_ label: String, status: String) -> FeliCaError {
        FeliCaError(.readerGone, "\(label) was unplugged (\(status)): plug it back in and run the command again")
    }
}
