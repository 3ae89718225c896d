import FeliCa
import FeliCaCards
import FeliCaJSON
import FeliCaDevices
import FeliCaSimulation
import FeliCaTrace

/// Opens the device a command names (through the devices layer) and wraps it for `-v` and `--trace`.
enum CardContext {
    static func session(_ options: ReaderOptions, console: Console) async throws -> CardSession {
        try await open(options, console: console).session
    }

    /// The opening options of a command: its `--dialect`, `--wait`, and its console for notices.
    static func openOptions(_ options: ReaderOptions, console: Console) -> Device.OpenOptions {
        Device.OpenOptions(dialect: options.dialect, wait: options.wait, requiresCard: options.requiresCard,
                           reconnectInterval: options.reconnectInterval) { notice in
            switch notice {
            case .waitingForCard: console.progress(notice.message)
            case .chosen, .replayDamaged: console.diag(notice.message)
            }
        }
    }

    /// The device and a session on it, with `-v` and `--trace` around its transport.
    static func open(_ options: ReaderOptions, console: Console) async throws -> (device: Device, session: CardSession) {
        let redactor = options.redact ? try RedactionKey.redactor() : nil
        let device = try await Device.open(options.device, options: openOptions(options, console: console))
        let session = try device.session { transport in
            let shown = redactor.map { RedactingTransport(wrapping: transport, redactor: $0) } ?? transport
            let watched = TraceHook.watch(shown, console: console)
            return try options.trace.map { try TraceHook.record(watched, to: $0) } ?? watched
        }
        return (device, session)
    }

    /// When the card behind `options` was read, for a card image that says (an imported
    /// Metrodroid dump): the reading's date for what depends on it. Nil for live cards.
    static func scannedAt(_ options: ReaderOptions) -> String? {
        image(options)?.scannedAt
    }

    /// The card image behind `options` (`virtual:<file>`), nil for every other device.
    static func image(_ options: ReaderOptions) -> CardImage? {
        let spec = options.device ?? ((try? Device.fromEnvironment()) ?? nil)
        guard case .virtual(.image(let path), _)? = spec?.kind else { return nil }
        return try? CardImage.load(path: path)
    }

    /// The areas and services of each system of the card image behind `options`: the
    /// transit brand is told from them without asking the card. Nil for a live card, and
    /// when the session is recorded (`--trace`): a recording asks as a live reading does,
    /// so that it replays the same.
    static func knownNodes(_ options: ReaderOptions) -> [SystemCode: [NodeCode]]? {
        guard options.trace == nil, let image = image(options) else { return nil }
        return image.nodesBySystem
    }

    /// Runs `body` with a session and closes the device afterwards, whatever happens.
    static func with<T: Sendable>(_ options: ReaderOptions, console: Console, _ body: (CardSession) async throws -> T) async throws -> T {
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
        .object(["code": .string(Hex.encode([pmm.icCode])), "family": .string(pmm.ic.family.rawValue),
                 "name": pmm.ic.name.map { .string($0) } ?? .null])
    }

    /// What the public lists say about a system code (``SystemDirectory``): name, kind,
    /// region, the lists that name it, and whether `felica` decodes it. A code no list
    /// names has a null name.
    static func system(_ code: SystemCode, withCode: Bool = true) -> JSONValue {
        var o = JSONObject()
        if withCode { o.append("code", .string(code.hex)) }
        let entry = SystemDirectory.lookup(code)
        o.append("name", entry.map { .string($0.name) } ?? .null)
        if let entry {
            o.append("kind", .string(entry.kind.rawValue))
            o.append("region", .string(entry.region))
            o.append("source", .string(entry.sources.joined(separator: ", ")))
        }
        o.append("decoded", .bool(SystemDirectory.isDecoded(code)))
        return .object(o)
    }

    static func print(_ value: JSONValue, _ console: Console) {
        console.line(value.serialized())
    }
}
