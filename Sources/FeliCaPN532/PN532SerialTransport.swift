import FeliCa
import FeliCaTransportSupport
import Synchronization

/// A PN532 on a serial line driven directly, without libnfc: the `pn532:<path>` devices.
///
/// libnfc's `pn532_uart` driver sleeps 50 ms flushing the line when it opens it and spends
/// about 35 ms more setting the chip up; a command-line tool opening the reader once per
/// run pays that every time. This transport wakes the chip (HSU preamble), sends
/// SAMConfiguration and one RFConfiguration, raises the line from 115200 to 921600 baud
/// (SetSerialBaudRate, as nfcpy does) when the port takes it, and is ready: a few
/// milliseconds of line time. Closing puts the line back to 115200 baud.
/// Polling goes through InListPassiveTarget at the transport's bit rate, every other packet
/// through InCommunicateThru with the chip's RF timeout set from the card's PMm timeouts.
/// The session may move it to 424 kbps (``switchBitRate(to:)``); cancelling the calling task
/// aborts the chip's command. All I/O runs on a thread of the transport's own.
public final class PN532SerialTransport: Transport {
    public let name: String
    /// The frames of a read and its reply take about 5 ms at 115200 baud, an eighth of
    /// that at 921600; the host's own turnaround comes on top.
    public let linkLatency: Duration
    /// The serial line's speed, in baud: 921600 once raised, 115200 when the port (or
    /// `?baud=`) kept it there.
    public let baud: Int
    /// The speeds the line may be asked to run at (`pn532:<port>?baud=`).
    public static var speeds: [Int] { SerialPort.speeds.keys.sorted() }
    /// The speed the line is raised to after set-up unless `?baud=` says otherwise.
    public static let defaultBaud = PN532Connection.fastBaud
    /// The bit rate Polling (and so every later command) uses now.
    public var bitRate: AirTiming.BitRate { rate.withLock { $0 } }
    /// The rates a session may switch to: 212 and 424 kbps unless the device string fixed
    /// one (`pn532:/dev/ttyUSB0?rate=212`).
    public let bitRates: [AirTiming.BitRate]
    /// The serial port, e.g. `/dev/ttyUSB0`.
    public let path: String

    private let device: OwnedDevice<PN532Connection, FeliCaError>
    private let rate: Mutex<AirTiming.BitRate>

    private init(name: String, path: String, thread: DeviceThread, connection: PN532Connection, bitRate: AirTiming.BitRate,
                 bitRates: [AirTiming.BitRate]) {
        self.name = name
        self.path = path
        rate = Mutex(bitRate)
        self.bitRates = bitRates
        baud = connection.baud
        linkLatency = baud >= 460_800 ? .milliseconds(2) : .milliseconds(8)
        let refusals = OwnedDevice<PN532Connection, FeliCaError>.Refusals(
            closed: FeliCaError(.readerGone, "\(name): the device is closed"), cancelled: FeliCaError(.cancelled, "\(name): cancelled"))
        device = OwnedDevice(thread: thread, connection: connection, refusals: refusals) { $0.close() }
    }

    /// Opens the PN532 wired to serial port `path`, polling at `bitRate`; `bitRates` are
    /// the rates a session may switch to later (default: both). The line starts at 115200
    /// baud, the chip's own speed, and is raised to `baud` (one of ``speeds``) when the port
    /// takes it. ``name`` reports `name` when given (the device string the user typed),
    /// else `pn532:<path>`.
    public static func open(path: String, bitRate: AirTiming.BitRate = .kbps212, bitRates: [AirTiming.BitRate] = AirTiming.BitRate.allCases,
                            baud: Int = defaultBaud, name: String? = nil) async throws(FeliCaError) -> PN532SerialTransport {
        guard speeds.contains(baud) else {
            throw FeliCaError(.badInput, "pn532: \(baud) baud is not a speed the serial line is driven at; use one of \(speeds.map(String.init).joined(separator: ", "))")
        }
        let bitRates = AirTiming.BitRate.allCases.filter { bitRates.contains($0) || $0 == bitRate }
        guard !path.isEmpty else {
            throw FeliCaError(.badInput, "pn532: needs the serial port the PN532 is wired to, e.g. pn532:/dev/ttyUSB0")
        }
        let thread = DeviceThread(name: "pn532 \(path)")
        do throws(FeliCaError) {
            let connection = try await thread.run { () throws(FeliCaError) -> PN532Connection in
                try PN532Connection(path: path, bitRate: bitRate, baud: baud)
            }
            return PN532SerialTransport(name: name ?? "pn532:" + path, path: path, thread: thread, connection: connection, bitRate: bitRate,
                                        bitRates: bitRates)
        } catch {
            thread.stop()
            throw error
        }
    }

    /// Cancelling the calling task cuts the wait on the line short: the chip's command is
    /// aborted (a host ACK) and the call throws `.cancelled`.
    public func exchange(_ packet: [UInt8], timeout: Duration) async throws(FeliCaError) -> [UInt8] {
        // The session's timeout includes this link's latency; the chip times the air alone.
        let chipWait = max(timeout - linkLatency, timeout / 2)
        let cancellation = device.connection.cancellation
        cancellation.reset()
        return try await device.run(onCancel: { _ in cancellation.cancel() }) { (c) throws(FeliCaError) in
            try c.exchange(packet, chipWait: chipWait)
        }
    }

    /// Moves to `newRate`, one of ``bitRates``: moving up lists the card again at the new
    /// rate (one InListPassiveTarget), moving down waits for the next command.
    public func switchBitRate(to newRate: AirTiming.BitRate) async throws(FeliCaError) {
        guard bitRates.contains(newRate) else {
            throw FeliCaError(.unsupported, "\(name) was opened for \(bitRates.map { String($0.rawValue) }.joined(separator: " and ")) kbps only, not \(newRate.rawValue)")
        }
        guard newRate != bitRate else { return }
        try await device.run { (c) throws(FeliCaError) in try c.switchRate(to: newRate) }
        rate.withLock { $0 = newRate }
    }

    public func close() async {
        await device.close()
    }
}
