import FeliCa
import FeliCaReaderCodecs
import Synchronization

/// Carries FeliCa packets over one reader dialect, given a way to send an APDU and get the
/// response. No pcsc-lite here, so the logic runs as well against an in-memory reader.
///
/// It also keeps what the reader has shown about itself: the APDU forms it refused and the
/// FeliCa commands it will not forward. Those facts decide later exchanges (a reader that
/// takes only short APDUs gets reads small enough for a short reply).
public final class PCSCDialectDriver: Sendable {
    /// Sends one command APDU, returns the response APDU.
    public typealias Transmit = (CommandAPDU) throws(FeliCaError) -> ResponseAPDU

    /// What the reader has shown it does not do.
    public struct Limits: Hashable, Sendable {
        /// Transparent-exchange forms the reader refused (`67 00`), or that pcscd says it
        /// cannot carry.
        public var refusedForms: Set<TransparentExchange.Form> = []
        /// FeliCa commands the reader refused to forward (`C0 03 01 6A 80`).
        public var refusedCommands: Set<CommandCode> = []
        public init(refusedForms: Set<TransparentExchange.Form> = [], refusedCommands: Set<CommandCode> = []) {
            self.refusedForms = refusedForms
            self.refusedCommands = refusedCommands
        }
    }

    public let dialect: PCSCDialect
    private let state: Mutex<Limits>

    public init(dialect: PCSCDialect, limits: Limits = Limits()) {
        self.dialect = dialect
        self.state = Mutex(limits)
    }

    /// What the reader has shown so far.
    public var limits: Limits { state.withLock { $0 } }

    /// The longest card packet the link brings back: a short APDU's worth when the reader
    /// takes no extended APDUs in a transparent exchange; nil = any FeliCa packet.
    public var longestReply: Int? {
        guard dialect == .part3 || dialect == .sony, limits.refusedForms.contains(.extended) else { return nil }
        return TransparentExchange.longestPacketInShortReply
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
    /// does not answer throws `.timeout`, a command the reader will not forward
    /// `.refused`. ACR122U polls with InListPassiveTarget.
    public func exchange(_ packet: [UInt8], timeout: Duration, _ transmit: Transmit) throws(FeliCaError) -> [UInt8] {
        switch dialect {
        case .part3, .sony:
            let response = try transparent(packet, timeout: timeout, transmit)
            do {
                return try TransparentExchange.packet(from: response)
            } catch where error.code == .refused {
                if packet.count >= 2, let code = CommandCode(rawValue: packet[1]) {
                    state.withLock { _ = $0.refusedCommands.insert(code) }
                }
                throw error
            }
        case .raw:
            return try DirectTransmit.packet(from: try transmit(DirectTransmit.command(packet)))
        case .acr122u:
            if PollingCommand.isPolling(packet) {
                return try ACR122.pollingResponse(from: try fetching(ACR122.listPassiveTarget(polling: packet), transmit))
            }
            return try ACR122.packet(from: try fetching(ACR122.dataExchange(packet), transmit), for: .inDataExchange)
        }
    }

    /// One transparent exchange in a form the reader takes and whose reply can hold the
    /// card's longest answer to `packet`. A reader that refuses the form (`67 00`) never
    /// passed the packet on, so the other form is tried at once; when only a short APDU
    /// is left and the reply may not fit it, this throws `.unsupported` and ``longestReply``
    /// tells the caller how much to ask for instead.
    func transparent(_ packet: [UInt8], timeout: Duration, _ transmit: Transmit) throws(FeliCaError) -> ResponseAPDU {
        let longest = (try? Command.decode(packet[...]))?.longestResponse ?? 255
        while true {
            let form = try form(forReplyUpTo: longest)
            let apdu = TransparentExchange.exchange(packet, timeout: timeout, variant, form: form)
            let response = try transmit(apdu)
            if response.status == .wrongLength {
                state.withLock { _ = $0.refusedForms.insert(form) }
                continue
            }
            // A reply cut at 256 bytes: the card's answer is lost, but the link said nothing.
            if !apdu.isExtended && response.data.count == 256,
               (try? TransparentExchange.Reply.decode(response)) == nil {
                throw FeliCaError(.transmission, "the reader cut the reply to a short APDU at 256 bytes (a card reply of up to \(longest) bytes was expected)")
            }
            return response
        }
    }

    /// The form for an exchange whose card reply may reach `longest` bytes: the variant's
    /// own, else extended when a short reply could not hold it, else whichever the reader
    /// has not refused.
    private func form(forReplyUpTo longest: Int) throws(FeliCaError) -> TransparentExchange.Form {
        let refused = limits.refusedForms
        let fitsShort = longest <= TransparentExchange.longestPacketInShortReply
        let wanted: TransparentExchange.Form = fitsShort ? TransparentExchange.preferredForm(variant) : .extended
        if !refused.contains(wanted) { return wanted }
        let other: TransparentExchange.Form = wanted == .short ? .extended : .short
        guard !refused.contains(other) else {
            throw FeliCaError(.unsupported, "the reader refused transparent exchanges in both short and extended APDUs (67 00)")
        }
        if other == .short && !fitsShort {
            throw FeliCaError(.unsupported, "a reply of up to \(longest) bytes does not fit a short APDU, and the reader takes no extended APDUs: ask for at most \(TransparentExchange.longestPacketInShortReply) bytes per reply")
        }
        return other
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

    /// What a dialect probe found.
    public enum Probe: Sendable {
        /// The card answered the wildcard Polling.
        case answered(PollingResponse)
        /// The reader took the dialect's APDUs but refused to forward Polling (`6A xx`):
        /// the dialect is right, the card has to be found another way.
        case pollingRefused
    }

    /// Whether the dialect works with the card on the reader: ``begin(_:)`` then a wildcard
    /// Polling that must come back as a valid Polling response, or be refused by a reader
    /// that understood the request.
    public func probe(_ transmit: Transmit) throws(FeliCaError) -> Probe {
        try begin(transmit)
        let polling = PollingCommand(systemCode: .wildcard, requestCode: .none, timeSlot: .one).encode()
        if dialect == .part3 || dialect == .sony {
            let response = try transparent(polling, timeout: .milliseconds(100), transmit)
            if let reply = try? TransparentExchange.Reply.decode(response), reply.isRefusal {
                state.withLock { _ = $0.refusedCommands.insert(.polling) }
                return .pollingRefused
            }
            return .answered(try PollingResponse.decode(try TransparentExchange.packet(from: response)[...]))
        }
        let reply = try exchange(polling, timeout: .milliseconds(100), transmit)
        return .answered(try PollingResponse.decode(reply[...]))
    }
}
