#if canImport(Glibc)
import Glibc
#endif

/// Starting, waiting for and stopping a child process: the one process runner of the
/// package (`felica watch --exec`, the USB bridge of `felica-sim`).
public enum ChildProcess {
    /// Why a child could not be started.
    public struct SpawnFailure: Error, Sendable {
        /// The `posix_spawn` error (`ENOENT`: no such program).
        public let code: Int32
        /// In words.
        public var reason: String { String(cString: strerror(code)) }
    }

    /// Starts `argv` (`argv[0]` looked up on `PATH`) with each `(from, to)` of `redirections`
    /// made descriptor `to` in the child, `environment` (`NAME=value` strings; nil: this
    /// process's), and, with `ownGroup`, in a process group of its own so that
    /// ``kill(_:_:)`` reaches its children too.
    public static func spawn(_ argv: [String], redirections: [(from: Int32, to: Int32)] = [], environment: [String]? = nil,
                             ownGroup: Bool = false) throws(SpawnFailure) -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for (from, to) in redirections { posix_spawn_file_actions_adddup2(&actions, from, to) }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // The child starts with the default signal dispositions and an empty mask, whatever
        // this process blocks or ignores.
        var all = sigset_t(), none = sigset_t()
        sigfillset(&all)
        sigemptyset(&none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setsigmask(&attributes, &none)
        var flags = Int32(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK)
        if ownGroup {
            posix_spawnattr_setpgroup(&attributes, 0)
            flags |= Int32(POSIX_SPAWN_SETPGROUP)
        }
        posix_spawnattr_setflags(&attributes, Int16(flags))
        var cArgs = argv.map { strdup($0) } + [nil]
        defer { for p in cArgs { free(p) } }
        var pid: pid_t = 0
        let rc: Int32
        if let environment {
            var cEnv = environment.map { strdup($0) } + [nil]
            defer { for p in cEnv { free(p) } }
            rc = posix_spawnp(&pid, argv[0], &actions, &attributes, &cArgs, &cEnv)
        } else {
            rc = posix_spawnp(&pid, argv[0], &actions, &attributes, &cArgs, environ)
        }
        guard rc == 0 else { throw SpawnFailure(code: rc) }
        return pid
    }

    /// How a child ended.
    public enum Ending: Sendable, Equatable {
        /// It exited with this status.
        case exited(Int32)
        /// A signal ended it.
        case signalled(Int32)

        /// The shell's number for it: the status, or 128 + the signal.
        public var status: Int32 {
            switch self {
            case .exited(let code): code
            case .signalled(let signal): 128 + signal
            }
        }
    }

    /// Waits for `pid` to end (blocking the calling thread).
    public static func wait(_ pid: pid_t) -> Ending {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        return ending(status)
    }

    /// Waits for `pid` until `deadline` (blocking the calling thread, looking every 5 ms);
    /// nil when it is still running then.
    public static func wait(_ pid: pid_t, until deadline: ContinuousClock.Instant) -> Ending? {
        var status: Int32 = 0
        while true {
            let r = waitpid(pid, &status, WNOHANG)
            if r == pid { return ending(status) }
            if r < 0 && errno != EINTR { return .exited(-1) }
            if ContinuousClock.now >= deadline { return nil }
            usleep(5000)
        }
    }

    /// Sends `signal` to `pid`'s process group (one started with `ownGroup`).
    public static func kill(_ pid: pid_t, _ signal: Int32) {
        _ = Glibc.kill(-pid, signal)
    }

    private static func ending(_ status: Int32) -> Ending {
        status & 0x7F == 0 ? .exited((status >> 8) & 0xFF) : .signalled(status & 0x7F)
    }
}
