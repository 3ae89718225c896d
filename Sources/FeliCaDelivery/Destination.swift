/// Where an ``Outbox`` delivers: an HTTP endpoint, an MQTT topic.
///
/// Every call is made on the outbox's own thread, one at a time (they block on the network).
public protocol Destination: AnyObject, Sendable {
    /// The destination as shown in messages (`http://host/path`, `mqtt://host/topic`).
    var name: String { get }
    /// Sends `body` once and waits for the acknowledgement: `.delivered` only when the
    /// other end has taken it (an HTTP 2xx answer, an MQTT PUBACK).
    func deliver(_ body: [UInt8]) -> DeliveryAttempt
    /// The reader's state changed; a destination that shows it (MQTT's retained status
    /// topic) sends it on, the others ignore it.
    func readerState(_ state: ReaderState)
    /// Says goodbye (MQTT: the status `offline`, then a clean disconnect).
    func close()
}

extension Destination {
    public func readerState(_ state: ReaderState) {}
    public func close() {}
}

/// How one try at delivering went.
public enum DeliveryAttempt: Sendable, Equatable {
    /// The other end acknowledged the message: it may be removed from the spool.
    case delivered
    /// Not acknowledged, for the reason given (`HTTP 503`, `connection refused`): kept,
    /// to be sent again.
    case failed(String)
}

/// The state of the reader a watch reads, as an MQTT status topic shows it.
public enum ReaderState: String, Sendable {
    /// Watching: the reader is open.
    case online
    /// The reader was unplugged or stopped answering; the watch waits for it.
    case readerLost
    /// The watch has ended (said by the watch on a clean exit, by the broker's last will
    /// otherwise).
    case offline
}
