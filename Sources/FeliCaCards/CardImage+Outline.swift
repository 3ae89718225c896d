import FeliCa
import FeliCaSimulation

extension CardImage {
    /// The brand of the transit IC card this image holds (`PASMO`), told by the areas and
    /// services of its system 0003 (`TransitIssuer`); nil when they tell no single brand.
    public var transitIssuer: String? {
        nodesBySystem[TransitIssuer.system].flatMap { TransitIssuer.brand(nodes: $0) }
    }

    /// The readable tree `felica dump` prints: systems → areas → services → blocks, one
    /// line per block (hex in groups of 4 bytes, then the printable characters). A FeliCa
    /// Lite or Lite-S shows its blocks by number and memory-map name, and its ID block's
    /// data format code (with the amusement card issuer it names).
    public func outline() -> String {
        var out = ""
        let cardPMm = pmm ?? CardImage.defaultPMm
        out += "Card  PMm \(cardPMm)  IC \(cardPMm.ic)\n"
        if let partial = extra["partial"], let reason = partial["error"]?.stringValue {
            out += "PARTIAL DUMP: \(reason)\n"
        }
        // What the card did not answer, as the image's `notes` carry it in JSON.
        for n in extra["notes"]?.arrayValue ?? [] {
            if let text = n.stringValue { out += "INCOMPLETE: \(text)\n" }
        }
        for (i, system) in systems.enumerated() {
            let brand = system.code == TransitIssuer.system ? transitIssuer.map { ", \($0)" } ?? "" : ""
            out += "System \(system.code)" + (SystemDirectory.displayName(of: system.code).map { " (\($0)\(brand))" } ?? "") + "  IDm \(idm(ofSystem: i))"
            if let p = system.pmm { out += "  PMm \(p)" }
            out += "\n"
            let lite = FeliCaLite.isLite(pmm(ofSystem: i))
            if lite, let id = system.services.first(where: { $0.code == FeliCaLite.readService })?.block(FeliCaLite.idBlock),
               let block = try? FeliCaLite.IDBlock(block: id) {
                out += "  ID block  IDd \(Hex.encode(block.idd))  DFC \(block.dfcHex)" + (block.issuer.map { " (\($0))" } ?? "") + "\n"
            }
            if lite, system.services.isEmpty, let same = systems[..<i].first(where: { $0.idm != nil && $0.idm == system.idm }) {
                out += "  the same memory as system \(same.code) (one IDm)\n"
            }
            var depth: [AreaCode] = []  // ends of the open areas
            var nodes: [(NodeCode, Service?)] = system.areas.map { ($0.code, nil) }
            nodes += system.services.map { ($0.code, $0) }
            nodes.sort { $0.0 < $1.0 }
            let ends = Dictionary(system.areas.map { ($0.code, $0.end) }, uniquingKeysWith: { a, _ in a })
            for (code, service) in nodes {
                while let last = depth.last, code > last { depth.removeLast() }
                let indent = String(repeating: "  ", count: depth.count + 1)
                guard let service else {
                    out += indent + "Area \(code)-\(ends[code] ?? code)\n"
                    depth.append(ends[code] ?? code)
                    continue
                }
                out += indent + "Service \(code)  \(code.attribute)"
                if let kv = service.keyVersion { out += "  key version \(Hex.encode([UInt8(kv >> 8), UInt8(kv & 0xFF)]))" }
                guard let blocks = service.blocks else {
                    out += service.blockCount.map { "  \($0) blocks, needs a key\n" } ?? "  size unknown, needs a key\n"
                    continue
                }
                let numbered = blocks.indices.map { ($0, blocks[$0]) } + service.blocksAt.keys.sorted().map { ($0, service.blocksAt[$0]!) }
                out += "  \(numbered.count) block\(numbered.count == 1 ? "" : "s")\n"
                for (b, data) in numbered {
                    let label = lite ? Hex.digits(b, count: 2, uppercase: true) + " " + (FeliCaLite.blockName(b) ?? "") : String(b)
                    out += indent + "  " + Self.column(label, lite ? 13 : 4) + Self.hexGroups(data) + "  " + Self.printable(data) + "\n"
                }
            }
        }
        return out
    }

    /// `s` as a column `width` wide, at least one space after it.
    public static func column(_ s: String, _ width: Int) -> String {
        s + String(repeating: " ", count: max(1, width - s.count))
    }

    /// Hex in groups of 4 bytes (`0011 2233 ...` as `00112233 44556677`).
    public static func hexGroups(_ data: [UInt8]) -> String {
        stride(from: 0, to: data.count, by: 4).map { Hex.encode(data[$0..<min($0 + 4, data.count)]) }.joined(separator: " ")
    }

    /// The bytes as printable ASCII, `.` for the rest.
    public static func printable(_ data: [UInt8]) -> String {
        String(decoding: data.map { (0x20...0x7E).contains($0) ? $0 : UInt8(ascii: ".") }, as: UTF8.self)
    }
}
