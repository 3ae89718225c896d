import FeliCa
import FeliCaReaderCodecs
import FeliCaTransportSupport
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The blocking half of the RC-S380 transport: one open reader, driven command by command
/// with libusb's synchronous bulk transfers.
///
/// `@unchecked Sendable`: `context`, `handle`, `rate` and `lastPolling` are only read or written on the
/// transport's device thread (every call is made there); `cancelled` is atomic and may be
/// set from any thread.
final class RCS380Connection: @unchecked Sendable {
    let model: USBReaders.Model
    let bus: Int
    let address: Int
    private var context: OpaquePointer?
    private var handle: OpaquePointer?
    private var rate: AirTiming.BitRate?
    /// The last Polling sent, to ask whether a silent card is still there.
    private var lastPolling: [UInt8]?
    /// Set by a cancelled task: the running command is aborted at the next slice.
    let cancelled = Atomic(false)
    /// One command's round trip (frame out, ACK and answer in), the median of the set-up
    /// commands at open: what the reader and its USB link add to every exchange.
    private(set) var roundTrip: Duration = .milliseconds(2)

    static let outEndpoint: UInt8 = 0x02
    static let inEndpoint: UInt8 = 0x81
    static let packetSize = 64
    /// How long the reader may take beyond a command's own time before the host gives up:
    /// USB transfers take a few ms at most.
    static let hostMargin: Duration = .milliseconds(250)
    /// A read waits in slices this long, so a cancelled task is noticed.
    static let slice: Duration = .milliseconds(50)

    var label: String { "\(model.name) at usb:\(USBReaders.decimal3(bus)):\(USBReaders.decimal3(address))" }
    private var node: String { "/dev/bus/usb/\(USBReaders.decimal3(bus))/\(USBReaders.decimal3(address))" }

    private init(model: USBReaders.Model, bus: Int, address: Int) {
        self.model = model
        self.bus = bus
        self.address = address
    }

    // MARK: - Opening

