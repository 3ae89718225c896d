import FeliCa
import FeliCaReaderCodecs
import FeliCaEmulators
import FeliCaSimulation
import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
import FeliCaCards
#endif

/// vpcd's side of the socket, played by the test: what the virtual card must send back for
/// each message, byte for byte.
final class FakeVPCD {
    let listener: Int32
    let port: UInt16
    var client: Int32 = -1

    init() throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.listener = listener
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { p in
                bind(listener, p, length) == 0 && listen(listener, 1) == 0 && getsockname(listener, p, &length) == 0
            }
        }
        guard bound else { throw TestFailure("cannot listen on 127.0.0.1") }
        port = UInt16(bigEndian: address.sin_port)
    }

    deinit {
        if client >= 0 { close(client) }
        close(listener)
    }

    func accept() { client = Glibc.accept(listener, nil, nil) }

    /// Sends one framed message, as vpcd does: length first, then the payload, separately.
    func send(_ payload: [UInt8]) {
        let header = [UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        _ = header.withUnsafeBytes { Glibc.send(client, $0.baseAddress, 2, 0) }
        _ = payload.withUnsafeBytes { Glibc.send(client, $0.baseAddress, payload.count, 0) }
    }

    /// One framed reply, or nil when the card closed the connection.
    func receive() -> [UInt8]? {
        guard let header = read(2) else { return nil }
        return read(Int(header[0]) << 8 | Int(header[1]))
    }

    private func read(_ n: Int) -> [UInt8]? {
        var out = [UInt8](repeating: 0, count: n)
        var got = 0
        while got < n {
            let r = out.withUnsafeMutableBytes { recv(client, $0.baseAddress! + got, n - got, 0) }
            if r <= 0 { return nil }
            got += r
        }
        return out
    }
}

/// Serves `card` on a thread of its own (the test blocks in socket calls, so the card must
/// not need the cooperative pool); the returned closure waits for the end.
func serveInBackground(_ card: VPCDCard) -> @Sendable () throws(FeliCaError) -> VPCDCard.End {
    let result = Mutex<Result<VPCDCard.End, FeliCaError>?>(nil)
    let done = DispatchSemaphore(value: 0)
    DispatchQueue.global().async {
        let r = Result { () throws(FeliCaError) -> VPCDCard.End in try card.serveBlocking() }
        result.withLock { $0 = r }
        done.signal()
    }
    return { () throws(FeliCaError) -> VPCDCard.End in
        done.wait()
        return try result.withLock { $0! }.get()
    }
}

@Suite("vpcd protocol of the virtual card", .serialized, .timeLimit(.minutes(1)))
struct VPCDProtocolTests {
    @Test("ATR on request, silence on power messages, APDUs answered, eject closes")
    func protocolFlow() throws {
        let vpcd = try FakeVPCD()
        let card = try VirtualCard.named("suica")
        var options = VPCDCard.Options()
        options.port = vpcd.port
        options.dialect = .raw
        let virtual = VPCDCard(card: card, options: options)
        let served = serveInBackground(virtual)
        vpcd.accept()
        vpcd.send([0x04])
        #expect(vpcd.receive() == ATR.feliCa())
        // Power on and reset get no reply: the next reply must belong to Get Data.
        vpcd.send([0x01])
        vpcd.send([0x02])
        vpcd.send(PCSCStorageAPDU.getUID.encode())
        #expect(vpcd.receive() == card.systems[0].idm.bytes + [0x90, 0x00])
        vpcd.send(DirectTransmit.command(pollingPacket).encode())
        let reply = try #require(vpcd.receive())
        #expect(try PollingResponse.decode(DirectTransmit.packet(from: ResponseAPDU.decode(reply[...]))[...]).idm == card.systems[0].idm)
        // A silent card still produces a reply: vpcd would take an empty one for a dead card.
        vpcd.send(DirectTransmit.command(bytes("06 00 AB CD 01 00")).encode())
        #expect(vpcd.receive() == [0x63, 0x00])
        virtual.eject()
        #expect(vpcd.receive() == nil)
        #expect(try served() == .removed)
    }

    @Test("a card removed mid-command closes the connection without answering")
    func removal() throws {
        let vpcd = try FakeVPCD()
        let card = try VirtualCard.named("suica")
        var options = VPCDCard.Options()
        options.port = vpcd.port
        options.dialect = .acr122u
        let virtual = VPCDCard(card: card, options: options)
        let served = serveInBackground(virtual)
        vpcd.accept()
        card.removeAfter(exchanges: 1)
        vpcd.send(ACR122.listPassiveTarget(polling: pollingPacket).encode())
        #expect(vpcd.receive() != nil)
        vpcd.send(ACR122.listPassiveTarget(polling: pollingPacket).encode())
        #expect(vpcd.receive() == nil)
        #expect(try served() == .removed)
    }

    @Test("vpcd hanging up ends serving; no vpcd at all is a clear error")
    func hangUpAndRefused() throws {
        var options = VPCDCard.Options()
        do {
            let vpcd = try FakeVPCD()
            options.port = vpcd.port
            let card = VPCDCard(card: try VirtualCard.named("suica"), options: options)
            let served = serveInBackground(card)
            vpcd.accept()
            close(vpcd.client)
            vpcd.client = -1
            #expect(try served() == .readerClosed)
        }
        // The listener is gone now: connecting is refused until the wait runs out.
        options.connectWait = .milliseconds(100)
        let refused = VPCDCard(card: try VirtualCard.named("suica"), options: options)
        #expect(throws: FeliCaError(.noService, "")) { try refused.serveBlocking() }
    }
}
