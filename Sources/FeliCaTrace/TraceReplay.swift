import FeliCa
import Synchronization

/// The `replay:<path>` device: answers each command with the response recorded in a
/// trace, in order, and fails loudly when the code under test sends something else.
///
/// In a test:
///
///     let replay = try TraceReplay.load("Tests/Traces/suica-dump.jsonl")
///     let image = try await CardImage.read(using: CardSession(transport: replay))
///     try replay.assertFullyConsumed()
public final class TraceReplay: Transport {
    /// The recorded session.
    public let trace: Trace
    /// The device string (`replay:Tests/Traces/suica-dump.jsonl`).
    public let name: String
    /// The recorded link's latency (the header's `linkLatency`), so the session times and
    /// decides as it did when recorded; replays still answer at once.
    public let linkLatency: Duration

    /// The rates the recording ran at: a session replayed against it may switch between
    /// them, and each exchange must be sent at the rate it was recorded at.
    public let bitRates: [AirTiming.BitRate]

    private struct State {
        var next = 0
        /// The next of the trace's ``Trace/readerIdentities`` to answer.
        var nextIdentity = 0
        var failure: FeliCaError?
        var closed = false
        var rate: AirTiming.BitRate
    }
    private let state: Mutex<State>

    public init(_ trace: Trace, name: String) {
        self.trace = trace
        self.name = name
        linkLatency = .nanoseconds(Int64(((trace.linkLatency ?? 0) * 1e9).rounded()))
        let rates = Set(trace.exchanges.map(\.bitRate)).union([.kbps212])
        bitRates = AirTiming.BitRate.allCases.filter(rates.contains)
        state = Mutex(State(rate: trace.exchanges.first?.bitRate ?? .kbps212))
    }

    public var bitRate: AirTiming.BitRate { state.withLock { $0.rate } }

    public func switchBitRate(to rate: AirTiming.BitRate) async throws(FeliCaError) {
        guard bitRates.contains(rate) else {
            throw FeliCaError(.unsupported, "\(name): the recording never ran at \(rate.rawValue) kbps")
        }
        state.withLock { $0.rate = rate }
    }

    /// Loads the trace at `path`. With `lenient`, a damaged trace replays the exchanges
    /// before the damage (``Trace/damage`` says where it stopped); otherwise damage throws
    /// `FeliCaError.Code.badInput` naming the line.
    public static func load(_ path: String, lenient: Bool = false, name: String? = nil) throws(FeliCaError) -> TraceReplay {
        TraceReplay(try Trace.load(path: path, lenient: lenient), name: name ?? "replay:\(path)")
    }

    /// Exchanges answered so far.
    public var consumed: Int { state.withLock { $0.next } }
    /// Recorded exchanges not yet asked for.
    public var remaining: Int { trace.exchanges.count - consumed }

    public func exchange(_ packet: [UInt8], timeout: Duration) async throws(FeliCaError) -> [UInt8] {
        try state.withLock { s throws(FeliCaError) -> [UInt8] in
            if let failure = s.failure { throw failure }
            guard !s.closed else { throw FeliCaError(.readerGone, "\(name): the replay was closed") }
            let number = s.next + 1
            if s.nextIdentity < trace.readerIdentities.count, trace.readerIdentities[s.nextIdentity].after == s.next {
                let asked = trace.readerIdentities[s.nextIdentity]
                let e = ReplayError.failure(.divergence, "\(name): the recording asked the reader for the card's IDm and PMm\(lineNote(asked.line)) before exchange \(number), but the code sent \(PacketDescription.command(packet)) instead")
                s.failure = e
                throw e
            }
            guard s.next < trace.exchanges.count else {
                let e = exhausted(packet, number: number)
                s.failure = e
                throw e
            }
            let recorded = trace.exchanges[s.next]
            guard recorded.tx == packet else {
                let e = divergence(recorded, packet, number: number)
                s.failure = e
                throw e
            }
            guard recorded.bitRate == s.rate else {
                let e = ReplayError.failure(.divergence, "\(name): exchange \(number)\(lineNote(recorded)) was recorded at \(recorded.bitRate.rawValue) kbps but sent at \(s.rate.rawValue) kbps: \(PacketDescription.command(packet))")
                s.failure = e
                throw e
            }
            s.next += 1
            if let rx = recorded.rx { return rx }
            let e = recorded.error ?? FeliCaError(.timeout, "no answer")
            throw FeliCaError(e.code, "\(name): exchange \(number) (recorded): \(e.reason)")
        }
    }

