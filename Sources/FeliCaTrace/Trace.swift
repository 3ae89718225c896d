import FeliCa
import FeliCaJSON

/// A recorded session in the `felica-trace/1` format (Docs/traces.md, "The file format"): a header
/// line, then one line per exchange, JSON Lines.
public struct Trace: Hashable, Sendable {
    /// The value of the header's `format` key.
    public static let formatName = "felica-trace/1"

    /// The device string the session was recorded from (`libnfc:pn532_uart:/dev/ttyUSB0`).
    public var device: String?
    /// When the recording started, UTC ISO 8601 (`2026-11-29T10:00:00Z`).
    public var started: String?
    /// The latency the recorded link added to every exchange, in seconds (`linkLatency`):
    /// a replay reports it, so a session makes the same choices it made when recorded.
    public var linkLatency: Double?
    /// The exchanges in the order they happened.
    public var exchanges: [Exchange]
    /// The times the session asked the reader itself for the card's IDm and PMm
    /// (`Transport.readerReportedIdentity()`), in order, each placed among the exchanges.
    public var readerIdentities: [ReaderIdentity]
    /// Where a lenient parse stopped: the damage that cut the trace short (nil = intact).
    public var damage: FeliCaError?

    public init(device: String? = nil, started: String? = nil, exchanges: [Exchange] = [], readerIdentities: [ReaderIdentity] = [],
                damage: FeliCaError? = nil) {
        self.device = device
        self.started = started
        self.exchanges = exchanges
        self.readerIdentities = readerIdentities
        self.damage = damage
    }

    /// The session asking the reader, not the card, which card it found: a reader that
    /// will not forward Polling reports the IDm and PMm itself. Stored as a line with
    /// `"readerIdentity"` instead of `"tx"`.
    public struct ReaderIdentity: Hashable, Sendable {
        /// Seconds from the start of the recording to the question.
        public var t: Double
        /// How many exchanges came before it: it happened between exchange `after` and
        /// exchange `after + 1` (numbered from 1).
        public var after: Int
        /// What the reader reported; nil when it could not tell (or the question failed).
        public var idm: IDm?
        public var pmm: PMm?
        /// The failure, when asking failed (`cardGone`, …).
        public var error: FeliCaError?
        /// Seconds the question took.
        public var elapsed: Double?
        /// The line of the trace file that holds it (0 when it was not read from a file).
        public var line: Int

        public init(t: Double, after: Int, idm: IDm?, pmm: PMm?, error: FeliCaError? = nil, elapsed: Double? = nil, line: Int = 0) {
            self.t = t
            self.after = after
            self.idm = idm
            self.pmm = idm == nil ? nil : pmm
            self.error = error
            self.elapsed = elapsed
            self.line = line
        }

        /// The reader's report as one trace line (without the newline).
        public func jsonLine() -> String {
            var o = JSONObject()
            o.append("t", .number(Trace.micro(t)))
            o.append("readerIdentity", reportJSON)
            if let error {
                o.append("error", .string(error.code.description))
                o.append("reason", .string(error.reason))
            }
            if let elapsed { o.append("elapsed", .number(Trace.micro(elapsed))) }
            return JSONValue.object(o).serialized()
        }

        /// `{"idm":…,"pmm":…}`, or null when the reader reported nothing.
        var reportJSON: JSONValue {
            guard let idm, let pmm else { return .null }
            return .object(["idm": .string(idm.hex), "pmm": .string(pmm.hex)])
        }
    }

    /// One command and what came back.
    public struct Exchange: Hashable, Sendable {
        /// Seconds from the start of the recording to the moment the command was sent.
        public var t: Double
        /// The command packet, with its LEN byte.
        public var tx: [UInt8]
        /// The response packet with its LEN byte; nil when the exchange failed.
        public var rx: [UInt8]?
        /// The failure when ``rx`` is nil (`timeout`, `cardGone`, …).
        public var error: FeliCaError?
        /// The timeout the command was sent with, in seconds.
        public var timeout: Double?
        /// Seconds the exchange took, answer or failure.
        public var elapsed: Double?
        /// The line of the trace file that holds it (0 when it was not read from a file).
        public var line: Int
        /// The bit rate the exchange ran at; stored as `"rate"` only when it is not 212 kbps,
        /// so a trace without the key ran at 212 kbps throughout.
        public var bitRate: AirTiming.BitRate

