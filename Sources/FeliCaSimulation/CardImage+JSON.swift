import FeliCa
import FeliCaJSON

#if canImport(Glibc)
import Glibc
#endif

extension CardImage {
    /// Parses `felica-card/1` JSON text.
    public init(jsonText: String) throws(FeliCaError) {
        let value: JSONValue
        do {
            value = try JSONValue.parse(jsonText)
        } catch {
            throw FeliCaError(.badInput, "not valid JSON: \(error)")
        }
        try self.init(json: value)
    }

    /// From a parsed JSON value.
    public init(json: JSONValue) throws(FeliCaError) {
        var p = ImageParser()
        self = try p.image(json)
    }

    /// The image as JSON, keys in the documented order, unknown keys after them.
    public func json() -> JSONValue {
        var o = JSONObject()
        o.append("format", .string(Self.formatName))
        if let pmm { o.append("pmm", .string(pmm.hex)) }
        if let maxBlocksPerRead { o.append("maxBlocksPerRead", .int(maxBlocksPerRead)) }
        if let maxNodesPerRequest { o.append("maxNodesPerRequest", .int(maxNodesPerRequest)) }
        o.append("systems", .array(systems.map { $0.json() }))
        if !ignores.isEmpty {
            o.append("ignores", .array(ignores.sorted { $0.rawValue < $1.rawValue }.map { .string($0.name) }))
        }
        if let bitRates { o.append("bitRates", .array(bitRates.map { .int($0.rawValue) })) }
        if let cardKey { o.append("cardKey", .string(Hex.encode(cardKey))) }
        for m in extra where o[m.key] == nil { o.append(m.key, m.value) }
        return .object(o)
    }

    /// Pretty JSON text with a final newline.
    public func jsonText() -> String { json().serialized(pretty: true) + "\n" }
}

extension CardImage.System {
    func json() -> JSONValue {
        var o = JSONObject()
        o.append("code", .string(code.hex))
        if let idm { o.append("idm", .string(idm.hex)) }
        if let pmm { o.append("pmm", .string(pmm.hex)) }
        if !areas.isEmpty {
            o.append("areas", .array(areas.map { a in
                var ao = JSONObject()
                ao.append("code", .string(a.code.hex))
                ao.append("end", .string(a.end.hex))
                for m in a.extra where ao[m.key] == nil { ao.append(m.key, m.value) }
                return .object(ao)
            }))
        }
        o.append("services", .array(services.map { $0.json() }))
        for m in extra where o[m.key] == nil { o.append(m.key, m.value) }
        return .object(o)
    }
}

extension CardImage.Service {
    func json() -> JSONValue {
        var o = JSONObject()
        o.append("code", .string(code.hex))
        if let keyVersion { o.append("keyVersion", .string(Hex.encode([UInt8(keyVersion >> 8), UInt8(keyVersion & 0xFF)]))) }
        if let blockCount { o.append("blockCount", .int(blockCount)) }
        if answersWithoutKey { o.append("answersWithoutKey", .bool(true)) }
        if let blocks { o.append("blocks", .array(blocks.map { .string(Hex.encode($0)) })) }
        if !blocksAt.isEmpty {
            o.append("blocksAt", .object(JSONObject(blocksAt.keys.sorted().map { (Hex.digits($0, count: 4), .string(Hex.encode(blocksAt[$0]!))) })))
        }
        for m in extra where o[m.key] == nil { o.append(m.key, m.value) }
        return .object(o)
    }
}

/// Validates an image, naming the JSON path of anything wrong.
private struct ImageParser {
    func fail(_ path: String, _ what: String) -> FeliCaError {
        FeliCaError(.badInput, "\(path): \(what)")
    }

    func object(_ v: JSONValue, _ path: String) throws(FeliCaError) -> JSONObject {
        guard let o = v.objectValue else { throw fail(path, "expected an object, found \(v.typeName)") }
        return o
    }

    func string(_ o: JSONObject, _ key: String, _ path: String, required: Bool) throws(FeliCaError) -> String? {
        guard let v = o[key] else {
            if required { throw fail(path, "missing required member \"\(key)\"") }
            return nil
        }
        guard let s = v.stringValue else { throw fail("\(path).\(key)", "expected a string, found \(v.typeName)") }
        return s
    }

