import FeliCa
import FeliCaReaderCodecs
import FeliCaLibNFC
import FeliCaEmulators
import FeliCaSimulation
import Foundation
import Testing
import FeliCaCards

/// The host side going away: a `felica` killed (Ctrl-C, SIGKILL) in the middle of an
/// exchange leaves the PN532 working on a command whose reply nobody reads.
@Suite("a host that dies mid-command", .serialized)
struct FaultHostTests {
    /// Regression (found by 65-faults.sh: a dump killed mid-read, then `felica history`):
    /// the chip's reply to the dead host's last command came out in the middle of the next
    /// host's handshake, and the open failed with "did not answer as a PN532".
    @Test("the next host opens the reader while the chip still answers the dead one")
    func nextHostOpens() async throws {
        setenv("LIBNFC_AUTO_SCAN", "false", 1)
        // The dead host's InListPassiveTarget is answered 300 ms late.
        let server = try PN532Server(card: try VirtualCard.named("suica"),
                                     options: .init(faults: [PN532Fault(.lateReply(.milliseconds(300)), atExchange: 1)]))
        server.start()
        defer { server.stop() }
        let fd = open(server.path, O_RDWR | O_NOCTTY)
        try #require(fd >= 0)
        let frame = [0x55, 0x55, 0x00, 0x00, 0x00] + PN532Frame.command([0x4A, 0x01, 0x01, 0x00, 0xFF, 0xFF, 0x01, 0x00]).encode()
        #expect(write(fd, frame, frame.count) == frame.count)
        usleep(20_000)
        close(fd)  // the host dies; the chip is busy for another ~280 ms
        let transport = try await LibNFCTransport.open(connstring: server.connectionString)
        let session = CardSession(transport: transport)
        let target = try await session.detect()
        #expect(target.systemCode == .transit)
        await transport.close()
    }
}
