/// Moves one FeliCa packet to a card and one back: what every backend (libnfc, PC/SC,
/// virtual card, replay) offers upward.
///
/// Packets carry their LEN byte. Polling is a packet too: a backend that polls through
/// its own mechanism still takes the Polling packet and returns the Polling response.
/// No answer within `timeout` throws ``FeliCaError/Code/timeout``; a Polling that no card
/// answers is a timeout as well.
public protocol Transport: AnyObject, Sendable {
    /// The device string this transport was opened from (`virtual:suica`).
    var name: String { get }
    /// Time the host link adds to every exchange beyond the card's own response time;
    /// the session adds it to the PMm timeouts.
    var linkLatency: Duration { get }
    /// Sends `packet` and returns the card's reply.
    func exchange(_ packet: [UInt8], timeout: Duration) async throws(FeliCaError) -> [UInt8]
    /// Releases the device; later exchanges throw.
    func close() async
    /// The longest card reply (packet with LEN) the link brings back; nil = any FeliCa
    /// packet. A PC/SC reader that takes only short APDUs carries less than a 15-block read
    /// returns, so the session asks for fewer blocks at once.
    var longestReply: Int? { get }
    /// The IDm and PMm of the card in the field as the reader itself reports them, for a
    /// reader that will not forward Polling; nil when the reader cannot tell.
    func readerReportedIdentity() async throws(FeliCaError) -> (idm: IDm, pmm: PMm)?
    /// The bit rate exchanges run at now.
    var bitRate: AirTiming.BitRate { get }
    /// The bit rates this link can switch its exchanges to, ``bitRate`` among them. A card
    /// answers at the rate it is spoken to, if it supports that rate at all: Polling with
    /// ``PollingRequestCode/communicationPerformance`` tells (``CardSession/useFastestBitRate(for:expectedBlocks:)``).
    var bitRates: [AirTiming.BitRate] { get }
    /// Runs the following exchanges at `rate`, one of ``bitRates``.
    func switchBitRate(to rate: AirTiming.BitRate) async throws(FeliCaError)
    /// Whether this transport's card is moved by the transport rather than by a hand: a
    /// virtual card. A watch loop takes such a card away after each tap and places it again
    /// (``placeCard(_:)``); a reader's cards come and go by themselves.
    var placesCardItself: Bool { get }
    /// Puts the card in the field (`true`) or takes it away (`false`), where
    /// ``placesCardItself``; nothing for a reader.
    func placeCard(_ present: Bool)
}

extension Transport {
    /// Most links carry any FeliCa packet.
    public var longestReply: Int? { nil }
    /// Most readers forward Polling and report nothing themselves.
    public func readerReportedIdentity() async throws(FeliCaError) -> (idm: IDm, pmm: PMm)? { nil }
    /// Most links run at 212 kbps.
    public var bitRate: AirTiming.BitRate { .kbps212 }
    /// Most links run at one rate.
    public var bitRates: [AirTiming.BitRate] { [bitRate] }
    /// Most links run at one rate: asking for another is an error.
    public func switchBitRate(to rate: AirTiming.BitRate) async throws(FeliCaError) {
        guard rate == bitRate else {
            throw FeliCaError(.unsupported, "\(name) runs at \(bitRate.rawValue) kbps only, not \(rate.rawValue) kbps")
        }
    }
    /// A reader's cards are moved by hand.
    public var placesCardItself: Bool { false }
    /// A reader's cards are moved by hand: nothing to do.
    public func placeCard(_ present: Bool) {}
}

/// Air-interface timing facts (Docs/protocol.md, "Polling timing").
public enum AirTiming {
    /// Bit rates FeliCa runs at.
    public enum BitRate: Int, Sendable, CaseIterable {
        case kbps212 = 212
        case kbps424 = 424

        /// Whether a card's answer to Polling with
        /// ``PollingRequestCode/communicationPerformance`` names this rate: the second byte
        /// of the request data has bit 0 for 212 kbps and bit 1 for 424 kbps.
        public func isSupported(byCommunicationPerformance data: UInt16) -> Bool {
            switch self {
            case .kbps212: data & 0x01 != 0
            case .kbps424: data & 0x02 != 0
            }
        }
    }

    /// Preamble (6), sync (2) and CRC (2) that wrap every packet on the air.
    public static let framingBytes = 10
    /// Slot 0 of a Polling reply starts 512×64/fc after the command ends.
    public static let pollingSlotZero: Duration = .nanoseconds(Int64(512.0 * 64.0 / 13.56e6 * 1e9))
    /// Each Polling time slot lasts 256×64/fc.
    public static let pollingSlot: Duration = .nanoseconds(Int64(256.0 * 64.0 / 13.56e6 * 1e9))

    /// Time on the air of a packet (with LEN) of `length` bytes, framing included.
    public static func airTime(packetLength length: Int, at rate: BitRate = .kbps212) -> Duration {
        let bits = Double((length + framingBytes) * 8)
        return .nanoseconds(Int64(bits / Double(rate.rawValue * 1000) * 1e9))
    }

    /// Longest a Polling with `slots` can wait for a reply after the command ends.
    public static func pollingWindow(slots: Int) -> Duration {
        pollingSlotZero + pollingSlot * slots
    }
}

/// A transport that adds something around another one — recording, live output, waiting
/// for a card — and passes everything else through to ``inner``: its name, latency and
/// limits, the identity the reader reports, its bit rates, and closing.
public protocol TransportWrapper: Transport {
    /// The transport wrapped.
    var inner: any Transport { get }
}

extension TransportWrapper {
    public var name: String { inner.name }
    public var linkLatency: Duration { inner.linkLatency }
    public var longestReply: Int? { inner.longestReply }
    public func readerReportedIdentity() async throws(FeliCaError) -> (idm: IDm, pmm: PMm)? {
        try await inner.readerReportedIdentity()
    }
    public var bitRate: AirTiming.BitRate { inner.bitRate }
    public var bitRates: [AirTiming.BitRate] { inner.bitRates }
    public func switchBitRate(to rate: AirTiming.BitRate) async throws(FeliCaError) {
        try await inner.switchBitRate(to: rate)
    }
    public func close() async { await inner.close() }
    public var placesCardItself: Bool { inner.placesCardItself }
    public func placeCard(_ present: Bool) { inner.placeCard(present) }
}
