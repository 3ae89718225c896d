import FeliCa
import FeliCaLibNFC
import FeliCaPCSC
import FeliCaPN532
import FeliCaSimulation
import FeliCaTransportSupport
import FeliCaCards

/// One row of `felica devices`: a device, the spec that opens it, and whether it can be used.
public struct DeviceListing: Sendable {
    /// Whether a device can be used, and what is on it or in the way.
    public enum Availability: Hashable, Sendable {
        /// It opens; `state` says what is on it ("ready", "empty", "FeliCa card present").
        case usable(state: String)
        /// A stack lists it, but it would not open.
        case cannotOpen(reason: String)
        /// Found on USB, but something keeps every stack from it (the diagnosis names the fix).
        case blocked(reasons: [String])

        public var isUsable: Bool {
            if case .usable = self { true } else { false }
        }

        /// The STATE column.
        public var state: String {
            switch self {
            case .usable(let state): state
            case .cannotOpen(let reason): "cannot open: " + reason
            case .blocked(let reasons): "unusable: " + reasons.joined(separator: "; ")
            }
        }
    }

    /// The stack that serves it: `libnfc`, `pcsc`, `usb` or `virtual`.
    public var stack: String
    public var name: String
    /// The spec that opens it; nil when nothing can (a reader no stack supports).
    public var spec: DeviceSpec?
    public var availability: Availability

    public init(stack: String, name: String, spec: DeviceSpec?, availability: Availability) {
        self.stack = stack
        self.name = name
        self.spec = spec
        self.availability = availability
    }

    /// The DEVICE column: the `--device` string, or `-`.
    public var device: String { spec?.description ?? "-" }

    /// Real readers from every stack, each by the best path to it: USB readers driven
    /// directly first, then those libnfc finds (plus `LIBNFC_DEVICE` and its configuration),
    /// then pcscd's (none when pcscd is not running, `felica doctor` says why; one row that
    /// cannot open when pcscd refuses this program).
    ///
    /// A PN532 on a serial line that libnfc finds (`pn532_uart:/dev/ttyUSB0`) is listed as
    /// `pn532:/dev/ttyUSB0` when the native transport opens it: it skips the fixed costs of
    /// libnfc's open. libnfc keeps the readers only it serves (PN533, ACR122 …), and a PN532
    /// the native transport cannot open (another baud rate, no answer) stays libnfc's.
    public static func readers() async -> [DeviceListing] {
        var native: [DeviceListing] = []
        var served: Set<String> = []
        for connstring in await LibNFCDevices.connectionStrings() {
            guard let path = nativePN532Path(libnfc: connstring),
                  // At the chip's own speed: a probe need not raise the line and put it back.
                  let transport = try? await PN532SerialTransport.open(path: path, baud: 115_200) else { continue }
            await transport.close()
            served.insert(connstring)
            native.append(DeviceListing(stack: "pn532", name: "PN532 on \(path)", spec: DeviceSpec(.pn532(path: path)),
                                        availability: .usable(state: "ready")))
        }
        let libnfc = await LibNFCDevices.list(except: served).map { d in
            DeviceListing(stack: "libnfc", name: d.name ?? d.connectionString, spec: DeviceSpec(.libnfc(connstring: d.connectionString)),
                          availability: d.problem.map { .cannotOpen(reason: $0) } ?? .usable(state: "ready"))
        }
        var pcsc: [DeviceListing] = []
        do throws(FeliCaError) {
            pcsc = try await PCSCReaderInfo.list().map { r in
                DeviceListing(stack: "pcsc", name: r.name, spec: DeviceSpec(.pcsc(reader: .named(r.name), dialect: nil)),
                              availability: .usable(state: r.state.description + (r.inUse ? " (in use by another program)" : "")))
            }
        } catch where error.pcscError?.code == .accessDenied {
            // pcscd will not say which readers it has: one row, so the refusal is not mistaken
            // for "no PC/SC reader", and opened when nothing else is, it gives the reason.
            pcsc = [DeviceListing(stack: "pcsc", name: "pcscd's readers", spec: DeviceSpec(.pcsc(reader: .first, dialect: nil)),
                                  availability: .cannotOpen(reason: "pcscd refused access (polkit)"))]
        } catch {}
        return await USBReaderDevice.list() + native + libnfc + pcsc
    }

    /// The serial port of a libnfc connection string the native PN532 transport can take
    /// over: `pn532_uart:<port>`, with no baud rate or 115200 (the rate the native
    /// transport runs at); nil for any other.
    public static func nativePN532Path(libnfc connstring: String) -> String? {
        let parts = connstring.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2 || parts.count == 3, parts[0] == "pn532_uart", !parts[1].isEmpty else { return nil }
        if parts.count == 3 && parts[2] != "115200" { return nil }
        return String(parts[1])
    }

    /// The built-in sample cards.
    public static var virtualCards: [DeviceListing] {
        SampleCards.names.map {
            DeviceListing(stack: "virtual", name: "built-in sample card \($0)", spec: DeviceSpec(.virtual(.builtIn($0), timing: nil)),
                          availability: .usable(state: "card present"))
        }
    }
}
