internal import CLibNFC
import FeliCa

#if canImport(Glibc)
import Glibc
#endif

/// One small wrapper per libnfc call: the only place that touches C, turning return codes
/// into ``LibNFCStatus`` values and C strings into Swift strings.
enum LibNFC {
    /// libnfc's version string (`nfc_version`).
    static var version: String { String(cString: nfc_version()) }

    /// The process's one libnfc context (`nfc_init`), made on first use; nil when libnfc
    /// could not start.
    ///
    /// Never passed to `nfc_exit`: libnfc keeps its driver list in a global that
    /// `nfc_exit` frees for every context at once, so exiting one context while another
    /// device opens makes that open fail ("No driver available"). One context living as
    /// long as the process is the only safe use with several devices or threads.
    static var context: OpaquePointer? { sharedContext?.pointer }

    private static let sharedContext: ContextHandle? = {
        // libnfc logs its own errors to stderr ("Unable to find USB busses" on every
        // machine without USB access); the library reports failures in its errors, so keep
        // libnfc quiet unless the user asked for its log.
        if getenv("LIBNFC_LOG_LEVEL") == nil { setenv("LIBNFC_LOG_LEVEL", "0", 0) }
        var context: OpaquePointer? = nil
        nfc_init(&context)
        return context.map(ContextHandle.init(pointer:))
    }()

    /// `nfc_open`; nil connection string = the first device libnfc knows.
    static func open(_ context: OpaquePointer, _ connstring: String?) -> OpaquePointer? {
        guard let connstring else { return nfc_open(context, nil) }
        guard connstring.utf8.count < Int(NFC_BUFSIZE_CONNSTRING) else { return nil }
        return connstring.withCString { nfc_open(context, $0) }
    }

    /// `nfc_close`.
    static func close(_ device: OpaquePointer) { nfc_close(device) }

    /// `nfc_abort_command`: wakes a blocked call on another thread, which then fails with
    /// `NFC_EOPABORTED` and tells the chip to abort.
    static func abort(_ device: OpaquePointer) { _ = nfc_abort_command(device) }

    /// `nfc_list_devices`: connection strings of the devices libnfc can find.
    static func listDevices(_ context: OpaquePointer, max: Int = 16) -> [String] {
        let size = Int(NFC_BUFSIZE_CONNSTRING)
        let buffer = UnsafeMutablePointer<nfc_connstring>.allocate(capacity: max)
        defer { buffer.deallocate() }
        let raw = UnsafeMutableRawPointer(buffer)
        raw.initializeMemory(as: UInt8.self, repeating: 0, count: max * size)
        let n = nfc_list_devices(context, buffer, max)
        return (0..<min(n, max)).map { i in
            String(cString: raw.advanced(by: i * size).assumingMemoryBound(to: CChar.self))
        }
    }

    /// `nfc_initiator_init`.
    static func initiatorInit(_ device: OpaquePointer) -> LibNFCStatus {
        LibNFCStatus(nfc_initiator_init(device))
    }

    /// `nfc_device_set_property_bool(NP_INFINITE_SELECT)`.
    static func setInfiniteSelect(_ device: OpaquePointer, _ on: Bool) -> LibNFCStatus {
        LibNFCStatus(nfc_device_set_property_bool(device, NP_INFINITE_SELECT, on))
    }

    /// `nfc_device_set_property_int(NP_TIMEOUT_COM)`: the chip's own RF timeout in ms.
    static func setCommunicationTimeout(_ device: OpaquePointer, milliseconds: Int) -> LibNFCStatus {
        LibNFCStatus(nfc_device_set_property_int(device, NP_TIMEOUT_COM, Int32(milliseconds)))
    }

    /// `nfc_initiator_select_passive_target` for FeliCa with a Polling payload
    /// (`00 SC SC RC TSN`); returns the Polling response with its LEN byte, nil when no
    /// card answered.
    static func selectFeliCa(_ device: OpaquePointer, payload: [UInt8], bitRate: AirTiming.BitRate) -> Result<[UInt8]?, LibNFCStatus> {
        let modulation = nfc_modulation(nmt: NMT_FELICA, nbr: bitRate == .kbps424 ? NBR_424 : NBR_212)
        var target = nfc_target()
        let r = payload.withUnsafeBufferPointer {
            nfc_initiator_select_passive_target(device, modulation, $0.baseAddress, $0.count, &target)
        }
        guard r >= 0 else { return .failure(LibNFCStatus(r)) }
        guard r > 0 else { return .success(nil) }
        let info = target.nti.nfi
        let length = Int(info.szLen)
        var packet: [UInt8] = [UInt8(truncatingIfNeeded: length), info.btResCode]
        withUnsafeBytes(of: info.abtId) { packet += $0 }
        withUnsafeBytes(of: info.abtPad) { packet += $0 }
        if length > 18 { withUnsafeBytes(of: info.abtSysCode) { packet += $0 } }
        return .success(packet)
    }

