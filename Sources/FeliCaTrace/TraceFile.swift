import FeliCa
import FeliCaFiles

#if canImport(Glibc)
import Glibc
#endif

/// The POSIX calls traces need, one small wrapper each, failures as `FeliCaError`.
enum TraceFile {
    /// The text of the file at `path`.
    static func read(_ path: String) throws(FeliCaError) -> String {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw failure("cannot open trace \(path)") }
        defer { Glibc.close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw failure("cannot read trace \(path)")
            }
            if n == 0 { break }
            bytes += chunk[0..<n]
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw FeliCaError(.badInput, "\(path) is not UTF-8 text, so not a \(Trace.formatName) trace")
        }
        return text
    }

    /// Creates `path` for writing (0600: a trace holds the card's data), or truncates it,
    /// keeping its mode.
    static func create(_ path: String) throws(FeliCaError) -> Int32 {
        let fd = SystemCalls.openPrivate(path, truncate: true)
        guard fd >= 0 else { throw failure("cannot create \(path)") }
        return fd
    }

    /// Writes all of `bytes`, resuming after interrupted or short writes.
    static func write(_ fd: Int32, _ bytes: [UInt8], path: String) throws(FeliCaError) {
        var rest = bytes[...]
        while !rest.isEmpty {
            let n = rest.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw failure("cannot write \(path)")
            }
            rest = rest.dropFirst(n)
        }
    }

    /// Forces what was written onto the disk.
    static func sync(_ fd: Int32, path: String) throws(FeliCaError) {
        guard fsync(fd) == 0 || errno == EINVAL else { throw failure("cannot sync \(path)") }
    }

    /// Closes `fd`; a failure here means buffered data may be lost.
    static func close(_ fd: Int32, path: String) throws(FeliCaError) {
        guard Glibc.close(fd) == 0 else { throw failure("cannot close \(path)") }
    }

    /// Writes a whole file: to a temporary name beside it, synced, then renamed over `path`,
    /// so readers never see half a file. A `path` that is no regular file (a device such as
    /// /dev/stdout, a named pipe) is written in place: renaming over it would replace it.
    static func writeAtomically(_ bytes: [UInt8], to path: String) throws(FeliCaError) {
        var st = stat()
        if stat(path, &st) == 0 && (st.st_mode & S_IFMT) != S_IFREG {
            let fd = open(path, O_WRONLY | O_CLOEXEC)
            guard fd >= 0 else { throw failure("cannot open \(path)") }
            do {
                try write(fd, bytes, path: path)
                try close(fd, path: path)
            } catch {
                Glibc.close(fd)
                throw error
            }
            return
        }
        let tmp = path + ".tmp-\(getpid())"
        let fd = SystemCalls.createReplacement(tmp, for: path)
        // Named as the file asked for, not the temporary one beside it.
        guard fd >= 0 else { throw failure("cannot create \(path)") }
        do {
            try write(fd, bytes, path: path)
            try sync(fd, path: path)
            try close(fd, path: path)
        } catch {
            unlink(tmp)
            throw error
        }
        guard rename(tmp, path) == 0 else {
            let e = failure("cannot replace \(path)")
            unlink(tmp)
            throw e
        }
    }

    /// The current UTC time as ISO 8601 with seconds (`2026-11-29T10:00:00Z`).
    static func utcNow() -> String {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return iso8601(seconds: Int(now.tv_sec))
    }

    /// Seconds since the epoch as UTC ISO 8601.
    static func iso8601(seconds: Int) -> String {
        var t = time_t(seconds)
        var parts = tm()
        gmtime_r(&t, &parts)
        func two(_ v: Int32) -> String { v < 10 ? "0\(v)" : "\(v)" }
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))Z"
    }

    /// Parses `YYYY-MM-DDTHH:MM:SS[.fff](Z|±HH:MM)` into seconds since the epoch.
    static func epochSeconds(iso8601 s: String) -> Double? {
        let u = Array(s.utf8)
        func num(_ from: Int, _ count: Int) -> Int? {
            guard from + count <= u.count else { return nil }
            var v = 0
            for c in u[from..<from + count] {
                guard (0x30...0x39).contains(c) else { return nil }
                v = v * 10 + Int(c - 0x30)
            }
            return v
        }
        guard u.count >= 20, u[4] == 0x2D, u[7] == 0x2D, u[10] == 0x54 || u[10] == 0x20, u[13] == 0x3A, u[16] == 0x3A,
              let year = num(0, 4), let month = num(5, 2), let day = num(8, 2),
              let hour = num(11, 2), let minute = num(14, 2), let second = num(17, 2),
              (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61
        else { return nil }
        var i = 19
        var fraction = 0.0
        if u[i] == 0x2E {
            i += 1
            var scale = 0.1
            while i < u.count, (0x30...0x39).contains(u[i]) {
                fraction += Double(u[i] - 0x30) * scale
                scale /= 10
                i += 1
            }
        }
        guard i < u.count else { return nil }
        var offset = 0
        if u[i] == 0x5A {
            guard i + 1 == u.count else { return nil }
        } else if u[i] == 0x2B || u[i] == 0x2D, i + 6 == u.count, u[i + 3] == 0x3A, let oh = num(i + 1, 2), let om = num(i + 4, 2) {
            offset = (oh * 3600 + om * 60) * (u[i] == 0x2B ? 1 : -1)
        } else {
            return nil
        }
        var parts = tm()
        parts.tm_year = Int32(year - 1900)
        parts.tm_mon = Int32(month - 1)
        parts.tm_mday = Int32(day)
        parts.tm_hour = Int32(hour)
        parts.tm_min = Int32(minute)
        parts.tm_sec = Int32(second)
        return Double(timegm(&parts) - offset) + fraction
    }

    private static func failure(_ what: String) -> FeliCaError {
        FeliCaError(.badInput, "\(what): \(String(cString: strerror(errno)))")
    }
}
