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
            case .chosen: console.diag(notice.message + ErrorHints.chooseDevice)
            case .replayDamaged: console.diag(notice.message)
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

    /// When the card behind `device` was read, for a card image that says (an imported
    /// Metrodroid dump): the reading's date for what depends on it. Nil for live cards.
    static func scannedAt(_ device: Device) -> String? {
        device.image?.scannedAt
    }

    /// The areas and services of each system of the card image `device` was opened from:
    /// the transit brand is told from them without asking the card. Nil for a live card,
    /// and when the session is recorded (`--trace`): a recording asks as a live reading
    /// does, so that it replays the same.
    static func knownNodes(_ device: Device, _ options: ReaderOptions) -> [SystemCode: [NodeCode]]? {
        guard options.trace == nil, let image = device.image else { return nil }
        return image.nodesBySystem
    }

    /// Runs `body` with a session and closes the device afterwards, whatever happens.
    static func with<T: Sendable>(_ options: ReaderOptions, console: Console, _ body: (CardSession) async throws -> T) async throws -> T {
        try await with(options, console: console) { _, session in try await body(session) }
    }

    /// Runs `body` with the opened device and a session on it, and closes the device
    /// afterwards, whatever happens.
    static func with<T: Sendable>(_ options: ReaderOptions, console: Console, _ body: (Device, CardSession) async throws -> T) async throws -> T {
        let (device, session) = try await open(options, console: console)
        do {
            let result = try await body(device, session)
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
