import FeliCa
import FeliCaReaderCodecs

/// The PN532 commands a FeliCa reader needs, as frames to send and replies to read: the
/// pure half of ``PN532SerialTransport`` (no I/O), so its logic runs against the emulator
/// model in tests as it does against a serial line.
///
/// Sources: NXP PN532 User Manual (UM0701-02) §7.2.8 SetSerialBaudRate, §7.2.10 SAMConfiguration, §7.3.1
/// RFConfiguration, §7.3.5 InListPassiveTarget, §7.3.9 InCommunicateThru; §6.2.2 for the
/// HSU wake-up (the chip sleeps until it sees `55` and then waits for the line to settle).
public enum PN532Commands {
    /// What the host writes to wake a chip in HSU mode before its first command: `55 55`
    /// and enough `00` for the chip's oscillator to start (libnfc and nfcpy send the same
    /// kind of preamble).
    public static let wakeUp: [UInt8] = [0x55, 0x55] + [UInt8](repeating: 0x00, count: 14)

    /// SAMConfiguration, normal mode (no SAM), no timeout, IRQ line used: `14 01 14 01`.
    public static let samConfiguration: [UInt8] = [0x14, 0x01, 0x14, 0x01]

    /// RFConfiguration MaxRetries: ATR_REQ 0xFF, PSL 0x01, passive activation 0x00 (one try):
    /// a Polling no card answers comes back after one Polling window instead of never.
    public static let oneActivationAttempt: [UInt8] = [0x32, 0x05, 0xFF, 0x01, 0x00]

    /// The serial speeds SetSerialBaudRate names, by its BR code (§7.2.8): 0 is 9600 baud.
    static let serialSpeeds = [9_600, 19_200, 38_400, 57_600, 115_200, 230_400, 460_800, 921_600, 1_288_000]

    /// SetSerialBaudRate `10 BR`: the chip answers at the old speed, waits for the host's
    /// ACK (at the old speed too), then both run at the new one. Nil for a speed it lacks.
    public static func setSerialBaudRate(_ baud: Int) -> [UInt8]? {
        serialSpeeds.firstIndex(of: baud).map { [0x10, UInt8($0)] }
    }

    /// RFConfiguration RF field: on or off (`32 01 0x`); InListPassiveTarget turns it on
    /// itself, so off is what a host sends when it lets go of the reader.
    public static func field(on: Bool) -> [UInt8] { [0x32, 0x01, on ? 0x01 : 0x00] }

    /// RFConfiguration timings: `32 02 RFU ATR_RES timeout, non-DEP timeout`; the last is
    /// what InCommunicateThru waits for a card.
    public static func timeout(_ t: ChipTimeout) -> [UInt8] { [0x32, 0x02, 0x00, 0x0B, UInt8(t.code)] }

    /// InListPassiveTarget for one FeliCa target: `4A 01 BrTy 00 SC SC RC TSN` (BrTy 01 at
    /// 212, 02 at 424 kbps); `polling` is the Polling packet with its LEN byte.
    public static func listFeliCa(polling: [UInt8], at rate: AirTiming.BitRate) -> [UInt8] {
        [0x4A, 0x01, rate == .kbps424 ? 0x02 : 0x01] + polling.dropFirst()
    }

    /// InCommunicateThru: `42` and the packet as the card gets it (LEN first).
    public static func communicateThru(_ packet: [UInt8]) -> [UInt8] { [0x42] + packet }

    /// The response code a command's reply carries: the command code + 1.
    public static func responseCode(of command: [UInt8]) -> UInt8 { (command.first ?? 0) &+ 1 }

    /// The card's Polling response (LEN first) from InListPassiveTarget's reply
    /// `4B NbTg [Tg POL_RES]`; nil when no card answered.
    public static func pollingResponse(_ reply: [UInt8]) throws(FeliCaError) -> [UInt8]? {
        var r = ByteReader(reply[...], frame: "PN532 InListPassiveTarget reply")
        _ = try r.readUInt8("response code")
        let targets = try r.readUInt8("NbTg")
        guard targets > 0 else { return nil }
        _ = try r.readUInt8("Tg")
        let packet = Array(r.readRest())
        guard let length = packet.first, length >= 18, Int(length) == packet.count else {
            throw FeliCaError(.badLength, "PN532 InListPassiveTarget reply: a Polling response of \(packet.count) bytes says LEN \(packet.first.map { String($0) } ?? "none")")
        }
        return packet
    }

    /// What InCommunicateThru's reply `43 Status DataIn` holds: the card's packet (LEN first),
    /// or nil when the card stayed silent (status 01, the chip's timeout).
    public static func cardReply(_ reply: [UInt8]) throws(FeliCaError) -> [UInt8]? {
        var r = ByteReader(reply[...], frame: "PN532 InCommunicateThru reply")
        _ = try r.readUInt8("response code")
        let status = try r.readUInt8("Status")
        switch status & 0x3F {
        case 0x00: break
        case 0x01: return nil
        default:
            throw FeliCaError(.transmission, "the PN532 reported error \(Hex.encode([status & 0x3F])) exchanging a packet with the card (\(statusText(status & 0x3F)))")
        }
        let packet = Array(r.readRest())
        guard let length = packet.first, Int(length) == packet.count else {
            throw FeliCaError(.badLength, "PN532 InCommunicateThru reply: a card packet of \(packet.count) bytes says LEN \(packet.first.map { String($0) } ?? "none")")
        }
        return packet
    }

    /// The manual's words for the error codes a FeliCa exchange can meet (§7.1, Table 6).
    static func statusText(_ code: UInt8) -> String {
        switch code {
        case 0x02: "CRC error: the card's reply was garbled"
        case 0x03: "parity error"
        case 0x0A: "RF field not on"
        case 0x0B: "RF protocol error"
        case 0x0D: "buffer overflow"
        case 0x27: "no target selected"
        case 0x29: "the target was released"
        default: "see the PN532 user manual's error table"
        }
    }
}
