import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A thread of its own (a pthread), for work that must not run on Swift's cooperative pool:
/// blocking C calls, a server's poll loop, waiting for a child process or a signal.
///
/// The thread runs `body` once and ends. Its owner may ``join()`` it (once; later calls do
/// nothing); a thread never joined is detached when the last reference goes, so it never
/// leaks. Together with ``ThreadCondition`` it is the one thread primitive of the package:
/// ``DeviceThread``, the emulator servers and the watchdogs are built from the two.
public final class OwnedThread: Sendable {
    /// The pthread's id (an integer on Linux).
    private let id: pthread_t
    /// Whether ``join()`` has run (or begun): the thread must then not be detached.
    private let joined = Atomic<Bool>(false)

    /// Starts a thread named `name` (shown by `top -H` and debuggers; cut to the 15 bytes
    /// Linux keeps) running `body`; nil when the system refuses another thread (`EAGAIN`):
    /// the caller then does the work another way.
    public init?(name: String, _ body: @escaping @Sendable () -> Void) {
        let box = Unmanaged.passRetained(Body(name: name, body)).toOpaque()
        var id = pthread_t()
        guard pthread_create(&id, nil, { raw in
            let body = Unmanaged<Body>.fromOpaque(raw!).takeRetainedValue()
            body.nameThisThread()
            body.run()
            return nil
        }, box) == 0 else {
            Unmanaged<Body>.fromOpaque(box).release()
            return nil
        }
        self.id = id
    }

    /// Starts a thread nobody joins (it ends when `body` returns); false when the system
    /// refuses another thread.
    @discardableResult
    public static func detach(name: String, _ body: @escaping @Sendable () -> Void) -> Bool {
        OwnedThread(name: name, body) != nil
    }

    /// Whether the caller is this thread.
    public var isCurrent: Bool { pthread_equal(pthread_self(), id) != 0 }

    /// Waits until `body` has returned. Only the first call waits; called on the thread
    /// itself it returns at once (a thread cannot wait for its own end).
    public func join() {
        guard !joined.exchange(true, ordering: .acquiringAndReleasing), !isCurrent else { return }
        pthread_join(id, nil)
    }

    deinit {
        if !joined.load(ordering: .acquiring) { pthread_detach(id) }
    }
}

/// Carries a closure and the thread's name into a pthread.
private final class Body: Sendable {
    let name: String
    let run: @Sendable () -> Void
    init(name: String, _ run: @escaping @Sendable () -> Void) {
        self.name = name
        self.run = run
    }

    /// Names the calling thread through `/proc/thread-self/comm` (what `pthread_setname_np`
    /// writes; Swift's Glibc module does not declare that GNU function). No name is no harm.
    func nameThisThread() {
        let fd = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { return }
        let bytes = Array(name.utf8.prefix(15))
        _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
    }
}

/// A lock with a condition to wait on (a pthread mutex and condition variable): the state
/// it guards is read and written only inside ``withLock(_:)``, and a thread waits there for
/// another to change it — with no limit, or until a `ContinuousClock` deadline.
///
/// `@unchecked Sendable`: the mutex and the condition variable are allocated once, never
/// move, and are only used through the pthread calls made for use from any thread;
/// they are destroyed in `deinit`, when no thread can hold them.
public final class ThreadCondition: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>

    public init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
        condition = .allocate(capacity: 1)
        condition.initialize(to: pthread_cond_t())
        // Timed waits count on the monotonic clock: setting the wall clock moves no deadline.
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    /// Runs `body` with the lock held; ``wait()``, ``wait(until:)`` and ``signal()`` are
    /// called only from inside it.
    public func withLock<R, E: Error>(_ body: () throws(E) -> R) throws(E) -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }

    /// Releases the lock until another thread calls ``signal()`` or ``broadcast()`` (or
    /// spuriously: wait in a loop over the state awaited), then takes it again.
    public func wait() {
        pthread_cond_wait(condition, mutex)
    }

    /// As ``wait()``, but returns by `deadline` at the latest; false when it returned
    /// because the deadline had passed.
    @discardableResult
    public func wait(until deadline: ContinuousClock.Instant) -> Bool {
        let left = ContinuousClock.now.duration(to: deadline)
        guard left > .zero else { return false }
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let (seconds, attoseconds) = left.components
        let nanoseconds = Int(now.tv_nsec) + Int(attoseconds / 1_000_000_000)
        // A deadline past the end of time waits for ever rather than trap on overflow.
        let (sum, over) = Int(now.tv_sec).addingReportingOverflow(Int(clamping: seconds))
        let (whole, carry) = sum.addingReportingOverflow(nanoseconds / 1_000_000_000)
        var until = over || carry
            ? timespec(tv_sec: Int.max, tv_nsec: 999_999_999)
            : timespec(tv_sec: whole, tv_nsec: nanoseconds % 1_000_000_000)
        return pthread_cond_timedwait(condition, mutex, &until) != ETIMEDOUT
    }

    /// Wakes one thread waiting in ``wait()`` or ``wait(until:)``.
    public func signal() {
        pthread_cond_signal(condition)
    }

    /// Wakes every waiting thread.
    public func broadcast() {
        pthread_cond_broadcast(condition)
    }
}
