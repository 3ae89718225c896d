import FeliCa
import FeliCaLibNFC
import FeliCaPN532
import FeliCaPCSC
import FeliCaReaderCodecs
import FeliCaSimulation
import FeliCaTrace
import FeliCaUSB

#if canImport(Glibc)
import Glibc
import FeliCaCards
#endif

/// An opened device — a reader, a virtual card or a replay — and what a card session on it
/// needs: the one way into the readers, for the `felica` tool and for any Swift program.
///
/// ```swift
/// let device = try await Device.open("usb")          // or nil: $FELICA_DEVICE, else the first reader
/// let session = device.session()
/// let target = try await session.detect()
/// await device.close()
/// ```
public struct Device: Sendable {
    /// The device as named: the spec given, or the reader chosen when none was.
    public let spec: DeviceSpec
    /// The transport to the card: the reader's own, inside a card wait when the reader
    /// does not wait for cards by itself.
    public let transport: any Transport
    /// The card behind a `virtual:` device.
    public let virtualCard: VirtualCard?
    /// The card image a `virtual:<file>` device was opened from, loaded once when it was
    /// opened; nil for a built-in card and for every other kind of device.
    public let image: CardImage?
    /// The replay behind a `replay:` device.
    public let replay: TraceReplay?
    /// How a session on this device reads: `usb?rate=fastest` moves up before every
    /// reading; a replay decides as the device it was recorded from did.
    public let sessionOptions: CardSession.Options

    /// How long opening a reader waits for a card unless `wait` (or `?wait=`) says
    /// otherwise: the same for every kind of reader.
    public static let defaultCardWait: Duration = .seconds(3)

    /// What opening may be told besides the spec.
    public struct OpenOptions: Sendable {
        /// A PC/SC dialect overriding the spec's own (`--dialect`); refused for other kinds.
        public var dialect: PCSCDialect?
        /// How long to wait for a card, overriding `?wait=`; readers only.
        public var wait: Duration?
        /// Whether opening fails when no card arrives within the wait. Without it (a watch
        /// loop), a PC/SC reader opens empty and no card wait wraps the reader.
        public var requiresCard: Bool
        /// Told what opening is doing or chose, for a progress line or a note.
        public var notify: (@Sendable (DeviceNotice) -> Void)?
        /// When set, a reader is opened inside a ``ReconnectingTransport``: the ``Taps``
        /// loop on it opens it again, this often, when it is lost, rather than ending. Nil
        /// (the default): a lost reader's error ends the loop. No effect on virtual cards
        /// and replays.
        public var reconnectInterval: Duration?

        public init(dialect: PCSCDialect? = nil, wait: Duration? = nil, requiresCard: Bool = true,
                    reconnectInterval: Duration? = nil, notify: (@Sendable (DeviceNotice) -> Void)? = nil) {
            self.dialect = dialect
            self.wait = wait
            self.requiresCard = requiresCard
            self.reconnectInterval = reconnectInterval
            self.notify = notify
        }
    }

    /// The device opened from `spec`, with what opening it learnt: the virtual card and the
    /// image it was made from, or the replay.
    init(spec: DeviceSpec, transport: any Transport, virtualCard: VirtualCard? = nil, image: CardImage? = nil,
         replay: TraceReplay? = nil) {
        self.spec = spec
        self.transport = transport
        self.virtualCard = virtualCard
        self.image = image
        self.replay = replay
        var options = CardSession.Options()
        var decidingSpec = spec
        if let recorded = replay?.trace.device, let recordedSpec = try? DeviceSpec(parsing: recorded) {
            decidingSpec = recordedSpec
        }
        switch decidingSpec.kind {
        case .usb(_, .fastest), .pn532(_, .fastest, _): options.fasterBitRate = .always
        default: break
        }
        sessionOptions = options
    }

    /// A card session on the device.
    public func session() -> CardSession {
        CardSession(transport: transport, options: sessionOptions)
    }

    /// A card session through `wrap`, which puts a recorder or a live trace around the transport.
    public func session(wrapping wrap: (any Transport) throws -> any Transport) rethrows -> CardSession {
        CardSession(transport: try wrap(transport), options: sessionOptions)
    }

    /// Releases the device.
    public func close() async { await transport.close() }

    // MARK: - Opening

    /// Opens the device a string names (`usb`, `pcsc:SONY`, `virtual:suica`, ...).
    public static func open(_ text: String, options: OpenOptions = OpenOptions()) async throws -> Device {
        let spec: DeviceSpec
        do throws(DeviceSpec.ParseError) {
            spec = try DeviceSpec(parsing: text)
        } catch {
            throw DeviceError(.badDeviceString, "device '\(text)': \(error.reason)")
        }
        return try await open(spec, options: options)
    }

    /// Opens `spec`, else the device `$FELICA_DEVICE` names, else the first reader found.
    public static func open(_ spec: DeviceSpec?, options: OpenOptions = OpenOptions()) async throws -> Device {
        if let spec = try spec ?? fromEnvironment() {
            // `options.wait` (--wait) overrides `?wait=` in openOnce, without entering the
            // device string that names the reader in messages.
            return try await open(spec, options: options)
        }
        return try await openDefault(options)
    }

