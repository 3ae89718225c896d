import FeliCaTransportSupport
import Foundation
import Synchronization
import Testing

/// A connection that counts its releases and cancellations and notes the thread its
/// releases ran on.
final class CountingConnection: Sendable {
    let releases = Mutex(0)
    let cancels = Mutex(0)
    let threads = Mutex<[pthread_t]>([])
    func release() {
        releases.withLock { $0 += 1 }
        threads.withLock { $0.append(pthread_self()) }
    }
}

/// What the test devices throw.
private struct DeviceFailure: Error, Equatable {
    var kind: String
}

private let refusals = OwnedDevice<CountingConnection, DeviceFailure>.Refusals(
    closed: DeviceFailure(kind: "closed"), cancelled: DeviceFailure(kind: "cancelled"))

private func owned(_ c: CountingConnection, closeLimit: Duration? = nil) -> OwnedDevice<CountingConnection, DeviceFailure> {
    OwnedDevice(thread: DeviceThread(name: "owned-test"), connection: c, refusals: refusals, closeLimit: closeLimit) { $0.release() }
}

@Suite struct OwnedDeviceTests {
    @Test func closeReleasesOnceOnTheDeviceThread() async {
        let c = CountingConnection()
        let thread = DeviceThread(name: "owned-test")
        let own = await thread.run { pthread_self() }
        let device = OwnedDevice(thread: thread, connection: c, refusals: refusals) { $0.release() }
        #expect(!device.isClosed)
        await device.close()
        await device.close()
        #expect(device.isClosed)
        #expect(c.releases.withLock { $0 } == 1)
        #expect(c.threads.withLock { $0 } == [own])
    }

    @Test func callsRunOnTheDeviceThreadAndAreRefusedOnceClosed() async throws {
        let c = CountingConnection()
        let device = owned(c)
        let thread = try await device.run { (_) throws(DeviceFailure) in pthread_self() }
        #expect(thread != pthread_self())
        await #expect(throws: DeviceFailure(kind: "inner")) {
            try await device.run { (_) throws(DeviceFailure) in throw DeviceFailure(kind: "inner") }
        }
        await device.close()
        await #expect(throws: DeviceFailure(kind: "closed")) {
            try await device.run { (_) throws(DeviceFailure) in 1 }
        }
    }

    @Test("a call that overruns its limit latches the device broken: later calls and close do not reach it")
    func stuckCallLatches() async throws {
        let c = CountingConnection()
        let device = owned(c)
        let stuck = DeviceFailure(kind: "stuck")
        await #expect(throws: stuck) {
            try await device.run(limit: .milliseconds(50), stuck: stuck) { (_) throws(DeviceFailure) in usleep(500_000) }
        }
        #expect(device.broken == stuck)
        // Refused at once, not queued behind the stuck call.
        let clock = ContinuousClock()
        let start = clock.now
        await #expect(throws: stuck) {
            try await device.run { (_) throws(DeviceFailure) in 1 }
        }
        #expect(clock.now - start < .milliseconds(400))
        await device.close()
        #expect(device.isClosed)
        #expect(c.releases.withLock { $0 } == 0)
    }

    @Test("a call within its limit neither latches nor changes its result")
    func callWithinLimit() async throws {
        let device = owned(CountingConnection())
        let value = try await device.run(limit: .seconds(30), stuck: DeviceFailure(kind: "stuck")) { (_) throws(DeviceFailure) in 7 }
        #expect(value == 7)
        #expect(device.broken == nil)
        await device.close()
    }

    @Test("cancelling the task calls onCancel while the call runs, and refuses a call not yet started")
    func cancellation() async throws {
        let c = CountingConnection()
        let device = owned(c)
        let task = Task {
            try await device.run(onCancel: { $0.cancels.withLock { $0 += 1 } }) { (c) throws(DeviceFailure) -> Int in
                // Stands for a blocking C call that an abort ends.
                for _ in 0..<500 where c.cancels.withLock({ $0 }) == 0 { usleep(2_000) }
                return c.cancels.withLock { $0 }
            }
        }
        try await Task.sleep(for: .milliseconds(50))
        task.cancel()
        #expect(try await task.value == 1)
        let late = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await device.run { (_) throws(DeviceFailure) in 1 }
        }
        await #expect(throws: DeviceFailure(kind: "cancelled")) { try await late.value }
        await device.close()
    }

    @Test func aDeviceDroppedWithoutClosingIsReleasedByTheBackstop() async throws {
        let c = CountingConnection()
        do {
            _ = owned(c)
        }
        for _ in 0..<200 where c.releases.withLock({ $0 }) == 0 {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(c.releases.withLock { $0 } == 1)
    }
}
