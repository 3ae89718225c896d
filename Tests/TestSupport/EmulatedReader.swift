import FeliCa
import FeliCaLibNFC
import FeliCaEmulators
import FeliCaSimulation
import Foundation

/// A PN532 emulator on a pseudo-terminal holding `card`, and a transport `open` makes on
/// it (libnfc's driver, the native one); both are closed when `body` returns.
@discardableResult
public func withEmulatedPN532<Link: Transport, T>(card: VirtualCard?, options: PN532Emulator.Options = .init(),
                                                  open: (PN532Server) async throws -> Link,
                                                  _ body: (Link, PN532Server) async throws -> T) async throws -> T {
    setenv("LIBNFC_AUTO_SCAN", "false", 1)
    let server = try PN532Server(card: card, options: options)
    server.start()
    defer { server.stop() }
    let transport = try await open(server)
    do {
        let result = try await body(transport, server)
        await transport.close()
        return result
    } catch {
        await transport.close()
        throw error
    }
}

/// A PN532 emulator on a pseudo-terminal holding `card`, and libnfc's own pn532_uart driver
/// opened on it through the transport: the real stack, as
/// `--device libnfc:pn532_uart:/dev/pts/N` uses it. Both are closed when `body` returns.
@discardableResult
public func withEmulatedReader<T>(card: VirtualCard?, options: PN532Emulator.Options = .init(),
                                  _ body: (LibNFCTransport, PN532Server) async throws -> T) async throws -> T {
    try await withEmulatedPN532(card: card, options: options, open: { try await LibNFCTransport.open(connstring: $0.connectionString) }, body)
}

/// A PN532 emulator on a pseudo-terminal holding `card`, without opening it: `body` gets the
/// device string to hand to `felica` (`libnfc:pn532_uart:/dev/pts/N`).
public func withEmulatedDevice<T>(card: VirtualCard?, options: PN532Emulator.Options = .init(),
                                  _ body: (String) throws -> T) throws -> T {
    setenv("LIBNFC_AUTO_SCAN", "false", 1)
    let server = try PN532Server(card: card, options: options)
    server.start()
    defer { server.stop() }
    return try body("libnfc:" + server.connectionString)
}