    /// The device `$FELICA_DEVICE` names; nil when it is unset or empty.
    public static func fromEnvironment() throws(DeviceError) -> DeviceSpec? {
        guard let text = environment("FELICA_DEVICE"), !text.isEmpty else { return nil }
        let bytes = getenv("FELICA_DEVICE").map { Array(UnsafeBufferPointer(start: UnsafeRawPointer($0).assumingMemoryBound(to: UInt8.self), count: strlen($0))) } ?? []
        guard text.utf8.elementsEqual(bytes) else {
            // Decoded with replacement, a path in it would reach the system changed: refused,
            // as an argument that is not UTF-8 is.
            let shown = bytes.map { $0 >= 0x20 && $0 < 0x7F ? String(UnicodeScalar($0)) : "\\x" + Hex.digits($0, count: 2, uppercase: true) }.joined()
            throw DeviceError(.badEnvironment, "the environment variable FELICA_DEVICE ('\(shown)') is not valid UTF-8, and would reach the system changed (fix FELICA_DEVICE or unset it)")
        }
        do throws(DeviceSpec.ParseError) {
            return try DeviceSpec(parsing: text)
        } catch {
            throw DeviceError(.badEnvironment, "the environment variable FELICA_DEVICE='\(text)': \(error.reason) (fix FELICA_DEVICE or unset it)")
        }
    }

    /// Opens `spec`; `options.dialect` overrides a PC/SC spec's own and is refused for
    /// other kinds. A reader waits up to `spec.wait` (default 3 s) for a card to be placed,
    /// whichever stack drives it: PC/SC while opening, libnfc and the RC-S380 at their
    /// first Polling.
    public static func open(_ spec: DeviceSpec, options: OpenOptions) async throws -> Device {
        try await open(spec, options: options, chosen: false)
    }

    /// ``open(_:options:)``; `chosen`: no device was named and `spec` is the listing's
    /// string for the reader found first, so its bus place is not the user's choice.
    static func open(_ spec: DeviceSpec, options: OpenOptions, chosen: Bool) async throws -> Device {
        let device = try await openOnce(spec, options: options)
        guard let interval = options.reconnectInterval, spec.isReader else { return device }
        var reopening = options
        reopening.reconnectInterval = nil
        reopening.notify = nil
        let again = reopening
        let respecs = reopeningSpecs(spec, opened: device.transport, chosen: chosen)
        let reader = ReconnectingTransport(device.transport, name: spec.description, interval: interval) {
            var failure: (any Error)?
            for respec in respecs {
                do {
                    return try await openOnce(respec, options: again, name: spec.description).transport
                } catch {
                    failure = failure ?? error
                }
            }
            throw failure ?? FeliCaError(.noReader, "\(spec.description) is not back")
        }
        return Device(spec: spec, transport: reader)
    }

    /// What opens the reader `opened` (opened by `spec`) again: the same spec; for bare
    /// `usb`, the same model by vendor and product ID first, then the first reader again.
    /// A USB reader found with no device named (`chosen`, its spec a bus place such as
    /// `usb:001:004` or `libnfc:pn53x_usb:001:004`) is also looked for anywhere on the bus:
    /// plugged in again, a reader gets the next address.
    static func reopeningSpecs(_ spec: DeviceSpec, opened: any Transport, chosen: Bool = false) -> [DeviceSpec] {
        var reader = opened
        while let wrapper = reader as? any TransportWrapper { reader = wrapper.inner }
        var anywhere = spec
        switch spec.kind {
        case .usb(let selector, let rate):
            guard let usb = reader as? RCS380Transport else { return [spec] }
            var byModel = spec
            byModel.kind = .usb(.id(vendor: usb.model.vendor, product: usb.model.product), rate: rate)
            if selector == .first { return [byModel, spec] }
            guard chosen, case .path = selector else { return [spec] }
            anywhere.kind = .usb(.first, rate: rate)
            return [spec, byModel, anywhere]
        case .libnfc(let connstring?) where chosen:
            // `pn53x_usb:001:004`: the driver alone opens its first reader, wherever it is.
            let parts = connstring.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count == 3, parts[0].hasSuffix("_usb") else { return [spec] }
            anywhere.kind = .libnfc(connstring: String(parts[0]))
            return [spec, anywhere]
        default:
            return [spec]
        }
    }

