import FeliCa
import FeliCaJSON

/// Packets decoded into named fields, for `felica trace show --json`. The names follow the
/// Wireshark dissector's fields (`services` ↔ `felica.service`, `keyVersions` ↔
/// `felica.key_version`, `status.sf1` ↔ `felica.sf1`), so one can be checked against the other.
public enum PacketFields {
    /// A command's fields, or `{"undecodable": reason}`.
    public static func command(_ packet: [UInt8]) -> JSONValue {
        do {
            return .object(fields(try Command.decode(packet[...])))
        } catch {
            return .object(["undecodable": .string(error.reason)])
        }
    }

    /// A response's fields, decoded with the IDm and block list of its command (so a
    /// read's blocks are named by service and number), or `{"undecodable": reason}`.
    public static func response(_ packet: [UInt8], to command: [UInt8]? = nil) -> JSONValue {
        let decoded = command.flatMap { try? Command.decode($0[...]) }
        do {
            return .object(fields(try Response.decode(packet[...], expecting: decoded?.idm), to: decoded))
        } catch {
            return .object(["undecodable": .string(error.reason)])
        }
    }

    public static func fields(_ command: Command) -> JSONObject {
        var o = JSONObject()
        o.append("name", .string(command.code.description))
        o.append("code", .number(Double(command.code.rawValue)))
        if let idm = command.idm { o.append("idm", .string(idm.hex)) }
        switch command {
        case .polling(let c):
            o.append("systemCode", code(c.systemCode))
            o.append("requestCode", .number(Double(c.requestCode.rawValue)))
            o.append("timeSlot", .number(Double(c.timeSlot.rawValue)))
            o.append("slots", .number(Double(c.timeSlot.slots)))
        case .requestService(let c):
            o.append("nodes", .array(c.nodes.map(code)))
        case .requestBlockInformation(let c):
            o.append("nodes", .array(c.nodes.map(code)))
        case .readWithoutEncryption(let c):
            o.append("services", .array(c.services.map(code)))
            o.append("blocks", .array(c.blocks.map { element($0, c.services) }))
        case .writeWithoutEncryption(let c):
            o.append("services", .array(c.services.map(code)))
            o.append("blocks", .array(zip(c.blocks.indices, c.blocks).map { i, b in
                var e = element(b, c.services).objectValue ?? [:]
                e.append("data", .string(Hex.encode(c.data[(16 * i)..<(16 * i + 16)])))
                return .object(e)
            }))
        case .searchServiceCode(let c):
            o.append("index", .number(Double(c.index)))
        case .requestResponse, .requestSystemCode, .requestSpecificationVersion, .resetMode:
            break
        }
        return o
    }

    public static func fields(_ response: Response, to command: Command? = nil) -> JSONObject {
        var o = JSONObject()
        let code: CommandCode
        switch response {
        case .polling(let r):
            code = .polling
            o.append("idm", .string(r.idm.hex))
            o.append("pmm", .string(Hex.encode(r.pmm.bytes)))
            if let rd = r.requestData { o.append("requestData", .string(hex16(rd))) }
        case .requestService(let r):
            code = .requestService
            o.append("idm", .string(r.idm.hex))
            o.append("keyVersions", .array(r.keyVersions.map { $0.map { .string(hex16($0)) } ?? .null }))
        case .requestResponse(let r):
            code = .requestResponse
            o.append("idm", .string(r.idm.hex))
            o.append("mode", .number(Double(r.mode)))
        case .readWithoutEncryption(let r):
            code = .readWithoutEncryption
            o.append("idm", .string(r.idm.hex))
            o.append("status", status(r.status))
            if r.status.isSuccess {
                var elements: [BlockListElement] = []
                var services: [ServiceCode] = []
                if case .readWithoutEncryption(let c) = command, c.blocks.count == r.blockCount {
                    elements = c.blocks
                    services = c.services
                }
                o.append("blocks", .array((0..<r.blockCount).map { i in
                    var b = i < elements.count ? element(elements[i], services).objectValue ?? [:] : JSONObject()
                    b["length"] = nil
                    b.append("data", .string(Hex.encode(r[block: i])))
                    return .object(b)
                }))
            }
        case .writeWithoutEncryption(let r):
            code = .writeWithoutEncryption
            o.append("idm", .string(r.idm.hex))
            o.append("status", status(r.status))
        case .searchServiceCode(let r):
            code = .searchServiceCode
            o.append("idm", .string(r.idm.hex))
            switch r.node {
            case nil: o.append("endOfList", .bool(true))
            case .service(let s): o.append("service", self.code(s))
            case .area(let a, let end):
                o.append("area", self.code(a))
                o.append("areaEnd", self.code(end))
            }
        case .requestSystemCode(let r):
            code = .requestSystemCode
            o.append("idm", .string(r.idm.hex))
            o.append("systemCodes", .array(r.systemCodes.map(self.code)))
        case .requestBlockInformation(let r):
            code = .requestBlockInformation
            o.append("idm", .string(r.idm.hex))
            o.append("blockCounts", .array(r.blockCounts.map { .number(Double($0)) }))
        case .requestSpecificationVersion(let r):
            code = .requestSpecificationVersion
            o.append("idm", .string(r.idm.hex))
            o.append("status", status(r.status))
            if let v = r.basicVersion { o.append("version", .string(hex16(v))) }
        case .resetMode(let r):
            code = .resetMode
            o.append("idm", .string(r.idm.hex))
            o.append("status", status(r.status))
        }
        var named: JSONObject = ["name": .string(code.description), "code": .number(Double(code.responseCode))]
        for m in o { named.append(m.key, m.value) }
        return named
    }

