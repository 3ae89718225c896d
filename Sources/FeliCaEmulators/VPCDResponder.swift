import FeliCa
import FeliCaReaderCodecs

/// The reader's side of a PC/SC dialect: turns the pseudo-APDUs a PC/SC client sends into
/// FeliCa packets for a card, and the card's replies into response APDUs, as the firmware
/// of an ACR122U, an RC-S300 or an ACR1252U does. The virtual card for vpcd runs it, so
/// pcscd carries exactly what it would carry for a real reader.
///
/// Every APDU gets an answer (vpcd treats an empty reply as a dead card); a card that
/// stays silent shows as the dialect's "no response" status.
public struct VPCDResponder {
    /// Where a reader's firmware departs from the plain dialect, as real readers do (the
    /// RC-S300 in particular). The default is a reader that takes everything.
    public struct Quirks: Hashable, Sendable {
        /// FeliCa commands the reader will not forward in a transparent exchange: it answers
        /// `C0 03 01 6A 80` (refused, data object 1) and the card never sees them.
        public var refused: Set<CommandCode> = []
        /// APDU forms the reader takes for a transparent exchange; the other form gets
        /// `67 00` (wrong length). Session and switch-protocol commands are always taken.
        public var forms: Set<TransparentExchange.Form> = [.short, .extended]
        /// Cut response data to 256 bytes when the command was a short APDU, as a reader
        /// that cannot carry more in one short response would (status word kept).
        public var cutsLongReplies = false

        public init(refused: Set<CommandCode> = [], forms: Set<TransparentExchange.Form> = [.short, .extended], cutsLongReplies: Bool = false) {
            self.refused = refused
            self.forms = forms
            self.cutsLongReplies = cutsLongReplies
        }

        /// `refusing polling; short APDUs only; cutting long replies`, or `none`.
        public var summary: String {
            var parts: [String] = []
            if !refused.isEmpty { parts.append("refusing " + refused.sorted { $0.rawValue < $1.rawValue }.map(\.name).joined(separator: ",")) }
            if forms.count == 1, let only = forms.first { parts.append("\(only) APDUs only") }
            if cutsLongReplies { parts.append("cutting replies beyond 256 bytes") }
            return parts.isEmpty ? "none" : parts.joined(separator: "; ")
        }
    }

    /// The dialect spoken.
    public let dialect: PCSCDialect
    /// How this reader departs from the plain dialect.
    public let quirks: Quirks
    /// ACR122U only: answer `61 xx` and wait for GET RESPONSE, as the ACR122U does under T=0.
    public let getResponse: Bool
    /// What Get Data (`FF CA 00 00`) returns.
    public let idm: IDm
    /// What Get Data P1 01 (`FF CA 01 00`) returns; nil answers `6A 81`.
    public let pmm: PMm?
    /// The card: a FeliCa packet in, its reply out, nil when it stays silent.
    public let card: ([UInt8]) -> [UInt8]?

    /// Part 3 state: whether a transparent session is open and switched to FeliCa.
    public private(set) var sessionOpen = false
    public private(set) var feliCaSelected = false
    /// Bytes announced by `61 xx`, waiting for GET RESPONSE.
    private var pending: ResponseAPDU?

    public init(dialect: PCSCDialect, idm: IDm, pmm: PMm? = nil, getResponse: Bool = false, quirks: Quirks = Quirks(), card: @escaping ([UInt8]) -> [UInt8]?) {
        self.dialect = dialect
        self.quirks = quirks
        self.idm = idm
        self.pmm = pmm
        self.getResponse = getResponse
        self.card = card
    }

    /// Answers one command APDU (raw bytes) with a response APDU (raw bytes).
    public mutating func respond(to bytes: [UInt8]) -> [UInt8] {
        guard let apdu = try? CommandAPDU.decode(bytes[...]) else {
            return ResponseAPDU(status: .wrongLength).encode()
        }
        var response = respond(to: apdu)
        if quirks.cutsLongReplies && !apdu.isExtended && response.data.count > 256 {
            response.data = Array(response.data.prefix(256))
        }
        return response.encode()
    }

    /// Answers one command APDU.
    public mutating func respond(to apdu: CommandAPDU) -> ResponseAPDU {
        if apdu.cla != 0xFF { return ResponseAPDU(status: .claNotSupported) }
        if PCSCStorageAPDU.isGetUID(apdu) {
            return ResponseAPDU(data: idm.bytes, status: .success)
        }
        if PCSCStorageAPDU.isGetPMm(apdu) {
            return pmm.map { ResponseAPDU(data: $0.bytes, status: .success) } ?? ResponseAPDU(status: .functionNotSupported)
        }
        switch dialect {
        case .acr122u: return acr122(apdu)
        case .part3, .sony: return part3(apdu)
        case .raw: return raw(apdu)
        }
    }

    /// A card that is silent or answers garbage does not make a packet.
    private func exchange(_ packet: [UInt8]) -> [UInt8]? {
        guard packet.count >= 2, Int(packet[0]) == packet.count else { return nil }
        return card(packet)
    }

    // MARK: ACR122U