    /// Opens `spec` once, naming it `name` (its own string unless given).
    static func openOnce(_ spec: DeviceSpec, options: OpenOptions, name given: String? = nil) async throws -> Device {
        let name = given ?? spec.description
        let wait = (spec.isReader ? options.wait : nil) ?? spec.wait ?? defaultCardWait
        if options.dialect != nil {
            guard case .pcsc = spec.kind else {
                throw DeviceError(.inapplicableOption, "a PC/SC dialect applies to PC/SC devices (pcsc, pcsc:<reader>), not '\(name)'")
            }
        }
        let notify = options.notify
        /// A reader that does not wait for a card by itself gets `wait` at its first Polling,
        /// unless the caller waits for cards itself (`requiresCard` false: a watch loop).
        func waiting(_ reader: any Transport) -> any Transport {
            guard wait > .zero, options.requiresCard else { return reader }
            return CardWaitTransport(wrapping: reader, wait: wait) { wait in
                notify?(.waitingForCard(device: name, wait: wait))
            }
        }
        let transport: any Transport
        switch spec.kind {
        case .libnfc(let connstring):
            transport = waiting(try await LibNFCTransport.open(connstring: connstring, name: name))
        case .pn532(let path, let rate, let baud):
            transport = waiting(try await PN532SerialTransport.open(path: path, bitRate: rate.rates.start, bitRates: rate.rates.allowed,
                                                                    baud: baud, name: name))
        case .pcsc(let reader, let ownDialect):
            var chosen = options.dialect ?? ownDialect
            if chosen == nil, let env = environment("FELICA_PCSC_DIALECT"), !env.isEmpty {
                do throws(DeviceSpec.ParseError) {
                    chosen = try DeviceSpec.dialect(env, source: "the environment variable FELICA_PCSC_DIALECT")
                } catch {
                    throw DeviceError(.badEnvironment, error.reason)
                }
            }
            let pcscOptions = PCSCTransport.Options(dialect: chosen, cardWait: wait, requiresCard: options.requiresCard)
            transport = try await PCSCTransport.open(reader, options: pcscOptions, name: name)
        case .usb(let selector, let rate):
            transport = waiting(try await RCS380Transport.open(selector, name: name, bitRate: rate.rates.start, bitRates: rate.rates.allowed))
        case .virtual(let source, let timing):
            let card: VirtualCard
            var image: CardImage?
            switch source {
            case .builtIn(let builtIn): card = try VirtualCard.named(builtIn)
            case .image(let path):
                let loaded = try CardImage.load(path: path)
                image = loaded
                card = VirtualCard(image: loaded)
            }
            return Device(spec: spec, transport: VirtualTransport(card: card, name: name, timing: timing), virtualCard: card, image: image)
        case .replay(let path, let lenient):
            let replay = try TraceReplay.load(path, lenient: lenient, name: name)
            if let damage = replay.trace.damage {
                notify?(.replayDamaged(reason: damage.reason, exchangesKept: replay.trace.exchanges.count))
            }
            return Device(spec: spec, transport: replay, replay: replay)
        }
        return Device(spec: spec, transport: transport)
    }

    /// No device given: the first real reader (USB, libnfc, then PC/SC), with a note when
    /// there was a choice.
    static func openDefault(_ options: OpenOptions) async throws -> Device {
        let readers = await DeviceListing.readers()
        guard let (first, note) = choose(readers), let spec = first.spec else {
            let reason = "no reader found (looked for USB, libnfc and PC/SC readers): plug in a reader"
            throw FeliCaError(.noReader, reason, underlying: DeviceError(.noReaderFound, reason))
        }
        if let note { options.notify?(.chosen(note)) }
        var own = options
        if case .pcsc = spec.kind {} else { own.dialect = nil }
        return try await open(spec, options: own, chosen: true)
    }

    /// The reader a caller without a device string uses: the first one that can be opened
    /// (else the first, so its own error explains why), and a note when there was a choice.
    public static func choose(_ readers: [DeviceListing]) -> (DeviceListing, note: String?)? {
        let openable = readers.filter { $0.spec != nil }
        let usable = openable.filter(\.availability.isUsable)
        guard let first = usable.first ?? openable.first else { return nil }
        guard openable.count > 1 else { return (first, nil) }
        let skipped = openable.count - usable.count
        let note = "\(openable.count) readers found, using \(first.device)"
            + (skipped > 0 && !usable.isEmpty ? " (\(skipped) cannot be opened)" : "")
            
        return (first, note)
    }

    /// Every real reader the stacks find, each with the exact device string that opens it.
    public static func list() async -> [DeviceListing] {
        await DeviceListing.readers()
    }

    static func environment(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }
}

/// What opening a device tells its caller as it goes.
public enum DeviceNotice: Sendable, Hashable {
    /// The first Polling went unanswered: waiting up to `wait` for a card on `device`.
    case waitingForCard(device: String, wait: Duration)
    /// No device was named and several readers were found: which one is used, and why.
    case chosen(String)
    /// A lenient replay of a damaged trace: what is damaged, and how many exchanges come before it.
    case replayDamaged(reason: String, exchangesKept: Int)

    /// The notice in words, for a progress line or stderr.
    public var message: String {
        switch self {
        case .waitingForCard(let device, let wait):
            "waiting up to \(DeviceSpec.seconds(wait)) s for a card on \(device)"
        case .chosen(let note):
            note
        case .replayDamaged(let reason, let n):
            "warning: \(reason)\n  replaying the \(n) exchange\(n == 1 ? "" : "s") before the damage"
        }
    }
}
