import Synchronization

/// A device's thread and the connection it drives, closed exactly once: by ``close(abandoning:)``,
/// or — for a transport dropped without closing — by a backstop when the last reference goes.
///
/// Transports keep one instead of their own "closed" flag, close routine and `deinit`.
public final class OwnedDevice<Connection: Sendable>: Sendable {
    /// The thread every call to the connection runs on.
    public let thread: DeviceThread
    /// The open connection (libnfc device, libusb handle, ...).
    public let connection: Connection
    private let shutDown: @Sendable (Connection) -> Void
    private let closed = Mutex(false)

    /// Takes over `connection`, driven on `thread`; `close` releases it (run on the thread).
    public init(thread: DeviceThread, connection: Connection, close: @escaping @Sendable (Connection) -> Void) {
        self.thread = thread
        self.connection = connection
        shutDown = close
    }

    /// Whether ``close(abandoning:)`` has been called.
    public var isClosed: Bool { closed.withLock { $0 } }

    /// Releases the connection on its thread, then ends the thread. Later calls do nothing.
    /// With `abandoning`, a call is stuck on the thread and would keep the release from ever
    /// running: the device is only marked closed, and the process's exit releases it.
    public func close(abandoning: Bool = false) async {
        let first = closed.withLock { c -> Bool in
            defer { c = true }
            return !c
        }
        guard first, !abandoning else { return }
        let connection = connection
        let shutDown = shutDown
        await thread.run { shutDown(connection) }
        thread.stop()
    }

    deinit {
        guard !closed.withLock({ $0 }) else { return }
        let connection = connection
        let thread = thread
        let shutDown = shutDown
        Task.detached {
            await thread.run { shutDown(connection) }
            thread.stop()
        }
    }
}
