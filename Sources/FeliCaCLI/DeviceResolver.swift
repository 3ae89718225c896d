import FeliCa
import FeliCaSimulation
import FeliCaTransportSupport

#if canImport(Glibc)
import Glibc
#endif

/// Turns a device string (ARCHITECTURE.md, "Device strings") into an open transport.
public enum DeviceResolver {
    /// Help text listing the device forms, for errors.
    static let forms = "libnfc[:<connstring>], pcsc[:<reader>], usb[:<vid>:<pid>|:<bus>:<address>], virtual:<card>, replay:<trace>"

    /// Opens `spec`, or `$FELICA_DEVICE`, or the first real reader.
    /// `dialect` (`--dialect`) applies to PC/SC devices only.
    public static func open(_ spec: String?, dialect: String? = nil, console: Console? = nil) async throws -> any Transport {
        let chosen = spec ?? environment("FELICA_DEVICE")
        guard let chosen, !chosen.isEmpty else {
            return try await openDefault(dialect: dialect, console: console)
        }
        let (scheme, rest) = split(chosen)
        if dialect != nil && scheme != "pcsc" {
            throw UsageError("--dialect applies to PC/SC devices (pcsc, pcsc:<reader>), not '\(chosen)'")
        }
        switch scheme {
        case "virtual":
            guard let rest, !rest.isEmpty else {
                throw UsageError("device 'virtual:' needs a card: virtual:suica, virtual:edy, virtual:nanaco, virtual:waon, virtual:wallet or virtual:<image.json>")
            }
            let (card, timing) = try virtualOptions(rest)
            return VirtualTransport(card: try VirtualCard.named(card), name: chosen, timing: timing)
        case "replay":
            guard let rest, !rest.isEmpty else { throw UsageError("device 'replay:' needs a trace file: replay:<trace.jsonl>") }
            return try await ExtraDevices.openReplay(path: rest, name: chosen)
        case "libnfc":
            return try await ExtraDevices.openLibNFC(connstring: rest, name: chosen)
        case "pcsc":
            return try await ExtraDevices.openPCSC(reader: rest, name: chosen, dialect: dialect)
        case "usb":
            return try await USBReaderDevice.open(try usbSelector(rest), name: chosen)
        default:
            throw UsageError("unknown device '\(chosen)': expected one of \(forms)")
        }
    }

    /// After `usb`: nothing (the first reader), `<vid>:<pid>` (4 hex digits each) or
    /// `<bus>:<address>` (3 decimal digits each, as lsusb prints them).
    static func usbSelector(_ rest: String?) throws(UsageError) -> USBReaderSelector {
        guard let rest else { return .first }
        let parts = rest.split(separator: ":", omittingEmptySubsequences: false)
        if parts.count == 2, parts.allSatisfy({ $0.count == 4 }), let v = UInt16(parts[0], radix: 16), let p = UInt16(parts[1], radix: 16) {
            return .id(vendor: v, product: p)
        }
        if parts.count == 2, parts.allSatisfy({ $0.count == 3 && $0.allSatisfy(\.isNumber) }), let b = Int(parts[0]), let a = Int(parts[1]) {
            return .path(bus: b, address: a)
        }
        throw UsageError("'usb:\(rest)' names no USB reader: use usb:<vid>:<pid> with 4 hex digits each (usb:054c:06c1) or usb:<bus>:<address> with 3 decimal digits each, as lsusb prints them (usb:001:004)")
    }

    /// `suica` or `suica?timing=212` / `?timing=424`: answer as slowly as a real card.
    static func virtualOptions(_ s: String) throws(UsageError) -> (String, AirTiming.BitRate?) {
        guard let q = s.lastIndex(of: "?") else { return (s, nil) }
        let option = s[s.index(after: q)...]
        guard option.hasPrefix("timing="), let rate = Int(option.dropFirst(7)), let r = AirTiming.BitRate(rawValue: rate) else {
            throw UsageError("device option '\(option)' is not understood: use virtual:<card>?timing=212 or ?timing=424")
        }
        return (String(s[..<q]), r)
    }

    /// `scheme:rest`, or `scheme?options` (rest keeps the `?`), or a bare scheme.
    static func split(_ s: String) -> (String, String?) {
        guard let end = s.firstIndex(where: { $0 == ":" || $0 == "?" }) else { return (s, nil) }
        if s[end] == "?" { return (String(s[..<end]), String(s[end...])) }
        return (String(s[..<end]), String(s[s.index(after: end)...]))
    }

    /// No device given: the first real reader (libnfc, then PC/SC), with an explanation
    /// when there are several or none.
    static func openDefault(dialect: String? = nil, console: Console?) async throws -> any Transport {
        let readers = await ExtraDevices.listReaders()
        guard let (first, note) = choose(readers) else {
            throw FeliCaError(.noReader, """
                no reader found (looked for libnfc and PC/SC readers).
                  Plug in a reader, then run `felica devices` to check it is seen (`felica doctor` explains set-up problems).
                  To try the tool without hardware: felica balance --device virtual:suica
                """)
        }
        if let note { console?.diag(note) }
        return try await open(first.device, dialect: first.stack == "pcsc" ? dialect : nil, console: console)
    }

    /// The reader a command without `--device` uses: the first one that can be opened
    /// (else the first, so its own error explains why), and a note when there was a choice.
    static func choose(_ readers: [DeviceListing]) -> (DeviceListing, note: String?)? {
        let usable = readers.filter { !$0.state.hasPrefix("cannot open") && !$0.state.hasPrefix("unusable") }
        guard let first = usable.first ?? readers.first else { return nil }
        guard readers.count > 1 else { return (first, nil) }
        let skipped = readers.count - usable.count
        let note = "\(readers.count) readers found, using \(first.device)"
            + (skipped > 0 && !usable.isEmpty ? " (\(skipped) cannot be opened)" : "")
            + " — pass --device to choose"
        return (first, note)
    }

    static func environment(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }
}

/// One row of `felica devices`.
public struct DeviceListing: Sendable {
    public var stack: String
    public var name: String
    public var device: String
    public var state: String
    public init(stack: String, name: String, device: String, state: String) {
        self.stack = stack
        self.name = name
        self.device = device
        self.state = state
    }
}
