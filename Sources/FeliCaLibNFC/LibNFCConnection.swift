import FeliCa
import FeliCaReaderCodecs
import FeliCaTransportSupport
import Glibc
import Synchronization

/// The libnfc context and device of one transport, touched only on its ``DeviceThread``
/// (``abort()`` excepted, which takes the handle lock).
final class LibNFCConnection: @unchecked Sendable {
    // @unchecked: every member except `handle` is used only on the transport's device
    // thread; `handle` is a Mutex so that abort() can reach the device from any thread
    // without racing close().
    let requested: String?
    let bitRate: AirTiming.BitRate
    private let handle = Mutex<DeviceHandle?>(nil)
    private(set) var deviceName = ""
    private(set) var openedConnstring = ""
    /// The chip timeout currently set, nil = libnfc's default (unknown to us).
    private var chipTimeout: ChipTimeout?
    /// The last Polling payload, to find the card again after a reset.
    private var lastPolling: [UInt8]?
    /// Close and reopen before the next command (after a host timeout or garbled frame).
    private var needsReset = false
    /// Select the card again before the next non-Polling command.
    private var needsSelect = false
    /// The host-side deadline of the exchange in progress: a generation number (so a late
    /// timer cannot hit a later exchange) and whether it fired.
    private let watchdog = Mutex<(generation: UInt64, fired: Bool)>((0, false))

    init(connstring: String?, bitRate: AirTiming.BitRate) {
        requested = connstring
        self.bitRate = bitRate
    }

    private var label: String { requested.map { "libnfc:\($0)" } ?? "libnfc" }

    /// The open device, or an error saying it is closed.
    private func device() throws(FeliCaError) -> OpaquePointer {
        guard let d = handle.withLock({ $0?.pointer }) else {
            throw FeliCaError(.readerGone, "\(label): the device is closed")
        }
        return d
    }

    // MARK: - Opening and closing (device thread)

    func open() throws(FeliCaError) {
        guard let context = LibNFC.context else {
            throw FeliCaError(.noReader, "libnfc could not start (nfc_init failed: out of memory or a broken libnfc configuration)")
        }
        guard let d = LibNFC.open(context, requested) else {
            throw LibNFCDiagnosis.openFailure(requested, context: context)
        }
        handle.withLock { $0 = DeviceHandle(pointer: d) }
        deviceName = LibNFC.name(d)
        openedConnstring = LibNFC.connstring(d)
        chipTimeout = nil
        var status = LibNFC.initiatorInit(d)
        if status.isSuccess {
            // nfc_initiator_init turns infinite select on: a Polling nobody answers would block.
            status = LibNFC.setInfiniteSelect(d, false)
        }
        guard status.isSuccess else {
            let text = LibNFC.lastErrorText(d)
            closeDevice()
            throw FeliCaError(.noReader, "\(label): \(deviceName) opened but would not start as a reader (\(status): \(text)); unplug it and plug it back in")
        }
    }

    private func closeDevice() {
        let d = handle.withLock { h -> OpaquePointer? in
            defer { h = nil }
            return h?.pointer
        }
        if let d { LibNFC.close(d) }
    }

    /// Closes the device, once (the libnfc context is the process's, see ``LibNFC/context``).
    func close() {
        closeDevice()
    }

    deinit { close() }

    /// Closes and reopens the device: the only reliable way back in step after the host
    /// gave up on a reply. A late reply can still spoil an attempt, so try a few times.
    private func reset() throws(FeliCaError) {
        closeDevice()
        var lastError = FeliCaError(.readerGone, "\(label): could not reopen the reader")
        for attempt in 0..<4 {
            if attempt > 0 { usleepMilliseconds(100 * attempt) }
            do throws(FeliCaError) {
                try open()
                needsReset = false
                needsSelect = lastPolling != nil
                return
            } catch {
                lastError = error
            }
        }
        throw FeliCaError(.readerGone, "\(label): the reader stopped answering and could not be reopened (\(lastError.reason)); check that it is still plugged in")
    }

    /// Any thread: interrupts the libnfc call in progress.
    func abort() {
        handle.withLock { h in
            if let h { LibNFC.abort(h.pointer) }
        }
    }

    // MARK: - Exchanges (device thread)

