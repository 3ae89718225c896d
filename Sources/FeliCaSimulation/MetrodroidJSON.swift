import FeliCa
import FeliCaJSON

/// Metrodroid (and FareBot) JSON exports of FeliCa cards, read into card images and written
/// from them.
///
/// The layout (metrodroid `card/felica/FelicaCard.kt`, `FelicaSystem.kt`, `FelicaService.kt`,
/// `FelicaBlock.kt`): `tagId` (the IDm, hex), `scannedAt.timeInMillis` (the scan time, ms
/// since 1970 UTC), `felica.pMm`, `felica.systems` keyed by the system code in DECIMAL
/// (`"3"` = 0003, `"4860"` = 12FC), each with `services` keyed by the service code in
/// decimal (`"139"` = 008B), each with `blocksMap` (`{"0": {"data": hex}}`) or the older
/// `blocks` (`[{"data": hex}]`), and `skipped` for a service that was not read (behind a
/// key). Metrodroid keeps no areas, so an image written in this format loses them.
enum MetrodroidJSON {
    static func fail(_ path: String, _ what: String) -> FeliCaError {
        FeliCaError(.badInput, "\(path): \(what)")
    }

    static func hex(_ v: JSONValue?, count: Int?, _ path: String) throws(FeliCaError) -> [UInt8] {
        guard let v else { throw fail(path, "missing") }
        guard let s = v.stringValue else { throw fail(path, "expected a hex string, found \(v.typeName)") }
        return try importHex(s, count: count, path)
    }

    static func decimalCode(_ key: String, _ path: String) throws(FeliCaError) -> UInt16 {
        guard !key.isEmpty, key.allSatisfy(\.isASCII), key.allSatisfy(\.isNumber), let v = UInt16(key) else {
            throw fail(path, "\"\(key)\" is not a code in decimal (0-65535), as Metrodroid writes them")
        }
        return v
    }

    // MARK: - Reading

    static func image(_ value: JSONValue) throws(FeliCaError) -> CardImage {
        guard let root = value.objectValue else { throw fail("$", "expected an object") }
        if root["cards"] != nil && root["felica"] == nil { return try fareBot(root) }
        guard let felica = root["felica"]?.objectValue else {
            throw fail("$.felica", root["felica"] == nil ? "missing: the export holds no FeliCa card" : "expected an object")
        }
        let idmHex = root["tagId"] ?? felica["iDm"]
        let idm = try IDm(rawValue: uint64(hex(idmHex, count: 8, root["tagId"] != nil ? "$.tagId" : "$.felica.iDm")))
        // Exports converted from FareBot write `"pMm": null`: the PMm is unknown.
        var pmm: PMm?
        if let v = felica["pMm"], !v.isNull { pmm = PMm(rawValue: uint64(try hex(v, count: 8, "$.felica.pMm"))) }
        guard let sv = felica["systems"] else { throw fail("$.felica", "missing \"systems\"") }
        guard let list = sv.objectValue else { throw fail("$.felica.systems", "expected an object keyed by system code, found \(sv.typeName)") }
        guard !list.isEmpty else { throw fail("$.felica.systems", "a card holds at least one system") }
        var image = CardImage(pmm: pmm, systems: [])
        for (k, m) in list.enumerated() {
            let path = "$.felica.systems.\(m.key)"
            let code = SystemCode(try decimalCode(m.key, path))
            guard let o = m.value.objectValue else { throw fail(path, "expected an object, found \(m.value.typeName)") }
            var services: [CardImage.Service] = []
            if let so = o["services"] {
                guard let sl = so.objectValue else { throw fail("\(path).services", "expected an object keyed by service code, found \(so.typeName)") }
                for s in sl {
                    if let service = try service(s.key, s.value, "\(path).services.\(s.key)", into: &image) { services.append(service) }
                }
            }
            // A FeliCa Lite answers 88B4 and 12FC (NDEF) with one IDm, from one memory:
            // Metrodroid keeps the blocks under each system; one copy is the memory, the others
            // say only that the system answers (as `felica dump` writes a Lite).
            let lite = FeliCaLite.isLite(pmm ?? CardImage.defaultPMm)
            services.sort { $0.code < $1.code }
            if lite, image.systems.contains(where: { $0.services == services }) { services = [] }
            image.systems.append(CardImage.System(code: code, idm: k == 0 || lite ? idm : nil, services: services))
        }
        if let scanned = root["scannedAt"] {
            guard let ms = scanned["timeInMillis"]?.doubleValue, ms >= 0, ms < 253_402_300_800_000 else {
                throw fail("$.scannedAt.timeInMillis", "expected milliseconds since 1970, found \(scanned["timeInMillis"]?.serialized() ?? "nothing")")
            }
            image.scannedAt = isoUTC(millis: Int64(ms))
        }
        return image
    }

