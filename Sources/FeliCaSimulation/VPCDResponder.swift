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
    /// The dialect spoken.
    public let dialect: PCSCDialect
    /// ACR122U only: answer `61 xx` and wait for GET RESPONSE, as the ACR122U does under T=0.
    public let getResponse: Bool
    /// What Get Data (`FF CA`) returns.
    public let idm: IDm
    /// The card: a FeliCa packet in, its reply out, nil when it stays silent.
    public let card: ([UInt8]) -> [UInt8]?

    /// Part 3 state: whether a transparent session is open and switched to FeliCa.
    public private(set) var sessionOpen = false
    public private(set) var feliCaSelected = false
    /// Bytes announced by `61 xx`, waiting for GET RESPONSE.
    private var pending: ResponseAPDU?

    public init(dialect: PCSCDialect, idm: IDm, getResponse: Bool = false, card: @escaping ([UInt8]) -> [UInt8]?) {
        self.dialect = dialect
        self.idm = idm
        self.getResponse = getResponse
        self.card = card
    }

    /// Answers one command APDU (raw bytes) with a response APDU (raw bytes).
    public mutating func respond(to bytes: [UInt8]) -> [UInt8] {
        guard let apdu = try? CommandAPDU.decode(bytes[...]) else {
            return ResponseAPDU(status: .wrongLength).encode()
        }
        return respond(to: apdu).encode()
    }

    /// Answers one command APDU.
    public mutating func respond(to apdu: CommandAPDU) -> ResponseAPDU {
        if apdu.cla != 0xFF { return ResponseAPDU(status: .claNotSupported) }
        if PCSCStorageAPDU.isGetUID(apdu) {
            return ResponseAPDU(data: idm.bytes, status: .success)
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
                  payload.first == CommandCode.polling.rawValue
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
            guard sessionOpen && feliCaSelected else {
                return TransparentExchange.reply(status: .notAllowed, failedObject: 1)
            }
            guard let packet = request.object(TransparentExchange.Tag.transceive)?.value else {
                return TransparentExchange.reply(status: .functionNotSupported, failedObject: 1)
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
