import FeliCaTransportSupport
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The one thread primitive: a pthread of its own, and a lock with a condition whose timed
/// waits end at a `ContinuousClock` deadline.
@Suite("Owned thread and condition")
struct OwnedThreadTests {
    @Test("the body runs on another thread, and join returns only after it has returned")
    func joinWaits() throws {
        let state = Mutex<(done: Bool, other: Bool)>((false, false))
        let caller = pthread_self()
        let thread = try #require(OwnedThread(name: "test join") {
            usleep(50_000)
            state.withLock { $0 = (true, pthread_equal(pthread_self(), caller) == 0) }
        })
        #expect(!thread.isCurrent)
        thread.join()
        let seen = state.withLock { $0 }
        #expect(seen.done)
        #expect(seen.other)
        thread.join()  // a second join does nothing
    }

    @Test("the thread carries its name, cut to the 15 bytes Linux keeps")
    func named() throws {
        let name = Mutex("")
        let thread = try #require(OwnedThread(name: "felica.name.longer.than.fifteen") {
            name.withLock { $0 = (try? String(contentsOfProcFile: "/proc/thread-self/comm")) ?? "" }
        })
        thread.join()
        let seen = name.withLock { $0 }
        #expect(seen == "felica.name.lon")
    }

    @Test("a timed wait with nothing signalled returns false at its deadline, not before")
    func deadlinePasses() {
        let condition = ThreadCondition()
        let start = ContinuousClock.now
        let signalled = condition.withLock { condition.wait(until: start + .milliseconds(80)) }
        #expect(!signalled)
        #expect(ContinuousClock.now - start >= .milliseconds(80))
        // A deadline already past returns at once.
        #expect(condition.withLock { condition.wait(until: start) } == false)
    }

    @Test("a deadline far beyond any clock waits until signalled instead of trapping")
    func farDeadline() throws {
        let condition = ThreadCondition()
        let flag = Mutex(false)
        let waiter = try #require(OwnedThread(name: "test far") {
            condition.withLock {
                while !flag.withLock({ $0 }) {
                    condition.wait(until: ContinuousClock.now + .seconds(Int64.max / 2))
                }
            }
        })
        usleep(20_000)
        condition.withLock {
            flag.withLock { $0 = true }
            condition.signal()
        }
        waiter.join()
        #expect(flag.withLock { $0 })
    }

    @Test("a signal wakes a waiter long before its deadline")
    func signalWakes() throws {
        let condition = ThreadCondition()
        let ready = Mutex(false)
        let woke = Mutex<Bool?>(nil)
        let waiter = try #require(OwnedThread(name: "test wake") {
            let deadline = ContinuousClock.now + .seconds(60)
            let signalled = condition.withLock { () -> Bool in
                while !ready.withLock({ $0 }) {
                    guard condition.wait(until: deadline) else { return false }
                }
                return true
            }
            woke.withLock { $0 = signalled }
        })
        usleep(20_000)
        condition.withLock {
            ready.withLock { $0 = true }
            condition.signal()
        }
        waiter.join()
        #expect(woke.withLock { $0 } == true)
    }
}

private extension String {
    /// A /proc file's text without its final newline.
    init(contentsOfProcFile path: String) throws {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { throw ProcError() }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 64)
        let n = read(fd, &buffer, buffer.count)
        guard n >= 0 else { throw ProcError() }
        self = String(decoding: buffer.prefix(n).filter { $0 != 0x0A }, as: UTF8.self)
    }
}

private struct ProcError: Error {}
