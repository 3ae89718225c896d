import FeliCa

/// A deliberate misbehaviour of the RC-S380 emulator, for testing how hosts cope.
///
/// A fault hits the InCommRF that carries the `exchange`-th packet to the card (counting
/// from 1 over the emulator's life), once.
public struct RCS380Fault: Hashable, Sendable, CustomStringConvertible {
    public enum Kind: Hashable, Sendable {
        /// The response frame goes out with a wrong data checksum.
        case corruptFrame
        /// The response comes this much later than it should.
        case lateReply(Duration)
        /// The command's ACK never comes; its response does.
        case dropAck
        /// The reader disappears from the bus while the command runs.
        case unplug
        /// The reader disappears from the bus while the command runs and is plugged back
        /// in, powered up afresh, this much later.
        case away(Duration)
    }

    public var kind: Kind
    /// 1-based number of the card exchange the fault hits.
    public var exchange: Int

    public init(_ kind: Kind, atExchange exchange: Int) {
        self.kind = kind
        self.exchange = exchange
    }

    /// Parses `corrupt@N`, `drop-ack@N`, `late@N`, `late@N:MS` (delay in milliseconds,
    /// default 1000), `unplug@N`, `away@N` or `away@N:MS` (back after MS milliseconds,
    /// default 3000): the spelling of `felica-sim rcs380 --fault`.
    public init(parsing text: String) throws(FeliCaError) {
        let (name, n, ms) = try FaultSpelling.parse(text, examples: "corrupt@3, drop-ack@2, late@4:1500, unplug@2, away@5:3000")
        switch (name, ms) {
        case ("corrupt", nil): kind = .corruptFrame
        case ("drop-ack", nil): kind = .dropAck
        case ("unplug", nil): kind = .unplug
        case ("late", let ms): kind = .lateReply(.milliseconds(ms ?? 1000))
        case ("away", let ms): kind = .away(ms.map { .milliseconds($0) } ?? FaultSpelling.defaultAway)
        default: throw FaultSpelling.unknown(text, kind: name, kinds: "corrupt, drop-ack, late, unplug, away")
        }
        exchange = n
    }

    public var description: String {
        switch kind {
        case .corruptFrame: return "corrupt@\(exchange)"
        case .dropAck: return "drop-ack@\(exchange)"
        case .unplug: return "unplug@\(exchange)"
        case .lateReply(let d): return FaultSpelling.late(exchange, d)
        case .away(let d): return FaultSpelling.away(exchange, d)
        }
    }
}
