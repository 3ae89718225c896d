import FeliCa
import FeliCaTransportSupport

/// A PN532 on a serial line driven directly, without libnfc: the `pn532:<path>` devices.
///
/// libnfc's `pn532_uart` driver sleeps 50 ms flushing the line when it opens it and spends
/// about 35 ms more setting the chip up; a command-line tool opening the reader once per
/// run pays that every time. This transport wakes the chip (HSU preamble), sends
/// SAMConfiguration and one RFConfiguration, and is ready: a few milliseconds of line time.
/// Polling goes through InListPassiveTarget at the transport's bit rate, every other packet
/// through InCommunicateThru with the chip's RF timeout set from the card's PMm timeouts.
/// All I/O runs on a thread of the transport's own.
public final class PN532SerialTransport: Transport {
    public let name: String
    /// The frames of a read and its reply take about 5 ms at 115200 baud.
    public var linkLatency: Duration { .milliseconds(8) }
    /// The bit rate Polling (and so every later command) uses.
    public let bitRate: AirTiming.BitRate
    /// The serial port, e.g. `/dev/ttyUSB0`.
    public let path: String

    private let device: OwnedDevice<PN532Connection, FeliCaError>

    private init(name: String, path: String, thread: DeviceThread, connection: PN532Connection, bitRate: AirTiming.BitRate) {
        self.name = name
        self.path = path
        self.bitRate = bitRate
        let refusals = OwnedDevice<PN532Connection, FeliCaError>.Refusals(
            closed: FeliCaError(.readerGone, "\(name): the device is closed"), cancelled: FeliCaError(.cancelled, "\(name): cancelled"))
        device = OwnedDevice(thread: thread, connection: connection, refusals: refusals) { $0.close() }
    }

    /// Opens the PN532 wired to serial port `path`. ``name`` reports `name` when given
    /// (the device string the user typed), else `pn532:<path>`.
    public static func open(path: String, bitRate: AirTiming.BitRate = .kbps212, name: String? = nil) async throws(FeliCaError) -> PN532SerialTransport {
        guard !path.isEmpty else {
            throw FeliCaError(.badInput, "pn532: needs the serial port the PN532 is wired to, e.g. pn532:/dev/ttyUSB0")
        }
        let thread = DeviceThread(name: "pn532 \(path)")
        do throws(FeliCaError) {
            let connection = try await thread.run { () throws(FeliCaError) -> PN532Connection in
                try PN532Connection(path: path, bitRate: bitRate)
            }
            return PN532SerialTransport(name: name ?? "pn532:" + path, path: path, thread: thread, connection: connection, bitRate: bitRate)
        } catch {
            thread.stop()
            throw error
        }
    }

    public func exchange(_ packet: [UInt8], timeout: Duration) async throws(FeliCaError) -> [UInt8] {
        try await device.run { (c) throws(FeliCaError) in try c.exchange(packet, timeout: timeout) }
    }

    public func close() async {
        await device.close()
    }
}
