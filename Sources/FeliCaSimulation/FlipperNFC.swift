import FeliCa
import FeliCaJSON

/// Flipper Zero `.nfc` files of FeliCa cards, read into card images and written from them.
///
/// The layout (firmware `lib/nfc/protocols/felica/felica.c`): `Key: value` lines, `#`
/// comments. Header `Filetype: Flipper NFC device`, `Device type: FeliCa`, `Data format
/// version` 1 to 3, `Manufacture id` (IDm) and `Manufacture parameter` (PMm) as spaced hex.
/// Version 1 files are always FeliCa Lite; later ones tell Lite from Standard by PMm byte 1.
/// Lite: `Blocks total`, `Blocks read`, `Block N` (N decimal, counting the firmware's 28
/// slots: user blocks 0x00-0x0E, then 0x80-0x88, 0x90-0x92, 0xA0) of SF1 SF2 + 16 bytes.
/// Standard: `Area found`, `Area NNN: | Code XXXX | Services #AAA-#BBB |` (service indices;
/// an empty area is `#AAA-#000` with AAA the next area's first index; version 3 adds
/// `| End XXXX |` and `| Key version XXXX |` to areas, services and `System NN:` lines),
/// `Service found`, `Service NNN: | Code XXXX | Attrib. XX | ...`, `Public blocks read`,
/// `Block NNNN: | Service code XXXX | Block index XX | Data: XX ... |` (NNN, AAA, XX hex).
/// Each `System NN: XXXX` line, where a file has them, starts the next system. Lines that
/// are not `key: value` (the `Directory Tree` drawing) and unknown keys are skipped.
enum FlipperNFC {
    /// The Lite's block numbers, slot by slot as the firmware stores them.
    static let liteBlockNumbers: [Int] = Array(0x00...0x0E) + Array(0x80...0x88) + Array(0x90...0x92) + [0xA0]
    /// The service a Lite's blocks are read through (read-only access).
    static let liteService: ServiceCode = 0x000B
    /// Extra member of the Lite service keeping the status flags of the slots the Flipper
    /// could not read (`{"0081": "01a8"}`), so they are written back as they were.
    static let statusMember = "flipperStatus"

    struct Line {
        var number: Int
        var key: Substring
        var value: Substring
    }

    static func fail(_ line: Int, _ what: String) -> FeliCaError {
        FeliCaError(.badInput, "line \(line): \(what)")
    }

    // MARK: - Reading

