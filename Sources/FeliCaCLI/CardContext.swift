import FeliCa
import FeliCaJSON

/// Opens the device a command names and wraps it for `--trace`.
enum CardContext {
    static func session(_ args: ParsedArguments, console: Console) async throws -> CardSession {
        var transport = try await DeviceResolver.open(option: args.value("device"), dialect: args.value("dialect"), console: console)
        if let path = args.value("trace") {
            transport = try TraceHook.record(transport, to: path)
        }
        return CardSession(transport: transport)
    }

    /// Runs `body` with a session and closes the device afterwards, whatever happens.
    static func with<T: Sendable>(_ args: ParsedArguments, console: Console, _ body: (CardSession) async throws -> T) async throws -> T {
        let session = try await session(args, console: console)
        do {
            let result = try await body(session)
            await session.transport.close()
            return result
        } catch {
            await session.transport.close()
            throw error
        }
    }

    /// Parses a system code option value.
    static func systemCode(_ s: String, option: String) throws(UsageError) -> SystemCode {
        guard let c = SystemCode(hex: s) else {
            throw UsageError("option '--\(option)': \"\(s)\" is not a system code (4 hex digits, e.g. 0003 or fe00)")
        }
        return c
    }

    /// Parses a service code option value.
    static func serviceCode(_ s: String, option: String) throws(UsageError) -> ServiceCode {
        guard let c = ServiceCode(hex: s) else {
            throw UsageError("option '--\(option)': \"\(s)\" is not a service code (4 hex digits, e.g. 090f)")
        }
        return c
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