    private mutating func acr122(_ apdu: CommandAPDU) -> ResponseAPDU {
        if ACR122.isGetResponse(apdu) {
            guard let p = pending else { return ResponseAPDU(status: .notAllowed) }
            // Hand out at most Le bytes; announce the rest with another 61 xx.
            let n = apdu.le ?? 256
            if p.data.count > n {
                pending = ResponseAPDU(data: Array(p.data[n...]), status: p.status)
                return ResponseAPDU(data: Array(p.data[..<n]), status: Self.available(p.data.count - n))
            }
            pending = nil
            return p
        }
        guard ACR122.Request.matches(apdu), let request = try? ACR122.Request.decode(apdu) else {
            return ResponseAPDU(status: apdu.ins == 0x00 ? .failed : .insNotSupported)
        }
        let reply: ResponseAPDU
        switch request {
        case .dataExchange(_, let packet):
            let r = exchange(packet)
            reply = ACR122.reply(to: ACR122.Command.inDataExchange.rawValue, r.map { [0x00] + $0 } ?? [0x01])
        case .communicateThru(let packet):
            let r = exchange(packet)
            reply = ACR122.reply(to: ACR122.Command.inCommunicateThru.rawValue, r.map { [0x00] + $0 } ?? [0x01])
        case .listPassiveTarget(let max, let bitRate, let payload):
            // Only FeliCa (212/424) is on this reader; the payload is a Polling without LEN.
            guard max >= 1, bitRate == ACR122.feliCa212 || bitRate == ACR122.feliCa424,
                  PollingCommand.isPolling([UInt8(truncatingIfNeeded: payload.count + 1)] + payload)
            else {
                reply = ACR122.reply(to: ACR122.Command.inListPassiveTarget.rawValue, [0x00])
                break
            }
            let r = exchange([UInt8(payload.count + 1)] + payload)
            reply = ACR122.reply(to: ACR122.Command.inListPassiveTarget.rawValue, r.map { [0x01, 0x01] + $0 } ?? [0x00])
        case .other:
            return ResponseAPDU(status: .failed)
        }
        guard getResponse else { return reply }
        pending = reply
        return ResponseAPDU(status: Self.available(reply.data.count))
    }

    /// `61 xx`: `xx` bytes wait (`00` = 256 or more).
    private static func available(_ n: Int) -> StatusWord {
        StatusWord(0x61, n >= 256 ? 0 : UInt8(n))
    }

    // MARK: PC/SC Part 3

    private mutating func part3(_ apdu: CommandAPDU) -> ResponseAPDU {
        guard TransparentExchange.Request.matches(apdu) else {
            return ResponseAPDU(status: .insNotSupported)
        }
        guard let request = try? TransparentExchange.Request.decode(apdu) else {
            return ResponseAPDU(status: .wrongParameters)
        }
        switch request.function {
        case .manageSession:
            for (i, o) in request.objects.enumerated() {
                switch o.tag {
                case TransparentExchange.Tag.startSession: sessionOpen = true
                case TransparentExchange.Tag.endSession: sessionOpen = false; feliCaSelected = false
                case TransparentExchange.Tag.rfOff, TransparentExchange.Tag.rfOn, TransparentExchange.Tag.timer: continue
                default:
                    return TransparentExchange.reply(status: .functionNotSupported, failedObject: UInt8(i + 1))
                }
            }
            return TransparentExchange.reply()
        case .switchProtocol:
            guard sessionOpen else { return TransparentExchange.reply(status: .notAllowed, failedObject: 1) }
            guard let o = request.object(TransparentExchange.Tag.switchProtocol), o.value == TransparentExchange.feliCaProtocol else {
                return TransparentExchange.reply(status: .functionNotSupported, failedObject: 1)
            }
            feliCaSelected = true
            return TransparentExchange.reply()
        case .transparentExchange:
            guard quirks.forms.contains(apdu.isExtended ? .extended : .short) else {
                return ResponseAPDU(status: .wrongLength)
            }
            guard sessionOpen && feliCaSelected else {
                return TransparentExchange.reply(status: .notAllowed, failedObject: 1)
            }
            guard let packet = request.object(TransparentExchange.Tag.transceive)?.value else {
                return TransparentExchange.reply(status: .functionNotSupported, failedObject: 1)
            }
            if packet.count >= 2, let code = CommandCode(rawValue: packet[1]), quirks.refused.contains(code) {
                return TransparentExchange.reply(status: .wrongData, failedObject: 1)
            }
            // Readers add response status objects before the data; clients must skip them.
            let extra = [
                BERTLV(tag: TransparentExchange.Tag.responseStatusBits, value: [0x00]),
                BERTLV(tag: TransparentExchange.Tag.responseStatus, value: [0x00, 0x00]),
            ]
            guard let reply = exchange(packet) else {
                let index = request.objects.firstIndex { $0.tag == TransparentExchange.Tag.transceive } ?? 0
                return TransparentExchange.reply(status: .noResponse, failedObject: UInt8(index + 1))
            }
            return TransparentExchange.reply(iccResponse: reply, extra: extra)
        }
    }

    // MARK: ACR1252U direct transmit

    private func raw(_ apdu: CommandAPDU) -> ResponseAPDU {
        guard apdu.ins == 0x00, apdu.p1 == 0x00, apdu.p2 == 0x00, !apdu.data.isEmpty else {
            return ResponseAPDU(status: .insNotSupported)
        }
        guard let reply = exchange(apdu.data) else { return ResponseAPDU(status: .failed) }
        return ResponseAPDU(data: reply, status: .success)
    }
}
