#if canImport(Glibc)
import Glibc
#endif

/// Reading and writing whole buffers through system calls that may move only part of one
/// or be interrupted by a signal (EINTR): the loops written once.
public enum SystemCalls {
    /// Moves all of `bytes` through `call` — `write`, `send` or the like, given a pointer
    /// and a count and returning what the system call returns — making an interrupted call
    /// again. Returns 0, or the errno of the call that failed (`EIO` when one moved nothing).
    public static func writeAll(_ bytes: [UInt8], _ call: (UnsafeRawPointer, Int) -> Int) -> Int32 {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { call($0.baseAddress! + offset, bytes.count - offset) }
            if n < 0 {
                if errno == EINTR { continue }
                return errno
            }
            if n == 0 { return EIO }
            offset += n
        }
        return 0
    }

    /// Everything `fd` gives until its end, making an interrupted `read` again; nil when a
    /// read fails.
    public static func readToEnd(_ fd: Int32) -> [UInt8]? {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return n == 0 ? bytes : nil }
            bytes += buffer[0..<n]
        }
    }

    /// The text of the file at `path`, or why it could not be had, in plain words:
    /// `No such file or directory`, `Is a directory`, `not UTF-8 text`.
    public static func readText(_ path: String) -> Result<String, ReadFailure> {
        let bytes: [UInt8]
        switch readBytes(path) {
        case .success(let b): bytes = b
        case .failure(let f): return .failure(f)
        }
        guard let text = String(validating: bytes, as: UTF8.self) else { return .failure(ReadFailure(reason: "not UTF-8 text")) }
        return .success(text)
    }

    /// The bytes of the file at `path`, or why they could not be had, in plain words.
    public static func readBytes(_ path: String) -> Result<[UInt8], ReadFailure> {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return .failure(ReadFailure(reason: String(cString: strerror(errno)))) }
        defer { Glibc.close(fd) }
        guard let bytes = readToEnd(fd) else { return .failure(ReadFailure(reason: String(cString: strerror(errno)))) }
        return .success(bytes)
    }

    /// Why ``readText(_:)`` or ``readBytes(_:)`` got nothing.
    public struct ReadFailure: Error, Sendable {
        /// In words, for a message that names the file.
        public var reason: String
    }
}