    /// The service `key` (decimal) of an export, nil when the code is an area's in FeliCa's
    /// node layout (attribute 0 or 1): Metrodroid's own test exports list "service" 1, which
    /// no card answers as a service; it is left out with a note saying how many blocks it had.
    static func service(_ key: String, _ v: JSONValue, _ path: String, into image: inout CardImage) throws(FeliCaError) -> CardImage.Service? {
        let code = ServiceCode(try decimalCode(key, path))
        guard code != .none else { throw fail(path, "\(code) is not a service code") }
        guard let o = v.objectValue else { throw fail(path, "expected an object, found \(v.typeName)") }
        if !code.isService {
            let blocks = o["blocksMap"]?.objectValue.map { Array($0).count } ?? o["blocks"]?.arrayValue?.count ?? 0
            image.note("\(path): \(code) is an area code in FeliCa's node layout, not a service; left out with its \(blocks) block\(blocks == 1 ? "" : "s")")
            return nil
        }
        var numbered: [Int: [UInt8]] = [:]
        if let map = o["blocksMap"] {
            guard let mo = map.objectValue else { throw fail("\(path).blocksMap", "expected an object keyed by block number") }
            for b in mo {
                let bp = "\(path).blocksMap.\(b.key)"
                guard let n = Int(b.key), n >= 0, n <= 0xFFFF, b.key.allSatisfy(\.isNumber) else { throw fail(bp, "\"\(b.key)\" is not a block number") }
                numbered[n] = try hex(b.value["data"], count: 16, "\(bp).data")
            }
        } else if let list = o["blocks"] {
            guard let bl = list.arrayValue else { throw fail("\(path).blocks", "expected an array") }
            for (i, b) in bl.enumerated() { numbered[i] = try hex(b["data"], count: 16, "\(path).blocks[\(i)].data") }
        }
        let skipped = o["skipped"]?.boolValue ?? false
        if !code.isReadableWithoutKey && numbered.isEmpty { return CardImage.Service(code: code) }
        if skipped && numbered.isEmpty { image.note("service \(code): Metrodroid did not read it (skipped)") }
        // A keyed service with blocks: the card answered without the key (Shenzhen Tong's 0118).
        var s = CardImage.Service(code: code, blocks: [], answersWithoutKey: !code.isReadableWithoutKey)
        for n in numbered.keys.sorted() {
            if n == s.blocks!.count && s.blocksAt.isEmpty { s.blocks!.append(numbered[n]!) } else { s.blocksAt[n] = numbered[n]! }
        }
        return s
    }

    // MARK: - FareBot's own export

