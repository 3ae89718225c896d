import FeliCa
import FeliCaReaderCodecs
import FeliCaPCSC

/// The `pcsc` and `pcsc:<reader>` devices for the command line.
///
/// Options follow the reader name after `?`, as for `virtual:`: `pcsc?dialect=acr122u`,
/// `pcsc:ACS ACR122U?wait=10`. `--dialect` on the command line does the same as
/// `?dialect=`, and `$FELICA_PCSC_DIALECT` sets a default.
enum PCSCDevice {
    /// How long a command waits for a card to be placed, unless `?wait=` says otherwise.
    static let defaultWait: Duration = .seconds(3)

    /// Opens `pcsc[:<reader>][?dialect=<d>&wait=<seconds>]`.
    static func open(reader: String?, name: String, dialect: String? = nil) async throws -> any Transport {
        var (readerName, options) = try parse(reader)
        if let dialect {
            options.dialect = try Self.dialect(dialect, source: "--dialect")
        } else if options.dialect == nil, let env = DeviceResolver.environment("FELICA_PCSC_DIALECT"), !env.isEmpty {
            options.dialect = try Self.dialect(env, source: "$FELICA_PCSC_DIALECT")
        }
        let device = readerName.map { "pcsc:\($0)" } ?? "pcsc"
        return try await PCSCTransport.open(device, options: options, name: name)
    }

    /// Splits the reader name from `?key=value&...` options.
    static func parse(_ rest: String?) throws(UsageError) -> (String?, PCSCTransport.Options) {
        var options = PCSCTransport.Options(cardWait: defaultWait)
        guard let rest, !rest.isEmpty else { return (nil, options) }
        guard let q = rest.firstIndex(of: "?") else { return (rest, options) }
        let reader = rest[..<q].isEmpty ? nil : String(rest[..<q])
        for pair in rest[rest.index(after: q)...].split(separator: "&") {
            let kv = pair.split(separator: "=", maxSplits: 1).map(String.init)
            switch (kv.first, kv.count) {
            case ("dialect", 2):
                options.dialect = try dialect(kv[1], source: "device option 'dialect'")
            case ("wait", 2):
                guard let seconds = Double(kv[1]), seconds >= 0, seconds <= 3600 else {
                    throw UsageError("device option 'wait=\(kv[1])' is not a number of seconds (0 to 3600)")
                }
                options.cardWait = .milliseconds(Int64(seconds * 1000))
            default:
                throw UsageError("device option '\(pair)' is not understood: use pcsc[:<reader>]?dialect=\(PCSCDialect.names) or ?wait=<seconds>")
            }
        }
        return (reader, options)
    }

    static func dialect(_ s: String, source: String) throws(UsageError) -> PCSCDialect {
        guard let d = PCSCDialect(name: s) else {
            throw UsageError("\(source): '\(s)' is not a PC/SC dialect (\(PCSCDialect.names))")
        }
        return d
    }

    /// PC/SC readers for `felica devices`; none when pcscd is not running (`felica doctor` says why).
    static func list() async -> [DeviceListing] {
        guard let readers = try? await PCSCReaderInfo.list() else { return [] }
        return readers.map { r in
            DeviceListing(stack: "pcsc", name: r.name, device: r.device,
                          state: r.state.description + (r.inUse ? " (in use by another program)" : ""))
        }
    }
}
