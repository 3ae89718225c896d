import FeliCa
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A transport that records every exchange of the transport it wraps to a
/// `felica-trace/1` file, as it happens, and every time the session asks the reader itself
/// which card it found (`Transport.readerReportedIdentity()`).
///
/// Each exchange becomes one line handed to the kernel with a single `write` before the
/// answer goes back to the caller, so when the program crashes or the card is pulled,
/// every exchange up to that point is in the file. `syncEachLine` adds an `fsync` per
/// line for power loss too; it is off by default because a disk sync can take longer
/// than a whole card exchange.
///
/// When a line cannot be written (disk full), the exchange throws
/// `FeliCaError.Code.badInput` naming the file: a trace that silently misses exchanges
/// would mislead whoever replays it.
public final class TraceRecorder: TransportWrapper {
    /// The transport being recorded.
    public let inner: any Transport
    /// The trace file.
    public let path: String
    /// Whether every line is synced to disk before the exchange returns.
    public let syncEachLine: Bool


    private let clock = ContinuousClock()
    private let start: ContinuousClock.Instant
    private struct State {
        var fd: Int32?
        var count = 0
    }
    private let state: Mutex<State>

    /// Creates (or replaces) `path` and writes the header naming `transport`'s device.
    public init(wrapping transport: any Transport, path: String, syncEachLine: Bool = false) throws(FeliCaError) {
        inner = transport
        self.path = path
        self.syncEachLine = syncEachLine
        let fd = try TraceFile.create(path)
        var opening = Trace(device: transport.name, started: TraceFile.utcNow())
        if transport.linkLatency > .zero { opening.linkLatency = Self.seconds(transport.linkLatency) }
        let header = opening.headerLine() + "\n"
        do {
            try TraceFile.write(fd, Array(header.utf8), path: path)
            if syncEachLine { try TraceFile.sync(fd, path: path) }
        } catch {
            Glibc.close(fd)
            throw error
        }
        start = clock.now
        state = Mutex(State(fd: fd))
    }

    deinit {
        // Backstop for a caller that never closed: the lines are already written.
        state.withLock { s in
            if let fd = s.fd { Glibc.close(fd) }
            s.fd = nil
        }
    }

    /// Exchanges recorded so far.
    public var exchangeCount: Int { state.withLock { $0.count } }

    public func exchange(_ packet: [UInt8], timeout: Duration) async throws(FeliCaError) -> [UInt8] {
        let sent = clock.now
        let rate = inner.bitRate
        let result: Result<[UInt8], FeliCaError>
        do {
            result = .success(try await inner.exchange(packet, timeout: timeout))
        } catch {
            result = .failure(error)
        }
        let done = clock.now
        let exchange = Trace.Exchange(
            t: Self.seconds(sent - start), tx: packet,
            rx: try? result.get(), error: { if case .failure(let e) = result { e } else { nil } }(),
            timeout: Self.seconds(timeout), elapsed: Self.seconds(done - sent), bitRate: rate)
        try append(exchange)
        return try result.get()
    }

    /// Asks the wrapped transport which card its reader found, and records the answer as
    /// a `readerIdentity` line where it happened among the exchanges.
    public func readerReportedIdentity() async throws(FeliCaError) -> (idm: IDm, pmm: PMm)? {
        let (asked, result) = await Trace.ReaderIdentity.ask(inner, after: exchangeCount, clock: clock, since: start)
        try write(asked.jsonLine(), what: "the reader's report of the card's IDm and PMm", counts: false)
        return try result.get()
    }

    private func append(_ exchange: Trace.Exchange) throws(FeliCaError) {
        try write(exchange.jsonLine(), what: "exchange \(exchangeCount + 1)", counts: true)
    }

    /// Writes one line; `counts` when it is an exchange.
    private func write(_ text: String, what: String, counts: Bool) throws(FeliCaError) {
        let line = Array((text + "\n").utf8)
        try state.withLock { s throws(FeliCaError) in
            guard let fd = s.fd else {
                throw FeliCaError(.badInput, "trace \(path) is closed: the exchange was made but not recorded")
            }
            do throws(FeliCaError) {
                try TraceFile.write(fd, line, path: path)
                if syncEachLine { try TraceFile.sync(fd, path: path) }
            } catch {
                throw FeliCaError(.badInput, "\(error.reason) — \(what) was made but is not in the trace; stopping so the trace is not silently incomplete")
            }
            if counts { s.count += 1 }
        }
    }

    /// Closes the wrapped transport, then syncs and closes the trace file.
    public func close() async {
        await inner.close()
        state.withLock { s in
            guard let fd = s.fd else { return }
            try? TraceFile.sync(fd, path: path)
            try? TraceFile.close(fd, path: path)
            s.fd = nil
        }
    }

    static func seconds(_ d: Duration) -> Double {
        let (s, attoseconds) = d.components
        return Double(s) + Double(attoseconds) / 1e18
    }
}

extension Trace.ReaderIdentity {
    /// Asks `transport` which card its reader found: the question as a trace records it
    /// (timed from `start`, placed `after` that many exchanges), and the answer or failure.
    static func ask(_ transport: any Transport, after: Int, clock: ContinuousClock, since start: ContinuousClock.Instant) async
        -> (Self, Result<(idm: IDm, pmm: PMm)?, FeliCaError>) {
        let sent = clock.now
        let result: Result<(idm: IDm, pmm: PMm)?, FeliCaError>
        do {
            result = .success(try await transport.readerReportedIdentity())
        } catch {
            result = .failure(error)
        }
        let report = try? result.get()
        let failure: FeliCaError? = if case .failure(let e) = result { e } else { nil }
        let asked = Self(t: TraceRecorder.seconds(sent - start), after: after, idm: report?.idm, pmm: report?.pmm,
                         error: failure, elapsed: TraceRecorder.seconds(clock.now - sent))
        return (asked, result)
    }
}
