import FeliCa

/// A deliberate misbehaviour of the PN532 emulator, for testing how hosts cope.
///
/// A fault hits the host command that carries the `exchange`-th packet to the card
/// (counting from 1 over the emulator's life: InListPassiveTarget, InDataExchange,
/// InCommunicateThru, InAutoPoll), once.
public struct PN532Fault: Hashable, Sendable, CustomStringConvertible {
    public enum Kind: Hashable, Sendable {
        /// The response frame goes out with a wrong data checksum.
        case corruptChecksum
        /// The chip runs the command but sends no ACK frame first.
        case dropAck
        /// The response comes this much later than it should.
        case lateReply(Duration)
        /// The reader leaves the bus while the command runs (after its ACK): for a reader
        /// on USB (`felica-sim rcs956`); a serial line has no such event.
        case unplug
        /// The reader goes away while the command runs (after its ACK) and comes back,
        /// powered up afresh, this much later: a USB reader leaves the bus and returns; a
        /// serial one's port goes away (the pseudo-terminal closes, `--link` is removed)
        /// and comes back at the same `--link`.
        case away(Duration)
    }

    public var kind: Kind
    /// 1-based number of the card exchange the fault hits.
    public var exchange: Int

    public init(_ kind: Kind, atExchange exchange: Int) {
        self.kind = kind
        self.exchange = exchange
    }

    /// Parses `corrupt@N`, `drop-ack@N`, `late@N` or `late@N:MS` (delay in milliseconds,
    /// default 1000), `away@N` or `away@N:MS` (back after MS milliseconds, default 3000),
    /// and with `usb`, `unplug@N`: the spelling of `felica-sim pn532 --fault` and
    /// `felica-sim rcs956 --fault`.
    public init(parsing text: String, usb: Bool = false) throws(FeliCaError) {
        let (name, n, ms) = try FaultSpelling.parse(text, examples: "corrupt@3, drop-ack@2, late@4:1500, away@5:3000" + (usb ? ", unplug@2" : ""))
        switch (name, ms) {
        case ("corrupt", nil): kind = .corruptChecksum
        case ("drop-ack", nil): kind = .dropAck
        case ("late", let ms): kind = .lateReply(.milliseconds(ms ?? 1000))
        case ("unplug", nil) where usb: kind = .unplug
        case ("away", let ms): kind = .away(ms.map { .milliseconds($0) } ?? FaultSpelling.defaultAway)
        default: throw FaultSpelling.unknown(text, kind: name, kinds: "corrupt, drop-ack, late, away" + (usb ? ", unplug" : ""))
        }
        exchange = n
    }

    public var description: String {
        switch kind {
        case .corruptChecksum: return "corrupt@\(exchange)"
        case .dropAck: return "drop-ack@\(exchange)"
        case .lateReply(let d): return FaultSpelling.late(exchange, d)
        case .unplug: return "unplug@\(exchange)"
        case .away(let d): return FaultSpelling.away(exchange, d)
        }
    }
}
