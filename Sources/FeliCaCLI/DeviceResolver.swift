import FeliCa
import FeliCaLibNFC
import FeliCaPCSC
import FeliCaReaderCodecs
import FeliCaSimulation
import FeliCaUSB

#if canImport(Glibc)
import Glibc
#endif

/// Chooses the device a command uses and opens it: `--device`, else `$FELICA_DEVICE`,
/// else the first reader found.
public enum DeviceResolver {
    /// How long a command waits for a card to be placed on a reader, unless `--wait` or
    /// `?wait=` says otherwise: the same for every kind of reader.
    static let defaultCardWait: Duration = .seconds(3)

    /// A `--device` value. One that does not parse is a usage error naming the option; an
    /// empty one is too (while an empty `$FELICA_DEVICE` counts as unset, as shells treat
    /// empty variables).
    public static func parse(option text: String) throws(UsageError) -> DeviceSpec {
        guard !text.isEmpty else {
            throw UsageError("option '--device' is empty: name a device (\(DeviceSpec.forms)), or leave the option out to use $FELICA_DEVICE or the first reader found")
        }
        do throws(DeviceSpec.ParseError) {
            return try DeviceSpec(parsing: text)
        } catch {
            throw UsageError("--device '\(text)': \(error.reason)")
        }
    }

    /// The device `$FELICA_DEVICE` names; nil when it is unset or empty.
    static func fromEnvironment() throws(UsageError) -> DeviceSpec? {
        guard let text = environment("FELICA_DEVICE"), !text.isEmpty else { return nil }
        do throws(DeviceSpec.ParseError) {
            return try DeviceSpec(parsing: text)
        } catch {
            throw UsageError("the environment variable FELICA_DEVICE='\(text)': \(error.reason) (fix FELICA_DEVICE or unset it)")
        }
    }

    /// Opens `given` (`--device`), else the device `$FELICA_DEVICE` names, else the first
    /// reader found; `dialect` (`--dialect`) applies to PC/SC devices only, `wait`
    /// (`--wait`) to readers only. Without `requiresCard`, a PC/SC reader opens with no
    /// card on it (`PCSCTransport.Options.requiresCard`).
    public static func open(_ given: DeviceSpec?, dialect: PCSCDialect?, wait: Duration? = nil, requiresCard: Bool = true,
                            console: Console? = nil) async throws -> any Transport {
        if var spec = try given ?? fromEnvironment() {
            if let wait, spec.isReader { spec.wait = wait }
            return try await open(spec, dialect: dialect, requiresCard: requiresCard, console: console)
        }
        return try await openDefault(dialect: dialect, wait: wait, requiresCard: requiresCard, console: console)
    }

    /// Opens `spec`; `dialect` overrides a PC/SC spec's own and is refused for other kinds.
    /// A reader waits up to `spec.wait` (default 3 s) for a card to be placed, whichever
    /// stack drives it: PC/SC while opening, libnfc and the RC-S380 at their first Polling.
    public static func open(_ spec: DeviceSpec, dialect: PCSCDialect? = nil, requiresCard: Bool = true,
                            console: Console? = nil) async throws -> any Transport {
        let name = spec.description
        let wait = spec.wait ?? defaultCardWait
        if dialect != nil {
            guard case .pcsc = spec.kind else {
                throw UsageError("--dialect applies to PC/SC devices (pcsc, pcsc:<reader>), not '\(name)'")
            }
        }
        /// A reader that does not wait for a card by itself gets `wait` at its first Polling,
        /// unless the caller waits for cards itself (`requiresCard` false: `watch`).
        func waiting(_ reader: any Transport) -> any Transport {
            guard wait > .zero, requiresCard else { return reader }
            return CardWaitTransport(wrapping: reader, wait: wait) { wait in
                console?.progress("waiting up to \(DeviceSpec.seconds(wait)) s for a card on \(name)")
            }
        }
        switch spec.kind {
        case .libnfc(let connstring):
            return waiting(try await LibNFCTransport.open(connstring: connstring, name: name))
        case .pcsc(let reader, let ownDialect):
            var chosen = dialect ?? ownDialect
            if chosen == nil, let env = environment("FELICA_PCSC_DIALECT"), !env.isEmpty {
                do throws(DeviceSpec.ParseError) {
                    chosen = try DeviceSpec.dialect(env, source: "the environment variable FELICA_PCSC_DIALECT")
                } catch {
                    throw UsageError(error.reason)
                }
            }
            let options = PCSCTransport.Options(dialect: chosen, cardWait: wait, requiresCard: requiresCard)
            return try await PCSCTransport.open(reader, options: options, name: name)
        case .usb(let selector, let rate):
            return waiting(try await RCS380Transport.open(selector, name: name, bitRate: rate.rates.start, bitRates: rate.rates.allowed))
        case .virtual(let source, let timing):
            let card: VirtualCard
            switch source {
            case .builtIn(let builtIn): card = try VirtualCard.named(builtIn)
            case .image(let path): card = VirtualCard(image: try CardImage.load(path: path))
            }
            return VirtualTransport(card: card, name: name, timing: timing)
        case .replay(let path, let lenient):
            return try TraceHook.replay(path: path, lenient: lenient, name: name)
        }
    }

    /// No device given: the first real reader (USB, libnfc, then PC/SC), with an explanation
    /// when there are several or none.
    static func openDefault(dialect: PCSCDialect?, wait: Duration?, requiresCard: Bool, console: Console?) async throws -> any Transport {
        let readers = await DeviceListing.readers()
        guard let (first, note) = choose(readers), var spec = first.spec else {
            throw FeliCaError(.noReader, """
                no reader found (looked for USB, libnfc and PC/SC readers).
                  Plug in a reader, then run `felica devices` to check it is seen (`felica doctor` explains set-up problems).
                  To try the tool without hardware: felica balance --device virtual:suica
                """)
        }
        if let note { console?.diag(note) }
        spec.wait = wait
        if case .pcsc = spec.kind { return try await open(spec, dialect: dialect, requiresCard: requiresCard, console: console) }
        return try await open(spec, requiresCard: requiresCard, console: console)
    }

    /// The reader a command without `--device` uses: the first one that can be opened
    /// (else the first, so its own error explains why), and a note when there was a choice.
    static func choose(_ readers: [DeviceListing]) -> (DeviceListing, note: String?)? {
        let openable = readers.filter { $0.spec != nil }
        let usable = openable.filter(\.availability.isUsable)
        guard let first = usable.first ?? openable.first else { return nil }
        guard openable.count > 1 else { return (first, nil) }
        let skipped = openable.count - usable.count
        let note = "\(openable.count) readers found, using \(first.device)"
            + (skipped > 0 && !usable.isEmpty ? " (\(skipped) cannot be opened)" : "")
            + " — pass --device to choose"
        return (first, note)
    }

    static func environment(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }
}