    /// FareBot's export (`{"cards": [...]}`, read by Metrodroid's `FarebotJsonFormat`): one
    /// object per card with `cardType`; a FeliCa card has `tagId` (base64 of the IDm),
    /// `scannedAt` (ms since 1970), `idm` (`manufactureCode` 2 bytes, `cardIdentification`
    /// 6), `pmm` (`icCode` 2, `maximumResponseTime` 6), bytes as signed numbers, and
    /// `systems[]` with `code` and `services[]` of `serviceCode` and `blocks[]` of base64
    /// `data`, all codes in decimal. The file must hold exactly one FeliCa card.
    static func fareBot(_ root: JSONObject) throws(FeliCaError) -> CardImage {
        guard let cards = root["cards"]?.arrayValue else { throw fail("$.cards", "expected an array of cards") }
        let felica = cards.indices.filter { cards[$0]["cardType"]?.stringValue == "FeliCa" }
        guard felica.count == 1, let k = felica.first, let card = cards[k].objectValue else {
            let kinds = cards.map { $0["cardType"]?.stringValue ?? "?" }.joined(separator: ", ")
            throw fail("$.cards", felica.isEmpty ? "no FeliCa card among the \(cards.count) (\(kinds))"
                                                 : "\(felica.count) FeliCa cards (\(felica.map { "[\($0)]" }.joined(separator: ", "))): a card image is one card")
        }
        let path = "$.cards[\(k)]"
        func bytes(_ v: JSONValue?, count: Int, _ p: String) throws(FeliCaError) -> [UInt8] {
            guard let list = v?.arrayValue, list.count == count else { throw fail(p, "expected \(count) bytes as numbers") }
            var out: [UInt8] = []
            for (i, b) in list.enumerated() {
                guard let n = b.intValue, (-128...255).contains(n) else { throw fail("\(p)[\(i)]", "expected a byte (-128 to 255)") }
                out.append(UInt8(truncatingIfNeeded: n))
            }
            return out
        }
        func base64(_ v: JSONValue?, _ p: String) throws(FeliCaError) -> [UInt8] {
            guard let s = v?.stringValue, let b = decodeBase64(s) else { throw fail(p, "expected base64 text") }
            return b
        }
        var idmBytes: [UInt8]
        if card["tagId"] != nil {
            idmBytes = try base64(card["tagId"], "\(path).tagId")
        } else {
            let o = card["idm"]
            idmBytes = try bytes(o?["manufactureCode"], count: 2, "\(path).idm.manufactureCode") + bytes(o?["cardIdentification"], count: 6, "\(path).idm.cardIdentification")
        }
        guard idmBytes.count == 8 else { throw fail("\(path).tagId", "expected 8 bytes (the IDm), found \(idmBytes.count)") }
        var pmm: PMm?
        if let o = card["pmm"], !o.isNull {
            pmm = PMm(rawValue: uint64(try bytes(o["icCode"], count: 2, "\(path).pmm.icCode") + bytes(o["maximumResponseTime"], count: 6, "\(path).pmm.maximumResponseTime")))
        }
        var image = CardImage(pmm: pmm, systems: [])
        guard let systems = card["systems"]?.arrayValue, !systems.isEmpty else { throw fail("\(path).systems", "expected the card's systems") }
        for (i, sv) in systems.enumerated() {
            let sp = "\(path).systems[\(i)]"
            guard let code = sv["code"]?.intValue, (0...0xFFFF).contains(code) else { throw fail("\(sp).code", "expected a system code in decimal") }
            var services: [CardImage.Service] = []
            for (j, s) in (sv["services"]?.arrayValue ?? []).enumerated() {
                let vp = "\(sp).services[\(j)]"
                guard let c = s["serviceCode"]?.intValue, (0...0xFFFF).contains(c) else { throw fail("\(vp).serviceCode", "expected a service code in decimal") }
                var blocks: JSONObject = [:]
                for (n, b) in (s["blocks"]?.arrayValue ?? []).enumerated() {
                    let data = try base64(b["data"], "\(vp).blocks[\(n)].data")
                    guard data.count == 16 else { throw fail("\(vp).blocks[\(n)].data", "expected 16 bytes, found \(data.count)") }
                    blocks.append(String(b["address"]?.intValue ?? n), .object(["data": .string(Hex.encode(data))]))
                }
                if let service = try service(String(c), .object(["blocksMap": .object(blocks)]), vp, into: &image) { services.append(service) }
            }
            services.sort { $0.code < $1.code }
            image.systems.append(CardImage.System(code: SystemCode(UInt16(code)), idm: i == 0 ? IDm(rawValue: uint64(idmBytes)) : nil, services: services))
        }
        if let ms = card["scannedAt"]?.doubleValue, ms >= 0, ms < 253_402_300_800_000 { image.scannedAt = isoUTC(millis: Int64(ms)) }
        return image
    }

    // MARK: - Writing

    static func text(_ image: CardImage, now: String) -> String {
        var systems = JSONObject()
        for (i, system) in image.systems.enumerated() {
            var services = JSONObject()
            // A Lite's NDEF system shares the memory of the system with its IDm: Metrodroid
            // keeps the blocks under each system it read.
            let lite = FeliCaLite.isLite(image.pmm(ofSystem: i)) && system.services.isEmpty
            let same = lite ? image.systems[..<i].first { $0.idm != nil && $0.idm == system.idm } : nil
            for s in same?.services ?? system.services {
                var so = JSONObject()
                if s.isReadable {
                    var map = JSONObject()
                    for (i, b) in (s.blocks ?? []).enumerated() { map.append(String(i), .object(["data": .string(Hex.encode(b))])) }
                    for n in s.blocksAt.keys.sorted() { map.append(String(n), .object(["data": .string(Hex.encode(s.blocksAt[n]!))])) }
                    so.append("blocksMap", .object(map))
                } else {
                    so.append("skipped", .bool(true))
                }
                services.append(String(s.code.rawValue), .object(so))
            }
            systems.append(String(system.code.rawValue), .object(["services": .object(services)]))
        }
        let idm = Hex.encode(bytes64(image.idm(ofSystem: 0).rawValue))
        let millis = millis(iso: image.scannedAt ?? now) ?? 0
        let root: JSONObject = [
            "tagId": .string(idm),
            "scannedAt": .object(["timeInMillis": .int(Int(millis)), "tz": .string("UTC")]),
            "felica": .object(["iDm": .string(idm), "pMm": .string(Hex.encode(bytes64(image.pmm(ofSystem: 0).rawValue))), "systems": .object(systems)]),
        ]
        return JSONValue.object(root).serialized(pretty: true) + "\n"
    }
}

