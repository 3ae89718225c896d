import FeliCa
import Synchronization

/// A transport that hands every exchange of the transport it wraps to `sink` as it
/// happens (and every time the session asks the reader itself which card it found), decoded as `felica trace show` lists it: the command before it is sent (so a
/// hang shows what is pending), then the answer or the failure.
///
///     #1  0.000000  →  Polling system=FFFF request=system code slots=1  (timeout 5.1 ms)
///         0.000042  ←  Polling response IDm=… PMm=… system=0003  (0.042 ms)
public final class LiveTrace: TransportWrapper {
    /// The transport being watched.
    public let inner: any Transport
    /// Switches the wrapped transport and says so, between the exchanges it separates.
    public func switchBitRate(to rate: AirTiming.BitRate) async throws(FeliCaError) {
        let from = inner.bitRate
        try await inner.switchBitRate(to: rate)
        if rate != from {
            sink("    \(Trace.time(TraceRecorder.seconds(clock.now - start)))  ⇄  bit rate \(from.rawValue) → \(rate.rawValue) kbps")
        }
    }

    private let sink: @Sendable (String) -> Void
    private let clock = ContinuousClock()
    private let start: ContinuousClock.Instant
    private let count = Mutex(0)

    /// Wraps `transport`; `sink` receives one line per packet (without a newline).
    public init(wrapping transport: any Transport, sink: @escaping @Sendable (String) -> Void) {
        inner = transport
        self.sink = sink
        start = clock.now
    }

    public func exchange(_ packet: [UInt8], timeout: Duration) async throws(FeliCaError) -> [UInt8] {
        let number = "#" + String(count.withLock { $0 += 1; return $0 })
        let blank = String(repeating: " ", count: number.count)
        let sent = clock.now
        sink("\(number)  \(Trace.time(TraceRecorder.seconds(sent - start)))  →  \(PacketDescription.command(packet))"
             + "  (timeout \(Trace.milliseconds(TraceRecorder.seconds(timeout))))")
        do {
            let reply = try await inner.exchange(packet, timeout: timeout)
            let done = clock.now
            sink("\(blank)  \(Trace.time(TraceRecorder.seconds(done - start)))  ←  \(PacketDescription.response(reply, to: packet))"
                 + "  (\(Trace.milliseconds(TraceRecorder.seconds(done - sent))))")
            return reply
        } catch {
            let done = clock.now
            sink("\(blank)  \(Trace.time(TraceRecorder.seconds(done - start)))  ✕  \(error.code): \(error.reason)"
                 + "  (\(Trace.milliseconds(TraceRecorder.seconds(done - sent))))")
            throw error
        }
    }

    /// Asks the wrapped transport which card its reader found, and says what it answered
    /// as `felica trace show` lists it.
    public func readerReportedIdentity() async throws(FeliCaError) -> (idm: IDm, pmm: PMm)? {
        let (asked, result) = await Trace.ReaderIdentity.ask(inner, after: 0, clock: clock, since: start)
        sink(String(Trace.line(asked, indent: "  ").dropLast()))
        return try result.get()
    }
}
