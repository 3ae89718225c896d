import FeliCaFiles
import FeliCaTransportSupport
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Messages waiting for one destination, kept on disk until it has acknowledged them: one
/// file per message, named by its sequence number, delivered oldest first.
///
/// A message is on disk before ``append(_:)`` returns (written to a temporary file, flushed
/// with `fsync`, renamed into place, the directory flushed too), so a process killed with
/// SIGKILL or a machine losing power after the call loses nothing; a message is removed
/// only once delivered. The directory is created 0700 and the files 0600 (they hold card
/// numbers). One process at a time: the spool holds an exclusive `flock` on `.lock` in
/// the directory for as long as it is open.
///
/// ```
/// <directory>/.lock
/// <directory>/0000000000000041.msg     the oldest message
/// <directory>/0000000000000042.msg
/// ```
public final class Spool: Sendable {
    /// The directory that holds the messages.
    public let directory: String
    /// How many messages it keeps at most; ``append(_:)`` refuses more.
    public let limit: Int
    /// The sequence numbers on disk, oldest first, and the next one to give.
    private let state: Mutex<(waiting: [UInt64], next: UInt64)>
    /// The locked `.lock` file, closed (which releases the lock) with the spool.
    private let lock: Int32

    /// A message read back: its sequence number and bytes.
    public struct Message: Sendable, Equatable {
        /// Its place in the order of delivery.
        public let sequence: UInt64
        /// What was appended, byte for byte.
        public let body: [UInt8]
    }

    /// Opens the spool in `directory`, creating it (0700) when missing, and takes its lock.
    /// Throws `.spoolBusy` when another process holds it, `.spool` when it cannot be made
    /// or read.
    public init(directory: String, limit: Int) throws(DeliveryError) {
        self.directory = directory
        self.limit = limit
        if let failed = SystemCalls.makePrivateDirectories(directory) {
            throw DeliveryError(.spool, "cannot create the spool directory \(failed.path): \(Self.describe(failed.errno))")
        }
        let lockPath = directory + "/.lock"
        let fd = SystemCalls.openPrivate(lockPath, truncate: false)
        guard fd >= 0 else { throw DeliveryError(.spool, "cannot open \(lockPath): \(Self.describe(errno))") }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let e = errno
            close(fd)
            if e == EWOULDBLOCK {
                throw DeliveryError(.spoolBusy, "the spool \(directory) is in use by another felica watch")
            }
            throw DeliveryError(.spool, "cannot lock \(lockPath): \(Self.describe(e))")
        }
        lock = fd
        let names: [String]
        do throws(DeliveryError) { names = try Self.list(directory) } catch {
            close(fd)
            throw error
        }
        var waiting: [UInt64] = []
        for name in names {
            if name.hasSuffix(".msg"), let n = UInt64(name.dropLast(4)) {
                waiting.append(n)
            } else if name.hasSuffix(".tmp") {
                // Written by a watch killed before the rename: never appended, never promised.
                unlink(directory + "/" + name)
            }
        }
        waiting.sort()
        state = Mutex((waiting, (waiting.last ?? 0) + 1))
    }

    deinit { close(lock) }

    /// How many messages wait.
    public var count: Int { state.withLock { $0.waiting.count } }

    /// Keeps `body` as the newest message; false (nothing written) when the spool already
    /// holds ``limit`` messages. Returns once the message is on disk.
    public func append(_ body: [UInt8]) throws(DeliveryError) -> Bool {
        let sequence: UInt64? = state.withLock { s in
            guard s.waiting.count < limit else { return nil }
            defer { s.next += 1 }
            return s.next
        }
        guard let sequence else { return false }
        let name = Self.name(sequence)
        let temporary = directory + "/" + name + ".tmp", final = directory + "/" + name + ".msg"
        let fd = SystemCalls.openPrivate(temporary, truncate: true, exclusive: true)
        guard fd >= 0 else { throw DeliveryError(.spool, "cannot create \(temporary): \(Self.describe(errno))") }
        let written = SystemCalls.writeAll(body) { write(fd, $0, $1) }
        let synced = written == 0 ? (fsync(fd) == 0 ? 0 : errno) : written
        close(fd)
        guard synced == 0 else {
            unlink(temporary)
            throw DeliveryError(.spool, "cannot write \(temporary): \(Self.describe(synced))")
        }
        guard rename(temporary, final) == 0 else {
            let e = errno
            unlink(temporary)
            throw DeliveryError(.spool, "cannot rename \(temporary) to \(final): \(Self.describe(e))")
        }
        // The rename itself is on disk only once the directory is.
        let dir = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if dir >= 0 {
            fsync(dir)
            close(dir)
        }
        state.withLock { s in
            s.waiting.append(sequence)
        }
        return true
    }

    /// The oldest message, read from disk; nil when none waits.
    public func oldest() throws(DeliveryError) -> Message? {
        guard let sequence = state.withLock({ $0.waiting.first }) else { return nil }
        let path = directory + "/" + Self.name(sequence) + ".msg"
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw DeliveryError(.spool, "cannot open \(path): \(Self.describe(errno))") }
        defer { close(fd) }
        guard let body = SystemCalls.readToEnd(fd) else {
            throw DeliveryError(.spool, "cannot read \(path): \(Self.describe(errno))")
        }
        return Message(sequence: sequence, body: body)
    }

    /// Removes the message `sequence` once it is delivered.
    public func remove(_ sequence: UInt64) throws(DeliveryError) {
        let path = directory + "/" + Self.name(sequence) + ".msg"
        // A removal lost to a crash sends the message again, which its id lets the receiver
        // drop: no flush of the directory for it.
        if unlink(path) != 0 && errno != ENOENT {
            throw DeliveryError(.spool, "cannot remove the delivered message \(path): \(Self.describe(errno))")
        }
        state.withLock { s in s.waiting.removeAll { $0 == sequence } }
    }

    /// `0000000000000042`: sixteen digits, so names sort as numbers.
    static func name(_ sequence: UInt64) -> String {
        let digits = String(sequence)
        return String(repeating: "0", count: max(0, 16 - digits.count)) + digits
    }

    /// The names in `directory`, `.` and `..` left out.
    static func list(_ directory: String) throws(DeliveryError) -> [String] {
        guard let dir = opendir(directory) else {
            throw DeliveryError(.spool, "cannot read the spool directory \(directory): \(describe(errno))")
        }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    static func describe(_ code: Int32) -> String { String(cString: strerror(code)) }
}
