import FeliCa
import FeliCaLibNFC
import FeliCaSimulation
import Foundation
import Testing

/// A PN532 emulator on a pty holding `card` (with `faults`), and libnfc's own pn532_uart
/// driver opened on it: the real stack, as `--device libnfc:pn532_uart:/dev/pts/N` uses it.
@discardableResult
func withEmulatedReader<T>(card: VirtualCard?, faults: [PN532Fault] = [], taps: PN532Emulator.Taps? = nil,
                           _ body: (LibNFCTransport, PN532Server) async throws -> T) async throws -> T {
    setenv("LIBNFC_AUTO_SCAN", "false", 1)
    let server = try PN532Server(card: card, options: .init(faults: faults, taps: taps))
    server.start()
    defer { server.stop() }
    let transport = try await LibNFCTransport.open(connstring: server.connectionString)
    do {
        let result = try await body(transport, server)
        await transport.close()
        return result
    } catch {
        await transport.close()
        throw error
    }
}

/// A card with one cyclic read-write service readable and writable without a key (090D
/// style, here 100D), whose records show how many writes reached the card: each write to
/// block 0 adds a record and pushes the oldest out.
enum WritableCard {
    static let service: ServiceCode = 0x100D
    static let records: [[UInt8]] = (0..<5).map { [UInt8](repeating: UInt8(0x10 + $0), count: 16) }

    static var image: CardImage {
        CardImage(systems: [
            CardImage.System(code: 0x0003, idm: IDm(rawValue: 0x0101_1203_0000_0001), services: [
                CardImage.Service(code: service, blocks: records)
            ])
        ])
    }

    /// The records the card holds now.
    static func stored(_ card: VirtualCard) -> [[UInt8]] {
        card.image.systems[0].services[0].blocks ?? []
    }
}
