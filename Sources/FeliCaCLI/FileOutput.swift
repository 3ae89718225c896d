import FeliCa
import FeliCaFiles

#if canImport(Glibc)
import Glibc
#endif

/// Writing output files without ever leaving half a file, and never calling a file
/// written that was not.
public enum FileOutput {
    /// Writes `text` to a temporary file beside `path`, syncs it, then renames it over
    /// `path`: an interruption leaves the old file or the complete new one. A `path` that
    /// is no regular file (a device such as /dev/stdout, a named pipe) is written in place,
    /// since renaming over it would replace it. Every write, the sync and the close are
    /// checked: a full disk is an error, never a success.
    public static func writeAtomically(_ text: String, to path: String) throws {
        let bytes = Array(text.utf8)
        var st = stat()
        if stat(path, &st) == 0 && (st.st_mode & S_IFMT) != S_IFREG {
            let fd = open(path, O_WRONLY | O_CLOEXEC)
            guard fd >= 0 else { throw failure("cannot write \(path)") }
            let written = writeAll(fd, bytes)
            let closed = Glibc.close(fd) == 0
            guard written == 0, closed else { throw failure("cannot write \(path)", errno: written == 0 ? errno : written) }
            return
        }
        let tmp = path + ".tmp-\(getpid())"
        // Private by default; a rewrite keeps the mode the file had.
        let fd = SystemCalls.createReplacement(tmp, for: path)
        guard fd >= 0 else { throw failure("cannot write \(path)") }
        var error = writeAll(fd, bytes)
        if error == 0 && fsync(fd) != 0 { error = errno }
        if Glibc.close(fd) != 0 && error == 0 { error = errno }
        guard error == 0 else {
            unlink(tmp)
            throw failure("cannot write \(path)", errno: error)
        }
        guard rename(tmp, path) == 0 else {
            let e = failure("cannot replace \(path)")
            unlink(tmp)
            throw e
        }
    }

    /// Writes all of `bytes` to `fd`; returns errno when a write fails, else 0.
    static func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Int32 {
        SystemCalls.writeAll(bytes) { Glibc.write(fd, $0, $1) }
    }

    static func failure(_ what: String, errno code: Int32 = errno) -> CLIError {
        CLIError("\(what): \(String(cString: strerror(code)))")
    }
}
