import FeliCaTransportSupport
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// felica-sim's signals, turned into calls on a thread of their own.
///
/// The handler is installed synchronously with `sigaction`, so no signal arriving after
/// ``handle(_:_:)`` returns is lost or kills the process, and it only writes the signal's
/// number to a pipe (async-signal-safe); one listener thread reads the pipe and calls the
/// action registered for that signal.
enum SignalHandling {
    /// The pipe's write end, for the handler; -1 until the listener runs.
    private static let writeEnd = Atomic<Int32>(-1)
    /// The action of each signal handled.
    private static let actions = Mutex<[Int32: @Sendable (Int32) -> Void]>([:])
    /// Whether the pipe and its listener are up.
    private static let listening = Mutex(false)

    /// Calls `action` (on the listener thread) each time `sig` arrives, in place of the
    /// signal's default. False when no pipe or thread could be had: the signal keeps its
    /// default action.
    @discardableResult
    static func handle(_ sig: Int32, _ action: @escaping @Sendable (Int32) -> Void) -> Bool {
        guard startListening() else { return false }
        actions.withLock { $0[sig] = action }
        var sa = sigaction()
        sa.__sigaction_handler.sa_handler = { sig in
            let saved = errno
            var byte = UInt8(truncatingIfNeeded: sig)
            _ = write(SignalHandling.writeEnd.load(ordering: .relaxed), &byte, 1)
            errno = saved
        }
        sigemptyset(&sa.sa_mask)
        sa.sa_flags = SA_RESTART
        return sigaction(sig, &sa, nil) == 0
    }

    /// Suspends until SIGINT or SIGTERM arrives; returns which. A second one is ignored.
    static func waitForTermination() async -> Int32 {
        await withCheckedContinuation { (c: CheckedContinuation<Int32, Never>) in
            let resumed = Atomic(false)
            let resume: @Sendable (Int32) -> Void = { sig in
                if !resumed.exchange(true, ordering: .acquiringAndReleasing) { c.resume(returning: sig) }
            }
            // Without a listener a signal keeps its default action: the process ends.
            for sig in [SIGINT, SIGTERM] { handle(sig, resume) }
        }
    }

    private static func startListening() -> Bool {
        listening.withLock { up in
            if up { return true }
            var fds: [Int32] = [-1, -1]
            guard pipe(&fds) == 0 else { return false }
            // Not handed to child processes.
            for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
            let readEnd = fds[0]
            guard OwnedThread.detach(name: "felica-sim signals", { listen(readEnd) }) else {
                close(fds[0])
                close(fds[1])
                return false
            }
            writeEnd.store(fds[1], ordering: .relaxed)
            up = true
            return true
        }
    }

    private static func listen(_ fd: Int32) {
        var byte: UInt8 = 0
        while true {
            let n = read(fd, &byte, 1)
            if n == 1 {
                let sig = Int32(byte)
                actions.withLock { $0[sig] }?(sig)
            } else if n < 0 && errno == EINTR {
                continue
            } else {
                return
            }
        }
    }
}
