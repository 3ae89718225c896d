import FeliCa
import FeliCaReaderCodecs
import FeliCaTransportSupport
import Synchronization

/// The libusb half of the RC-S380 transport: finds and claims the reader, and carries the
/// ``Port100Driver``'s transfers over libusb's synchronous bulk calls. The protocol itself
/// (ACK, abort, timeouts, rates, the silent card) is the driver's.
///
/// `@unchecked Sendable`: `context`, `handle` and `driver` are only read or written on the
/// transport's device thread (every call is made there); `cancelled` is atomic and may be
/// set from any thread.
final class RCS380Connection: Port100Link, @unchecked Sendable {
    let model: USBReaders.Model
    let location: USBReaders.Location
    private var context: OpaquePointer?
    private var handle: OpaquePointer?
    private var driver: Port100Driver
    /// Set by a cancelled task: the driver aborts the running command at its next slice.
    let cancelled = Atomic(false)
    private let clock = ContinuousClock()
    private let origin: ContinuousClock.Instant

    static let outEndpoint: UInt8 = 0x02
    static let inEndpoint: UInt8 = 0x81

    var label: String { driver.label }
    /// What the reader and its USB link add to every exchange, as measured at open.
    var roundTrip: Duration { driver.roundTrip }

    private init(model: USBReaders.Model, location: USBReaders.Location) {
        self.model = model
        self.location = location
        driver = Port100Driver(label: "\(model.name) (\(location))")
        origin = clock.now
    }

    // MARK: - Opening

    /// Finds the reader `selector` names, opens it, claims its interface (detaching the
    /// kernel's `port100` driver when allowed) and has the driver set it up for FeliCa.
    static func open(_ selector: USBReaderSelector, bitRate: AirTiming.BitRate) throws(FeliCaError) -> RCS380Connection {
        let context: OpaquePointer
        switch LibUSB.makeContext() {
        case .success(let c): context = c
        case .failure(let s):
            throw FeliCaError(.noReader, "libusb could not start (\(s.name)): this machine or container has no USB access")
        }
        let devices: [LibUSB.Found]
        switch LibUSB.devices(context) {
        case .success(let d): devices = d
        case .failure(let s):
            LibUSB.exit(context)
            throw FeliCaError(.noReader, "libusb could not list the USB devices (\(s.name))")
        }
        // Every device reference is given back before the context can end (libusb_exit is
        // to come after everything else of the context is released); libusb_open holds a
        // reference of its own on the device it opens.
        func releaseDevices() { devices.forEach { LibUSB.unref($0.device) } }
        let matching = devices.filter { selector.matches(vendor: $0.vendor, product: $0.product, bus: $0.bus, address: $0.address) }
        guard let chosen = matching.first(where: { USBReaders.model(vendor: $0.vendor, product: $0.product) != nil }) else {
            releaseDevices()
            LibUSB.exit(context)
            if case .path(let bus, let address) = selector, let other = matching.first {
                throw FeliCaError(.unsupported, "the USB device at bus \(USBReaders.decimal3(bus)) address \(USBReaders.decimal3(address)) is \(USBReaders.hex4(other.vendor)):\(USBReaders.hex4(other.product)), not a supported reader (Sony RC-S380, 054c:06c1 or 054c:06c3)")
            }
            if case .id(let v, let p) = selector, USBReaders.model(vendor: v, product: p) == nil {
                throw FeliCaError(.unsupported, "\(USBReaders.hex4(v)):\(USBReaders.hex4(p)) is not a reader this build drives over USB (Sony RC-S380: 054c:06c1, 054c:06c3)")
            }
            let reason = "no Sony RC-S380 found on USB\(selector == .first ? "" : " matching that device string"): plug it in (lsusb should list 054c:06c1 or 054c:06c3)"
            throw FeliCaError(.noReader, reason, underlying: USBError(.notFound, reason))
        }
        let model = USBReaders.model(vendor: chosen.vendor, product: chosen.product)!
        let c = RCS380Connection(model: model, location: USBReaders.Location(bus: chosen.bus, address: chosen.address))
        c.context = context
        let opened = LibUSB.open(chosen.device)
        releaseDevices()
        switch opened {
        case .success(let h): c.handle = h
        case .failure(let s):
            c.close()
            throw openError(s, location: c.location, model: model)
        }
        _ = LibUSB.setAutoDetach(c.handle!, true)
        let claim = LibUSB.claim(c.handle!, interface: 0)
        guard claim.isSuccess else {
            let held = LibUSB.kernelDriverActive(c.handle!, interface: 0) == 1
            c.close()
            if claim == .noDevice { throw Port100Driver.unplugged(c.label, status: claim.name) }
            if held && (claim == .busy || claim == .other) {
                throw FeliCaError(.busy, "\(c.label) \(USBReaders.port100Held) (\(claim.name)): \(USBReaders.port100Fix(blacklistedIn: USBReaders.blacklistFile(for: "port100")))")
            }
            if claim == .busy {
                throw FeliCaError(.busy, "\(c.label) is in use by another program (\(claim.name)): close it (nfcpy, another felica) and try again")
            }
            throw FeliCaError(.noReader, "cannot claim \(c.label) (\(claim.name)): unplug it, plug it back in and try again")
        }
        do throws(FeliCaError) {
            var link = c
            try c.driver.open(bitRate: bitRate, &link)
        } catch {
            c.close()
            throw error
        }
        return c
    }

