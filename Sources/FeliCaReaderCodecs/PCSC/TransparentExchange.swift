import FeliCa

/// PC/SC Part 3 transparent exchange: the reader forwards whole FeliCa packets
/// (RC-S300, RC-S660 and other CCID contactless readers).
///
/// Command: `FF C2 00 <function> Lc <data objects>` (Sony also accepts INS `50`).
/// Reply: `<data objects> 90 00`, with `C0 03 <object> SW1 SW2` (generic status; object 0
/// and `90 00` = success) and `97 <len> <packet>` (the card's reply); other objects may
/// appear in any order and are skipped.
public enum TransparentExchange {
    /// The instruction byte in use.
    public enum Variant: Hashable, Sendable, CaseIterable {
        /// INS `C2`, as PC/SC Part 3 defines it.
        case standard
        /// INS `50`, Sony's variant (RC-S300).
        case sony

        public var ins: UInt8 { self == .standard ? 0xC2 : 0x50 }

        public init?(ins: UInt8) {
            switch ins {
            case 0xC2: self = .standard
            case 0x50: self = .sony
            default: return nil
            }
        }
    }

    /// The function P2 selects.
    public enum Function: UInt8, Hashable, Sendable {
        case manageSession = 0x00
        case transparentExchange = 0x01
        case switchProtocol = 0x02
    }

    /// Tags of the data objects this project reads or writes.
    public enum Tag {
        /// Version data object (manage session).
        public static let version: UInt32 = 0x80
        /// Start transparent session (manage session, empty value).
        public static let startSession: UInt32 = 0x81
        /// End transparent session (manage session, empty value).
        public static let endSession: UInt32 = 0x82
        /// Turn the RF field off / on.
        public static let rfOff: UInt32 = 0x83
        public static let rfOn: UInt32 = 0x84
        /// Switch protocol: `standard layer` (FeliCa = `03 00`).
        public static let switchProtocol: UInt32 = 0x8F
        /// Timer: 4 bytes, microseconds, little-endian.
        public static let timer: UInt32 = 0x5F46
        /// Transceive: the packet to send.
        public static let transceive: UInt32 = 0x95
        /// Generic error status: `object SW1 SW2`.
        public static let status: UInt32 = 0xC0
        /// Response status bits and response status (informational; skipped).
        public static let responseStatusBits: UInt32 = 0x92
        public static let responseStatus: UInt32 = 0x96
        /// ICC response: the card's packet.
        public static let iccResponse: UInt32 = 0x97
    }

    /// Switch-protocol value selecting FeliCa: standard `03`, layer `00`.
    public static let feliCaProtocol: [UInt8] = [0x03, 0x00]

    /// How an exchange's length fields are written.
    public enum Form: Hashable, Sendable, CaseIterable, CustomStringConvertible {
        /// Short APDU: one-byte `Lc`; the reply must fit 256 bytes.
        case short
        /// Extended APDU: `Lc` as `00 hi lo` and `Le` 65536, so replies above 256 bytes fit.
        case extended

        public var description: String { self == .short ? "short" : "extended" }
    }

    /// Session and switch-protocol commands: short, closed with `Le` 00 as Sony's
    /// documentation and the programs reaching these readers through PC/SC write them.
    static func control(_ function: Function, _ objects: [BERTLV], _ variant: Variant) -> CommandAPDU {
        CommandAPDU(cla: 0xFF, ins: variant.ins, p1: 0x00, p2: function.rawValue,
                    data: objects.flatMap { $0.encode() }, le: 256)
    }

    /// `FF C2 00 00 02 81 00 00`: start a transparent session.
    public static func startSession(_ variant: Variant = .standard) -> CommandAPDU {
        control(.manageSession, [BERTLV(tag: Tag.startSession, value: [])], variant)
    }

    /// `FF C2 00 00 02 82 00 00`: end the transparent session.
    public static func endSession(_ variant: Variant = .standard) -> CommandAPDU {
        control(.manageSession, [BERTLV(tag: Tag.endSession, value: [])], variant)
    }

    /// `FF C2 00 02 04 8F 02 03 00 00`: switch the session to FeliCa.
    public static func switchToFeliCa(_ variant: Variant = .standard) -> CommandAPDU {
        control(.switchProtocol, [BERTLV(tag: Tag.switchProtocol, value: feliCaProtocol)], variant)
    }

    /// The form each variant uses unless the reader needs the other: Sony's documentation
    /// and every program driving an RC-S300 through INS `50` send extended APDUs; Part 3
    /// users send short ones, and extended only when the reply can outgrow 256 bytes.
    public static func preferredForm(_ variant: Variant) -> Form {
        variant == .sony ? .extended : .short
    }

