import FeliCa
import FeliCaSimulation
import FeliCaTransportSupport
import Glibc
import Synchronization

/// Runs a ``PN532Emulator`` on a pseudo-terminal, on a thread of its own, so that any
/// PN532 host — libnfc's `pn532_uart` driver above all — can open ``path`` as if a PN532
/// board were plugged in.
///
/// An `away` fault closes the terminal (the client sees the port hang up, as when a USB
/// serial adapter is pulled) and removes the link; when the reader comes back, a new
/// terminal is made and the link points at it, so a client reopening the link finds it.
public final class PN532Server: Sendable {
    /// The terminal served now; another one after the reader was away.
    private let current: Mutex<PseudoTerminal>
    private var terminal: PseudoTerminal { current.withLock { $0 } }
    private let emulator: Mutex<PN532Emulator>
    /// A symlink to ``path`` made for the user (`--link`), removed by ``stop()``.
    public let link: String?
    private let wakeRead: Int32
    private let wakeWrite: Int32
    private let thread = Mutex<OwnedThread?>(nil)
    private let stopped = Mutex(false)

    /// The terminal device the client opens, e.g. `/dev/pts/3`.
    public var path: String { terminal.path }
    /// The libnfc connection string for this emulator: `pn532_uart:/dev/pts/3`.
    public var connectionString: String { "pn532_uart:" + path }

    /// Creates the terminal (and the `link` symlink to it); call ``start()`` to serve.
    public init(card: VirtualCard?, options: PN532Emulator.Options = .init(), link: String? = nil) throws(FeliCaError) {
        let terminal = try PseudoTerminal()
        current = Mutex(terminal)
        emulator = Mutex(PN532Emulator(card: card, options: options))
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else {
            terminal.close()
            throw FeliCaError(.noReader, "cannot create a pipe for the emulator thread: \(String(cString: strerror(errno)))")
        }
        wakeRead = fds[0]
        wakeWrite = fds[1]
        if let link {
            var st = stat()
            if lstat(link, &st) == 0 {
                guard st.st_mode & S_IFMT == S_IFLNK else {
                    Self.closeAll(terminal, fds)
                    throw FeliCaError(.badInput, "\(link): a file of that name exists and is not a symlink; choose another path")
                }
                // Only a link an emulator left behind is replaced: one to a terminal that is
                // gone, or to the one just opened here (the kernel hands a freed terminal's
                // number to the next one: an emulator killed before it could remove its link
                // leaves one to the number this emulator now holds). A link to anything else
                // is not ours, and a live terminal is another emulator's (the same --link twice).
                let target = Self.linkTarget(link)
                guard let target, target.hasPrefix("/dev/pts/"), target == terminal.path || access(target, F_OK) != 0 else {
                    Self.closeAll(terminal, fds)
                    let what = target.map { $0.hasPrefix("/dev/pts/") ? "a link to \($0), a terminal in use (another emulator's?)" : "a link to \($0), not an emulator's" } ?? "a link"
                    throw FeliCaError(.badInput, "\(link): the path exists (\(what)); choose another path, or remove it if it is stale")
                }
                unlink(link)
            }
            guard symlink(terminal.path, link) == 0 else {
                let reason = String(cString: strerror(errno))
                Self.closeAll(terminal, fds)
                throw FeliCaError(.badInput, "\(link): cannot create the symlink (\(reason))")
            }
        }
        self.link = link
    }

    private static func closeAll(_ terminal: PseudoTerminal, _ fds: [Int32]) {
        terminal.close()
        close(fds[0])
        close(fds[1])
    }

    /// Serves on a dedicated thread until ``stop()``.
    public func start() {
        thread.withLock { t in
            guard t == nil, !stopped.withLock({ $0 }) else { return }
            t = OwnedThread(name: "pn532 server") { [self] in self.serve() }
        }
    }

    /// Stops serving, closes the terminal and removes the link. Safe to call twice.
    public func stop() {
        let first = stopped.withLock { s -> Bool in
            defer { s = true }
            return !s
        }
        guard first else { return }
        var one: UInt8 = 1
        _ = write(wakeWrite, &one, 1)
        thread.withLock({ $0 })?.join()
        close(wakeRead)
        close(wakeWrite)
        terminal.close()
        removeLink()
    }

    /// Removes the link if it still points at the terminal served now.
    private func removeLink() {
        guard let link else { return }
        if Self.linkTarget(link) == terminal.path { unlink(link) }
    }

    /// What the symlink `path` points at, as stored; nil when it is no symlink.
    static func linkTarget(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: 4096)
        let n = readlink(path, &buffer, buffer.count - 1)
        guard n > 0 else { return nil }
        return String(decoding: buffer.prefix(n).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    deinit { stop() }

    /// Host commands handled so far.
    public var commandCount: Int { emulator.withLock { $0.commandCount } }
    /// Packets handed to the card so far.
    public var cardExchanges: Int { emulator.withLock { $0.cardExchanges } }
    /// Broken frames the host sent.
    public var invalidFrames: Int { emulator.withLock { $0.invalidFrames } }
    /// The serial speed the chip runs at now (``PN532Emulator/baudRate``).
    public var baudRate: Int { emulator.withLock { $0.baudRate } }
    /// The rate the chip speaks to the card at now (``PN532Emulator/cardBitRate``).
    public var cardBitRate: AirTiming.BitRate? { emulator.withLock { $0.cardBitRate } }
    /// The RF timeout code last set (``PN532Emulator/rfTimeoutCode``).
    public var rfTimeoutCode: UInt8 { emulator.withLock { $0.rfTimeoutCode } }

    // MARK: - The serving thread

    private func serve() {
        let clock = ContinuousClock()
        let origin = clock.now
        var schedule = WriteSchedule()
        var away = false
        while true {
            for due in schedule.takeDue(at: origin.duration(to: clock.now)) {
                switch due {
                case .bytes(let bytes): if !away { terminal.write(bytes) }
                case .unplug:
                    away = true
                    removeLink()
                    terminal.close()
                case .plugIn:
                    guard let fresh = try? PseudoTerminal() else { continue }
                    current.withLock { $0 = fresh }
                    if let link { _ = symlink(fresh.path, link) }
                    emulator.withLock { $0.plugIn() }
                    away = false
                }
            }
            guard let wait = schedule.pollTimeout(at: origin.duration(to: clock.now)) else { continue }
            // While away, only the wake-up pipe is watched (poll skips a negative descriptor).
            var fds = [pollfd(fd: away ? -1 : terminal.master, events: Int16(POLLIN), revents: 0),
                       pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)]
            let r = poll(&fds, 2, wait)
            if r < 0 && errno != EINTR { return }
            if fds[1].revents != 0 { return }
            guard fds[0].revents & Int16(POLLIN) != 0 else {
                if fds[0].revents != 0 { usleep(10_000) }  // HUP with no client: keep serving
                continue
            }
            let bytes = terminal.read()
            guard !bytes.isEmpty else { continue }
            let arrived = origin.duration(to: clock.now)
            schedule.apply(emulator.withLock { $0.receive(bytes, at: arrived) })
        }
    }
}
