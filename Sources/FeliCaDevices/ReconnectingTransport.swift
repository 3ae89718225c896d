import FeliCa
import Synchronization

/// A reader's transport that can be swapped for the same reader opened again, so a session
/// and the wrappers around it (`-v`, a `--trace` recorder) outlive a reader that was
/// unplugged and plugged back in.
///
/// Opening a reader puts one under it when ``Device/OpenOptions/reconnectInterval`` is set;
/// the ``Taps`` loop swaps the reader in it. Everything else is passed through to the
/// reader open at the time.
public final class ReconnectingTransport: TransportWrapper {
    /// The device string the reader was opened by; the same across reopenings.
    public let name: String
    private let current: Mutex<any Transport>
    /// Opens the same reader again; throws while it is not back.
    let reopen: @Sendable () async throws -> any Transport
    /// How often ``reopen`` is tried while the reader is away.
    let interval: Duration

    init(_ reader: any Transport, name: String, interval: Duration, reopen: @escaping @Sendable () async throws -> any Transport) {
        self.name = name
        current = Mutex(reader)
        self.interval = interval
        self.reopen = reopen
    }

    /// The reader open now.
    public var inner: any Transport { current.withLock { $0 } }

    public func exchange(_ packet: [UInt8], timeout: Duration) async throws(FeliCaError) -> [UInt8] {
        try await inner.exchange(packet, timeout: timeout)
    }

    /// Puts `reader` (the same reader, opened again) in place of the one that was lost.
    func replace(with reader: any Transport) {
        current.withLock { $0 = reader }
    }
}
