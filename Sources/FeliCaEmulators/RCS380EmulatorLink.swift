import FeliCa
import FeliCaReaderCodecs

/// An ``RCS380Emulator`` as a `Port100Link` on a simulated clock, so a `Port100Driver`
/// runs against it in memory, with no USB and no waiting: a read that finds nothing
/// scheduled moves the clock on by its whole timeout, one that finds the reader's next
/// transfer moves it to when that transfer is sent.
public struct RCS380EmulatorLink: Port100Link, Sendable {
    /// The reader; its counters tell what the host did to it.
    public var emulator: RCS380Emulator
    /// Every transfer the host wrote, in order (zero-length packets included).
    public private(set) var written: [[UInt8]] = []
    /// The caller counts as cancelled from this time on; nil = never.
    public var cancelledAt: Duration?
    public private(set) var now: Duration = .zero
    /// What the reader has scheduled on the IN endpoint, in order of time.
    private var scheduled: [(bytes: [UInt8], at: Duration)] = []
    /// When the reader leaves the bus, once an unplug fault has fired.
    private var unpluggedAt: Duration?

    /// What a transfer to or from a reader that left the bus fails with.
    public static let unplugged = Port100LinkError(isUnplugged: true, status: "LIBUSB_ERROR_NO_DEVICE")

    public init(_ emulator: RCS380Emulator) {
        self.emulator = emulator
    }

    public var isCancelled: Bool { cancelledAt.map { now >= $0 } ?? false }

    public mutating func write(_ bytes: [UInt8]) throws(Port100LinkError) -> Int {
        if let t = unpluggedAt, now >= t { throw Self.unplugged }
        written.append(bytes)
        for action in emulator.receive(bytes, at: now) {
            switch action {
            case .send(let out, let at):
                scheduled.append((out, at))
                scheduled.sort { $0.at < $1.at }
            case .cancel(let after):
                scheduled.removeAll { $0.at > after }
            case .unplug(let at):
                unpluggedAt = min(unpluggedAt ?? at, at)
            case .plugIn:
                break  // this link was opened before the reader left: it stays dead
            }
        }
        return bytes.count
    }

    public mutating func read(timeout: Duration) throws(Port100LinkError) -> [UInt8]? {
        let deadline = now + timeout
        if let t = unpluggedAt, t <= deadline, scheduled.first.map({ $0.at > t }) ?? true {
            now = max(now, t)
            throw Self.unplugged
        }
        guard let next = scheduled.first, next.at <= deadline else {
            now = deadline
            return nil
        }
        scheduled.removeFirst()
        now = max(now, next.at)
        return next.bytes
    }
}