    /// Sends one packet and waits up to `timeout`:
    /// - Part 3, short: `FF C2 00 01 Lc 5F 46 04 <µs LE> 95 <len> <packet>` (no `Le`, as Part 3 users send it);
    /// - Part 3, extended: `FF C2 00 01 00 hi lo 5F 46 04 <µs LE> 95 <len> <packet> 00 00`;
    /// - Sony, extended: `FF 50 00 01 00 hi lo 5F 46 04 <µs LE> 95 82 hi lo <packet> 00 00 00`, byte for
    ///   byte what Sony's documentation and the programs driving an RC-S300 send;
    /// - Sony, short: `FF 50 00 01 Lc 5F 46 04 <µs LE> 95 <len> <packet> 00`.
    ///
    /// A packet too long for a short `Lc` makes any form extended.
    public static func exchange(_ packet: [UInt8], timeout: Duration, _ variant: Variant = .standard, form: Form? = nil) -> CommandAPDU {
        let form = form ?? preferredForm(variant)
        let sonyExtended = variant == .sony && form == .extended
        let data = BERTLV(tag: Tag.timer, value: timerValue(timeout)).encode()
            + BERTLV(tag: Tag.transceive, value: packet).encode(twoByteLength: sonyExtended)
        switch (variant, form) {
        case (.standard, .short):
            return CommandAPDU(cla: 0xFF, ins: variant.ins, p1: 0x00, p2: Function.transparentExchange.rawValue, data: data)
        case (.sony, .short):
            return CommandAPDU(cla: 0xFF, ins: variant.ins, p1: 0x00, p2: Function.transparentExchange.rawValue, data: data, le: 256)
        case (.standard, .extended):
            return CommandAPDU(cla: 0xFF, ins: variant.ins, p1: 0x00, p2: Function.transparentExchange.rawValue, data: data,
                               le: 65536, length: .extended)
        case (.sony, .extended):
            return CommandAPDU(cla: 0xFF, ins: variant.ins, p1: 0x00, p2: Function.transparentExchange.rawValue, data: data,
                               le: 65536, length: .extendedWithThreeByteLe)
        }
    }

    /// Response data bytes the reader wraps around a card packet of `packetLength` bytes:
    /// the status object (5), response status objects (`92`, `96`: 7) and the `97` header
    /// (2 or 3). What a short APDU leaves for the packet decides how many blocks one read
    /// may ask for.
    public static func replyOverhead(packetLength: Int) -> Int {
        5 + 7 + (packetLength < 0x80 ? 2 : 3)
    }

    /// The longest card packet whose reply fits a short APDU's 256 response bytes.
    public static let longestPacketInShortReply: Int = {
        var n = 255
        while n + replyOverhead(packetLength: n) > 256 { n -= 1 }
        return n
    }()