    /// Answers with the identity the reader reported at this point of the recording; fails
    /// like a diverging exchange when the recording asked the reader at another point, or
    /// never.
    public func readerReportedIdentity() async throws(FeliCaError) -> (idm: IDm, pmm: PMm)? {
        try state.withLock { s throws(FeliCaError) -> (idm: IDm, pmm: PMm)? in
            if let failure = s.failure { throw failure }
            guard !s.closed else { throw FeliCaError(.readerGone, "\(name): the replay was closed") }
            let identities = trace.readerIdentities
            guard s.nextIdentity < identities.count, identities[s.nextIdentity].after == s.next else {
                let instead = s.next < trace.exchanges.count
                    ? "the recording has exchange \(s.next + 1)\(lineNote(trace.exchanges[s.next])) there: \(PacketDescription.command(trace.exchanges[s.next].tx))"
                    : "the recording ends there"
                let e = ReplayError.failure(.divergence, "\(name): the code asked the reader for the card's IDm and PMm after exchange \(s.next), but \(instead)")
                s.failure = e
                throw e
            }
            let recorded = identities[s.nextIdentity]
            s.nextIdentity += 1
            if let error = recorded.error {
                throw FeliCaError(error.code, "\(name): reader's identity report\(lineNote(recorded.line)) (recorded): \(error.reason)")
            }
            guard let idm = recorded.idm, let pmm = recorded.pmm else { return nil }
            return (idm, pmm)
        }
    }

    public func close() async {
        state.withLock { $0.closed = true }
    }

    /// Throws unless the code under test asked for every recorded exchange and never
    /// diverged: a replay that ends early means the code now does less than it did.
    public func assertFullyConsumed() throws(FeliCaError) {
        try state.withLock { s throws(FeliCaError) in
            if let failure = s.failure { throw failure }
            if s.nextIdentity < trace.readerIdentities.count, trace.readerIdentities[s.nextIdentity].after <= s.next {
                let asked = trace.readerIdentities[s.nextIdentity]
                throw ReplayError.failure(.divergence, "\(name): the recording asked the reader for the card's IDm and PMm\(lineNote(asked.line)) after exchange \(asked.after); the code never did")
            }
            guard s.next == trace.exchanges.count else {
                let next = trace.exchanges[s.next]
                throw ReplayError.failure(.divergence, """
                    \(name): only \(s.next) of \(trace.exchanges.count) recorded exchanges were used; \
                    the next one is exchange \(s.next + 1)\(lineNote(next)): \(PacketDescription.command(next.tx))
                    """)
            }
        }
    }

    private func lineNote(_ e: Trace.Exchange) -> String { lineNote(e.line) }
    private func lineNote(_ line: Int) -> String { line > 0 ? " (line \(line))" : "" }

    private func divergence(_ recorded: Trace.Exchange, _ actual: [UInt8], number: Int) -> FeliCaError {
        let expectedHex = Hex.encode(recorded.tx)
        let actualHex = Hex.encode(actual)
        func firstDifference(from start: Int) -> Int {
            var i = start
            while i < recorded.tx.count, i < actual.count, recorded.tx[i] == actual[i] { i += 1 }
            return i
        }
        // A different length changes the LEN byte too; the byte worth marking is the first
        // difference in what follows it.
        var first = firstDifference(from: 0)
        var lengthNote = ""
        if first == 0, recorded.tx.count > 1, actual.count > 1 {
            first = firstDifference(from: 1)
            lengthNote = " (LEN differs too: expected \(recorded.tx.count) bytes, actual \(actual.count))"
        }
        let shorter = min(recorded.tx.count, actual.count)
        let which = first < shorter
            ? "first difference at byte \(first)\(lengthNote)"
            : (actual.count > recorded.tx.count
                ? "the code sent \(actual.count - recorded.tx.count) more byte(s)"
                : "the code sent \(recorded.tx.count - actual.count) fewer byte(s)")
        let pad = String(repeating: " ", count: 12)
        return ReplayError.failure(.divergence, """
            \(name): exchange \(number)\(lineNote(recorded)) differs from the recording
              expected  \(PacketDescription.command(recorded.tx))
              actual    \(PacketDescription.command(actual))
              expected  \(expectedHex)
              actual    \(actualHex)
            \(pad)\(String(repeating: " ", count: 2 * first))^^ \(which)
            """)
    }

    private func exhausted(_ packet: [UInt8], number: Int) -> FeliCaError {
        var reason = "\(name): the code sent exchange \(number) (\(PacketDescription.command(packet))) but the trace ends after \(trace.exchanges.count) exchange\(trace.exchanges.count == 1 ? "" : "s")"
        if let damage = trace.damage {
            reason += "; the lenient replay stopped at the damage: \(damage.reason)"
        }
        return ReplayError.failure(.exhausted, reason)
    }
}
