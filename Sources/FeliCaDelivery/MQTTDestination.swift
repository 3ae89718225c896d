import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// An MQTT topic each message is published to with QoS 1; the broker's PUBACK acknowledges
/// it. The reader's state (``ReaderState``) is kept, retained, on `<topic>/status`:
/// `online` on every connection, `readerLost` while the reader is away, and `offline`
/// — sent by the watch when it ends, or by the broker as the connection's last will
/// when the watch dies or the network goes.
///
/// `@unchecked Sendable`: `started` and `inFlight` are used only on the owning
/// ``Outbox``'s thread (``Destination``'s contract); the client's events are behind a
/// mutex; the rest is immutable.
public final class MQTTDestination: Destination, @unchecked Sendable {
    public let name: String
    /// Where the broker is and what to publish to.
    public let address: MQTTAddress
    private let client: MosquittoClient
    private var started = false
    /// The message published last and its id, while its PUBACK has not come: the library
    /// sends it again itself after a reconnection, so a retry of the same message waits
    /// for that acknowledgement instead of publishing a second copy.
    private var inFlight: (body: [UInt8], mid: Int32)?
    /// How long a PUBACK is waited for.
    public let timeout: Duration

    /// The status topic: `<topic>/status`.
    public var statusTopic: String { address.topic + "/status" }

    /// A client for `address`, logging in with `password` when the address names a user.
    public init(address: MQTTAddress, password: String? = nil, timeout: Duration = .seconds(10)) throws(DeliveryError) {
        self.address = address
        self.timeout = timeout
        name = address.description
        var host = [UInt8](repeating: 0, count: 256)
        _ = host.withUnsafeMutableBytes { gethostname($0.baseAddress!.assumingMemoryBound(to: CChar.self), 255) }
        let id = "felica-\(String(decoding: host.prefix { $0 != 0 }, as: UTF8.self))-\(getpid())"
        client = try MosquittoClient(id: String(id.prefix(64)))
        do throws(MosquittoFailure) {
            if let user = address.user { try client.setCredentials(user: user, password: password) }
            try client.setWill(topic: address.topic + "/status", payload: ReaderState.offline.rawValue, retain: true)
            try client.setReconnectDelay(first: 1, longest: 10)
        } catch {
            throw DeliveryError(.badDestination, "\(address): \(error.reason)")
        }
        // On each connection the library's thread publishes the state last told. The
        // client is not captured (it owns the closure): the call goes through the handle
        // the callback is made for.
        let current = current, status = address.topic + "/status"
        client.events.state.withLock { s in
            s.onConnect = { publish in
                publish(status, Array(current.state.withLock { $0 }.rawValue.utf8))
            }
        }
    }

    /// The reader state last told, published again on each connection.
    private let current = CurrentState()
    final class CurrentState: Sendable {
        let state = Mutex(ReaderState.online)
    }

    /// Starts connecting on the first use; false (with why) while even that fails.
    private func start() -> String? {
        if started { return nil }
        do throws(MosquittoFailure) {
            try client.connect(host: address.host, port: address.port, keepalive: 30)
            try client.startLoop()
        } catch {
            return "cannot connect to the broker \(address.host):\(address.port): \(error.reason)"
        }
        started = true
        return nil
    }

    /// Waits up to `limit` for `condition` on the client's events; the last state seen.
    private func wait(_ limit: Duration, until condition: (MosquittoEvents.State) -> Bool) -> MosquittoEvents.State {
        let deadline = ContinuousClock.now + limit
        while true {
            let state = client.events.state.withLock { $0 }
            if condition(state) || ContinuousClock.now >= deadline { return state }
            usleep(2000)
        }
    }

    public func deliver(_ body: [UInt8]) -> DeliveryAttempt {
        if let why = start() { return .failed(why) }
        if let sent = inFlight, sent.body == body {
            let state = wait(timeout) { $0.acknowledged.contains(sent.mid) || !$0.connected }
            if client.events.state.withLock({ $0.acknowledged.remove(sent.mid) != nil }) {
                inFlight = nil
                return .delivered
            }
            if !state.connected { return .failed(notConnected(state)) }
        }
        // A connection being made (at start, after the broker came back) is waited for a little.
        let state = wait(.seconds(2)) { $0.connected }
        guard state.connected else { return .failed(notConnected(state)) }
        let mid: Int32
        do throws(MosquittoFailure) {
            mid = try client.publish(topic: address.topic, payload: body, qos: 1, retain: false)
        } catch {
            return .failed("cannot publish to \(address.topic): \(error.reason)")
        }
        inFlight = (body, mid)
        let after = wait(timeout) { $0.acknowledged.contains(mid) || !$0.connected }
        if client.events.state.withLock({ $0.acknowledged.remove(mid) != nil }) {
            inFlight = nil
            return .delivered
        }
        return .failed(after.connected ? "the broker did not acknowledge (PUBACK) within \(timeout)" : notConnected(after))
    }