    /// `nfc_initiator_transceive_bytes`: sends `packet` as is, returns the card's bytes.
    static func transceive(_ device: OpaquePointer, _ packet: [UInt8], timeoutMilliseconds: Int) -> Result<[UInt8], LibNFCStatus> {
        var rx = [UInt8](repeating: 0, count: 264)
        let n = packet.withUnsafeBufferPointer { tx in
            rx.withUnsafeMutableBufferPointer { rx in
                nfc_initiator_transceive_bytes(device, tx.baseAddress, tx.count, rx.baseAddress, rx.count, Int32(timeoutMilliseconds))
            }
        }
        guard n >= 0 else { return .failure(LibNFCStatus(n)) }
        return .success(Array(rx.prefix(Int(n))))
    }

    /// `nfc_device_get_name`.
    static func name(_ device: OpaquePointer) -> String { String(cString: nfc_device_get_name(device)) }

    /// `nfc_device_get_connstring`.
    static func connstring(_ device: OpaquePointer) -> String { String(cString: nfc_device_get_connstring(device)) }

    /// `nfc_strerror`: libnfc's words for the device's last error.
    static func lastErrorText(_ device: OpaquePointer) -> String { String(cString: nfc_strerror(device)) }
}

/// The `nfc_context *` shared by the process.
struct ContextHandle: @unchecked Sendable {
    // @unchecked: libnfc only reads the context after nfc_init (configuration, device list);
    // it is created once, under Swift's lazy-global initialisation, and never freed.
    let pointer: OpaquePointer
}

/// A libnfc return code, named.
struct LibNFCStatus: Error, Hashable, Sendable, CustomStringConvertible {
    let rawValue: Int32
    init(_ rawValue: Int32) { self.rawValue = rawValue }

    var isSuccess: Bool { rawValue >= 0 }

    /// `NFC_EIO`: input/output error (the line broke, a garbled or unexpected frame).
    static let io = LibNFCStatus(NFC_EIO)
    /// `NFC_EINVARG`: the chip or libnfc refused the arguments.
    static let invalidArgument = LibNFCStatus(NFC_EINVARG)
    /// `NFC_EDEVNOTSUPP`: the device cannot do this.
    static let notSupported = LibNFCStatus(NFC_EDEVNOTSUPP)
    /// `NFC_ENOTSUCHDEV`: the device is gone.
    static let noSuchDevice = LibNFCStatus(NFC_ENOTSUCHDEV)
    /// `NFC_EOVFLOW`: the reply did not fit.
    static let overflow = LibNFCStatus(NFC_EOVFLOW)
    /// `NFC_ETIMEOUT`: the host gave up waiting for the chip.
    static let timeout = LibNFCStatus(NFC_ETIMEOUT)
    /// `NFC_EOPABORTED`: `nfc_abort_command` interrupted the call.
    static let aborted = LibNFCStatus(NFC_EOPABORTED)
    /// `NFC_ETGRELEASED`: the target was released.
    static let targetReleased = LibNFCStatus(NFC_ETGRELEASED)
    /// `NFC_ERFTRANS`: the chip reported an RF error; for FeliCa nearly always "the card
    /// did not answer" (chip timeout), sometimes a CRC error.
    static let rfTransmission = LibNFCStatus(NFC_ERFTRANS)
    /// `NFC_ECHIP`: the chip reported an internal error.
    static let chip = LibNFCStatus(NFC_ECHIP)

    var description: String {
        switch self {
        case .io: return "NFC_EIO"
        case .invalidArgument: return "NFC_EINVARG"
        case .notSupported: return "NFC_EDEVNOTSUPP"
        case .noSuchDevice: return "NFC_ENOTSUCHDEV"
        case .overflow: return "NFC_EOVFLOW"
        case .timeout: return "NFC_ETIMEOUT"
        case .aborted: return "NFC_EOPABORTED"
        case .targetReleased: return "NFC_ETGRELEASED"
        case .rfTransmission: return "NFC_ERFTRANS"
        case .chip: return "NFC_ECHIP"
        default: return "libnfc error \(rawValue)"
        }
    }
}