        public init(t: Double, tx: [UInt8], rx: [UInt8]?, error: FeliCaError? = nil, timeout: Double? = nil, elapsed: Double? = nil, line: Int = 0, bitRate: AirTiming.BitRate = .kbps212) {
            self.t = t
            self.tx = tx
            self.rx = rx
            self.error = rx == nil ? (error ?? FeliCaError(.timeout, "no answer")) : nil
            self.timeout = timeout
            self.elapsed = elapsed
            self.line = line
            self.bitRate = bitRate
        }

        /// The exchange as one trace line (without the newline).
        public func jsonLine() -> String {
            var o = JSONObject()
            o.append("t", .number(Trace.micro(t)))
            o.append("tx", .string(Hex.encode(tx)))
            if let rx {
                o.append("rx", .string(Hex.encode(rx)))
            } else {
                let e = error ?? FeliCaError(.timeout, "no answer")
                o.append("rx", .null)
                o.append("error", .string(e.code.description))
                o.append("reason", .string(e.reason))
            }
            if let timeout { o.append("timeout", .number(Trace.micro(timeout))) }
            if let elapsed { o.append("elapsed", .number(Trace.micro(elapsed))) }
            if bitRate != .kbps212 { o.append("rate", .number(Double(bitRate.rawValue))) }
            return JSONValue.object(o).serialized()
        }
    }

    /// The header line (without the newline).
    public func headerLine() -> String {
        var o = JSONObject()
        o.append("format", .string(Self.formatName))
        if let device { o.append("device", .string(device)) }
        if let started { o.append("started", .string(started)) }
        if let linkLatency { o.append("linkLatency", .number(Trace.micro(linkLatency))) }
        return JSONValue.object(o).serialized()
    }

    /// The whole trace as file text.
    public func jsonLines() -> String {
        var lines = [headerLine()]
        for (i, e) in exchanges.enumerated() {
            lines += readerIdentities.filter { $0.after == i }.map { $0.jsonLine() }
            lines.append(e.jsonLine())
        }
        lines += readerIdentities.filter { $0.after >= exchanges.count }.map { $0.jsonLine() }
        return lines.map { $0 + "\n" }.joined()
    }

    /// Seconds rounded to whole microseconds, so lines stay short and stable.
    static func micro(_ seconds: Double) -> Double { (seconds * 1e6).rounded() / 1e6 }
}

extension Trace {
    /// Reads a trace file. Damage (bad JSON, a line cut off mid-write, a missing field)
    /// throws `FeliCaError.Code.badInput` naming the line, unless `lenient`: then the
    /// exchanges before the damage are kept and the damage is in ``damage``.
    public static func load(path: String, lenient: Bool = false) throws(FeliCaError) -> Trace {
        let text = try TraceFile.read(path)
        return try parse(text, source: path, lenient: lenient)
    }

