import FeliCa
import FeliCaReaderCodecs
import FeliCaTransportSupport
import Synchronization

/// A Sony RC-S380 (PaSoRi) driven directly over USB with libusb: the `usb`,
/// `usb:<vid>:<pid>` and `usb:<bus>:<address>` devices.
///
/// Every FeliCa packet, Polling included, goes through the chip's InCommRF with the
/// exchange's timeout, less the link latency measured at open, as the chip's own (0.1 ms
/// units); the host waits that long plus a USB margin, and a reply that does not come in
/// time, or a cancelled task, aborts the command with a host ACK so the next one starts
/// clean (`Port100Driver` in `FeliCaReaderCodecs`). libusb calls run on a thread of the transport's own. The
/// kernel's `port100` driver is detached when it holds the reader (and reattached on
/// close); the RF field is switched off on close.
public final class RCS380Transport: Transport {
    public let name: String
    /// Two bulk transfers at USB full speed and the chip's own turnaround, as measured at
    /// open (the median round trip of the set-up commands).
    public let linkLatency: Duration
    /// The bit rate exchanges run at now.
    public var bitRate: AirTiming.BitRate { rate.withLock { $0 } }
    /// The rates the session may switch to: 212 and 424 kbps unless the device string
    /// fixed one (`usb?rate=212`).
    public let bitRates: [AirTiming.BitRate]
    /// The model opened, e.g. Sony RC-S380/S.
    public var model: USBReaders.Model { device.connection.model }
    /// Its place on the bus.
    public var location: USBReaders.Location { device.connection.location }

    private let device: OwnedDevice<RCS380Connection, FeliCaError>
    private let rate: Mutex<AirTiming.BitRate>

    private init(name: String, thread: DeviceThread, connection: RCS380Connection, bitRate: AirTiming.BitRate, bitRates: [AirTiming.BitRate]) {
        self.name = name
        let refusals = OwnedDevice<RCS380Connection, FeliCaError>.Refusals(
            closed: FeliCaError(.readerGone, "\(name): the device is closed"), cancelled: FeliCaError(.cancelled, "\(name): cancelled"))
        device = OwnedDevice(thread: thread, connection: connection, refusals: refusals) { $0.close() }
        self.rate = Mutex(bitRate)
        self.bitRates = bitRates
        linkLatency = connection.roundTrip
    }

    /// Opens the reader `selector` names and sets it up for FeliCa at `bitRate`; `name` is
    /// the device string it was given. `bitRates` are the rates a session may switch to
    /// later (default: both).
    public static func open(_ selector: USBReaderSelector, name: String, bitRate: AirTiming.BitRate = .kbps212,
                            bitRates: [AirTiming.BitRate] = AirTiming.BitRate.allCases) async throws(FeliCaError) -> RCS380Transport {
        let bitRates = AirTiming.BitRate.allCases.filter { bitRates.contains($0) || $0 == bitRate }
        let thread = DeviceThread(name: "felica.usb")
        do throws(FeliCaError) {
            let connection = try await thread.run { () throws(FeliCaError) -> RCS380Connection in
                try RCS380Connection.open(selector, bitRate: bitRate)
            }
            return RCS380Transport(name: name, thread: thread, connection: connection, bitRate: bitRate, bitRates: bitRates)
        } catch {
            thread.stop()
            throw error
        }
    }

    public func exchange(_ packet: [UInt8], timeout: Duration) async throws(FeliCaError) -> [UInt8] {
        // The session's timeout includes this link's latency; the chip times the air alone.
        let chipTimeout = max(timeout - linkLatency, timeout / 2)
        // A libusb call that never returns (a wedged bus) must not hang the command: past the
        // exchange's own limits the transport gives up and counts the reader as broken.
        let limit = timeout + Port100Driver.hostMargin * 2 + .seconds(2)
        let stuck = FeliCaError(.readerGone, "\(name): the reader stopped responding to USB transfers; unplug it, plug it back in and run the command again")
        device.connection.cancelled.store(false, ordering: .relaxed)
        return try await device.run(limit: limit, stuck: stuck, onCancel: { $0.cancelled.store(true, ordering: .relaxed) }) { (c) throws(FeliCaError) -> [UInt8] in
            try c.exchange(packet, timeout: chipTimeout)
        }
    }

    /// InSetRF for the new rate: one command to the reader; the field stays on and the
    /// card, which detects the rate of what it hears, answers at it.
    public func switchBitRate(to newRate: AirTiming.BitRate) async throws(FeliCaError) {
        guard bitRates.contains(newRate) else {
            throw FeliCaError(.unsupported, "\(name) was opened for \(bitRates.map { String($0.rawValue) }.joined(separator: " and ")) kbps only, not \(newRate.rawValue)")
        }
        guard newRate != bitRate else { return }
        try await device.run { (c) throws(FeliCaError) in try c.switchRate(newRate) }
        rate.withLock { $0 = newRate }
    }

    public func close() async {
        await device.close()
    }
}
