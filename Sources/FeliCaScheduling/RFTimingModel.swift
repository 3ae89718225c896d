import FeliCa
import FeliCaSimulation

/// The physical floor of a PC reader (Docs/protocol.md, "Polling timing"): packets take their
/// air time at the bit rate, a card answers Polling in its first time slot, a Polling
/// no card answers lasts until its last slot ends, and there is no session limit.
public struct RFTimingModel: TimingModel {
    public let name = "rf"
    /// Bit rate on the air.
    public var bitRate: AirTiming.BitRate
    /// Delay between field on and the first command. A card may need up to
    /// ~20 ms after the field comes on; the floor assumes it is already powered (0).
    public var powerUp: Duration
    public var sessionLimit: Duration? { nil }
    public var startLatency: Duration { powerUp }

    public init(bitRate: AirTiming.BitRate = .kbps212, powerUp: Duration = .zero) {
        self.bitRate = bitRate
        self.powerUp = powerUp
    }

    public var summary: String {
        "rf: \(bitRate.rawValue) kbps air time, Polling reply in slot 0 (\(format(AirTiming.pollingSlotZero.seconds * 1000)) ms after the command), unanswered Polling waits \(format(pollWindow.seconds * 1000)) ms, no session limit"
    }

    /// An unanswered single-slot Polling: command on the air, then the whole slot window.
    public var pollWindow: Duration {
        AirTiming.airTime(packetLength: PollingCommand().encode().count, at: bitRate) + AirTiming.pollingWindow(slots: 1)
    }

    public func duration(of packet: [UInt8], reply: [UInt8]?, card: VirtualCard) throws(FeliCaError) -> Duration {
        guard let polling = PollingCommand(packet: packet) else {
            // Other commands: the card's own figure, air time both ways plus its PMm time.
            return card.responseTime(to: packet, reply: reply, bitRate: bitRate)
        }
        let command = AirTiming.airTime(packetLength: packet.count, at: bitRate)
        guard let reply else {
            return command + AirTiming.pollingWindow(slots: polling.timeSlot.slots)
        }
        return command + AirTiming.pollingSlotZero + AirTiming.airTime(packetLength: reply.count, at: bitRate)
    }
}
