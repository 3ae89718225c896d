/// The two bulk endpoints of a Port-100 reader as ``Port100Driver`` uses them: one whole
/// transfer out, the next transfer in. libusb carries them for a real RC-S380; an emulator on
/// a simulated clock carries them in tests. Called on one thread at a time.
public protocol Port100Link {
    /// Now, on the clock that ``read(timeout:)`` waits on (any origin; only differences count).
    var now: Duration { get }
    /// Whether the caller has been cancelled: the driver then aborts the running command.
    var isCancelled: Bool { get }
    /// One bulk OUT transfer of `bytes` (empty: a zero-length packet); returns how many went out.
    mutating func write(_ bytes: [UInt8]) throws(Port100LinkError) -> Int
    /// The next bulk IN transfer, waiting at most `timeout` for it; nil when none came.
    mutating func read(timeout: Duration) throws(Port100LinkError) -> [UInt8]?
}

/// A transfer the link could not make.
public struct Port100LinkError: Error, Hashable, Sendable {
    /// Whether the reader has left the bus (as opposed to a failed transfer).
    public var isUnplugged: Bool
    /// The link's own name for the failure, for messages (`LIBUSB_ERROR_NO_DEVICE`).
    public var status: String

    public init(isUnplugged: Bool, status: String) {
        self.isUnplugged = isUnplugged
        self.status = status
    }
}
