import FeliCa
import FeliCaTransportSupport
import Synchronization

/// A Sony RC-S380 (PaSoRi) driven directly over USB with libusb: the `usb`,
/// `usb:<vid>:<pid>` and `usb:<bus>:<address>` devices.
///
/// Every FeliCa packet, Polling included, goes through the chip's InCommRF with the
/// exchange's timeout, less the link latency measured at open, as the chip's own (0.1 ms
/// units); the host waits that long plus a
/// USB margin, and a reply that does not come in time, or a cancelled task, aborts the
/// command with a host ACK so the next one starts clean. libusb calls run on a thread of
/// the transport's own. The kernel's `port100` driver is detached when it holds the reader
/// (and reattached on close); the RF field is switched off on close.
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
    /// Its place on the bus as a device string, `usb:001:004`.
    public var location: String { "usb:" + USBReaders.decimal3(connection.bus) + ":" + USBReaders.decimal3(connection.address) }

    private let device: OwnedDevice<RCS380Connection>
    private var thread: DeviceThread { device.thread }
    private var connection: RCS380Connection { device.connection }
    private let rate: Mutex<AirTiming.BitRate>
    /// Set when a libusb call overran every limit: the device thread may still be inside it.
    private let broken = Mutex<FeliCaError?>(nil)

    private init(name: String, thread: DeviceThread, connection: RCS380Connection, bitRate: AirTiming.BitRate, bitRates: [AirTiming.BitRate]) {
        self.name = name
        device = OwnedDevice(thread: thread, connection: connection) { $0.close() }
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
        guard !device.isClosed else {
            throw FeliCaError(.readerGone, "\(name): the device is closed")
        }
        if Task.isCancelled { throw FeliCaError(.cancelled, "\(name): cancelled") }
        let connection = connection
        connection.cancelled.store(false, ordering: .relaxed)
        // The session's timeout includes this link's latency; the chip times the air alone.
        let chipTimeout = max(timeout - linkLatency, timeout / 2)
        // A libusb call that never returns (a wedged bus) must not hang the command: past the
        // exchange's own limits the transport gives up and counts the reader as broken.
        let limit = timeout + RCS380Connection.hostMargin * 2 + .seconds(2)
        let stuck = FeliCaError(.readerGone, "\(name): the reader stopped responding to USB transfers; unplug it, plug it back in and run the command again")
        if let broken = broken.withLock({ $0 }) { throw broken }
        let result = await withTaskCancellationHandler { () async -> Result<[UInt8], FeliCaError> in
            do throws(FeliCaError) {
                return .success(try await thread.run(limit: limit, onExpiry: stuck) { () throws(FeliCaError) -> [UInt8] in
                    try connection.exchange(packet, timeout: chipTimeout)
                })
            } catch {
                if error.reason == stuck.reason { broken.withLock { $0 = stuck } }
                return .failure(error)
            }
        } onCancel: {
            connection.cancelled.store(true, ordering: .relaxed)
        }
        return try result.get()
    }

    /// InSetRF for the new rate: one command to the reader; the field stays on and the
    /// card, which detects the rate of what it hears, answers at it.
    public func switchBitRate(to newRate: AirTiming.BitRate) async throws(FeliCaError) {
        guard bitRates.contains(newRate) else {
            throw FeliCaError(.unsupported, "\(name) was opened for \(bitRates.map { String($0.rawValue) }.joined(separator: " and ")) kbps only, not \(newRate.rawValue)")
        }
        guard newRate != bitRate else { return }
        guard !device.isClosed else { throw FeliCaError(.readerGone, "\(name): the device is closed") }
        if let broken = broken.withLock({ $0 }) { throw broken }
        let connection = connection
        try await thread.run { () throws(FeliCaError) in try connection.switchRate(newRate) }
        rate.withLock { $0 = newRate }
    }

    public func close() async {
        // A thread stuck inside libusb would never run the close: leave it to process exit.
        await device.close(abandoning: broken.withLock { $0 } != nil)
    }
}
