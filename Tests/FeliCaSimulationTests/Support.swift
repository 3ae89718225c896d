import FeliCa
import FeliCaEmulators
import FeliCaSimulation
import Synchronization

/// A two-system card built for these tests: transit-like 0003 and a common area FE00.
/// Services are listed in code order, the order a card's Search Service Code walks them.
func twoSystemImage(maxBlocks: Int? = nil, pmm: PMm? = nil) -> CardImage {
    let block = { (b: UInt8) in [UInt8](repeating: b, count: 16) }
    return CardImage(
        pmm: pmm, maxBlocksPerRead: maxBlocks,
        systems: [
            CardImage.System(code: 0x0003, idm: IDm(rawValue: 0x0101_0000_0000_0001),
                             areas: [CardImage.Area(code: 0x0000, end: 0xFFFE)],
                             services: [
                                 .init(code: 0x0009, blocks: [block(0), block(0)]),
                                 .init(code: 0x000D, blocks: [block(1), block(2), block(3)]),
                                 .init(code: 0x008B, blocks: [block(0x8B)]),
                                 .init(code: 0x090F, blocks: (0..<20).map { block(UInt8($0)) }),
                                 .init(code: 0x1808, keyVersion: 0x0100, blockCount: 3),
                             ]),
            CardImage.System(code: 0xFE00, idm: IDm(rawValue: 0x1101_0000_0000_0001),
                             areas: [CardImage.Area(code: 0x0000, end: 0xFFFE), CardImage.Area(code: 0x1100, end: 0x11FF)],
                             services: [
                                 .init(code: 0x110B, blocks: [block(0x11)]),
                                 .init(code: 0x1317, blocks: [block(0x13)]),
                             ]),
        ])
}

/// Drops the replies to chosen exchanges (1-based), as a card leaving the field briefly would.
final class LossyTransport: Transport {
    let inner: any Transport
    let drop: Set<Int>
    private let count = Mutex(0)
    init(_ inner: any Transport, drop: Set<Int>) {
        self.inner = inner
        self.drop = drop
    }
    var name: String { inner.name }
    var linkLatency: Duration { .zero }
    var exchanges: Int { count.withLock { $0 } }
    func exchange(_ packet: [UInt8], timeout: Duration) async throws(FeliCaError) -> [UInt8] {
        let n = count.withLock { $0 += 1; return $0 }
        let reply = try await inner.exchange(packet, timeout: timeout)
        if drop.contains(n) { throw FeliCaError(.timeout, "dropped") }
        return reply
    }
    func close() async {}
}
