import FeliCa
import FeliCaFiles

#if canImport(Glibc)
import Glibc
#endif

/// A serial line opened raw at 115200 baud, 8N1, read with deadlines: what a PN532 in HSU
/// mode sits behind (a USB-serial adapter, a Raspberry Pi UART, a pseudo-terminal). Its
/// speed may be raised later (``setSpeed(_:)``), as the chip's is.
///
/// Unlike libnfc's `uart_open`, nothing here sleeps: stale input is dropped with
/// `tcflush`, which takes no time.
final class SerialPort {
    let path: String
    private(set) var fd: Int32 = -1
    /// What cuts a wait short from another thread.
    let cancellation: Cancellation
    /// The line's speed now, in baud.
    private(set) var baud = 115_200

    /// The speeds ``setSpeed(_:)`` knows, with their termios codes.
    static let speeds: [Int: speed_t] = [115_200: speed_t(B115200), 230_400: speed_t(B230400), 460_800: speed_t(B460800), 921_600: speed_t(B921600)]

    /// Sets the line to `newBaud` once what was written has gone out at the old speed
    /// (`tcsetattr` with `TCSADRAIN`); false when the line refuses that speed (a UART that
    /// cannot run it), which leaves the line as it was.
    func setSpeed(_ newBaud: Int) -> Bool {
        guard let code = Self.speeds[newBaud] else { return false }
        var t = termios()
        guard tcgetattr(fd, &t) == 0 else { return false }
        cfsetispeed(&t, code)
        cfsetospeed(&t, code)
        guard tcsetattr(fd, TCSADRAIN, &t) == 0 else { return false }
        // Linux may accept a speed it cannot set: read it back.
        var check = termios()
        guard tcgetattr(fd, &check) == 0, cfgetospeed(&check) == code else {
            cfsetispeed(&t, Self.speeds[baud]!)
            cfsetospeed(&t, Self.speeds[baud]!)
            _ = tcsetattr(fd, TCSADRAIN, &t)
            return false
        }
        baud = newBaud
        return true
    }

    /// A pipe a cancelled task writes to: ``SerialPort/read(until:)`` waits on it beside
    /// the line and stops when it is written.
    final class Cancellation: Sendable {
        private let readEnd: Int32
        private let writeEnd: Int32

        init() throws(FeliCaError) {
            var fds: [Int32] = [-1, -1]
            guard pipe(&fds) == 0 else {
                throw FeliCaError(.noReader, "cannot create a pipe for cancelling serial reads (\(String(cString: strerror(errno))))")
            }
            for fd in fds {
                _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
                _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            }
            readEnd = fds[0]
            writeEnd = fds[1]
        }

        /// Makes the running (or next) wait throw `.cancelled`. Any thread.
        func cancel() {
            var one: UInt8 = 1
            _ = Glibc.write(writeEnd, &one, 1)
        }

        /// Forgets a cancellation that came after the call it was meant for.
        func reset() {
            var buffer = [UInt8](repeating: 0, count: 16)
            while buffer.withUnsafeMutableBytes({ Glibc.read(readEnd, $0.baseAddress, $0.count) }) > 0 {}
        }

        /// The descriptor `poll` watches.
        var fd: Int32 { readEnd }

        deinit {
            Glibc.close(readEnd)
            Glibc.close(writeEnd)
        }
    }