    /// A timeout as the timer object's value: microseconds, little-endian, capped at UInt32.max.
    public static func timerValue(_ timeout: Duration) -> [UInt8] {
        let (s, atto) = timeout.components
        let micros = max(0, s) &* 1_000_000 &+ atto / 1_000_000_000_000
        let v = UInt32(clamping: micros)
        return [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 24)]
    }

    // MARK: Reader side: replies

    /// A parsed reply: the generic status, the card's packet when one came back, and every object.
    public struct Reply: Hashable, Sendable {
        /// From `C0`: the failing data object (0 = none) and its status word; `90 00` when absent.
        public var failedObject: UInt8
        public var status: StatusWord
        /// Value of `97`, the card's packet.
        public var iccResponse: [UInt8]?
        /// Every data object in order, unknown ones included.
        public var objects: [BERTLV]

        /// Whether the reader refused the request rather than failed it: `6A xx` for a
        /// data object (`C0 03 01 6A 80`, as an RC-S300 answers a FeliCa command it will
        /// not forward). The card never saw the packet.
        public var isRefusal: Bool { failedObject != 0 && status.sw1 == 0x6A }

        /// Parses `<objects> 90 00`; throws on a failing status word or a malformed object list.
        public static func decode(_ response: ResponseAPDU) throws(FeliCaError) -> Reply {
            guard response.status.isSuccess else {
                throw FeliCaError(.status, "transparent exchange reply: \(response.status)")
            }
            let objects = try BERTLV.decodeList(response.data[...], frame: "transparent exchange reply")
            var reply = Reply(failedObject: 0, status: .success, iccResponse: nil, objects: objects)
            for o in objects {
                switch o.tag {
                case Tag.status:
                    guard o.value.count == 3 else {
                        throw FeliCaError(.invalidField, "transparent exchange reply: status object C0 holds \(o.value.count) bytes, expected 3")
                    }
                    reply.failedObject = o.value[0]
                    reply.status = StatusWord(o.value[1], o.value[2])
                case Tag.iccResponse:
                    reply.iccResponse = o.value
                default:
                    continue
                }
            }
            return reply
        }
    }

    /// The card's packet from an exchange reply. `C0` with `64 01` (or no `97` at all) means
    /// the card did not answer and throws `.timeout`; `6A xx` for a data object means the
    /// reader refused to send the packet (``Reply/isRefusal``) and throws `.refused`;
    /// another failing status `.transmission`.
    public static func packet(from response: ResponseAPDU) throws(FeliCaError) -> [UInt8] {
        let reply = try Reply.decode(response)
        if reply.status == .noResponse || reply.status.sw1 == 0x64 && reply.iccResponse == nil {
            throw FeliCaError(.timeout, "the card did not answer (transparent exchange status \(reply.status))")
        }
        if reply.isRefusal {
            throw FeliCaError(.refused, "the reader refused to send the command to the card (\(reply.status) for data object \(reply.failedObject) of the transparent exchange)")
        }
        guard reply.status.isSuccess && reply.failedObject == 0 else {
            throw FeliCaError(.transmission, "reader reported \(reply.status) for data object \(reply.failedObject) of the transparent exchange")
        }
        guard let data = reply.iccResponse else {
            throw FeliCaError(.timeout, "the card did not answer (transparent exchange reply has no ICC response object 97)")
        }
        return try checkedPacket(data[...], frame: "transparent exchange reply")
    }

    // MARK: Card side: requests

    /// A parsed command as the reader (or a stand-in for it) receives it.
    public struct Request: Hashable, Sendable {
        public var variant: Variant
        public var function: Function
        public var objects: [BERTLV]

        public init(variant: Variant, function: Function, objects: [BERTLV]) {
            self.variant = variant
            self.function = function
            self.objects = objects
        }

        /// Whether `apdu` is a transparent-exchange command (CLA `FF`, INS `C2` or `50`, P1 `00`).
        public static func matches(_ apdu: CommandAPDU) -> Bool {
            apdu.cla == 0xFF && Variant(ins: apdu.ins) != nil && apdu.p1 == 0x00
        }

        /// Parses a command; throws on an unknown function or a malformed object list.
        public static func decode(_ apdu: CommandAPDU) throws(FeliCaError) -> Request {
            guard apdu.cla == 0xFF, let variant = Variant(ins: apdu.ins) else {
                throw FeliCaError(.unsupported, "transparent exchange command: \(Hex.encode([apdu.cla, apdu.ins], uppercase: true)) is not FF C2 or FF 50")
            }
            guard apdu.p1 == 0x00, let function = Function(rawValue: apdu.p2) else {
                throw FeliCaError(.invalidField, "transparent exchange command: P1 P2 \(Hex.encode([apdu.p1, apdu.p2], uppercase: true)) name no function (00 00, 00 01, 00 02)")
            }
            let objects = try BERTLV.decodeList(apdu.data[...], frame: "transparent exchange command")
            return Request(variant: variant, function: function, objects: objects)
        }

        /// The first object with `tag`.
        public func object(_ tag: UInt32) -> BERTLV? { objects.first { $0.tag == tag } }

        /// The timer object's value as a duration, when present and 4 bytes long.
        public var timeout: Duration? {
            guard let v = object(Tag.timer)?.value, v.count == 4 else { return nil }
            let us = UInt32(v[0]) | UInt32(v[1]) << 8 | UInt32(v[2]) << 16 | UInt32(v[3]) << 24
            return .microseconds(Int64(us))
        }
    }

    /// A reply: `C0 03 <object> SW1 SW2`, then `97 <len> <packet>` when the card answered,
    /// then `90 00`.
    public static func reply(status: StatusWord = .success, failedObject: UInt8 = 0, iccResponse: [UInt8]? = nil, extra: [BERTLV] = []) -> ResponseAPDU {
        var objects = [BERTLV(tag: Tag.status, value: [failedObject, status.sw1, status.sw2])]
        objects += extra
        if let iccResponse { objects.append(BERTLV(tag: Tag.iccResponse, value: iccResponse)) }
        return ResponseAPDU(data: objects.flatMap { $0.encode() }, status: .success)
    }
}
