import FeliCaTransportSupport
import Foundation
import Synchronization
import Testing

/// A connection that counts its releases and notes the thread they ran on.
final class CountingConnection: Sendable {
    let releases = Mutex(0)
    let threads = Mutex<[pthread_t]>([])
    func release() {
        releases.withLock { $0 += 1 }
        threads.withLock { $0.append(pthread_self()) }
    }
}

@Suite struct OwnedDeviceTests {
    @Test func closeReleasesOnceOnTheDeviceThread() async {
        let c = CountingConnection()
        let thread = DeviceThread(name: "owned-test")
        let own = await thread.run { pthread_self() }
        let device = OwnedDevice(thread: thread, connection: c) { $0.release() }
        #expect(!device.isClosed)
        await device.close()
        await device.close()
        #expect(device.isClosed)
        #expect(c.releases.withLock { $0 } == 1)
        #expect(c.threads.withLock { $0 } == [own])
    }

    @Test func anAbandonedDeviceIsNotReleased() async {
        let c = CountingConnection()
        let device = OwnedDevice(thread: DeviceThread(name: "owned-test"), connection: c) { $0.release() }
        await device.close(abandoning: true)
        await device.close()
        #expect(device.isClosed)
        #expect(c.releases.withLock { $0 } == 0)
    }

    @Test func aDeviceDroppedWithoutClosingIsReleasedByTheBackstop() async throws {
        let c = CountingConnection()
        do {
            _ = OwnedDevice(thread: DeviceThread(name: "owned-test"), connection: c) { $0.release() }
        }
        for _ in 0..<200 where c.releases.withLock({ $0 }) == 0 {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(c.releases.withLock { $0 } == 1)
    }
}
