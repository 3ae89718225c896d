import FeliCa
import FeliCaFiles
import Glibc
import Synchronization

/// A reader's state machine that the USB bridge can carry: each bulk OUT transfer the host
/// wrote goes in, and what the reader puts on the bulk IN endpoint (or its leaving the bus)
/// comes out, each with its time.
public protocol USBBridgedEmulator: Sendable {
    mutating func receive(_ bytes: some Sequence<UInt8>, at now: Duration) -> [EmulatorAction]
    /// The reader is plugged back in after it left (``EmulatorAction/plugIn(at:)``).
    mutating func plugIn()
}

extension RCS380Emulator: USBBridgedEmulator {}
extension PN532Emulator: USBBridgedEmulator {}

/// Runs an emulated USB reader behind the umockdev bridge of `felica-sim rcs380` and
/// `felica-sim rcs956`: the bridge (the usbdevfs plumbing) writes each bulk OUT transfer as
/// a line `W <hex>` on a stream socket; the server answers `R <hex>` when the reader puts a
/// transfer on the bulk IN endpoint, at the time the emulator says, `U` when the reader
/// leaves the bus and `P` when it is plugged back in.
public final class USBBridgeServer<Emulator: USBBridgedEmulator>: Sendable {
    private let emulator: Mutex<Emulator>
    private let socket: Int32

    /// Serves the bridge connected to `socket` (which the server closes when done).
    public init(socket: Int32, emulator: Emulator) {
        self.socket = socket
        self.emulator = Mutex(emulator)
    }

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
                case .plugIn:
                    emulator.withLock { $0.plugIn() }
                    guard send("P") else { return }
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
        SystemCalls.writeAll(Array((line + "\n").utf8)) { write(socket, $0, $1) } == 0
    }
}
