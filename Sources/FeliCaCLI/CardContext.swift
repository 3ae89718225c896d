import FeliCa
import FeliCaJSON
import FeliCaSimulation
import FeliCaTrace

/// Opens the device a command names and wraps it for `--trace`.
enum CardContext {
    static func session(_ options: CardOptions, console: Console) async throws -> CardSession {
        try await open(options, console: console).session
    }

    /// The session, and the virtual card behind it when the device is one (`watch` takes
    /// it away and taps it again, since a virtual card never leaves by itself).
    static func open(_ options: CardOptions, console: Console) async throws -> (session: CardSession, virtualCard: VirtualCard?) {
        let device = try await DeviceResolver.open(options.device, dialect: options.dialect, wait: options.wait,
                                                      requiresCard: options.requiresCard, console: console)
        var transport = TraceHook.watch(device, console: console)
        if let path = options.trace {
            transport = try TraceHook.record(transport, to: path)
        }
        var sessionOptions = CardSession.Options()
        var spec = try options.device ?? DeviceResolver.fromEnvironment()
        // A replay decides as the device it was recorded from did.
        if let replay = device as? TraceReplay, let recorded = replay.trace.device {
            spec = try? DeviceSpec(parsing: recorded)
        }
        if case .usb(_, .fastest)? = spec?.kind {
            sessionOptions.fasterBitRate = .always
        }
        return (CardSession(transport: transport, options: sessionOptions), (device as? VirtualTransport)?.card)
    }

    /// When the card behind `options` was read, for a card image that says (an imported
    /// Metrodroid dump): the reading's date for what depends on it. Nil for live cards.
    static func scannedAt(_ options: CardOptions) -> String? {
        let spec = options.device ?? ((try? DeviceResolver.fromEnvironment()) ?? nil)
        guard case .virtual(.image(let path), _)? = spec?.kind else { return nil }
        return (try? CardImage.load(path: path))?.scannedAt
    }

    /// Runs `body` with a session and closes the device afterwards, whatever happens.
    static func with<T: Sendable>(_ options: CardOptions, console: Console, _ body: (CardSession) async throws -> T) async throws -> T {
        let session = try await session(options, console: console)
        do {
            let result = try await body(session)
            await session.transport.close()
            return result
        } catch {
            await session.transport.close()
            throw error
        }
    }
}

/// JSON renderings shared by commands.
enum JSONOut {
    static func ic(_ pmm: PMm) -> JSONValue {
        .object(["code": .string(Hex.encode([pmm.icCode])), "family": .string(pmm.ic.family.rawValue)])
    }

    static func print(_ value: JSONValue, _ console: Console) {
        console.line(value.serialized())
    }
}
