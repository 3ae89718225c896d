internal import CMosquitto
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// libmosquitto, one client: one small wrapper per C call, each return code turned into
/// words in one place. The library's own network thread (`mosquitto_loop_start`) keeps the
/// connection, its keep-alive and its reconnections; the callbacks it makes land in
/// ``MosquittoEvents``. The client is destroyed exactly once, in `deinit`.
final class MosquittoClient {
    private let handle: OpaquePointer
    /// What the library's thread reports; kept alive here for as long as the handle.
    let events: MosquittoEvents
    private var looping = false

    /// libmosquitto loaded (see ``loadLibmosquitto()``) and `mosquitto_lib_init`, once per
    /// process: nil when both went well, else why not.
    private static let unavailable: String? = {
        if let failure = loadLibmosquitto() { return failure }
        guard felica_mosquitto_lib_init() == MOSQ_ERR_SUCCESS.rawValue else {
            return "libmosquitto could not be initialised (mosquitto_lib_init failed)"
        }
        return nil
    }()

    init(id: String) throws(DeliveryError) {
        events = MosquittoEvents()
        if let unavailable = Self.unavailable { throw DeliveryError(.library, unavailable) }
        guard let handle = felica_mosquitto_new(id, true, Unmanaged.passUnretained(events).toOpaque()) else {
            throw DeliveryError(.library, "libmosquitto could not be initialised (mosquitto_new failed)")
        }
        self.handle = handle
        felica_mosquitto_connect_callback_set(handle) { mosq, object, code in
            MosquittoEvents.of(object).connected(code) { topic, payload in
                _ = felica_mosquitto_publish(mosq, nil, topic, Int32(payload.count), payload, 1, true)
            }
        }
        felica_mosquitto_disconnect_callback_set(handle) { _, object, code in
            MosquittoEvents.of(object).disconnected(code)
        }
        felica_mosquitto_publish_callback_set(handle) { _, object, mid in
            MosquittoEvents.of(object).acknowledged(mid)
        }
    }

    deinit {
        if looping { felica_mosquitto_loop_stop(handle, true) }
        felica_mosquitto_destroy(handle)
    }

    /// `mosquitto_username_pw_set`.
    func setCredentials(user: String, password: String?) throws(MosquittoFailure) {
        try check(felica_mosquitto_username_pw_set(handle, user, password))
    }

    /// `mosquitto_will_set`: what the broker publishes when the connection drops unsaid.
    func setWill(topic: String, payload: String, retain: Bool) throws(MosquittoFailure) {
        let bytes = Array(payload.utf8)
        try check(felica_mosquitto_will_set(handle, topic, Int32(bytes.count), bytes, 1, retain))
    }

    /// `mosquitto_reconnect_delay_set`: pauses between reconnections, doubling.
    func setReconnectDelay(first: UInt32, longest: UInt32) throws(MosquittoFailure) {
        try check(felica_mosquitto_reconnect_delay_set(handle, first, longest, true))
    }

    /// `mosquitto_connect_async`: starts connecting (a refused loopback connection fails here).
    func connect(host: String, port: Int, keepalive: Int) throws(MosquittoFailure) {
        try check(felica_mosquitto_connect_async(handle, host, Int32(port), Int32(keepalive)))
    }

    /// `mosquitto_loop_start`: the library's network thread, which also reconnects.
    func startLoop() throws(MosquittoFailure) {
        try check(felica_mosquitto_loop_start(handle))
        looping = true
    }

    /// `mosquitto_publish`: queues `payload` on `topic`; returns its message id.
    func publish(topic: String, payload: [UInt8], qos: Int32, retain: Bool) throws(MosquittoFailure) -> Int32 {
        var mid: Int32 = 0
        try check(felica_mosquitto_publish(handle, &mid, topic, Int32(payload.count), payload, qos, retain))
        return mid
    }

    /// `mosquitto_disconnect`: a clean goodbye (the broker then does not send the will).
    func disconnect() {
        _ = felica_mosquitto_disconnect(handle)
    }

    /// `mosquitto_loop_stop`: ends the network thread, waiting for it.
    func stopLoop() {
        guard looping else { return }
        _ = felica_mosquitto_loop_stop(handle, false)
        looping = false
    }

    private func check(_ code: Int32) throws(MosquittoFailure) {
        guard code == MOSQ_ERR_SUCCESS.rawValue else {
            throw MosquittoFailure(code: code, errno: code == MOSQ_ERR_ERRNO.rawValue ? errno : 0)
        }
    }
}

/// Loads libmosquitto (`libmosquitto.so.1`), which felica does not link so that its start
/// does not pay for it: nil when loaded, else what failed and the package that brings it.
func loadLibmosquitto() -> String? {
    var message = [CChar](repeating: 0, count: 512)
    guard felica_mosquitto_load(&message, message.count) != 0 else { return nil }
    let why = String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    return "MQTT delivery needs libmosquitto, which could not be loaded (\(why)); "
        + "install the libmosquitto1 package"
}

/// A libmosquitto return code other than success, in words.
struct MosquittoFailure: Error {
    let code: Int32
    /// The system's error when `code` is `MOSQ_ERR_ERRNO`.
    let errno: Int32
    var reason: String {
        errno != 0 ? String(cString: strerror(errno)) : String(cString: felica_mosquitto_strerror(code))
    }
}

/// What the library's network thread reports: the connection's state and the message ids
/// the broker acknowledged (PUBACK). Read by the delivering thread.
final class MosquittoEvents: Sendable {
    struct State {
        var connected = false
        /// Why the last connection failed or ended, in words; nil before any.
        var lastFailure: String?
        var acknowledged: Set<Int32> = []
        /// What runs on each (re)connection, given a way to publish (topic, payload)
        /// retained with QoS 1: the status topic published again.
        var onConnect: (@Sendable (_ publish: (String, [UInt8]) -> Void) -> Void)?
    }
    let state = Mutex(State())

    static func of(_ object: UnsafeMutableRawPointer?) -> MosquittoEvents {
        Unmanaged<MosquittoEvents>.fromOpaque(object!).takeUnretainedValue()
    }

    func connected(_ code: Int32, publish: (String, [UInt8]) -> Void) {
        let run = state.withLock { s -> (@Sendable ((String, [UInt8]) -> Void) -> Void)? in
            s.connected = code == 0
            if code != 0 { s.lastFailure = "the broker refused the connection: " + String(cString: felica_mosquitto_connack_string(code)) }
            return code == 0 ? s.onConnect : nil
        }
        run?(publish)
    }

    func disconnected(_ code: Int32) {
        state.withLock { s in
            s.connected = false
            if code != 0 { s.lastFailure = "the connection to the broker was lost" }
        }
    }

    func acknowledged(_ mid: Int32) {
        _ = state.withLock { $0.acknowledged.insert(mid) }
    }
}