    private func notConnected(_ state: MosquittoEvents.State) -> String {
        "not connected to the broker \(address.host):\(address.port)" + (state.lastFailure.map { ": \($0)" } ?? "")
    }

    public func readerState(_ state: ReaderState) {
        current.state.withLock { $0 = state }
        guard start() == nil, client.events.state.withLock({ $0.connected }) else { return }
        _ = try? client.publish(topic: statusTopic, payload: Array(state.rawValue.utf8), qos: 1, retain: true)
    }

    public func close() {
        guard started else { return }
        if client.events.state.withLock({ $0.connected }),
           let mid = try? client.publish(topic: statusTopic, payload: Array(ReaderState.offline.rawValue.utf8), qos: 1, retain: true) {
            _ = wait(.seconds(2)) { $0.acknowledged.contains(mid) || !$0.connected }
        }
        client.disconnect()
        client.stopLoop()
        started = false
    }
}

/// `mqtt://[user@]host[:port]/<topic>`: a broker and the topic readings go to.
public struct MQTTAddress: Sendable, Equatable, CustomStringConvertible {
    /// The user to log in as; nil: anonymous.
    public var user: String?
    /// The broker's host name or address (an IPv6 address without its brackets).
    public var host: String
    /// The broker's port (1883 unless given).
    public var port: Int
    /// The topic each reading is published to; the status goes to `<topic>/status`.
    public var topic: String

    /// Parses `mqtt://[user@]host[:port]/<topic>`; throws `.badDestination` naming what is wrong
    /// (`.passwordInAddress` for `user:password@`).
    public init(parsing text: String) throws(DeliveryError) {
        func bad(_ why: String) -> DeliveryError {
            DeliveryError(.badDestination, "'\(text)' is not mqtt://[user@]host[:port]/<topic>: \(why)")
        }
        guard text.lowercased().hasPrefix("mqtt://") else {
            throw bad(text.lowercased().hasPrefix("mqtts://") ? "MQTT over TLS is not supported" : "it does not start with mqtt://")
        }
        let rest = text.dropFirst(7)
        guard let slash = rest.firstIndex(of: "/") else { throw bad("no topic after the host") }
        var authority = rest[..<slash]
        let topic = String(rest[rest.index(after: slash)...])
        guard !topic.isEmpty else { throw bad("the topic is empty") }
        guard !topic.contains("+") && !topic.contains("#") else { throw bad("a topic to publish to has no wildcards (+, #)") }
        if let at = authority.lastIndex(of: "@") {
            let user = String(authority[..<at])
            guard !user.isEmpty else { throw bad("the user before @ is empty") }
            guard !user.contains(":") else {
                throw DeliveryError(.passwordInAddress, "'\(text)' is not mqtt://[user@]host[:port]/<topic>: a password does not go in the address")
            }
            self.user = user
            authority = authority[authority.index(after: at)...]
        } else {
            user = nil
        }
        var port = 1883
        var host = authority
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { throw bad("an IPv6 address without its ]") }
            host = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":"), let p = Int(after.dropFirst()), (1...65535).contains(p) else { throw bad("the port is not a number from 1 to 65535") }
                port = p
            }
        } else if let colon = authority.lastIndex(of: ":") {
            guard let p = Int(authority[authority.index(after: colon)...]), (1...65535).contains(p) else {
                throw bad("the port is not a number from 1 to 65535")
            }
            port = p
            host = authority[..<colon]
        }
        guard !host.isEmpty else { throw bad("the host is empty") }
        self.host = String(host)
        self.port = port
        self.topic = topic
    }

    /// `mqtt://user@host:port/topic`, as given (without a password: there is none in it).
    public var description: String {
        let shownHost = host.contains(":") ? "[\(host)]" : host
        return "mqtt://\(user.map { "\($0)@" } ?? "")\(shownHost):\(port)/\(topic)"
    }
}
