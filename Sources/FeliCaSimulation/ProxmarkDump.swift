import FeliCa
import FeliCaJSON

/// Proxmark3 `hf felica dump` JSON read into a card image.
///
/// The layout (RfidResearchGroup/proxmark3 `client/src/cmdhffelica.c`, the dump's JSON
/// writer): top-level `specification_version`, `product_information`,
/// `container_issue_information` (hex or null), and `systems[]`, each with `code` (the
/// system code, `0003`), `idm`, `pmm`, `encryption_identifier` and `nodes[]`. A node has a
/// `type` (`system`, `area`, `service`), a `code`, `des_key_version`, `aes_key_version` and,
/// for services read without a key, `data` (`{"0000": "<32 hex digits>"}`, the block number
/// in 4 hex digits). Node codes and key versions are the bytes as they go over the air,
/// little-endian: `0F09` is service 090F, and an area adds its end (`C01CFF1D` = area 1CC0
/// ending at 1DFF; an area found without its end is written with its code alone); `FFFF`
/// as a key version means none. The system node's code is `FFFF`; every node carries a
/// `data` object, empty but for readable services; hex is uppercase.
enum ProxmarkDump {
    static func fail(_ path: String, _ what: String) -> FeliCaError {
        FeliCaError(.badInput, "\(path): \(what)")
    }

    static func string(_ o: JSONObject, _ key: String, _ path: String) throws(FeliCaError) -> String? {
        guard let v = o[key], !v.isNull else { return nil }
        guard let s = v.stringValue else { throw fail("\(path).\(key)", "expected a hex string, found \(v.typeName)") }
        return s
    }

    /// Little-endian 16-bit values as hex bytes (`0F09` → 0x090F).
    static func littleEndian(_ s: String, count: Int, _ path: String) throws(FeliCaError) -> [UInt16] {
        let b = try importHex(s, count: 2 * count, path)
        return (0..<count).map { UInt16(b[2 * $0]) | UInt16(b[2 * $0 + 1]) << 8 }
    }

    static func image(_ value: JSONValue) throws(FeliCaError) -> CardImage {
        guard let root = value.objectValue else { throw fail("$", "expected an object") }
        guard let sv = root["systems"] else { throw fail("$", "missing \"systems\"") }
        guard let list = sv.arrayValue else { throw fail("$.systems", "expected an array, found \(sv.typeName)") }
        guard !list.isEmpty else { throw fail("$.systems", "a card holds at least one system") }
        var image = CardImage(systems: [])
        for (i, s) in list.enumerated() {
            let path = "$.systems[\(i)]"
            guard let o = s.objectValue else { throw fail(path, "expected an object, found \(s.typeName)") }
            guard let codeText = try string(o, "code", path) else { throw fail(path, "missing \"code\"") }
            let cb = try importHex(codeText, count: 2, "\(path).code")
            let code = SystemCode(UInt16(cb[0]) << 8 | UInt16(cb[1]))
            let idm = try string(o, "idm", path).map { t throws(FeliCaError) in IDm(rawValue: uint64(try importHex(t, count: 8, "\(path).idm"))) }
            let pmm = try string(o, "pmm", path).map { t throws(FeliCaError) in PMm(rawValue: uint64(try importHex(t, count: 8, "\(path).pmm"))) }
            if image.pmm == nil { image.pmm = pmm }
            var areas: [CardImage.Area] = []
            var services: [CardImage.Service] = []
            let nodes = o["nodes"]?.arrayValue ?? []
            if o["nodes"] != nil && o["nodes"]?.arrayValue == nil { throw fail("\(path).nodes", "expected an array") }
            for (k, n) in nodes.enumerated() {
                let np = "\(path).nodes[\(k)]"
                guard let no = n.objectValue else { throw fail(np, "expected an object, found \(n.typeName)") }
                guard let type = no["type"]?.stringValue else { throw fail("\(np).type", "expected \"system\", \"area\" or \"service\"") }
                guard let nodeText = try string(no, "code", np) else { throw fail(np, "missing \"code\"") }
                switch type {
                case "system":
                    continue
                case "area":
                    // An area found by Request Service rather than Search Service Code has
                    // no end: the writer then gives the code alone, and the end is unknown.
                    let v = try littleEndian(nodeText, count: nodeText.count <= 4 ? 1 : 2, "\(np).code")
                    let area = AreaCode(v[0])
                    guard area.isArea else { throw fail("\(np).code", "\(area) is not an area code") }
                    guard v.count == 1 || v[1] >= v[0] else { throw fail("\(np).code", "end \(AreaCode(v[1])) is below the area code \(area)") }
                    areas.append(v.count == 2 ? CardImage.Area(code: area, end: AreaCode(v[1]))
                                              : CardImage.Area(code: area, end: area, extra: ["endUnknown": true]))
                case "service":
                    let c = ServiceCode(try littleEndian(nodeText, count: 1, "\(np).code")[0])
                    guard c.isService, c != .none else { throw fail("\(np).code", "\(c) is not a service code") }
                    guard !services.contains(where: { $0.code == c }) else { throw fail("\(np).code", "service \(c) is listed twice") }
                    var kv: UInt16? = nil
                    if let t = try string(no, "des_key_version", np) {
                        let v = try littleEndian(t, count: 1, "\(np).des_key_version")[0]
                        if v != 0xFFFF { kv = v }
                    }
                    var service = c.isReadableWithoutKey ? CardImage.Service(code: c, blocks: [], keyVersion: kv == 0 ? nil : kv)
                        : CardImage.Service(code: c, keyVersion: kv ?? 0)
                    if let aes = try string(no, "aes_key_version", np) { service.extra["aesKeyVersion"] = .string(aes.lowercased()) }
                    if let data = no["data"], !data.isNull {
                        guard let map = data.objectValue else { throw fail("\(np).data", "expected an object of block number to data") }
                        if !c.isReadableWithoutKey && !map.isEmpty {
                            // The card answered without the key its attribute asks for.
                            service = CardImage.Service(code: c, blocks: [], keyVersion: kv, answersWithoutKey: true)
                        }
                        var numbered: [Int: [UInt8]] = [:]
                        for m in map {
                            let bp = "\(np).data.\(m.key)"
                            let nb = try importHex(m.key, count: 2, bp)
                            guard let s = m.value.stringValue else { throw fail(bp, "expected a hex string, found \(m.value.typeName)") }
                            numbered[Int(nb[0]) << 8 | Int(nb[1])] = try importHex(s, count: 16, bp)
                        }
                        for b in numbered.keys.sorted() {
                            if b == service.blocks!.count && service.blocksAt.isEmpty { service.blocks!.append(numbered[b]!) } else { service.blocksAt[b] = numbered[b]! }
                        }
                    }
                    services.append(service)
                default:
                    throw fail("\(np).type", "\"\(type)\" is not system, area or service")
                }
            }
            var system = CardImage.System(code: code, idm: idm, pmm: pmm == image.pmm ? nil : pmm, areas: areas, services: services)
            // A name (`AES128_DES112`) when Proxmark knows the identifier, else 2 hex digits: kept as written.
            if let e = try string(o, "encryption_identifier", path) { system.extra["encryptionIdentifier"] = .string(e) }
            image.systems.append(system)
        }
        for key in ["specification_version", "product_information", "container_issue_information"] {
            if let v = root[key], !v.isNull { image.extra["proxmark:" + key] = v }
        }
        return image
    }
}
