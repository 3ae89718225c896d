import FeliCa
import FeliCaReaderCodecs
import FeliCaTransportSupport

#if canImport(Glibc)
import Glibc
#endif

/// A FeliCa reader through libnfc (PN532 boards, PN533 readers, ACR122U): the `libnfc`
/// and `libnfc:<connstring>` devices.
///
/// Polling goes through `nfc_initiator_select_passive_target` and comes back as the
/// Polling response packet; every other packet goes through
/// `nfc_initiator_transceive_bytes` whole, LEN included. All libnfc calls run on a thread
/// of the transport's own.
///
/// Timeouts: the chip's RF timeout is set just above what the card needs, the host waits
/// longer than that, and when the host gives up anyway (or the line garbles a frame) the
/// device is closed and reopened before the next command, because a reply arriving late
/// would otherwise be read in place of the next ACK. Cancelling the calling task aborts
/// the running libnfc call; a call that does not return at all (`stuckMargin` past the
/// exchange's timeout) leaves the reader counted as broken.
public final class LibNFCTransport: Transport {
    public let name: String
    /// A PN532 over a 115200-baud UART spends ~7 ms moving a read and its reply; USB
    /// readers are faster, so this is the upper figure.
    public var linkLatency: Duration { .milliseconds(10) }
    /// The bit rate Polling (and so every later command) uses.
    public let bitRate: AirTiming.BitRate
    /// libnfc's name for the device, e.g. `pn532_uart:/dev/pts/3`.
    public let deviceName: String
    /// The connection string libnfc opened.
    public let connectionString: String

    private let device: OwnedDevice<LibNFCConnection, FeliCaError>

    /// How long past an exchange's own timeout the host waits before it counts the reader
    /// as stuck: the connection aborts and reopens a reader that misses its own deadline, and
    /// reopening a serial PN532 can take several tries of a second or more.
    static let stuckMargin: Duration = .seconds(30)

    private init(name: String, thread: DeviceThread, connection: LibNFCConnection, bitRate: AirTiming.BitRate) {
        self.name = name
        let refusals = OwnedDevice<LibNFCConnection, FeliCaError>.Refusals(
            closed: FeliCaError(.readerGone, "\(name): the device is closed"), cancelled: FeliCaError(.cancelled, "\(name): cancelled"))
        device = OwnedDevice(thread: thread, connection: connection, refusals: refusals) { $0.close() }
        self.bitRate = bitRate
        deviceName = connection.deviceName
        connectionString = connection.openedConnstring
    }

    /// Opens the reader at libnfc connection string `connstring` (e.g.
    /// `pn532_uart:/dev/ttyUSB0`, `pn53x_usb:001:004`), or the first reader libnfc finds
    /// when it is nil. ``name`` reports `name` when given (the device string the user
    /// typed), else `libnfc` or `libnfc:<connstring>`.
    public static func open(connstring: String? = nil, bitRate: AirTiming.BitRate = .kbps212, name: String? = nil) async throws(FeliCaError) -> LibNFCTransport {
        if let connstring, connstring.isEmpty {
            throw FeliCaError(.badInput, "empty libnfc connection string: expected one such as pn532_uart:/dev/ttyUSB0, or none for the first reader")
        }
        let thread = DeviceThread(name: "libnfc \(connstring ?? "default")")
        do throws(FeliCaError) {
            let connection = try await thread.run { () throws(FeliCaError) -> LibNFCConnection in
                // A serial PN532 whose last host died mid-command (Ctrl-C, a crash) finishes that
                // command and sends its reply into the next host's handshake, which then fails
                // as if no PN532 were there; reset() meets the same after a host timeout. So a
                // serial port that exists gets a few more tries once the chip is done.
                let retries = connstring.flatMap(LibNFCDiagnosis.serialPath).map { access($0, F_OK) == 0 } == true ? 3 : 0
                var attempt = 0
                while true {
                    let c = LibNFCConnection(connstring: connstring, bitRate: bitRate)
                    do throws(FeliCaError) {
                        try c.open()
                        return c
                    } catch {
                        guard attempt < retries else { throw error }
                        attempt += 1
                        usleepMilliseconds(100 * attempt)
                    }
                }
            }
            return LibNFCTransport(name: name ?? (connstring.map { "libnfc:" + $0 } ?? "libnfc"), thread: thread,
                                   connection: connection, bitRate: bitRate)
        } catch {
            thread.stop()
            throw error
        }
    }

    public func exchange(_ packet: [UInt8], timeout: Duration) async throws(FeliCaError) -> [UInt8] {
        let stuck = FeliCaError(.readerGone, "\(name): the reader stopped responding (a libnfc call did not return); unplug it, plug it back in and run the command again")
        return try await device.run(limit: timeout + Self.stuckMargin, stuck: stuck, onCancel: { $0.abort() }) { (c) throws(FeliCaError) -> [UInt8] in
            try c.exchange(packet, timeout: timeout)
        }
    }

    public func close() async {
        await device.close()
    }
}
