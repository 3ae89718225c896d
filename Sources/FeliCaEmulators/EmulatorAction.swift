import FeliCa
import Glibc

/// What an emulated reader does on its link, as its state machine decides it.
public enum EmulatorAction: Hashable, Sendable {
    /// Write `bytes` to the host at time `at` (on the clock the emulator was fed).
    case send([UInt8], at: Duration)
    /// Drop every write scheduled later than `after` (the host aborted the command).
    case cancel(after: Duration)
    /// The reader leaves the bus at `at`: from then on every transfer fails.
    case unplug(at: Duration)
    /// The reader that left is plugged back in at `at`: whoever serves its link brings the
    /// link back (the bus device, the pseudo-terminal) and calls the emulator's `plugIn()`.
    /// Links opened before it left stay dead, as a real reader's would.
    case plugIn(at: Duration)
}

/// A card tapped on the reader over and over: in the field for `present` packets, out
/// of it for the next `absent`, and so on, counted over the packets handed to the card
/// (what ``PN532Emulator/cardExchanges`` and ``RCS380Emulator/cardExchanges`` count). A count, not a clock, so runs repeat exactly.
public struct CardTaps: Hashable, Sendable, CustomStringConvertible {
    public var present: Int
    public var absent: Int

    public init(present: Int, absent: Int) {
        self.present = max(1, present)
        self.absent = max(1, absent)
    }

    /// Parses `PRESENT:ABSENT`, e.g. `6:3` (the spelling of `felica-sim pn532|rcs380 --taps`).
    public init(parsing text: String) throws(FeliCaError) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, let p = Int(parts[0]), let a = Int(parts[1]), p >= 1, a >= 1, p <= 1_000_000, a <= 1_000_000 else {
            throw FeliCaError(.badInput, "taps \"\(text)\": expected PRESENT:ABSENT, two whole numbers of packets from 1, e.g. 6:3")
        }
        self.init(present: p, absent: a)
    }

    /// Whether the card is in the field for the `exchange`-th packet (1-based).
    public func isPresent(atExchange exchange: Int) -> Bool {
        (exchange - 1) % (present + absent) < present
    }

    public var description: String { "\(present):\(absent)" }
}

/// Link times the emulated readers share.
enum EmulatorTiming {
    /// Full-speed USB: 64-byte packets, about 1 ms frames for bulk under load; modelled as
    /// 12 Mbit/s plus one 125 µs turnaround a packet.
    static func fullSpeedUSB(_ bytes: Int) -> Duration {
        let packets = max(1, (bytes + 63) / 64)
        return .nanoseconds(Int64(bytes) * 8 * 1_000_000_000 / 12_000_000) + .microseconds(125) * packets
    }
}

/// The writes an emulator scheduled, in time order, for the thread that serves its link:
/// what the PN532 and RC-S380 servers share.
struct WriteSchedule {
    /// What is due: bytes for the host, or the reader leaving the bus.
    enum Due: Equatable {
        case bytes([UInt8])
        case unplug
        case plugIn
    }

    private var queue: [(at: Duration, due: Due)] = []  // sorted by time, stable

    mutating func apply(_ actions: [EmulatorAction]) {
        for action in actions {
            switch action {
            case .send(let bytes, let at): insert(.bytes(bytes), at: at)
            case .cancel(let after): queue.removeAll { $0.at > after }
            case .unplug(let at):
                queue.removeAll { $0.at > at }
                insert(.unplug, at: at)
            case .plugIn(let at):
                insert(.plugIn, at: at)
            }
        }
    }

    private mutating func insert(_ due: Due, at: Duration) {
        let i = queue.firstIndex { $0.at > at } ?? queue.endIndex
        queue.insert((at, due), at: i)
    }

    /// Removes and returns what is due at `now`.
    mutating func takeDue(at now: Duration) -> [Due] {
        let n = queue.prefix { $0.at <= now }.count
        defer { queue.removeFirst(n) }
        return queue.prefix(n).map(\.due)
    }

    /// How long poll() may wait for the host at `now` (-1: nothing scheduled), or nil after
    /// sleeping out a wait shorter than poll()'s whole milliseconds: look again then.
    func pollTimeout(at now: Duration) -> Int32? {
        guard let first = queue.first else { return -1 }
        let left = first.at - now
        guard left >= .milliseconds(1) else {
            let c = max(left, .zero).components
            var ts = timespec(tv_sec: Int(c.seconds), tv_nsec: Int(c.attoseconds / 1_000_000_000))
            nanosleep(&ts, nil)
            return nil
        }
        return Int32(min(left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000, 60_000))
    }
}