// MARK: - UTC times

/// `YYYY-MM-DDTHH:MM:SSZ` for milliseconds since 1970-01-01 UTC.
func isoUTC(millis: Int64) -> String {
    let seconds = millis / 1000
    let days = Int(seconds / 86_400), rest = Int(seconds % 86_400)
    let (y, m, d) = civil(daysSince1970: days)
    func p(_ v: Int, _ n: Int = 2) -> String { String(repeating: "0", count: max(0, n - String(v).count)) + String(v) }
    return "\(p(y, 4))-\(p(m))-\(p(d))T\(p(rest / 3600)):\(p(rest / 60 % 60)):\(p(rest % 60))Z"
}

/// Milliseconds since 1970 for `YYYY-MM-DDTHH:MM:SSZ`; nil for anything else.
func millis(iso: String) -> Int64? {
    let u = Array(iso.utf8)
    guard u.count == 20, u[4] == 0x2D, u[7] == 0x2D, u[10] == 0x54, u[13] == 0x3A, u[16] == 0x3A, u[19] == 0x5A else { return nil }
    func n(_ r: Range<Int>) -> Int? { Int(String(decoding: u[r], as: UTF8.self)) }
    guard let y = n(0..<4), let mo = n(5..<7), let d = n(8..<10), let h = n(11..<13), let mi = n(14..<16), let s = n(17..<19),
          (1...12).contains(mo), (1...31).contains(d), h < 24, mi < 60, s < 60 else { return nil }
    let days = daysSince1970(year: y, month: mo, day: d)
    return (Int64(days) * 86_400 + Int64(h * 3600 + mi * 60 + s)) * 1000
}

/// Days from 1970-01-01 (proleptic Gregorian; Howard Hinnant's well-known formula).
func daysSince1970(year: Int, month: Int, day: Int) -> Int {
    let y = month <= 2 ? year - 1 : year
    let era = (y >= 0 ? y : y - 399) / 400
    let yoe = y - era * 400
    let doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
    return era * 146_097 + doe - 719_468
}

func civil(daysSince1970 z0: Int) -> (Int, Int, Int) {
    let z = z0 + 719_468
    let era = (z >= 0 ? z : z - 146_096) / 146_097
    let doe = z - era * 146_097
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
    let mp = (5 * doy + 2) / 153
    let d = doy - (153 * mp + 2) / 5 + 1
    let m = mp < 10 ? mp + 3 : mp - 9
    return (yoe + era * 400 + (m <= 2 ? 1 : 0), m, d)
}

/// Standard base64 (RFC 4648, `=` padding optional); nil for anything else.
func decodeBase64(_ text: String) -> [UInt8]? {
    var out: [UInt8] = []
    var acc: UInt32 = 0, bits = 0, padding = 0
    for c in text.utf8 {
        let v: UInt32
        switch c {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): v = UInt32(c - UInt8(ascii: "A"))
        case UInt8(ascii: "a")...UInt8(ascii: "z"): v = UInt32(c - UInt8(ascii: "a")) + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): v = UInt32(c - UInt8(ascii: "0")) + 52
        case UInt8(ascii: "+"): v = 62
        case UInt8(ascii: "/"): v = 63
        case UInt8(ascii: "="): padding += 1; continue
        default: return nil
        }
        if padding > 0 { return nil }
        acc = acc << 6 | v
        bits += 6
        if bits >= 8 {
            bits -= 8
            out.append(UInt8(truncatingIfNeeded: acc >> UInt32(bits)))
        }
    }
    return padding <= 2 ? out : nil
}
