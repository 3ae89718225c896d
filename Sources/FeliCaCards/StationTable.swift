/// Station names supplied by the user (`--stations FILE`): no freely licensed table
/// exists, so the library ships none and prints codes without one.
///
/// Format (UTF-8 CSV, one station per line):
///
///     # area,line,station,name
///     0,37,24,Shinjuku
///     2,0x01,0x3A,Osaka
///
/// - `area`: 0-3, the region bits of the record (0 JR East / Kanto private lines,
///   1 Chubu, 2 Kansai, 3 other).
/// - `line`, `station`: 0-255, decimal or `0x` hex.
/// - `name`: the rest of the line (commas allowed; surrounding double quotes removed).
/// - Blank lines and lines starting with `#` are ignored; a first row starting with
///   `area` is taken as a header. A repeated key is an error.
public struct StationTable: Hashable, Sendable {
    /// Key: area << 16 | line << 8 | station.
    private var names: [Int: String] = [:]

    public init() {}

    /// Parses the CSV text; `source` names the file in errors (`stations.csv:3: ...`).
    public init(csv text: String, source: String = "stations") throws(CardDataError) {
        var lineNumber = 0
        var sawRow = false
        for rawLine in text.split(separator: "\n", omittingEmptySubsequences: false) {
            lineNumber += 1
            var line = Substring(rawLine)
            if line.hasSuffix("\r") { line = line.dropLast() }
            if lineNumber == 1 && line.hasPrefix("\u{FEFF}") { line = line.dropFirst() }
            let trimmed = line.trimmingSpaces
            if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
            if !sawRow && trimmed.lowercased().hasPrefix("area") { sawRow = true; continue }
            sawRow = true
            let fields = trimmed.split(separator: ",", maxSplits: 3, omittingEmptySubsequences: false)
            func fail(_ why: String) -> CardDataError {
                CardDataError(.badTable, "\(source):\(lineNumber): \(why) (expected area,line,station,name)")
            }
            guard fields.count == 4 else { throw fail("\(fields.count) field\(fields.count == 1 ? "" : "s")") }
            func number(_ s: Substring, _ what: String, max: Int) throws(CardDataError) -> Int {
                let t = s.trimmingSpaces
                let v: Int? = t.hasPrefix("0x") || t.hasPrefix("0X") ? Int(t.dropFirst(2), radix: 16) : Int(t)
                guard let v, (0...max).contains(v) else { throw fail("\(what) \"\(t)\" is not a number 0-\(max)") }
                return v
            }
            let area = try number(fields[0], "area", max: 3)
            let lineCode = try number(fields[1], "line", max: 255)
            let station = try number(fields[2], "station", max: 255)
            var name = fields[3].trimmingSpaces
            if name.count >= 2 && name.hasPrefix("\"") && name.hasSuffix("\"") { name = name.dropFirst().dropLast() }
            guard !name.isEmpty else { throw fail("the name is empty") }
            let key = area << 16 | lineCode << 8 | station
            if let existing = names[key] {
                throw fail("\(area)/\(lineCode)/\(station) is listed twice (already \"\(existing)\")")
            }
            names[key] = String(name)
        }
    }

    /// Adds or replaces one name.
    public mutating func set(area: Int, line: Int, station: Int, name: String) {
        names[area << 16 | line << 8 | station] = name
    }

    /// Stations in the table.
    public var count: Int { names.count }

    /// The name for a station; with `area` nil (gate log, pending entry: the record does
    /// not say), a name is returned only when exactly one area has that line/station.
    public func name(area: Int?, line: Int, station: Int) -> String? {
        if let area { return names[area << 16 | line << 8 | station] }
        let found = (0...3).compactMap { names[$0 << 16 | line << 8 | station] }
        return found.count == 1 ? found[0] : nil
    }
}

extension Substring {
    var trimmingSpaces: Substring {
        var s = self
        while let c = s.first, c == " " || c == "\t" { s = s.dropFirst() }
        while let c = s.last, c == " " || c == "\t" { s = s.dropLast() }
        return s
    }
}
