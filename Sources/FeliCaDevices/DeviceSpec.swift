import FeliCa
import FeliCaLibNFC
import FeliCaPCSC
import FeliCaPN532
import FeliCaReaderCodecs
import FeliCaSimulation
import FeliCaTransportSupport
import FeliCaCards

/// A device as `--device` and `FELICA_DEVICE` name it, parsed: the one place a device
/// string is read.
///
/// The grammar is the same for every kind: `<kind>[:<what>][?<key>=<value>&...]`, where
/// each kind accepts its own keys (a key that takes no value is written alone, as
/// `?lenient`). ``description`` writes a spec back as that string.
///
/// | string | ``Kind`` |
/// |---|---|
/// | `libnfc`, `libnfc:<connstring>` | ``Kind/libnfc(connstring:)`` |
/// | `pn532:<serial port>` (`?rate=auto\|fastest\|212\|424`, `?baud=115200\|…\|921600`, `?wait=`) | ``Kind/pn532(path:rate:baud:)`` |
/// | `pcsc`, `pcsc:<reader>` (`?dialect=`, `?wait=`) | ``Kind/pcsc(reader:dialect:)`` |
/// | `usb`, `usb:<vid>:<pid>` (hex), `usb:<bus>:<address>` (decimal) (`?rate=auto\|fastest\|212\|424`, `?wait=`) | ``Kind/usb(_:rate:)`` |
/// | `virtual:<name>`, `virtual:<image path>` (`?timing=212\|424`) | ``Kind/virtual(_:timing:)`` |
/// | `replay:<trace path>` (`?lenient`) | ``Kind/replay(path:lenient:)`` |
public struct DeviceSpec: Hashable, Sendable, CustomStringConvertible {
    /// What kind of device, with what selects it.
    public enum Kind: Hashable, Sendable {
        /// A reader through libnfc: the first one it finds (nil), or a connection string
        /// such as `pn532_uart:/dev/ttyUSB0`.
        case libnfc(connstring: String?)
        /// A PN532 on a serial line, driven without libnfc, the bit rates it may use, and
        /// the serial speed the line is raised to when the port takes it.
        case pn532(path: String, rate: RateChoice = .automatic, baud: Int = PN532SerialTransport.defaultBaud)
        /// A reader through pcscd; `dialect` forces how it carries FeliCa packets.
        case pcsc(reader: PCSCReaderSelector, dialect: PCSCDialect?)
        /// A USB reader driven natively (Sony RC-S380), and the bit rates it may use.
        case usb(USBReaderSelector, rate: RateChoice = .automatic)
        /// A virtual card; `timing` makes it answer as slowly as a real card at that bit rate.
        case virtual(VirtualCardSource, timing: AirTiming.BitRate?)
        /// Answers from a recorded trace; `lenient` replays a damaged trace up to the damage.
        case replay(path: String, lenient: Bool)
    }

    /// `?rate=` of a native reader: the bit rate it talks to cards at.
    public enum RateChoice: String, Hashable, Sendable, CaseIterable {
        /// 212 kbps, then 424 kbps for a reading long enough to pay for asking, when the card
        /// runs at it (the default).
        case automatic = "auto"
        /// 212 kbps, then 424 kbps before every reading of a card that runs at it.
        case fastest
        /// 212 kbps only.
        case kbps212 = "212"
        /// 424 kbps only, from the first Polling: cards that answer at 212 kbps only are not seen.
        case kbps424 = "424"

        /// The rate the reader starts at, and the rates a session may switch to.
        public var rates: (start: AirTiming.BitRate, allowed: [AirTiming.BitRate]) {
            switch self {
            case .automatic, .fastest: (.kbps212, [.kbps212, .kbps424])
            case .kbps212: (.kbps212, [.kbps212])
            case .kbps424: (.kbps424, [.kbps424])
            }
        }
    }

    /// The card behind a `virtual:` device.
    public enum VirtualCardSource: Hashable, Sendable {
        /// A built-in sample card (`SampleCards.names`).
        case builtIn(String)
        /// A card image file (`felica-card/1`).
        case image(path: String)
    }

    /// Why a device string does not parse, in words that name the part at fault.
    public struct ParseError: Error, Hashable, Sendable, CustomStringConvertible {
        public var reason: String
        public init(_ reason: String) { self.reason = reason }
        public var description: String { reason }
    }

    /// The device.
    public var kind: Kind
    /// `?wait=<seconds>`: how long opening waits for a card to be placed; nil = the default.
    public var wait: Duration?

    /// A spec of `kind`.
    public init(_ kind: Kind, wait: Duration? = nil) {
        self.kind = kind
        self.wait = wait
    }