    func hexBytes(_ s: String, count: Int, _ path: String) throws(FeliCaError) -> [UInt8] {
        guard s.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) || (0x41...0x46).contains($0) })
        else { throw fail(path, "\"\(s)\" is not hex (digits 0-9, a-f, no separators)") }
        // Hex digits, but too many or too few (an odd count included): say which.
        guard s.utf8.count == 2 * count, let b = Hex.decode(s) else {
            throw fail(path, "\"\(s)\" is too \(s.utf8.count > 2 * count ? "long" : "short"): expected \(count) bytes (\(2 * count) hex digits), found \(s.utf8.count) digits")
        }
        return b
    }

    func code16(_ o: JSONObject, _ key: String, _ path: String) throws(FeliCaError) -> UInt16? {
        guard let s = try string(o, key, path, required: false) else { return nil }
        let b = try hexBytes(s, count: 2, "\(path).\(key)")
        return UInt16(b[0]) << 8 | UInt16(b[1])
    }

    func eightBytes(_ o: JSONObject, _ key: String, _ path: String) throws(FeliCaError) -> UInt64? {
        guard let s = try string(o, key, path, required: false) else { return nil }
        var v: UInt64 = 0
        for b in try hexBytes(s, count: 8, "\(path).\(key)") { v = v << 8 | UInt64(b) }
        return v
    }

    func rest(_ o: JSONObject, known: Set<String>) -> JSONObject {
        var out = JSONObject()
        for m in o where !known.contains(m.key) { out.append(m.key, m.value) }
        return out
    }

    mutating func image(_ v: JSONValue) throws(FeliCaError) -> CardImage {
        let o = try object(v, "$")
        guard let format = try string(o, "format", "$", required: true), format == CardImage.formatName else {
            throw fail("$.format", "expected \"\(CardImage.formatName)\", found \(o["format"]?.serialized() ?? "nothing")")
        }
        let pmm = try eightBytes(o, "pmm", "$").map(PMm.init(rawValue:))
        var maxBlocks: Int? = nil
        if let m = o["maxBlocksPerRead"] {
            guard let n = m.intValue, (1...15).contains(n) else {
                throw fail("$.maxBlocksPerRead", "expected a whole number 1-15, found \(m.serialized())")
            }
            maxBlocks = n
        }
        guard let sv = o["systems"] else { throw fail("$", "missing required member \"systems\"") }
        guard let list = sv.arrayValue else { throw fail("$.systems", "expected an array, found \(sv.typeName)") }
        guard !list.isEmpty else { throw fail("$.systems", "a card holds at least one system") }
        var systems: [CardImage.System] = []
        var seen = Set<SystemCode>()
        var seenIDm = Set<IDm>()
        for (i, s) in list.enumerated() {
            let path = "$.systems[\(i)]"
            let sys = try system(s, path)
            guard seen.insert(sys.code).inserted else { throw fail("\(path).code", "duplicate system \(sys.code)") }
            if sys.code.isWildcard { throw fail("\(path).code", "\(sys.code) is a Polling wildcard, not a system code") }
            // One IDm answers both systems of a FeliCa Lite-S formatted for NDEF (88B4 and 12FC).
            if let idm = sys.idm, !seenIDm.insert(idm).inserted, !FeliCaLite.isLite(sys.pmm ?? pmm ?? CardImage.defaultPMm) {
                throw fail("\(path).idm", "duplicate IDm \(idm) (only a FeliCa Lite's systems share one)")
            }
            systems.append(sys)
        }
        var maxNodes: Int? = nil
        if let m = o["maxNodesPerRequest"] {
            guard let n = m.intValue, (1...RequestServiceCommand.maximumNodes).contains(n) else {
                throw fail("$.maxNodesPerRequest", "expected a whole number 1-\(RequestServiceCommand.maximumNodes), found \(m.serialized())")
            }
            maxNodes = n
        }
        var ignores: Set<CommandCode> = []
        if let iv = o["ignores"] {
            guard let names = iv.arrayValue else { throw fail("$.ignores", "expected an array of command names, found \(iv.typeName)") }
            for (i, n) in names.enumerated() {
                guard let name = n.stringValue, let code = CommandCode(name: name) else {
                    throw fail("$.ignores[\(i)]", "expected a command name (\(CommandCode.names)), found \(n.serialized())")
                }
                ignores.insert(code)
            }
        }
        var bitRates: [AirTiming.BitRate]? = nil
        if let bv = o["bitRates"] {
            guard let list = bv.arrayValue, !list.isEmpty else {
                throw fail("$.bitRates", "expected a non-empty array of bit rates in kbps (212, 424), found \(bv.serialized())")
            }
            var rates: [AirTiming.BitRate] = []
            for (i, r) in list.enumerated() {
                guard let rate = r.intValue.flatMap(AirTiming.BitRate.init(rawValue:)) else {
                    throw fail("$.bitRates[\(i)]", "expected 212 or 424 (kbps), found \(r.serialized())")
                }
                guard !rates.contains(rate) else { throw fail("$.bitRates[\(i)]", "\(rate.rawValue) is listed twice") }
                rates.append(rate)
            }
            guard rates.contains(.kbps212) else {
                throw fail("$.bitRates", "every FeliCa card answers at 212 kbps: the list must include 212")
            }
            bitRates = rates
        }
        var cardKey: [UInt8]? = nil
        if let s = try string(o, "cardKey", "$", required: false) {
            cardKey = try hexBytes(s, count: 16, "$.cardKey")
        }
        return CardImage(pmm: pmm, maxBlocksPerRead: maxBlocks, maxNodesPerRequest: maxNodes, systems: systems, ignores: ignores, bitRates: bitRates,
                         cardKey: cardKey,
                         extra: rest(o, known: ["format", "pmm", "maxBlocksPerRead", "maxNodesPerRequest", "systems", "ignores", "bitRates", "cardKey"]))
    }

    mutating func system(_ v: JSONValue, _ path: String) throws(FeliCaError) -> CardImage.System {
        let o = try object(v, path)
        guard let code = try code16(o, "code", path) else { throw fail(path, "missing required member \"code\"") }
        let idm = try eightBytes(o, "idm", path).map(IDm.init(rawValue:))
        let pmm = try eightBytes(o, "pmm", path).map(PMm.init(rawValue:))
        var areas: [CardImage.Area] = []
        if let av = o["areas"] {
            guard let list = av.arrayValue else { throw fail("\(path).areas", "expected an array, found \(av.typeName)") }
            for (i, a) in list.enumerated() {
                let ap = "\(path).areas[\(i)]"
                let ao = try object(a, ap)
                guard let c = try code16(ao, "code", ap) else { throw fail(ap, "missing required member \"code\"") }
                guard let e = try code16(ao, "end", ap) else { throw fail(ap, "missing required member \"end\"") }
                let area = AreaCode(c)
                guard area.isArea else { throw fail("\(ap).code", "\(area) has attribute \(area.attribute), not an area") }
                guard e >= c else { throw fail("\(ap).end", "end \(AreaCode(e)) is below the area code \(area)") }
                areas.append(CardImage.Area(code: area, end: AreaCode(e), extra: rest(ao, known: ["code", "end"])))
            }
        }
        guard let sv = o["services"] else { throw fail(path, "missing required member \"services\"") }
        guard let list = sv.arrayValue else { throw fail("\(path).services", "expected an array, found \(sv.typeName)") }
        var services: [CardImage.Service] = []
        var seen = Set<ServiceCode>()
        for (i, s) in list.enumerated() {
            let sp = "\(path).services[\(i)]"
            let svc = try service(s, sp)
            guard seen.insert(svc.code).inserted else { throw fail("\(sp).code", "duplicate service \(svc.code)") }
            services.append(svc)
        }
        return CardImage.System(code: SystemCode(code), idm: idm, pmm: pmm, areas: areas, services: services,
                                extra: rest(o, known: ["code", "idm", "pmm", "areas", "services", "directory"]))
    }

    mutating func service(_ v: JSONValue, _ path: String) throws(FeliCaError) -> CardImage.Service {
        let o = try object(v, path)
        guard let raw = try code16(o, "code", path) else { throw fail(path, "missing required member \"code\"") }
        let code = ServiceCode(raw)
        guard code.isService, code != .none else { throw fail("\(path).code", "\(code) is not a service code (attribute \(code.attribute))") }
        let keyVersion = try code16(o, "keyVersion", path)
        var blockCount: Int? = nil
        if let bc = o["blockCount"] {
            guard let n = bc.intValue, (0...0xFFFF).contains(n) else {
                throw fail("\(path).blockCount", "expected a whole number 0-65535, found \(bc.serialized())")
            }
            blockCount = n
        }
        var blocks: [[UInt8]]? = nil
        if let bv = o["blocks"] {
            guard let list = bv.arrayValue else { throw fail("\(path).blocks", "expected an array, found \(bv.typeName)") }
            var out: [[UInt8]] = []
            for (i, b) in list.enumerated() {
                guard let s = b.stringValue else { throw fail("\(path).blocks[\(i)]", "expected a string, found \(b.typeName)") }
                out.append(try hexBytes(s, count: 16, "\(path).blocks[\(i)]"))
            }
            blocks = out
        }
        var blocksAt: [Int: [UInt8]] = [:]
        if let av = o["blocksAt"] {
            guard let numbered = av.objectValue else { throw fail("\(path).blocksAt", "expected an object of block number (4 hex digits) to block, found \(av.typeName)") }
            for m in numbered {
                let mp = "\(path).blocksAt.\(m.key)"
                let n = try hexBytes(m.key, count: 2, mp)
                let number = Int(n[0]) << 8 | Int(n[1])
                guard number >= (blocks?.count ?? 0) else { throw fail(mp, "block \(m.key) is already in \"blocks\"; blocksAt holds only blocks past the list") }
                guard let s = m.value.stringValue else { throw fail(mp, "expected a string, found \(m.value.typeName)") }
                blocksAt[number] = try hexBytes(s, count: 16, mp)
            }
        }
        var answers = false
        if let a = o["answersWithoutKey"] {
            guard let b = a.boolValue else { throw fail("\(path).answersWithoutKey", "expected true or false, found \(a.serialized())") }
            guard !b || !code.isReadableWithoutKey else { throw fail("\(path).answersWithoutKey", "service \(code) is readable without a key by its attribute already") }
            answers = b
        }
        if !blocksAt.isEmpty && !code.isReadableWithoutKey && !answers {
            throw fail("\(path).blocksAt", "service \(code) needs a key: its data is never readable")
        }
        if code.isReadableWithoutKey || answers {
            guard blocks != nil else { throw fail(path, "service \(code) is readable without a key, so it needs \"blocks\"") }
            if blockCount != nil { throw fail("\(path).blockCount", "only key-protected services give blockCount; \(code) lists its blocks") }
        } else {
            if blocks != nil { throw fail("\(path).blocks", "service \(code) needs a key: its data is never readable, give \"blockCount\" instead of blocks (or \"answersWithoutKey\": true for a card that answers anyway)") }
        }
        var service = CardImage.Service(code: code, blocks: blocks, keyVersion: keyVersion, blockCount: blockCount,
                                        extra: rest(o, known: ["code", "blocks", "blocksAt", "keyVersion", "blockCount", "answersWithoutKey"]))
        service.blocksAt = blocksAt
        service.answersWithoutKey = answers
        return service
    }
}

/// Reads a whole text file (UTF-8) with plain-words errors.
func readTextFile(_ path: String) throws(FeliCaError) -> String {
    guard let f = fopen(path, "rb") else {
        throw FeliCaError(.badInput, "cannot open (\(String(cString: strerror(errno))))")
    }
    defer { fclose(f) }
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65536)
    while true {
        let n = fread(&buffer, 1, buffer.count, f)
        if n > 0 { bytes.append(contentsOf: buffer[0..<n]) }
        if n < buffer.count {
            if ferror(f) != 0 { throw FeliCaError(.badInput, "read error (\(String(cString: strerror(errno))))") }
            break
        }
        if bytes.count > 64 << 20 { throw FeliCaError(.badInput, "file is larger than 64 MiB") }
    }
    guard let s = String(validating: bytes, as: UTF8.self) else { throw FeliCaError(.badInput, "file is not UTF-8 text") }
    return s
}