    /// The error for a failed `libusb_open`, with the fix.
    static func openError(_ s: LibUSBStatus, location: USBReaders.Location, model: USBReaders.Model) -> FeliCaError {
        switch s {
        case .access:
            return FeliCaError(.noReader, """
                no permission to open \(model.name) (\(location.node), \(s.name)). Give your user access with a udev rule: \
                put this line in \(USBReaders.udevRulePath):
                  \(USBReaders.udevRule.split(separator: "\n").joined(separator: "\n  "))
                then run `sudo udevadm control --reload && sudo udevadm trigger` and plug the reader in again
                """)
        case .noDevice: return Port100Driver.unplugged("\(model.name) at \(location.node)", status: s.name)
        default: return FeliCaError(.noReader, "cannot open \(model.name) at \(location.node) (\(s.name)): unplug it, plug it back in and try again")
        }
    }

    // MARK: - What the driver does, on the device thread

    /// One FeliCa packet through the driver (``Port100Driver/exchange(_:timeout:_:)``).
    func exchange(_ packet: [UInt8], timeout: Duration) throws(FeliCaError) -> [UInt8] {
        var link = self
        return try driver.exchange(packet, timeout: timeout, &link)
    }

    /// InSetRF alone (``Port100Driver/switchRate(_:_:)``).
    func switchRate(_ rate: AirTiming.BitRate) throws(FeliCaError) {
        var link = self
        try driver.switchRate(rate, &link)
    }

    // MARK: - The link: libusb's bulk transfers

    var now: Duration { clock.now - origin }

    var isCancelled: Bool { cancelled.load(ordering: .relaxed) }

    func write(_ bytes: [UInt8]) throws(Port100LinkError) -> Int {
        guard let handle else { throw Self.linkError(.noDevice) }
        switch LibUSB.bulkWrite(handle, endpoint: Self.outEndpoint, bytes, timeoutMilliseconds: 1000) {
        case .success(let n): return n
        case .failure(let s): throw Self.linkError(s)
        }
    }

    func read(timeout: Duration) throws(Port100LinkError) -> [UInt8]? {
        guard let handle else { throw Self.linkError(.noDevice) }
        let ms = UInt32(max(1, timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000))
        switch LibUSB.bulkRead(handle, endpoint: Self.inEndpoint, capacity: 1024, timeoutMilliseconds: ms) {
        case .success(let bytes): return bytes
        case .failure(.timeout): return nil
        case .failure(let s): throw Self.linkError(s)
        }
    }

    private static func linkError(_ s: LibUSBStatus) -> Port100LinkError {
        Port100LinkError(isUnplugged: s == .noDevice, status: s.name)
    }

    // MARK: - Closing

    /// RF off and an ACK (the driver's), the interface released and the handle closed. Safe
    /// to call twice.
    func close() {
        if let handle {
            var link = self
            driver.close(&link)
            _ = LibUSB.release(handle, interface: 0)
            LibUSB.close(handle)
        }
        handle = nil
        if let context { LibUSB.exit(context) }
        context = nil
    }
}