    /// Parses trace text; `source` names it in errors (a path, or "trace").
    public static func parse(_ text: String, source: String = "trace", lenient: Bool = false) throws(FeliCaError) -> Trace {
        // Split on the scalar: as Characters, "\r\n" is one grapheme that is not "\n".
        var lines = text.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false)
        let endsWithNewline = text.unicodeScalars.last == "\n"
        if endsWithNewline { lines.removeLast() }
        var trace = Trace()
        var sawHeader = false
        for (index, raw) in lines.enumerated() {
            let number = index + 1
            var line = Substring(raw)
            if line.unicodeScalars.last == "\r" { line = Substring(line.unicodeScalars.dropLast()) }
            if line.allSatisfy({ $0 == " " || $0 == "\t" }) { continue }
            let isLast = index == lines.count - 1
            do throws(FeliCaError) {
                let value = try parseLine(line, number: number, source: source, cutOff: isLast && !endsWithNewline)
                if sawHeader, value["readerIdentity"] != nil {
                    trace.readerIdentities.append(try readerIdentity(value, after: trace.exchanges.count, number: number, source: source))
                } else if sawHeader {
                    trace.exchanges.append(try exchange(value, number: number, source: source))
                } else {
                    try header(value, number: number, source: source, into: &trace)
                    sawHeader = true
                }
            } catch {
                // The header carries the format: without it nothing after it can be trusted.
                if !sawHeader, let other = otherFormat(text, source: source) { throw other }
                guard lenient, sawHeader else { throw error }
                trace.damage = error
                return trace
            }
        }
        guard sawHeader else {
            throw FeliCaError(.badInput, "\(source): empty file, expected the \(formatName) header line")
        }
        return trace
    }

    /// The error for a whole file that is one JSON document of another format (a card
    /// image, written over several lines): what it is and how to use it, instead of a
    /// parse error on its first line.
    static func otherFormat(_ text: String, source: String) -> FeliCaError? {
        // A first line that is JSON on its own is a damaged trace, said with its line number.
        let first = text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        if (try? JSONValue.parse(String(first))) != nil { return nil }
        guard let object = (try? JSONValue.parse(text))?.objectValue else { return nil }
        guard let format = object["format"]?.stringValue, format != formatName else {
            let reason = "\(source) is a JSON document, not a \(formatName) trace (one JSON object per line)"
            return FeliCaError(.badInput, reason, underlying: TraceFileError(.otherJSON, reason, file: source))
        }
        if format.hasPrefix("felica-card/") {
            let reason = "\(source) is a card image (\(format)), not a trace"
            return FeliCaError(.badInput, reason, underlying: TraceFileError(.cardImage, reason, file: source))
        }
        return FeliCaError(.badInput, "\(source) is a \(format) file, not a \(formatName) trace")
    }

    private static func parseLine(_ line: Substring, number: Int, source: String, cutOff: Bool) throws(FeliCaError) -> JSONObject {
        let value: JSONValue
        do {
            value = try JSONValue.parse(String(line))
        } catch {
            let why = cutOff ? "the line is cut off (the recording stopped mid-line): \(error.reason)" : error.reason
            throw FeliCaError(.badInput, "\(source) line \(number), column \(error.column): \(why)")
        }
        guard let object = value.objectValue else {
            throw FeliCaError(.badInput, "\(source) line \(number): expected a JSON object, found \(value.typeName)")
        }
        return object
    }

    private static func header(_ o: JSONObject, number: Int, source: String, into trace: inout Trace) throws(FeliCaError) {
        guard let format = o["format"]?.stringValue else {
            throw FeliCaError(.badInput, "\(source) line \(number): the first line must be the header {\"format\":\"\(formatName)\",…}")
        }
        guard format == formatName else {
            throw FeliCaError(.badInput, "\(source) line \(number): format \"\(format)\" is not supported (expected \(formatName))")
        }
        trace.device = try optionalString(o, "device", number, source)
        trace.started = try optionalString(o, "started", number, source)
        trace.linkLatency = try seconds(o, "linkLatency", number, source)
    }

    private static func exchange(_ o: JSONObject, number: Int, source: String) throws(FeliCaError) -> Exchange {
        func fail(_ what: String) -> FeliCaError { FeliCaError(.badInput, "\(source) line \(number): \(what)") }
        guard let txValue = o["tx"] else { throw fail("missing \"tx\" (the command packet)") }
        let tx = try packet(txValue, "tx", number, source)
        guard !tx.isEmpty else { throw fail("\"tx\" is empty") }
        guard let rxValue = o["rx"] else { throw fail("missing \"rx\" (the response packet, or null with \"error\")") }
        var rx: [UInt8]? = nil
        var error: FeliCaError? = nil
        if rxValue.isNull {
            guard let name = o["error"]?.stringValue else { throw fail("\"rx\" is null but no \"error\" names the failure") }
            guard let code = TraceErrorCodes.code(named: name) else {
                throw fail("\"error\": unknown error code \"\(name)\" (known: \(TraceErrorCodes.all.map(\.description).joined(separator: ", ")))")
            }
            error = FeliCaError(code, try optionalString(o, "reason", number, source) ?? name)
        } else {
            rx = try packet(rxValue, "rx", number, source)
        }
        return Exchange(
            t: try seconds(o, "t", number, source) ?? 0, tx: tx, rx: rx, error: error,
            timeout: try seconds(o, "timeout", number, source), elapsed: try seconds(o, "elapsed", number, source),
            line: number, bitRate: try bitRate(o, number, source))
    }

    private static func readerIdentity(_ o: JSONObject, after: Int, number: Int, source: String) throws(FeliCaError) -> ReaderIdentity {
        func fail(_ what: String) -> FeliCaError { FeliCaError(.badInput, "\(source) line \(number): \(what)") }
        if o["tx"] != nil { throw fail("a line holds either \"tx\" (an exchange) or \"readerIdentity\", not both") }
        var idm: IDm?, pmm: PMm?
        let report = o["readerIdentity"] ?? .null
        if !report.isNull {
            guard let r = report.objectValue, let idmValue = r["idm"], let pmmValue = r["pmm"] else {
                throw fail("\"readerIdentity\" must be {\"idm\":…,\"pmm\":…} or null, found \(report.serialized())")
            }
            let idmBytes = try packet(idmValue, "readerIdentity.idm", number, source)
            let pmmBytes = try packet(pmmValue, "readerIdentity.pmm", number, source)
            guard idmBytes.count == 8, pmmBytes.count == 8 else {
                throw fail("\"readerIdentity\": the IDm and the PMm are 8 bytes each, found \(idmBytes.count) and \(pmmBytes.count)")
            }
            idm = try IDm(bytes: idmBytes)
            pmm = try PMm(bytes: pmmBytes)
        }
        var error: FeliCaError?
        if let name = try optionalString(o, "error", number, source) {
            guard idm == nil else { throw fail("\"error\" goes with \"readerIdentity\": null only") }
            guard let code = TraceErrorCodes.code(named: name) else {
                throw fail("\"error\": unknown error code \"\(name)\" (known: \(TraceErrorCodes.all.map(\.description).joined(separator: ", ")))")
            }
            error = FeliCaError(code, try optionalString(o, "reason", number, source) ?? name)
        }
        return ReaderIdentity(t: try seconds(o, "t", number, source) ?? 0, after: after, idm: idm, pmm: pmm, error: error,
                              elapsed: try seconds(o, "elapsed", number, source), line: number)
    }

    private static func bitRate(_ o: JSONObject, _ number: Int, _ source: String) throws(FeliCaError) -> AirTiming.BitRate {
        guard let v = o["rate"], !v.isNull else { return .kbps212 }
        guard let d = v.doubleValue, let rate = AirTiming.BitRate(rawValue: Int(exactly: d) ?? -1) else {
            throw FeliCaError(.badInput, "\(source) line \(number): \"rate\" must be 212 or 424 (kbps), found \(v.serialized())")
        }
        return rate
    }

    private static func packet(_ v: JSONValue, _ key: String, _ number: Int, _ source: String) throws(FeliCaError) -> [UInt8] {
        guard let s = v.stringValue else {
            throw FeliCaError(.badInput, "\(source) line \(number): \"\(key)\" must be a hex string, found \(v.typeName)")
        }
        guard let bytes = Hex.decode(s) else {
            throw FeliCaError(.badInput, "\(source) line \(number): \"\(key)\" is not hex: \"\(s.prefix(40))\"")
        }
        return bytes
    }

    private static func seconds(_ o: JSONObject, _ key: String, _ number: Int, _ source: String) throws(FeliCaError) -> Double? {
        guard let v = o[key], !v.isNull else { return nil }
        // Bounded (about 31 years) so that listings and pcap timestamps, which count in
        // whole microseconds, cannot overflow.
        guard let d = v.doubleValue, d >= 0, d <= 1e9 else {
            throw FeliCaError(.badInput, "\(source) line \(number): \"\(key)\" must be a non-negative number of seconds up to 1e9, found \(v.serialized())")
        }
        return d
    }

    private static func optionalString(_ o: JSONObject, _ key: String, _ number: Int, _ source: String) throws(FeliCaError) -> String? {
        guard let v = o[key], !v.isNull else { return nil }
        guard let s = v.stringValue else {
            throw FeliCaError(.badInput, "\(source) line \(number): \"\(key)\" must be a string, found \(v.typeName)")
        }
        return s
    }
}

/// Error codes by the names traces store them under (`FeliCaError.Code.description`).
enum TraceErrorCodes {
    static let all: [FeliCaError.Code] = [
        .truncated, .trailingBytes, .badLength, .unexpectedResponse, .wrongCard, .invalidField,
        .invalidArgument, .status, .timeout, .transmission, .readerGone, .cardGone,
        .noReader, .noCard, .unsupported, .cancelled, .busy, .ambiguousWrite,
        .badInput, .refused, .transportFailure,
    ]

    /// Names traces recorded before these codes moved to their own layers: pcscd not
    /// running is a missing reader, a replay's failures are the transport's own.
    static let earlier: [String: FeliCaError.Code] = ["noService": .noReader, "divergence": .transportFailure, "exhausted": .transportFailure]

    static func code(named name: String) -> FeliCaError.Code? {
        all.first { $0.description == name } ?? earlier[name]
    }
}