    /// Opens and configures `path`; errors name the path and what to do.
    init(path: String) throws(FeliCaError) {
        self.path = path
        cancellation = try Cancellation()
        let fd = Glibc.open(path, O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else {
            let e = errno
            let hint = e == EACCES ? ": add yourself to the group that owns it (often dialout) and log in again"
                : e == ENOENT ? ": no such serial port; check the adapter is plugged in (ls /dev/ttyUSB* /dev/ttyACM* /dev/serial0)" : ""
            throw FeliCaError(.noReader, "pn532:\(path): cannot open the serial port (\(String(cString: strerror(e))))\(hint)")
        }
        self.fd = fd
        var t = termios()
        guard tcgetattr(fd, &t) == 0 else {
            let reason = String(cString: strerror(errno))
            close()
            throw FeliCaError(.noReader, "pn532:\(path): not a serial line (\(reason)); give the device a PN532 is wired to, e.g. pn532:/dev/ttyUSB0")
        }
        cfmakeraw(&t)
        cfsetispeed(&t, speed_t(B115200))
        cfsetospeed(&t, speed_t(B115200))
        t.c_cflag |= tcflag_t(CLOCAL | CREAD)
        withUnsafeMutableBytes(of: &t.c_cc) { cc in
            cc[Int(VMIN)] = 0
            cc[Int(VTIME)] = 0
        }
        guard tcsetattr(fd, TCSANOW, &t) == 0 else {
            let reason = String(cString: strerror(errno))
            close()
            throw FeliCaError(.noReader, "pn532:\(path): cannot set 115200 baud raw mode (\(reason))")
        }
        flushInput()
    }

    /// Drops whatever arrived and was not read (a reply meant for an earlier host).
    func flushInput() {
        tcflush(fd, TCIFLUSH)
    }

    /// Writes all of `bytes`.
    func write(_ bytes: [UInt8]) throws(FeliCaError) {
        let fd = fd
        let status = SystemCalls.writeAll(bytes) { pointer, count in
            var n = Glibc.write(fd, pointer, count)
            // The line is non-blocking: wait until it takes more.
            while n < 0 && errno == EAGAIN {
                var p = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                _ = poll(&p, 1, 100)
                n = Glibc.write(fd, pointer, count)
            }
            return n
        }
        guard status == 0 else {
            throw FeliCaError(.readerGone, "pn532:\(path): writing to the serial port failed (\(String(cString: strerror(status)))); check that the adapter is still plugged in")
        }
    }

    /// The bytes that arrive before `deadline` (at least one), or an empty array when none
    /// does; `.cancelled` when ``Cancellation/cancel()`` is called first.
    func read(until deadline: ContinuousClock.Instant) throws(FeliCaError) -> [UInt8] {
        let clock = ContinuousClock()
        var buffer = [UInt8](repeating: 0, count: 512)
        while true {
            let left = clock.now.duration(to: deadline)
            guard left > .zero else { return [] }
            let ms = Int32(clamping: left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000 + 1)
            var fds = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0), pollfd(fd: cancellation.fd, events: Int16(POLLIN), revents: 0)]
            let ready = poll(&fds, 2, ms)
            if ready < 0 {
                if errno == EINTR { continue }
                throw FeliCaError(.readerGone, "pn532:\(path): waiting for the reader failed (\(String(cString: strerror(errno))))")
            }
            if ready == 0 { continue }
            if fds[1].revents != 0 {
                cancellation.reset()
                throw FeliCaError(.cancelled, "pn532:\(path): cancelled")
            }
            let p = fds[0]
            if p.revents & Int16(POLLIN) == 0 && p.revents & Int16(POLLHUP | POLLERR | POLLNVAL) != 0 {
                throw FeliCaError(.readerGone, "pn532:\(path): the serial port hung up; check that the reader is still plugged in")
            }
            let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n > 0 { return Array(buffer[0..<n]) }
            if n < 0 && (errno == EAGAIN || errno == EINTR) { continue }
            if n == 0 {
                // A pseudo-terminal whose other side closed reads as end of file at once.
                throw FeliCaError(.readerGone, "pn532:\(path): the serial port closed; check that the reader is still plugged in")
            }
            throw FeliCaError(.readerGone, "pn532:\(path): reading the serial port failed (\(String(cString: strerror(errno))))")
        }
    }

    /// Closes the line, once.
    func close() {
        if fd >= 0 { Glibc.close(fd) }
        fd = -1
    }

    deinit { close() }
}
