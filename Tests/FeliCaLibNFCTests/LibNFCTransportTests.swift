import FeliCa
@testable import FeliCaLibNFC
import FeliCaSimulation
import Foundation
import Testing

/// Everything a session can find on a card, for comparing two transports.
struct CardContents: Equatable {
    var target: Target
    var systems: [SystemCode]
    var blocks: [String: [[UInt8]]] = [:]
}

func readEverything(_ transport: any Transport) async throws -> CardContents {
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

/// A PN532 emulator on a pty with libnfc's transport opened on it.
@discardableResult
func withEmulatedReader<T>(card: VirtualCard?, options: PN532Emulator.Options = .init(),
                           _ body: (LibNFCTransport, PN532Server) async throws -> T) async throws -> T {
    let server = try PN532Server(card: card, options: options)
    server.start()
    defer { server.stop() }
    let transport = try await LibNFCTransport.open("libnfc:" + server.connectionString)
    do {
        let result = try await body(transport, server)
        await transport.close()
        return result
    } catch {
        await transport.close()
        throw error
    }
}

@Suite("libnfc transport against the PN532 emulator", .serialized)
struct LibNFCTransportTests {
    @Test("the whole card reads the same through libnfc as through the virtual transport")
    func sameAsVirtual() async throws {
        let viaVirtual = try await readEverything(VirtualTransport(card: try VirtualCard.named("suica"), name: "virtual:suica"))
        let viaLibNFC = try await withEmulatedReader(card: try VirtualCard.named("suica")) { t, _ in
            try await readEverything(t)
        }
        #expect(viaLibNFC == viaVirtual)
        #expect(!viaLibNFC.blocks.isEmpty)
    }

    @Test("Polling is reported as the Polling packet and response, at 212 and 424 kbps")
    func pollingPacket() async throws {
        let card = try VirtualCard.named("suica")
        for rate in AirTiming.BitRate.allCases {
            let server = try PN532Server(card: card)
            server.start()
            defer { server.stop() }
            let t = try await LibNFCTransport.open("libnfc:" + server.connectionString, bitRate: rate)
            for rc in PollingRequestCode.allCases {
                let command = PollingCommand(systemCode: .wildcard, requestCode: rc).encode()
                let expected = card.respond(to: command)
                let reply = try await t.exchange(command, timeout: .milliseconds(20))
                #expect(reply == expected, "RC \(rc) at \(rate)")
            }
            await t.close()
        }
    }

    @Test("a Polling for a system the card lacks times out, and the next command works")
    func missingSystem() async throws {
        try await withEmulatedReader(card: try VirtualCard.named("suica")) { t, _ in
            let session = CardSession(transport: t)
            let missing = try await session.poll(systemCode: SystemCode(0x1234))
            #expect(missing == nil)
            let present = try await session.poll(systemCode: .transit)
            #expect(present != nil)
        }
    }

    @Test("no card: detect says so")
    func noCard() async throws {
        try await withEmulatedReader(card: nil) { t, _ in
            await #expect(throws: FeliCaError(.noCard, "")) { try await CardSession(transport: t).detect() }
        }
    }

    @Test("the chip timeout is the shortest code above what is needed, and libnfc picks that code",
          arguments: [0.0, 1.0, 1.7, 3.3, 10, 33.8, 51.2, 60, 500, 4000])
    func chipTimeout(_ ms: Double) {
        let t = ChipTimeout(atLeast: .microseconds(Int64(ms * 1000)))
        #expect(ChipTimeout.libnfcCode(milliseconds: t.milliseconds) == t.code)
        if t.code < 16 { #expect(t.duration >= .microseconds(Int64(ms * 1000))) }
        if t.code > 5 { #expect(Duration.microseconds(100 << (t.code - 2)) < .microseconds(Int64(ms * 1000))) }
    }
}
