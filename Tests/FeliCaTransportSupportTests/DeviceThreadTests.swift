import FeliCaTransportSupport
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// An error with a code, compared by code only, as the transports' errors are.
private struct Failure: Error, Equatable {
    var code: Int
}

/// What the calls in ``DeviceThreadTests/serial()`` saw.
private final class Log: Sendable {
    struct State {
        var busy = false
        var overlaps = 0
        var done: [Int] = []
        var threads: Set<pthread_t> = []
    }
    let state = Mutex(State())

    /// Marks a call busy for a millisecond, counting any other call that was busy meanwhile.
    func record(_ i: Int) {
        state.withLock { s in
            if s.busy { s.overlaps += 1 }
            s.busy = true
            s.threads.insert(pthread_self())
        }
        usleep(1000)
        state.withLock { s in
            s.busy = false
            s.done.append(i)
        }
    }
}

@Suite("Device thread")
struct DeviceThreadTests {
    @Test("a call that does not return in time gives nil, and the thread stays serial")
    func watchdog() async throws {
        let thread = DeviceThread(name: "test")
        defer { thread.stop() }
        let clock = ContinuousClock()
        let start = clock.now
        let outcome = await thread.run(limit: .milliseconds(50)) { () throws(Failure) in
            usleep(400_000)
        }
        #expect(outcome == nil)
        // The nil itself shows the alarm beat the body (whichever finishes first
        // resumes the caller); elapsed time is not checked, as a loaded machine stretches it.
        // The next call runs after the stuck one finished, never beside it.
        let value = await thread.run { 42 }
        #expect(value == 42)
        #expect(clock.now - start >= .milliseconds(400))
    }

    @Test("a call that returns in time gives its own result or error")
    func withinLimit() async throws {
        let thread = DeviceThread(name: "test")
        defer { thread.stop() }
        let failed = await thread.run(limit: .seconds(30)) { () throws(Failure) in throw Failure(code: 2) }
        #expect(throws: Failure(code: 2)) { try failed?.get() }
        let value = await thread.run(limit: .seconds(30)) { () throws(Failure) in "done" }
        #expect(try value?.get() == "done")
    }

    @Test("errors thrown on the thread arrive typed")
    func typedError() async {
        let thread = DeviceThread(name: "test")
        defer { thread.stop() }
        await #expect(throws: Failure(code: 3)) {
            try await thread.run { () throws(Failure) in throw Failure(code: 3) }
        }
    }

    @Test("calls from many tasks run one at a time, all on the one thread")
    func serial() async {
        let thread = DeviceThread(name: "test")
        defer { thread.stop() }
        let log = Log()
        await withTaskGroup(of: Void.self) { group in
            for i in 0..<20 {
                group.addTask {
                    await thread.run { log.record(i) }
                }
            }
        }
        let (done, overlaps, threads) = log.state.withLock { ($0.done.sorted(), $0.overlaps, $0.threads.count) }
        #expect(done == Array(0..<20))
        #expect(overlaps == 0)
        #expect(threads == 1)
    }

    @Test("stop runs the queued calls first; a call after stop still completes")
    func stop() async {
        let thread = DeviceThread(name: "test")
        let ran = Mutex(0)
        let pending = Task { await thread.run { usleep(100_000); ran.withLock { $0 += 1 } } }
        usleep(20_000)
        thread.stop()
        await pending.value
        #expect(ran.withLock { $0 } == 1)
        let late = await thread.run { 7 }
        #expect(late == 7)
        thread.stop()
    }
}
