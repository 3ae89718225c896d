import FeliCa
import Glibc
import Synchronization

/// A pseudo-terminal pair in raw mode: the emulator owns the master side, a serial-port
/// client (libnfc's `pn532_uart`) opens ``path``.
///
/// The slave side stays open here as well, so the terminal survives a client closing and
/// reopening it, and reading the master never reports a hang-up between clients.
/// Both descriptors are closed exactly once, by ``close()`` or at the latest in `deinit`.
final class PseudoTerminal: Sendable {
    let master: Int32
    private let slave: Int32
    /// The slave's device path, e.g. `/dev/pts/3`.
    let path: String
    private let closed = Mutex(false)

    init() throws(FeliCaError) {
        // posix_openpt/grantpt/unlockpt/ptsname_r are hidden from Swift by glibc's feature
        // macros; on Linux they are exactly these steps (pty(7)): open the multiplexer,
        // unlock the slave, ask for its number. grantpt has nothing to do on devpts.
        let m = open("/dev/ptmx", O_RDWR | O_NOCTTY)
        guard m >= 0 else { throw Self.failure("open /dev/ptmx") }
        var unlock: Int32 = 0
        var number: UInt32 = 0
        guard ioctl(m, Self.setLock, &unlock) == 0, ioctl(m, Self.getNumber, &number) == 0 else {
            let e = Self.failure("unlocking the slave side")
            Glibc.close(m)
            throw e
        }
        let p = "/dev/pts/\(number)"
        let s = open(p, O_RDWR | O_NOCTTY)
        guard s >= 0 else {
            let e = Self.failure("open \(p)")
            Glibc.close(m)
            throw e
        }
        var t = termios()
        tcgetattr(s, &t)
        cfmakeraw(&t)
        cfsetispeed(&t, speed_t(B115200))
        cfsetospeed(&t, speed_t(B115200))
        tcsetattr(s, TCSANOW, &t)
        _ = fcntl(m, F_SETFL, fcntl(m, F_GETFL) | O_NONBLOCK)
        master = m
        slave = s
        path = p
    }

    /// `TIOCSPTLCK` (`_IOW('T', 0x31, int)`), which Swift cannot import.
    private static let setLock: UInt = 0x4004_5431
    /// `TIOCGPTN` (`_IOR('T', 0x30, unsigned int)`), which Swift cannot import.
    private static let getNumber: UInt = 0x8004_5430

    private static func failure(_ call: String) -> FeliCaError {
        FeliCaError(.noReader, "cannot create a pseudo-terminal (\(call): \(String(cString: strerror(errno))))")
    }

    /// Reads what the client wrote; empty when nothing is waiting.
    func read() -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let n = buffer.withUnsafeMutableBytes { Glibc.read(master, $0.baseAddress, $0.count) }
        return n > 0 ? Array(buffer.prefix(n)) : []
    }

    /// Writes everything in `bytes` to the client.
    func write(_ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { Glibc.write(master, $0.baseAddress, $0.count) }
            if n > 0 {
                offset += n
            } else if n < 0 && (errno == EAGAIN || errno == EINTR) {
                var p = pollfd(fd: master, events: Int16(POLLOUT), revents: 0)
                _ = poll(&p, 1, 100)
            } else {
                return
            }
        }
    }

    func close() {
        closed.withLock { closed in
            guard !closed else { return }
            closed = true
            Glibc.close(slave)
            Glibc.close(master)
        }
    }

    deinit { close() }
}