    /// Status flags with their meaning and, on failure, where the error lies.
    static func status(_ s: StatusFlags) -> JSONValue {
        var o: JSONObject = ["sf1": .number(Double(s.sf1)), "sf2": .number(Double(s.sf2)), "meaning": .string(s.name)]
        if !s.isSuccess { o.append("location", .string(s.location)) }
        return .object(o)
    }

    /// One block list element: its service (when the list names it), index, block number,
    /// access mode and its length on the wire.
    static func element(_ b: BlockListElement, _ services: [ServiceCode]) -> JSONValue {
        var o = JSONObject()
        if Int(b.serviceIndex) < services.count { o.append("service", code(services[Int(b.serviceIndex)])) }
        o.append("serviceIndex", .number(Double(b.serviceIndex)))
        o.append("block", .number(Double(b.blockNumber)))
        o.append("accessMode", .number(Double(b.accessMode)))
        o.append("length", .number(Double(b.encodedLength)))
        return .object(o)
    }

    static func code(_ c: NodeCode) -> JSONValue { .string(c.description) }
    static func code(_ c: SystemCode) -> JSONValue { .string(c.description) }
    static func hex16(_ v: UInt16) -> String { Hex.digits(v, count: 4, uppercase: true) }
}

extension Trace {
    /// `felica trace show --json`: one JSON object per exchange, one per line — its number
    /// and file line, `t`, the packets in hex, their decoded fields, and the failure.
    public func jsonListing() -> String {
        var out = ""
        for (i, e) in exchanges.enumerated() {
            out += readerIdentities.filter { $0.after == i }.map(Self.jsonListing).joined()
            var o = JSONObject()
            o.append("exchange", .number(Double(i + 1)))
            if e.line > 0 { o.append("line", .number(Double(e.line))) }
            o.append("t", .number(Trace.micro(e.t)))
            o.append("tx", .string(Hex.encode(e.tx)))
            o.append("command", PacketFields.command(e.tx))
            if let rx = e.rx {
                o.append("rx", .string(Hex.encode(rx)))
                o.append("response", PacketFields.response(rx, to: e.tx))
            } else {
                let error = e.error ?? FeliCaError(.timeout, "no answer")
                o.append("rx", .null)
                o.append("error", .string(error.code.description))
                o.append("reason", .string(error.reason))
            }
            if let timeout = e.timeout { o.append("timeout", .number(Trace.micro(timeout))) }
            if let elapsed = e.elapsed { o.append("elapsed", .number(Trace.micro(elapsed))) }
            if e.bitRate != .kbps212 { o.append("rate", .number(Double(e.bitRate.rawValue))) }
            out += JSONValue.object(o).serialized() + "\n"
        }
        out += readerIdentities.filter { $0.after >= exchanges.count }.map(Self.jsonListing).joined()
        return out
    }

    /// A question to the reader in the JSON listing: `readerIdentity` (null when the reader
    /// reported nothing) with `after`, the number of exchanges before it, and no `exchange`.
    static func jsonListing(_ r: ReaderIdentity) -> String {
        var o = JSONObject()
        o.append("readerIdentity", r.reportJSON)
        o.append("after", .number(Double(r.after)))
        if r.line > 0 { o.append("line", .number(Double(r.line))) }
        o.append("t", .number(Trace.micro(r.t)))
        if let error = r.error {
            o.append("error", .string(error.code.description))
            o.append("reason", .string(error.reason))
        }
        if let elapsed = r.elapsed { o.append("elapsed", .number(Trace.micro(elapsed))) }
        return JSONValue.object(o).serialized() + "\n"
    }
}