    static func image(_ text: String) throws(FeliCaError) -> CardImage {
        var lines: [Line] = []
        // Lines end in LF, CRLF (a file saved on Windows; Swift takes "\r\n" as one
        // Character) or CR. Keys and values lose the spaces and tabs around them.
        let blank: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        for (i, raw) in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" || $0 == "\r" }).enumerated() {
            let l = raw.drop(while: blank)
            if l.hasPrefix("#") { continue }
            guard let colon = l.firstIndex(of: ":") else { continue }
            var key = l[..<colon]
            while let last = key.last, blank(last) { key = key.dropLast() }
            guard !key.isEmpty, !key.contains("|") else { continue }
            var value = l[l.index(after: colon)...]
            while let first = value.first, blank(first) { value = value.dropFirst() }
            while let last = value.last, blank(last) { value = value.dropLast() }
            lines.append(Line(number: i + 1, key: key, value: value))
        }
        func first(_ key: String) -> Line? { lines.first { $0.key == key } }
        func required(_ key: String) throws(FeliCaError) -> Line {
            guard let l = first(key) else { throw FeliCaError(.badInput, "no \"\(key):\" line (is the file cut short?)") }
            return l
        }
        guard let filetype = first("Filetype"), filetype.value == "Flipper NFC device" else {
            throw FeliCaError(.badInput, "line 1: not a Flipper NFC device file (\"Filetype: Flipper NFC device\")")
        }
        let device = try required("Device type")
        guard device.value == "FeliCa" else {
            throw fail(device.number, "the device type is \(device.value), not FeliCa")
        }
        let versionLine = try required("Data format version")
        guard let version = Int(versionLine.value), version >= 1 else {
            throw fail(versionLine.number, "data format version \(versionLine.value) is not a version number (this tool reads 1 to 3)")
        }
        let idmLine = try required("Manufacture id")
        let idm = IDm(rawValue: uint64(try importHex(idmLine.value, count: 8, "line \(idmLine.number): Manufacture id")))
        let pmmLine = try required("Manufacture parameter")
        let pmm = PMm(rawValue: uint64(try importHex(pmmLine.value, count: 8, "line \(pmmLine.number): Manufacture parameter")))
        let family = pmm.ic.family
        var image: CardImage
        if version == 1 || family == .lite || family == .liteS {
            image = try lite(lines, idm: idm, pmm: pmm)
        } else {
            guard family == .standard || family == .mobile else {
                throw fail(pmmLine.number, "the card is a \(pmm.ic): Flipper files keep data only for FeliCa Lite and Standard cards")
            }
            image = try standard(lines, idm: idm, pmm: pmm)
        }
        // A newer layout keeps the lines this one has; what it adds is skipped.
        if version > newestVersion {
            image.note("data format version \(version) is newer than this tool knows (\(newestVersion)): read as \(newestVersion), lines it does not know skipped")
        }
        return image
    }

    /// The newest data format version whose layout this reader knows.
    static let newestVersion = 3

    static func count(_ l: Line) throws(FeliCaError) -> Int {
        guard let n = Int(l.value), n >= 0 else { throw fail(l.number, "\(l.key): \"\(l.value)\" is not a count") }
        return n
    }

    static func lite(_ lines: [Line], idm: IDm, pmm: PMm) throws(FeliCaError) -> CardImage {
        var slots: [Int: (sf: [UInt8], data: [UInt8])] = [:]
        var total: Int?
        for l in lines {
            if l.key == "Blocks total" { total = try count(l) }
            guard l.key.hasPrefix("Block "), let slot = Int(l.key.dropFirst(6)) else { continue }
            guard slot < liteBlockNumbers.count else { throw fail(l.number, "block slot \(slot) is past the Lite's \(liteBlockNumbers.count)") }
            let bytes = try importHex(l.value, count: 18, "line \(l.number): \(l.key)")
            slots[slot] = (Array(bytes[0..<2]), Array(bytes[2...]))
        }
        let total_ = total ?? slots.count
        if slots.count < total_ {
            throw FeliCaError(.badInput, "\"Blocks total\" says \(total_) blocks, the file holds \(slots.count) (is it cut short?)")
        }
        var blocks: [[UInt8]] = []
        var blocksAt: [Int: [UInt8]] = [:]
        var status = JSONObject()
        for (slot, number) in liteBlockNumbers.enumerated() {
            guard let s = slots[slot] else { continue }
            if s.sf == [0, 0] {
                if number == blocks.count && blocksAt.isEmpty { blocks.append(s.data) } else { blocksAt[number] = s.data }
            } else {
                status.append(Hex.digits(number, count: 4), .string(Hex.encode(s.sf)))
            }
        }
        // SYS_C (block 0x85) holds the system code the tag answers: 12FC once NDEF-formatted.
        var system: SystemCode = 0x88B4
        if let sysc = blocksAt[0x85], UInt16(sysc[0]) << 8 | UInt16(sysc[1]) == 0x12FC { system = 0x12FC }
        var service = CardImage.Service(code: liteService, blocks: blocks)
        service.blocksAt = blocksAt
        if !status.isEmpty { service.extra[statusMember] = .object(status) }
        // A 12FC system besides, when the MC block enables NDEF: CardImage.addLiteNDEFSystem.
        return CardImage(pmm: pmm, systems: [CardImage.System(code: system, idm: idm, services: [service])])
    }

    /// Pulls the 4 hex digits after `label` out of a `| label XXXX |` field.
    static func field(_ value: Substring, _ label: String, digits: Int, _ l: Line) throws(FeliCaError) -> Int {
        guard let r = value.firstRange(of: label) else { throw fail(l.number, "\(l.key): no \"\(label)\" in \"\(value)\"") }
        let text = String(value[r.upperBound...].drop { $0 == " " }.prefix { $0.isHexDigit })
        guard text.count == digits, let v = Int(text, radix: 16) else {
            throw fail(l.number, "\(l.key): \"\(label)\" needs \(digits) hex digits, found \"\(text)\"")
        }
        return v
    }

    struct StandardSystem {
        var code: SystemCode?
        var line: Int
        var areas: [(code: AreaCode, end: AreaCode?, first: Int, last: Int, line: Int)] = []
        var services: [(code: ServiceCode, keyVersion: UInt16?, line: Int)] = []
        var blocks: [(service: ServiceCode, index: Int, data: [UInt8], line: Int)] = []
        var declared: [String: (count: Int, line: Int)] = [:]
    }

    static func standard(_ lines: [Line], idm: IDm, pmm: PMm) throws(FeliCaError) -> CardImage {
        var systems: [StandardSystem] = []
        var current = StandardSystem(code: nil, line: 0)
        var started = false
        var systemsDeclared: (count: Int, line: Int)?
        for l in lines {
            let key = l.key
            if key == "System found" { systemsDeclared = (try count(l), l.number); continue }
            // Newer firmware writes the keys it was given (`System 00 Key`, `Area 000 Key`,
            // `Service 000 Key`): never card data, skipped.
            if key.hasSuffix(" Key") { continue }
            if key.hasPrefix("System ") && key != "System found" {
                if started { systems.append(current) }
                current = StandardSystem(code: SystemCode(UInt16(try hex4(l.value, l))), line: l.number)
                started = true
                continue
            }
            switch key {
            case "Area found", "Service found", "Public blocks read":
                current.declared[String(key)] = (try count(l), l.number)
                started = true
            default:
                if key.hasPrefix("Area ") {
                    let code = AreaCode(UInt16(try field(l.value, "Code", digits: 4, l)))
                    guard code.isArea else { throw fail(l.number, "\(key): \(code) is not an area code") }
                    let range = l.value.firstRange(of: "#")
                    guard let range else { throw fail(l.number, "\(key): no service range (#AAA-#BBB)") }
                    let parts = l.value[range.upperBound...].split(separator: "-", maxSplits: 1)
                    guard parts.count == 2, let a = Int(parts[0].prefix { $0.isHexDigit }, radix: 16),
                          let b = Int(parts[1].drop { $0 == "#" }.prefix { $0.isHexDigit }, radix: 16)
                    else { throw fail(l.number, "\(key): the service range is not #AAA-#BBB in hex") }
                    // Data format 3 gives the area's end code (`| End FFFE |`).
                    let end = l.value.contains("End ") ? AreaCode(UInt16(try field(l.value, "End", digits: 4, l))) : nil
                    current.areas.append((code, end, a, b, l.number))
                    started = true
                } else if key.hasPrefix("Service ") {
                    let code = ServiceCode(UInt16(try field(l.value, "Code", digits: 4, l)))
                    guard code.isService, code != .none else { throw fail(l.number, "\(key): \(code) is not a service code") }
                    let kv = l.value.contains("Key version") ? UInt16(try field(l.value, "Key version", digits: 4, l)) : nil
                    current.services.append((code, kv, l.number))
                    started = true
                } else if key.hasPrefix("Block ") && l.value.hasPrefix("|") {
                    let service = ServiceCode(UInt16(try field(l.value, "Service code", digits: 4, l)))
                    let index = try field(l.value, "Block index", digits: 2, l)
                    guard let d = l.value.firstRange(of: "Data:") else { throw fail(l.number, "\(key): no \"Data:\"") }
                    let hex = l.value[d.upperBound...].prefix { $0 != "|" }
                    let data = try importHex(hex, count: 16, "line \(l.number): \(key) data")
                    current.blocks.append((service, index, data, l.number))
                    started = true
                }
            }
        }
        if started { systems.append(current) }
        let end = lines.last?.number ?? 1
        guard !systems.isEmpty else { throw fail(end, "the file ends before any area, service or block of a FeliCa Standard card (is it cut short?)") }
        if let d = systemsDeclared, systems.count < d.count {
            throw fail(d.line, "\"System found\" says \(d.count), the file holds \(systems.count) (is it cut short?)")
        }
        var image = CardImage(pmm: pmm, systems: [])
        for (k, s) in systems.enumerated() {
            image.systems.append(try system(s, idm: k == 0 ? idm : nil, into: &image))
        }
        if systems.contains(where: { $0.areas.contains { $0.end == nil } }) {
            image.note("the Flipper file gives no area end codes: each area is taken to end at its last service")
        }
        return image
    }

    /// An index as the file writes it (3 hex digits).
    static func hex3(_ v: Int) -> String { Hex.digits(v, count: 3, uppercase: true) }

    static func hex4(_ value: Substring, _ l: Line) throws(FeliCaError) -> Int {
        let token = value.split(whereSeparator: { !$0.isHexDigit }).first { $0.count == 4 }
        guard let token, let v = Int(String(token), radix: 16) else { throw fail(l.number, "\(l.key): no system code (4 hex digits) in \"\(value)\"") }
        return v
    }

    static func system(_ s: StandardSystem, idm: IDm?, into image: inout CardImage) throws(FeliCaError) -> CardImage.System {
        for (name, got) in [("Area found", s.areas.count), ("Service found", s.services.count), ("Public blocks read", s.blocks.count)] {
            guard let d = s.declared[name] else {
                // The firmware writes all three counts for every system: a file that stops
                // before one was cut short, and would otherwise read as a smaller card.
                let last = ([s.line] + s.declared.values.map(\.line) + s.areas.map(\.line) + s.services.map(\.line) + s.blocks.map(\.line)).max()!
                throw fail(last, "no \"\(name):\" line after this one\(s.code.map { " for system \($0)" } ?? "") (is it cut short?)")
            }
            if got < d.count {
                throw fail(d.line, "\"\(name)\" says \(d.count), the file holds \(got) (is it cut short?)")
            }
        }
        var services: [CardImage.Service] = []
        var seen = Set<ServiceCode>()
        for (code, kv, line) in s.services {
            guard seen.insert(code).inserted else { throw fail(line, "service \(code) is listed twice") }
            // Key version FFFF is the firmware's "unknown".
            let keyVersion = kv == 0xFFFF ? nil : kv
            services.append(code.isReadableWithoutKey ? CardImage.Service(code: code, blocks: [], keyVersion: keyVersion == 0 ? nil : keyVersion)
                                                      : CardImage.Service(code: code, keyVersion: keyVersion ?? 0))
        }
        for b in s.blocks {
            guard let i = services.firstIndex(where: { $0.code == b.service }) else {
                throw fail(b.line, "block of service \(b.service), which the file does not list")
            }
            if !b.service.isReadableWithoutKey && services[i].blocks == nil {
                // The card answered without the key its attribute asks for (Shenzhen Tong's 0118).
                services[i] = CardImage.Service(code: b.service, blocks: [], keyVersion: services[i].keyVersion, answersWithoutKey: true)
            }
            if b.index == services[i].blocks!.count && services[i].blocksAt.isEmpty {
                services[i].blocks!.append(b.data)
            } else if services[i].block(b.index) != nil {
                throw fail(b.line, "block \(b.index) of service \(b.service) is given twice")
            } else {
                services[i].blocksAt[b.index] = b.data
            }
        }
        var areas: [CardImage.Area] = []
        for a in s.areas {
            // An area holding no service is written with the index the next area starts at
            // and last index 0 (`Services #012-#000`): empty, whatever its first index says.
            let empty = a.last < a.first
            guard empty ? a.first <= services.count : a.last < services.count else {
                throw fail(a.line, "area \(a.code): services #\(hex3(a.first))-#\(hex3(a.last)) are not in the \(services.count) listed")
            }
            let inside = empty ? a.code.number : max(a.code.number, services[a.last].code.number)
            var end = a.end ?? AreaCode(UInt16(inside) << 6 | 0x3F)
            // The root area spans the whole system, whatever range the file gives it.
            if a.code == .root { end = AreaCode(0xFFFE) }
            guard end.number >= a.code.number else { throw fail(a.line, "area \(a.code): end \(end) is below the area") }
            areas.append(CardImage.Area(code: a.code, end: end))
        }
        var code = s.code
        if code == nil {
            code = CardImage.systemCode(guessedFrom: services.map(\.code))
            if let code {
                image.note("the Flipper file does not say which system it read; its services make it system \(code)")
            } else {
                code = .common
                image.note("the Flipper file does not say which system it read, and its services are none a known profile uses: taken as system FE00")
            }
        }
        return CardImage.System(code: code!, idm: idm, areas: areas, services: services)
    }

    // MARK: - Writing

    static func spaced(_ bytes: [UInt8]) -> String {
        bytes.map { Hex.encode([$0], uppercase: true) }.joined(separator: " ")
    }

    static func header(_ image: CardImage) -> String {
        let idm = image.idm(ofSystem: 0)
        let pmm = image.pmm(ofSystem: 0)
        return """
            Filetype: Flipper NFC device
            Version: 4
            # Device type can be ISO14443-3A, ISO14443-3B, ISO14443-4A, ISO15693-3, FeliCa, NTAG/Ultralight, Mifare Classic, Mifare Plus, Mifare DESFire, SLIX, ST25TB
            Device type: FeliCa
            # UID is common for all formats
            UID: \(spaced(bytes64(idm.rawValue)))
            # FeliCa specific data
            Data format version: 2
            Manufacture id: \(spaced(bytes64(idm.rawValue)))
            Manufacture parameter: \(spaced(bytes64(pmm.rawValue)))
            IC Type: \(pmm.ic.name ?? "unknown IC \(Hex.encode([pmm.icCode], uppercase: true))")

            """
    }

    static func text(_ image: CardImage) throws(FeliCaError) -> String {
        guard !image.systems.isEmpty else { throw FeliCaError(.badInput, "the image holds no system") }
        let family = image.pmm(ofSystem: 0).ic.family
        if family == .lite || family == .liteS {
            guard let service = image.systems[0].services.first(where: { $0.code == liteService }) else {
                throw FeliCaError(.badInput, "a FeliCa Lite image without service \(liteService): nothing to write")
            }
            return header(image) + lite(service)
        }
        var out = header(image) + "# Felica Standard specific data\n"
        let several = image.systems.count > 1
        if several { out += "System found: \(image.systems.count)\n" }
        for (k, system) in image.systems.enumerated() {
            if several { out += "System \(Hex.digits(k, count: 2, uppercase: true)): \(system.code)\n" }
            out += standard(system)
        }
        return out
    }

    static func lite(_ service: CardImage.Service) -> String {
        let status = service.extra[statusMember]?.objectValue
        var out = "# Felica Lite specific data\nBlocks total: \(liteBlockNumbers.count)\n"
        var lines = ""
        var read = 0
        for (slot, number) in liteBlockNumbers.enumerated() {
            if let data = service.block(number) {
                read += 1
                lines += "Block \(slot): \(spaced([0, 0] + data))\n"
            } else {
                let sf = status?[Hex.digits(number, count: 4)]?.stringValue.flatMap(Hex.decode) ?? [0x01, 0xA8]
                lines += "Block \(slot): \(spaced(sf + [UInt8](repeating: 0, count: 16)))\n"
            }
        }
        out += "Blocks read: \(read)\n" + lines
        return out
    }

    static func standard(_ system: CardImage.System) -> String {
        let services = system.services.sorted { $0.code < $1.code }
        var out = "Area found: \(system.areas.count)\n"
        for (i, a) in system.areas.enumerated() {
            let inside = services.indices.filter { services[$0].code.number >= a.code.number && services[$0].code.number <= a.end.number }
            // An empty area as the firmware writes one: the index the next area starts at, then 0.
            let first = inside.first ?? services.filter { $0.code.number < a.code.number }.count, last = inside.last ?? 0
            out += "Area \(Hex.digits(i, count: 3, uppercase: true)): | Code \(a.code) | Services #\(Hex.digits(first, count: 3, uppercase: true))-#\(Hex.digits(last, count: 3, uppercase: true)) |\n"
        }
        out += "\nService found: \(services.count)\n"
        for (i, s) in services.enumerated() {
            let attr = s.code.attribute.rawValue
            out += "Service \(Hex.digits(i, count: 3, uppercase: true)): | Code \(s.code) | Attrib. \(Hex.digits(attr, count: 2, uppercase: true)) "
            out += attr & 1 == 1 ? "| Public  " : "| Private "
            if attr & 0x10 != 0 {
                out += "| Purse  |" + [" Direct     |", " Cashback   |", " Decrement  |", " Read Only  |"][Int(attr & 0x06) >> 1]
            } else {
                out += (attr & 0x04 == 0 ? "| Random |" : "| Cyclic |") + (attr & 0x02 != 0 ? " Read Only  |" : " Read/Write |")
            }
            out += "\n"
        }
        var blocks: [(ServiceCode, Int, [UInt8])] = []
        for s in services {
            for (i, b) in (s.blocks ?? []).enumerated() { blocks.append((s.code, i, b)) }
            for n in s.blocksAt.keys.sorted() { blocks.append((s.code, n, s.blocksAt[n]!)) }
        }
        out += "\nPublic blocks read: \(blocks.count)\n"
        for (i, (code, index, data)) in blocks.enumerated() {
            out += "Block \(Hex.digits(i, count: 4, uppercase: true)): | Service code \(code) | Block index \(Hex.digits(index, count: 2, uppercase: true)) | Data: "
                + data.map { Hex.encode([$0], uppercase: true) + " " }.joined() + "|\n"
        }
        return out
    }
}
