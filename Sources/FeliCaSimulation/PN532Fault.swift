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
    }

    public var kind: Kind
    /// 1-based number of the card exchange the fault hits.
    public var exchange: Int

    public init(_ kind: Kind, atExchange exchange: Int) {
        self.kind = kind
        self.exchange = exchange
    }

    /// Parses `corrupt@N`, `drop-ack@N`, `late@N` or `late@N:MS` (delay in milliseconds,
    /// default 1000): the spelling of `felica-sim pn532 --fault`.
    public init(parsing text: String) throws(FeliCaError) {
        let parts = text.split(separator: "@", maxSplits: 1).map(String.init)
        guard parts.count == 2 else {
            throw FeliCaError(.badInput, "fault \"\(text)\": expected KIND@EXCHANGE, e.g. corrupt@3, drop-ack@2, late@4:1500")
        }
        var numbers = parts[1].split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        guard let n = Int(numbers.removeFirst()), n >= 1 else {
            throw FeliCaError(.badInput, "fault \"\(text)\": the exchange number after @ must be a whole number from 1")
        }
        switch parts[0] {
        case "corrupt" where numbers.isEmpty: kind = .corruptChecksum
        case "drop-ack" where numbers.isEmpty: kind = .dropAck
        case "late":
            var ms = 1000
            if let msText = numbers.first {
                guard numbers.count == 1, let v = Int(msText), v > 0 else {
                    throw FeliCaError(.badInput, "fault \"\(text)\": the delay after : must be a positive number of milliseconds")
                }
                ms = v
            }
            kind = .lateReply(.milliseconds(ms))
        default:
            throw FeliCaError(.badInput, "fault \"\(text)\": unknown kind \"\(parts[0])\" (corrupt, drop-ack, late)")
        }
        exchange = n
    }

    public var description: String {
        switch kind {
        case .corruptChecksum: return "corrupt@\(exchange)"
        case .dropAck: return "drop-ack@\(exchange)"
        case .lateReply(let d):
            let ms = d.components.seconds * 1000 + d.components.attoseconds / 1_000_000_000_000_000
            return "late@\(exchange):\(ms)"
        }
    }
}
