import FeliCa
import FeliCaReaderCodecs

/// Carries FeliCa packets over one reader dialect, given a way to send an APDU and get the
/// response. No pcsc-lite here, so the logic runs as well against an in-memory reader.
public struct PCSCDialectDriver: Sendable {
    /// Sends one command APDU, returns the response APDU.
    public typealias Transmit = (CommandAPDU) throws(FeliCaError) -> ResponseAPDU

    public let dialect: PCSCDialect

    public init(dialect: PCSCDialect) {
        self.dialect = dialect
    }

    private var variant: TransparentExchange.Variant { dialect == .sony ? .sony : .standard }

    /// Prepares the reader: Part 3 opens a transparent session and switches it to FeliCa.
    public func begin(_ transmit: Transmit) throws(FeliCaError) {
        guard dialect == .part3 || dialect == .sony else { return }
        for (what, apdu) in [("start transparent session", TransparentExchange.startSession(variant)),
                             ("switch protocol to FeliCa", TransparentExchange.switchToFeliCa(variant))] {
            let reply = try TransparentExchange.Reply.decode(try transmit(apdu))
            guard reply.status.isSuccess else {
                throw FeliCaError(.status, "\(what): reader reported \(reply.status) for data object \(reply.failedObject)")
            }
        }
    }

    /// Undoes ``begin(_:)``: Part 3 ends the session. Best effort; errors are ignored because
    /// the reader is being let go anyway.
    public func end(_ transmit: Transmit) {
        guard dialect == .part3 || dialect == .sony else { return }
        _ = try? transmit(TransparentExchange.endSession(variant))
    }

    /// Sends one FeliCa packet (LEN included) and returns the card's packet; a card that
    /// does not answer throws `.timeout`. ACR122U polls with InListPassiveTarget.
    public func exchange(_ packet: [UInt8], timeout: Duration, _ transmit: Transmit) throws(FeliCaError) -> [UInt8] {
        switch dialect {
        case .part3, .sony:
            return try TransparentExchange.packet(from: try transmit(TransparentExchange.exchange(packet, timeout: timeout, variant)))
        case .raw:
            return try DirectTransmit.packet(from: try transmit(DirectTransmit.command(packet)))
        case .acr122u:
            if packet.count == 6 && packet[1] == CommandCode.polling.rawValue {
                return try ACR122.pollingResponse(from: try fetching(ACR122.listPassiveTarget(polling: packet), transmit))
            }
            return try ACR122.packet(from: try fetching(ACR122.dataExchange(packet), transmit), for: .inDataExchange)
        }
    }

    /// Follows `61 xx` with GET RESPONSE `FF C0 00 00 xx`, as T=0 ACR122U readers require.
    private func fetching(_ apdu: CommandAPDU, _ transmit: Transmit) throws(FeliCaError) -> ResponseAPDU {
        var response = try transmit(apdu)
        var rounds = 0
        while let available = response.status.bytesAvailable {
            rounds += 1
            guard rounds <= 4 else {
                throw FeliCaError(.transmission, "reader kept answering 61 xx to GET RESPONSE")
            }
            let more = try transmit(ACR122.getResponse(available))
            response = ResponseAPDU(data: response.data + more.data, status: more.status)
        }
        return response
    }

    /// Whether the dialect works with the card on the reader: ``begin(_:)`` then a wildcard
    /// Polling that must come back as a valid Polling response.
    public func probe(_ transmit: Transmit) throws(FeliCaError) -> PollingResponse {
        try begin(transmit)
        let polling = PollingCommand(systemCode: .wildcard, requestCode: .none, timeSlot: .one).encode()
        let reply = try exchange(polling, timeout: .milliseconds(100), transmit)
        return try PollingResponse.decode(reply[...])
    }
}