    /// Finds the reader `selector` names, opens it, claims its interface (detaching the
    /// kernel's `port100` driver when allowed) and initialises the chip for FeliCa.
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
        defer { devices.forEach { LibUSB.unref($0.device) } }
        let matching = devices.filter { selector.matches(vendor: $0.vendor, product: $0.product, bus: $0.bus, address: $0.address) }
        guard let chosen = matching.first(where: { USBReaders.model(vendor: $0.vendor, product: $0.product) != nil }) else {
            LibUSB.exit(context)
            if case .path(let bus, let address) = selector, let other = matching.first {
                throw FeliCaError(.unsupported, "the USB device at bus \(USBReaders.decimal3(bus)) address \(USBReaders.decimal3(address)) is \(USBReaders.hex4(other.vendor)):\(USBReaders.hex4(other.product)), not a supported reader (Sony RC-S380, 054c:06c1 or 054c:06c3)")
            }
            if case .id(let v, let p) = selector, USBReaders.model(vendor: v, product: p) == nil {
                throw FeliCaError(.unsupported, "\(USBReaders.hex4(v)):\(USBReaders.hex4(p)) is not a reader this build drives over USB (Sony RC-S380: 054c:06c1, 054c:06c3)")
            }
            throw FeliCaError(.noReader, "no Sony RC-S380 found on USB\(selector == .first ? "" : " matching that device string"): plug it in (lsusb should list 054c:06c1 or 054c:06c3), then run `felica devices`")
        }
        let model = USBReaders.model(vendor: chosen.vendor, product: chosen.product)!
        let c = RCS380Connection(model: model, bus: chosen.bus, address: chosen.address)
        c.context = context
        switch LibUSB.open(chosen.device) {
        case .success(let h): c.handle = h
        case .failure(let s):
            c.close()
            throw openError(s, node: c.node, model: model)
        }
        _ = LibUSB.setAutoDetach(c.handle!, true)
        let claim = LibUSB.claim(c.handle!, interface: 0)
        guard claim.isSuccess else {
            let held = LibUSB.kernelDriverActive(c.handle!, interface: 0) == 1
            c.close()
            if claim == .noDevice { throw unplugged(c.label) }
            if held && (claim == .busy || claim == .other) {
                throw FeliCaError(.busy, "\(c.label) is held by the kernel's port100 NFC driver, and it could not be detached (\(claim.name)): \(USBReaders.port100Fix)")
            }
            if claim == .busy {
                throw FeliCaError(.busy, "\(c.label) is in use by another program (\(claim.name)): close it (nfcpy, another felica) and try again")
            }
            throw FeliCaError(.noReader, "cannot claim \(c.label) (\(claim.name)): unplug it, plug it back in and try again")
        }
        do throws(FeliCaError) {
            try c.initialise(bitRate: bitRate)
        } catch {
            c.close()
            throw error
        }
        return c
    }

    /// The error for a failed `libusb_open`, with the fix.
    static func openError(_ s: LibUSBStatus, node: String, model: USBReaders.Model) -> FeliCaError {
        switch s {
        case .access:
            return FeliCaError(.noReader, """
                no permission to open \(model.name) (\(node), \(s.name)). Give your user access with a udev rule: \
                put this line in \(USBReaders.udevRulePath):
                  \(USBReaders.udevRule.split(separator: "\n").joined(separator: "\n  "))
                then run `sudo udevadm control --reload && sudo udevadm trigger` and plug the reader in again
                """)
        case .noDevice: return unplugged("\(model.name) at \(node)")
        default: return FeliCaError(.noReader, "cannot open \(model.name) at \(node) (\(s.name)): unplug it, plug it back in and try again")
        }
    }

    static func unplugged(_ label: String) -> FeliCaError {
        FeliCaError(.readerGone, "\(label) was unplugged (LIBUSB_ERROR_NO_DEVICE): plug it back in and run the command again")
    }

    /// Clears what a previous host left behind, then sets the chip up as hosts do:
    /// SetCommandType 1, the versions, RF off, then FeliCa at `bitRate`.
    private func initialise(bitRate: AirTiming.BitRate) throws(FeliCaError) {
        // An ACK with nothing running resets the chip's command state; then drop any
        // response a killed host never read.
        try write(Port100Frame.ack.encode())
        drain()
        let clock = ContinuousClock()
        var times: [Duration] = []
        func timed(_ body: () throws(FeliCaError) -> Void) throws(FeliCaError) {
            let start = clock.now
            try body()
            times.append(clock.now - start)
        }
        try timed { () throws(FeliCaError) in try command(.setCommandType(1)).status(of: .setCommandType(1)) }
        try timed { () throws(FeliCaError) in _ = try command(.getFirmwareVersion).version(of: .getFirmwareVersion) }
        try timed { () throws(FeliCaError) in _ = try command(.getPDDataVersion).version(of: .getPDDataVersion) }
        try timed { () throws(FeliCaError) in try command(.switchRF(on: false)).status(of: .switchRF(on: false)) }
        roundTrip = times.sorted()[times.count / 2]
        try setRate(bitRate)
    }

    /// InSetRF for FeliCa at `rate`, then the initiator defaults with FeliCa's guard time.
    func setRate(_ newRate: AirTiming.BitRate) throws(FeliCaError) {
        try command(.inSetRF(newRate)).status(of: .inSetRF(newRate))
        let defaults = Port100Command.inSetProtocol(Port100Command.inSetProtocolDefaults)
        try command(defaults).status(of: defaults)
        let guardTime = Port100Command.inSetProtocol([0x00, 0x18])
        try command(guardTime).status(of: guardTime)
        rate = newRate
    }

    /// InSetRF alone: the protocol settings stay as ``setRate(_:)`` left them.
    func switchRate(_ newRate: AirTiming.BitRate) throws(FeliCaError) {
        guard handle != nil else { throw FeliCaError(.readerGone, "\(label): the device is closed") }
        try command(.inSetRF(newRate)).status(of: .inSetRF(newRate))
        rate = newRate
    }

    // MARK: - Exchanging

    /// Sends one FeliCa packet through InCommRF with `timeout` as the chip's own timeout.
    /// When a card that answered Polling falls silent, one more Polling tells whether it is
    /// still on the reader.
    func exchange(_ packet: [UInt8], timeout: Duration) throws(FeliCaError) -> [UInt8] {
        guard handle != nil else { throw FeliCaError(.readerGone, "\(label): the device is closed") }
        let isPolling = packet.count >= 2 && packet[1] == CommandCode.polling.rawValue
        if isPolling { lastPolling = packet }
        // A reader that does not answer in time fails in command(); only the reader's own
        // receive-timeout status, the card's silence, reaches the catch.
        let response = try command(.inCommRF(packet, timeout: timeout), chipTime: timeout)
        do throws(FeliCaError) {
            return try response.inCommRFPacket()
        } catch where error.code == .timeout {
            let ms = Self.milliseconds(timeout)
            if isPolling {
                throw FeliCaError(.timeout, "\(label): no card answered Polling within \(ms) ms")
            }
            if let p = lastPolling, (try? command(.inCommRF(p, timeout: .milliseconds(10)), chipTime: .milliseconds(10)).inCommRFPacket()) == nil {
                throw FeliCaError(.cardGone, "\(label): the card left the reader during the exchange; hold it still on the reader and run the command again")
            }
            throw FeliCaError(.timeout, "\(label): the card did not answer within \(ms) ms")
        }
    }

    static func milliseconds(_ d: Duration) -> String {
        let us = d.components.seconds * 1_000_000 + d.components.attoseconds / 1_000_000_000_000
        return us % 1000 == 0 ? String(us / 1000) : String(format: "%.1f", Double(us) / 1000)
    }

    /// Runs one command: its frame out, the ACK in, then the response within `chipTime`
    /// plus the USB margin. A response that does not come in time, or a cancelled task,
    /// aborts the command with a host ACK.
    @discardableResult
    func command(_ c: Port100Command, chipTime: Duration = .milliseconds(100)) throws(FeliCaError) -> Port100Response {
        try write(Port100Frame.command(c).encode())
        let clock = ContinuousClock()
        let deadline = clock.now + chipTime + Self.hostMargin
        let ack = try read(until: deadline, what: "the ACK to \(c.name)")
        guard (try? Port100Frame.decode(ack[...])) == .ack else {
            drain()
            throw FeliCaError(.transmission, "\(label): expected an ACK to \(c.name), got \(Hex.encode(ack)); run the command again")
        }
        let bytes = try read(until: deadline, what: "the answer to \(c.name)")
        let frame: Port100Frame
        do throws(FeliCaError) {
            frame = try Port100Frame.decode(bytes[...])
        } catch {
            drain()
            throw FeliCaError(.transmission, "\(label): the reader's answer to \(c.name) arrived damaged (\(error.reason)); run the command again")
        }
        switch frame {
        case .response(let r):
            guard r.code == c.code &+ 1 else {
                drain()
                throw FeliCaError(.unexpectedResponse, "\(label): answer code \(Hex.encode([r.code])) does not belong to \(c.name); run the command again")
            }
            return r
        case .error:
            throw FeliCaError(.status, "\(label): the reader refused \(c.name) as malformed")
        case .ack, .command:
            drain()
            throw FeliCaError(.transmission, "\(label): expected the answer to \(c.name), got \(Hex.encode(bytes)); run the command again")
        }
    }

    /// One whole bulk OUT transfer, ended with a zero-length packet when its size is a
    /// multiple of the packet size (the reader would otherwise wait for more).
    private func write(_ bytes: [UInt8]) throws(FeliCaError) {
        guard let handle else { throw FeliCaError(.readerGone, "\(label): the device is closed") }
        switch LibUSB.bulkWrite(handle, endpoint: Self.outEndpoint, bytes, timeoutMilliseconds: 1000) {
        case .success(let n) where n == bytes.count: break
        case .success(let n):
            throw FeliCaError(.transmission, "\(label): only \(n) of \(bytes.count) bytes went out; run the command again")
        case .failure(let s): throw usbError(s, "sending to the reader")
        }
        if bytes.count % Self.packetSize == 0 {
            if case .failure(let s) = LibUSB.bulkWrite(handle, endpoint: Self.outEndpoint, [], timeoutMilliseconds: 1000) {
                throw usbError(s, "ending the transfer")
            }
        }
    }

    /// The next IN transfer before `deadline`, waiting in slices; on expiry or cancellation
    /// aborts the running command and throws.
    private func read(until deadline: ContinuousClock.Instant, what: String) throws(FeliCaError) -> [UInt8] {
        guard let handle else { throw FeliCaError(.readerGone, "\(label): the device is closed") }
        let clock = ContinuousClock()
        while true {
            if cancelled.load(ordering: .relaxed) {
                abortCommand()
                throw FeliCaError(.cancelled, "\(label): cancelled while waiting for \(what)")
            }
            let left = deadline - clock.now
            guard left > .zero else {
                abortCommand()
                throw FeliCaError(.timeout, "\(label): the reader did not send \(what) in time; the command was aborted")
            }
            let wait = min(left, Self.slice)
            let ms = UInt32(max(1, wait.components.seconds * 1000 + wait.components.attoseconds / 1_000_000_000_000_000))
            switch LibUSB.bulkRead(handle, endpoint: Self.inEndpoint, capacity: 1024, timeoutMilliseconds: ms) {
            case .success(let bytes) where !bytes.isEmpty: return bytes
            case .success: continue
            case .failure(.timeout): continue
            case .failure(let s): throw usbError(s, "waiting for \(what)")
            }
        }
    }

    /// Aborts the running command with a host ACK, then drops what the reader still sends.
    private func abortCommand() {
        try? write(Port100Frame.ack.encode())
        drain()
    }

    /// Reads and drops IN transfers until the reader stays quiet for 10 ms.
    private func drain() {
        guard let handle else { return }
        for _ in 0..<16 {
            guard case .success(let b) = LibUSB.bulkRead(handle, endpoint: Self.inEndpoint, capacity: 1024, timeoutMilliseconds: 10), !b.isEmpty else { return }
        }
    }

    private func usbError(_ s: LibUSBStatus, _ doing: String) -> FeliCaError {
        if s == .noDevice { return Self.unplugged(label) }
        return FeliCaError(.transmission, "\(label): USB error while \(doing) (\(s.name)); run the command again, and replug the reader if it persists")
    }

    // MARK: - Closing

    /// RF off, an ACK, the interface released and the handle closed. Safe to call twice.
    func close() {
        if let handle {
            if rate != nil {
                _ = try? command(.switchRF(on: false))
                try? write(Port100Frame.ack.encode())
            }
            _ = LibUSB.release(handle, interface: 0)
            LibUSB.close(handle)
        }
        handle = nil
        rate = nil
        if let context { LibUSB.exit(context) }
        context = nil
    }
}
