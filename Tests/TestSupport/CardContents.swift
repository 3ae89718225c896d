import FeliCa

/// Everything a session can find on a card, for comparing two transports.
public struct CardContents: Equatable, Sendable {
    public var target: Target
    public var systems: [SystemCode]
    public var blocks: [String: [[UInt8]]] = [:]
}

/// Reads every system, service and block a session can reach without keys.
public func readEverything(_ transport: any Transport) async throws -> CardContents {
    let session = CardSession(transport: transport)
    let first = try await session.detect()
    var contents = CardContents(target: first, systems: try await session.systemCodes(of: first))
    for code in contents.systems {
        guard let target = try await session.select(code) else { continue }
        let nodes = try await session.nodes(of: target)
        let services = nodes.map(\.code).filter { $0.isReadableWithoutKey && !$0.attribute.isArea }
        let counts = try await session.blockCounts(of: services, in: target)
        for (service, count) in zip(services, counts) where count > 0 {
            contents.blocks["\(code)/\(service)"] = try await session.read(service: service, blocks: 0..<count, from: target)
        }
    }
    return contents
}

