import FeliCa
import FeliCaReaderCodecs
@testable import FeliCaPCSC
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite("Device queue")
struct DeviceQueueTests {
    @Test("a call that does not return in time gives the expiry error, and the queue stays serial")
    func watchdog() async throws {
        let queue = DeviceQueue(label: "test")
        let clock = ContinuousClock()
        let start = clock.now
        await #expect(throws: FeliCaError(.readerGone, "")) {
            try await queue.run(limit: .milliseconds(50), onExpiry: FeliCaError(.readerGone, "stuck")) { () throws(FeliCaError) in
                usleep(400_000)
            }
        }
        // The expiry error itself shows the alarm beat the body (whichever finishes first
        // resumes the caller); elapsed time is not checked, as a loaded machine stretches it.
        // The next call runs after the stuck one finished, never beside it.
        let value = try await queue.run { () throws(FeliCaError) -> Int in 42 }
        #expect(value == 42)
        #expect(clock.now - start >= .milliseconds(400))
    }

    @Test("errors thrown on the queue arrive typed")
    func typedError() async {
        let queue = DeviceQueue(label: "test")
        await #expect(throws: FeliCaError(.noCard, "")) {
            try await queue.run { () throws(FeliCaError) in throw FeliCaError(.noCard, "none") }
        }
    }
}
