import FeliCa
import Glibc
import Synchronization

/// Runs an ``RCS380Emulator`` behind the USB bridge of `felica-sim rcs380`: the bridge
/// (umockdev's usbdevfs plumbing) writes each bulk OUT transfer as a line `W <hex>` on a
/// stream socket; the server answers `R <hex>` when the reader puts a transfer on the bulk
/// IN endpoint, at the time the emulator says, and `U` when the reader leaves the bus.
public final class RCS380Server: Sendable {
    private let emulator: Mutex<RCS380Emulator>
    private let socket: Int32

    /// Serves the bridge connected to `socket` (which the server closes when done).
    public init(socket: Int32, card: VirtualCard?, options: RCS380Emulator.Options = .init()) {
        self.socket = socket
        emulator = Mutex(RCS380Emulator(card: card, options: options))
    }

    /// Host commands handled so far.
    public var commandCount: Int { emulator.withLock { $0.commandCount } }
    /// Packets handed to the card so far.
    public var cardExchanges: Int { emulator.withLock { $0.cardExchanges } }
    /// Broken frames the host sent.
    public var invalidFrames: Int { emulator.withLock { $0.invalidFrames } }
    /// Commands the host aborted with an ACK.
    public var abortedCommands: Int { emulator.withLock { $0.abortedCommands } }

    /// Serves until the bridge closes its end; blocks the calling thread (give it one of
    /// its own).
    public func serve() {
        defer { close(socket) }
        let clock = ContinuousClock()
        let origin = clock.now
        var schedule = WriteSchedule()
        var input: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            for due in schedule.takeDue(at: origin.duration(to: clock.now)) {
                switch due {
                case .bytes(let bytes): guard send("R " + Hex.encode(bytes)) else { return }
                case .unplug: guard send("U") else { return }
                }
            }
            guard let wait = schedule.pollTimeout(at: origin.duration(to: clock.now)) else { continue }
            var fds = [pollfd(fd: socket, events: Int16(POLLIN), revents: 0)]
            let r = poll(&fds, 1, wait)
            if r < 0 && errno != EINTR { return }
            guard r > 0 else { continue }
            let n = read(socket, &buffer, buffer.count)
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return }
            input += buffer[..<n]
            while let newline = input.firstIndex(of: 0x0A) {
                let line = String(decoding: input[..<newline], as: UTF8.self)
                input.removeSubrange(...newline)
                guard line.hasPrefix("W "), let bytes = Hex.decode(String(line.dropFirst(2))) else { continue }
                let arrived = origin.duration(to: clock.now)
                schedule.apply(emulator.withLock { $0.receive(bytes, at: arrived) })
            }
        }
    }

    private func send(_ line: String) -> Bool {
        var bytes = Array((line + "\n").utf8)
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeMutableBytes { write(socket, $0.baseAddress! + offset, $0.count - offset) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return false }
            offset += n
        }
        return true
    }
}
