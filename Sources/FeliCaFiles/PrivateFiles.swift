#if canImport(Glibc)
import Glibc
#endif

/// Files that hold a person's card data (the history database, dumps, traces, exports)
/// are the owner's alone: created 0600 and directories 0700 whatever the umask, while a
/// file that already exists keeps the mode its owner gave it.
extension SystemCalls {
    /// Permission bits of a file felica creates: read and write for the owner only.
    public static let privateFileMode: mode_t = 0o600
    /// Permission bits of a directory felica creates.
    public static let privateDirectoryMode: mode_t = 0o700

    /// Opens `path` for writing. A file that does not exist is created 0600 (set with
    /// `fchmod`, since the umask may have taken bits away); one that exists keeps its mode
    /// and is truncated when `truncate` is set. `exclusive` fails with `EEXIST` instead of
    /// opening an existing file. Returns the descriptor, or -1 with `errno` set.
    public static func openPrivate(_ path: String, truncate: Bool, exclusive: Bool = false) -> Int32 {
        while true {
            let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, privateFileMode)
            if fd >= 0 { return setMode(privateFileMode, of: fd, created: path) }
            guard errno == EEXIST, !exclusive else { return -1 }
            let existing = open(path, O_WRONLY | O_CLOEXEC | (truncate ? O_TRUNC : 0))
            // Removed between the two calls: create it after all.
            if existing < 0 && errno == ENOENT { continue }
            return existing
        }
    }

    /// Creates `temporary`, the file that will be renamed over `path`, with the mode the
    /// result must have: `path`'s permission bits when it is a file already (a rewrite
    /// keeps the mode), else 0600. Returns the descriptor, or -1 with `errno` set.
    public static func createReplacement(_ temporary: String, for path: String) -> Int32 {
        var st = stat()
        let mode = stat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFREG ? st.st_mode & 0o7777 : privateFileMode
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, privateFileMode)
        guard fd >= 0 else { return -1 }
        return setMode(mode, of: fd, created: temporary)
    }

    /// Gives the file just created at `path` (open as `fd`) its mode, which the umask may
    /// have cut: `fd`, or -1 with `errno` set after closing and removing it.
    private static func setMode(_ mode: mode_t, of fd: Int32, created path: String) -> Int32 {
        guard fchmod(fd, mode) == 0 else {
            let e = errno
            close(fd)
            unlink(path)
            errno = e
            return -1
        }
        return fd
    }

    /// Creates each missing directory on the way to `directory`, 0700 whatever the umask;
    /// directories that exist are left as they are. Returns nil, or the `errno` of the call
    /// that failed and the directory it was making.
    public static func makePrivateDirectories(_ directory: String) -> (errno: Int32, path: String)? {
        var prefix = directory.hasPrefix("/") ? "" : "."
        for part in directory.split(separator: "/") {
            prefix += "/" + part
            if mkdir(prefix, privateDirectoryMode) == 0 {
                guard chmod(prefix, privateDirectoryMode) == 0 else { return (errno, prefix) }
            } else if errno != EEXIST {
                return (errno, prefix)
            }
        }
        return nil
    }
}