    func exchange(_ packet: [UInt8], timeout: Duration) throws(FeliCaError) -> [UInt8] {
        if needsReset { try reset() }
        if let polling = PollingCommand(packet: packet) {
            let payload = Array(packet.dropFirst())
            lastPolling = payload
            needsSelect = false
            guard let reply = try select(payload) else {
                throw FeliCaError(.timeout, "\(label): no card answered the Polling for system \(polling.systemCode)")
            }
            return reply
        }
        if needsSelect, let p = lastPolling {
            guard try select(p) != nil else {
                throw FeliCaError(.cardGone, "\(label): the card is no longer on the reader; put it back and run the command again")
            }
            needsSelect = false
        }
        let d = try device()
        let wanted = ChipTimeout(atLeast: timeout)
        // Each change is an RFConfiguration round trip over the serial line (about 3 ms at
        // 115200 baud): a watch loop alternating reads and presence checks would pay it
        // twice a tap. So a longer timeout already set is kept (`ChipTimeout.suffices(for:)`).
        if !(chipTimeout?.suffices(for: wanted) ?? false) {
            let s = LibNFC.setCommunicationTimeout(d, milliseconds: wanted.milliseconds)
            guard s.isSuccess else { throw failure(s, d, doing: "setting the RF timeout") }
            chipTimeout = wanted
        }
        let chip = chipTimeout ?? wanted
        // The host waits well past the chip's own timeout, so the chip always speaks first.
        // Should it not, the watchdog aborts the command the PN53x way (libnfc sends an ACK,
        // which stops the chip) instead of letting libnfc time out and leave a reply on the
        // line; libnfc's own timeout is only a backstop.
        let hostWait = chip.duration + .milliseconds(150)
        let generation = armWatchdog(after: hostWait)
        let result = LibNFC.transceive(d, packet, timeoutMilliseconds: milliseconds(hostWait) + 1000)
        let fired = disarmWatchdog(generation)
        switch result {
        case .failure(let s) where s == .aborted && fired:
            needsReset = true
            throw FeliCaError(.timeout, "\(label): the reader did not answer within \(hostWait); the command was aborted and the device is reset before the next one")
        case .success(let reply):
            return reply
        case .failure(let s) where s == .rfTransmission:
            // The card stayed silent. Is it still there? One Polling tells.
            if let p = lastPolling, try select(p) == nil {
                needsSelect = true
                throw FeliCaError(.cardGone, "\(label): the card left the reader during the exchange; hold it still on the reader and run the command again")
            }
            throw FeliCaError(.timeout, "\(label): the card did not answer within \(chip.duration)")
        case .failure(let s):
            throw failure(s, d, doing: "exchanging a packet")
        }
    }

    private func milliseconds(_ d: Duration) -> Int {
        Int(d.components.seconds) * 1000 + Int(d.components.attoseconds / 1_000_000_000_000_000)
    }

    /// Starts the host-side deadline of one exchange.
    private func armWatchdog(after wait: Duration) -> UInt64 {
        let generation = watchdog.withLock { w -> UInt64 in
            w.generation &+= 1
            w.fired = false
            return w.generation
        }
        // The process's watchdog thread, not a shared pool: a thread of its own fires on time
        // even when every worker of a pool is blocked (two on a 2-core machine), where a
        // deadline on a pool fired late — after the reply it was meant to cut off.
        Watchdog.shared.schedule(after: wait) { [self] in
            let fire = watchdog.withLock { w -> Bool in
                guard w.generation == generation else { return false }
                w.fired = true
                return true
            }
            if fire { abort() }
        }
        return generation
    }

    /// Ends the deadline; returns whether it fired.
    private func disarmWatchdog(_ generation: UInt64) -> Bool {
        watchdog.withLock { w -> Bool in
            let fired = w.generation == generation && w.fired
            w.generation &+= 1
            return fired
        }
    }

    /// Polls through libnfc's select; nil = no card answered.
    private func select(_ payload: [UInt8]) throws(FeliCaError) -> [UInt8]? {
        let d = try device()
        switch LibNFC.selectFeliCa(d, payload: payload, bitRate: bitRate) {
        case .success(let reply): return reply
        case .failure(let s):
            let error = failure(s, d, doing: "polling")
            // A card that stays silent is zero targets, not an error. A timeout here is the
            // reader not answering, which must not reach the session as a Polling timeout:
            // that means "no card", and a card on a slow reader would be reported absent.
            throw error.code == .timeout ? FeliCaError(.transmission, error.reason) : error
        }
    }

    /// Turns a libnfc failure into an error in plain words, and schedules the reset the
    /// device needs afterwards.
    private func failure(_ status: LibNFCStatus, _ d: OpaquePointer, doing what: String) -> FeliCaError {
        let text = LibNFC.lastErrorText(d)
        switch status {
        case .timeout:
            needsReset = true
            return FeliCaError(.timeout, "\(label): the reader did not answer while \(what) (\(status)); it is reset before the next command")
        case .aborted:
            needsReset = true
            return FeliCaError(.cancelled, "\(label): cancelled while \(what)")
        case .targetReleased:
            needsSelect = true
            return FeliCaError(.cardGone, "\(label): the reader lost the card while \(what); put it back and run the command again")
        case .io, .noSuchDevice:
            // Either a garbled frame or a reader that is gone: reopening tells them apart.
            do throws(FeliCaError) {
                try reset()
            } catch {
                return FeliCaError(.readerGone, "\(label): the reader stopped answering while \(what) (\(text)); it was unplugged or lost power — plug it back in and run the command again")
            }
            return FeliCaError(.transmission, "\(label): the reader sent a garbled reply while \(what) (\(status): \(text)); the device was reset, run the command again")
        default:
            needsReset = true
            return FeliCaError(.transmission, "\(label): \(what) failed (\(status): \(text))")
        }
    }
}

/// An open `nfc_device *`.
struct DeviceHandle: @unchecked Sendable {
    // @unchecked: the pointer is only dereferenced on the device thread, except by
    // nfc_abort_command, which libnfc made for exactly that and which runs under the
    // Connection's handle lock so it never meets a closed device.
    let pointer: OpaquePointer
}

func usleepMilliseconds(_ ms: Int) {
    var ts = timespec(tv_sec: ms / 1000, tv_nsec: (ms % 1000) * 1_000_000)
    nanosleep(&ts, nil)
}