    /// `?rate=` of a native reader; absent = ``RateChoice/automatic``.
    static func rateChoice(_ value: String?) throws(ParseError) -> RateChoice {
        guard let value else { return .automatic }
        guard let choice = RateChoice(rawValue: value) else {
            throw ParseError("device option 'rate': '\(value)' is not one of \(RateChoice.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return choice
    }

    /// The device forms, for help and errors.
    public static let forms = "libnfc[:<connstring>], pn532:<port>, pcsc[:<reader>], usb[:<vid>:<pid>|:<bus>:<address>], virtual:<card>, replay:<trace>"

    /// The kinds' names, as written before the first `:`.
    public static let kinds = ["libnfc", "pn532", "pcsc", "usb", "virtual", "replay"]

    /// The longest `?wait=`, in seconds.
    public static let maxWait = 3600.0

    /// Parses a device string.
    public init(parsing text: String) throws(ParseError) {
        guard !text.isEmpty else { throw ParseError("the device string is empty: name one of \(Self.forms)") }
        let head: Substring
        var options: Options
        if let q = text.firstIndex(of: "?") {
            head = text[..<q]
            options = try Options(text[text.index(after: q)...])
        } else {
            head = text[...]
            options = Options()
        }
        let kind: Substring
        let rest: Substring?
        if let colon = head.firstIndex(of: ":") {
            kind = head[..<colon]
            rest = head[head.index(after: colon)...]
        } else {
            kind = head
            rest = nil
        }
        func needsRest(_ example: String) throws(ParseError) -> String? {
            guard let rest else { return nil }
            guard !rest.isEmpty else { throw ParseError("nothing after '\(kind):': \(example)") }
            return String(rest)
        }

        switch kind {
        case "libnfc":
            let connstring = try needsRest("give a connection string such as libnfc:pn532_uart:/dev/ttyUSB0, or write libnfc for the first reader")
            if let connstring, let problem = LibNFCDevices.unknownDriver(in: connstring) { throw ParseError(problem) }
            self.init(.libnfc(connstring: connstring), wait: try options.wait())
            try options.finish(kind: "libnfc", known: ["wait"])
        case "pn532":
            guard let path = try needsRest("give the serial port the PN532 is wired to, such as pn532:/dev/ttyUSB0") else {
                throw ParseError("'pn532' needs the serial port the PN532 is wired to: pn532:/dev/ttyUSB0")
            }
            let rate = try Self.rateChoice(options.take("rate"))
            let baud = try options.take("baud").map { (value: String) throws(ParseError) -> Int in
                guard let baud = Int(value), PN532SerialTransport.speeds.contains(baud) else {
                    throw ParseError("device option 'baud': '\(value)' is not one of \(PN532SerialTransport.speeds.map(String.init).joined(separator: ", "))")
                }
                return baud
            } ?? PN532SerialTransport.defaultBaud
            self.init(.pn532(path: path, rate: rate, baud: baud), wait: try options.wait())
            try options.finish(kind: "pn532", known: ["rate", "baud", "wait"])
        case "pcsc":
            let reader = try needsRest("give a reader name or the start of one, such as pcsc:SONY, or write pcsc for the first reader")
            let dialect = try options.take("dialect").map { (value: String) throws(ParseError) -> PCSCDialect in
                try Self.dialect(value, source: "device option 'dialect'")
            }
            self.init(.pcsc(reader: reader.map(PCSCReaderSelector.named) ?? .first, dialect: dialect), wait: try options.wait())
            try options.finish(kind: "pcsc", known: ["dialect", "wait"])
        case "usb":
            let selector = try needsRest("write usb for the first reader, usb:<vid>:<pid> (e.g. usb:054c:06c1) or usb:<bus>:<address> (e.g. usb:001:004)")
            let rate = try Self.rateChoice(options.take("rate"))
            self.init(.usb(try selector.map(Self.usbSelector) ?? .first, rate: rate), wait: try options.wait())
            try options.finish(kind: "usb", known: ["rate", "wait"])
        case "virtual":
            guard let card = try needsRest("name a card, such as \(Self.virtualExample)") else {
                throw ParseError("'virtual' needs a card: \(Self.virtualExample)")
            }
            let timing = try options.take("timing").map { (value: String) throws(ParseError) -> AirTiming.BitRate in
                guard let rate = Int(value).flatMap(AirTiming.BitRate.init(rawValue:)) else {
                    throw ParseError("device option 'timing': '\(value)' is not a bit rate FeliCa uses (212 or 424)")
                }
                return rate
            }
            self.init(.virtual(try Self.virtualCard(card), timing: timing))
            try options.finish(kind: "virtual", known: ["timing"])
        case "replay":
            guard let path = try needsRest("give a trace file, such as replay:balance.jsonl") else {
                throw ParseError("'replay' needs a trace file: replay:<trace.jsonl>")
            }
            self.init(.replay(path: path, lenient: try options.flag("lenient")))
            try options.finish(kind: "replay", known: ["lenient"])
        default:
            var hint = ""
            if SampleCards.names.contains(text) {
                hint = "; did you mean virtual:\(text)?"
            } else if rest == nil && text.hasPrefix("/dev/") {
                hint = "; a PN532 board on a serial port is pn532:\(text) (or libnfc:pn532_uart:\(text))"
            } else if rest == nil && (text.hasSuffix(".jsonl") || text.hasSuffix(".trace")) {
                // A file given as the device: say which kind reads it.
                hint = "; a trace is replayed with replay:\(text)"
            } else if rest == nil && (text.hasSuffix(".json") || text.hasSuffix(".nfc") || text.hasSuffix(".xml") || text.contains("/")) {
                hint = "; a card image is read with virtual:\(text) (a trace is replayed with replay:<file>)"
            } else if let near = Suggestion.nearest(String(kind), Self.kinds) {
                hint = "; did you mean \(near)\(rest.map { ":\($0)" } ?? "")?"
            }
            throw ParseError("'\(kind)' is not a kind of device (\(Self.forms))\(hint)")
        }
    }

    /// The device string that names this device; parsing it gives this spec back.
    public var description: String {
        var text: String
        var options: [String] = []
        switch kind {
        case .libnfc(let connstring):
            text = connstring.map { "libnfc:" + $0 } ?? "libnfc"
        case .pn532(let path, let rate, let baud):
            text = "pn532:" + path
            if rate != .automatic { options.append("rate=\(rate.rawValue)") }
            if baud != PN532SerialTransport.defaultBaud { options.append("baud=\(baud)") }
        case .pcsc(let reader, let dialect):
            if case .named(let name) = reader { text = "pcsc:" + name } else { text = "pcsc" }
            if let dialect { options.append("dialect=\(dialect)") }
        case .usb(let selector, let rate):
            switch selector {
            case .first: text = "usb"
            case .id(let vendor, let product): text = "usb:" + Hex.digits(vendor, count: 4) + ":" + Hex.digits(product, count: 4)
            case .path(let bus, let address): text = "usb:" + Self.decimal3(bus) + ":" + Self.decimal3(address)
            }
            if rate != .automatic { options.append("rate=\(rate.rawValue)") }
        case .virtual(let card, let timing):
            switch card {
            case .builtIn(let name): text = "virtual:" + name
            case .image(let path): text = "virtual:" + path
            }
            if let timing { options.append("timing=\(timing.rawValue)") }
        case .replay(let path, let lenient):
            text = "replay:" + path
            if lenient { options.append("lenient") }
        }
        if let wait { options.append("wait=\(Self.seconds(wait))") }
        return options.isEmpty ? text : text + "?" + options.joined(separator: "&")
    }

    /// The kind's name: `libnfc`, `pn532`, `pcsc`, `usb`, `virtual` or `replay`.
    public var kindName: String {
        switch kind {
        case .libnfc: "libnfc"
        case .pn532: "pn532"
        case .pcsc: "pcsc"
        case .usb: "usb"
        case .virtual: "virtual"
        case .replay: "replay"
        }
    }

    /// Whether it is a reader (as opposed to a virtual card or a replay).
    public var isReader: Bool {
        switch kind {
        case .libnfc, .pn532, .pcsc, .usb: true
        case .virtual, .replay: false
        }
    }

    // MARK: - Parts

    static let virtualExample = "virtual:suica, virtual:edy, virtual:nanaco, virtual:waon, virtual:wallet, virtual:octopus or virtual:<image.json>"

    /// What a card name stands for, wherever one is given (`virtual:<card>`, `felica-sim
    /// --card`): a built-in card, else a card image path (it contains `/` or ends in `.json`
    /// or `.nfc`); nil for a word that is neither, a mistyped name.
    public static func virtualCardSource(_ card: String) -> VirtualCardSource? {
        if SampleCards.names.contains(card) { return .builtIn(card) }
        if CardImage.isImagePath(card) { return .image(path: card) }
        return nil
    }

    /// A built-in name, else a path; a word that is neither is a mistyped name.
    static func virtualCard(_ card: String) throws(ParseError) -> VirtualCardSource {
        if let source = virtualCardSource(card) { return source }
        let near = Suggestion.nearest(card, SampleCards.names).map { " Did you mean virtual:\($0)?" } ?? ""
        throw ParseError("there is no built-in card named '\(card)' (built-in: \(SampleCards.names.joined(separator: ", ")); a card image path must contain '/' or end in .json or .nfc).\(near)")
    }

    /// `054c:06c1` (vendor and product, 4 hex digits each) or `001:004` (bus and address,
    /// 3 decimal digits each, as `lsusb` prints them) — nfcpy tells them apart the same way.
    static func usbSelector(_ s: String) throws(ParseError) -> USBReaderSelector {
        let parts = s.split(separator: ":", omittingEmptySubsequences: false)
        if parts.count == 2 {
            if parts.allSatisfy({ $0.count == 4 && $0.allSatisfy(\.isHexDigit) }),
               let vendor = UInt16(parts[0], radix: 16), let product = UInt16(parts[1], radix: 16) {
                return .id(vendor: vendor, product: product)
            }
            if parts.allSatisfy({ $0.count == 3 && $0.allSatisfy { $0.isASCII && $0.isNumber } }),
               let bus = Int(parts[0]), let address = Int(parts[1]) {
                return .path(bus: bus, address: address)
            }
        }
        throw ParseError("'usb:\(s)' names no USB reader: use usb:<vid>:<pid> with 4 hex digits each (usb:054c:06c1) or usb:<bus>:<address> with 3 decimal digits each, as lsusb prints them (usb:001:004)")
    }

    /// A PC/SC dialect by name; `source` names where it came from.
    public static func dialect(_ s: String, source: String) throws(ParseError) -> PCSCDialect {
        guard let d = PCSCDialect(name: s) else {
            throw ParseError("\(source): '\(s)' is not a PC/SC dialect (\(PCSCDialect.names))")
        }
        return d
    }

    static func decimal3(_ v: Int) -> String {
        let digits = String(v)
        return String(repeating: "0", count: max(0, 3 - digits.count)) + digits
    }

    /// `3`, `0.5`: seconds as a `?wait=` value.
    public static func seconds(_ d: Duration) -> String {
        let ms = d.components.seconds * 1000 + d.components.attoseconds / 1_000_000_000_000_000
        return ms % 1000 == 0 ? "\(ms / 1000)" : "\(Double(ms) / 1000)"
    }

    /// The `?key=value&...` part: each key taken once by the kind that knows it; what is
    /// left over is an unknown key.
    struct Options {
        private var pairs: [(key: String, value: String?)] = []

        init() {}

        init(_ query: Substring) throws(ParseError) {
            for pair in query.split(separator: "&", omittingEmptySubsequences: false) {
                guard !pair.isEmpty else { throw ParseError("an empty device option (nothing between '?' or '&' and the next '&' or the end)") }
                let kv = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                let key = String(kv[0])
                guard !key.isEmpty else { throw ParseError("device option '\(pair)' has no name before '='") }
                guard !pairs.contains(where: { $0.key == key }) else { throw ParseError("device option '\(key)' is given twice") }
                pairs.append((key, kv.count == 2 ? String(kv[1]) : nil))
            }
        }

        /// The value of `key`, which must have one; nil when absent.
        mutating func take(_ key: String) throws(ParseError) -> String? {
            guard let i = pairs.firstIndex(where: { $0.key == key }) else { return nil }
            let pair = pairs.remove(at: i)
            guard let value = pair.value, !value.isEmpty else { throw ParseError("device option '\(key)' needs a value (\(key)=...)") }
            return value
        }

        /// Whether the flag `key` is present; it takes no value.
        mutating func flag(_ key: String) throws(ParseError) -> Bool {
            guard let i = pairs.firstIndex(where: { $0.key == key }) else { return false }
            guard pairs.remove(at: i).value == nil else { throw ParseError("device option '\(key)' takes no value: write ?\(key)") }
            return true
        }

        /// `wait=<seconds>`, 0 to an hour.
        mutating func wait() throws(ParseError) -> Duration? {
            try take("wait").map { (value: String) throws(ParseError) -> Duration in
                guard let seconds = Double(value), seconds >= 0, seconds <= DeviceSpec.maxWait else {
                    throw ParseError("device option 'wait': '\(value)' is not a number of seconds from 0 to \(Int(DeviceSpec.maxWait))")
                }
                return .milliseconds(Int64((seconds * 1000).rounded()))
            }
        }

        /// Throws for the first key no one took.
        func finish(kind: String, known: [String]) throws(ParseError) {
            guard let unknown = pairs.first?.key else { return }
            let near = Suggestion.nearest(unknown, known).map { "; did you mean '\($0)'?" } ?? ""
            let takes = known.isEmpty ? "they take none" : "they take: " + known.joined(separator: ", ")
            throw ParseError("device option '\(unknown)' is not known to \(kind) devices (\(takes))\(near)")
        }
    }
}
