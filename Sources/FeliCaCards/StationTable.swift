/// A rail station's names: what a table knows about one (area, line, station) key.
public struct StationInfo: Hashable, Sendable {
    /// Station name (`新宿`).
    public var name: String
    /// Line name (`山手線`), nil when the table does not say.
    public var line: String?
    /// Operating company (`東日本旅客鉄道`), nil when the table does not say.
    public var company: String?

    /// A station's names; line and company when known.
    public init(name: String, line: String? = nil, company: String? = nil) {
        self.name = name; self.line = line; self.company = company
    }
}

/// Station names keyed by (area, line, station), as transit records store them.
///
/// ``bundled`` is the table shipped with the library (about 7,000 stations; origin and
/// licence in NOTICE); `--stations FILE` adds to or overrides it with ``init(csv:source:)``
/// and ``merging(_:)``.
///
/// User format (CSV, RFC 4180 quoting, any line ending, optional UTF-8 BOM):
///
///     # area,line,station,name[,line name[,company]]
///     0,37,10,新宿,山手線,東日本旅客鉄道
///     2,0xE3,0x22,"Osaka, Umeda"
///
/// - `area`: 0-3, the region bits of the record (0 JR and Kanto private lines,
///   1 Chubu, 2 Kansai, 3 other).
/// - `line`, `station`: 0-255, decimal or `0x` hex.
/// - `name`: the station; a name holding a comma is quoted.
/// - Blank lines and lines starting with `#` are ignored; a first row starting with
///   `area` is taken as a header. A repeated key is an error, and so is a file that
///   names no station.
public struct StationTable: Hashable, Sendable {
    /// Key: area << 16 | line << 8 | station.
    private var entries: [Int: StationInfo] = [:]

    /// An empty table.
    public init() {}

    /// The table shipped with the library, parsed on first use.
    public static let bundled: StationTable = parseCompact(compactData)

    /// Parses the CSV text; `source` names the file in errors (`stations.csv:3: ...`).
    public init(csv text: String, source: String = "stations") throws(CardDataError) {
        var sawRow = false
        for row in CSVRows(text) {
            func fail(_ why: String) -> CardDataError {
                CardDataError(.badTable, "\(source):\(row.line): \(why) (expected area,line,station,name[,line name[,company]])")
            }
            guard let row = row.fields else { throw fail("a quoted field is not closed") }
            let first = row.first?.trimmingSpaces ?? ""
            if row.allSatisfy({ $0.trimmingSpaces.isEmpty }) || first.hasPrefix("#") { continue }
            if !sawRow && first.lowercased() == "area" { sawRow = true; continue }
            sawRow = true
            guard (4...6).contains(row.count) else { throw fail("\(row.count) field\(row.count == 1 ? "" : "s")") }
            func number(_ s: Substring, _ what: String, max: Int) throws(CardDataError) -> Int {
                let t = s.trimmingSpaces
                let v: Int? = t.hasPrefix("0x") || t.hasPrefix("0X") ? Int(t.dropFirst(2), radix: 16) : Int(t)
                guard let v, (0...max).contains(v) else { throw fail("\(what) \"\(t)\" is not a number 0-\(max)") }
                return v
            }
            let area = try number(row[0], "area", max: 3)
            let lineCode = try number(row[1], "line", max: 255)
            let station = try number(row[2], "station", max: 255)
            let name = row[3].trimmingSpaces
            guard !name.isEmpty else { throw fail("the name is empty") }
            func optional(_ i: Int) -> String? {
                guard i < row.count else { return nil }
                let s = row[i].trimmingSpaces
                return s.isEmpty ? nil : String(s)
            }
            let key = Self.key(area, lineCode, station)
            if let existing = entries[key] {
                throw fail("\(area)/\(lineCode)/\(station) is listed twice (already \"\(existing.name)\")")
            }
            entries[key] = StationInfo(name: String(name), line: optional(4), company: optional(5))
        }
        if entries.isEmpty {
            throw CardDataError(.badTable, "\(source): names no station (expected area,line,station,name lines)")
        }
    }

    /// Adds or replaces one station.
    public mutating func set(area: Int, line: Int, station: Int, _ info: StationInfo) {
        entries[Self.key(area, line, station)] = info
    }

    /// Adds or replaces one name.
    public mutating func set(area: Int, line: Int, station: Int, name: String) {
        set(area: area, line: line, station: station, StationInfo(name: name))
    }

    /// This table with `other`'s stations added; where both have a key, `other` wins.
    public func merging(_ other: StationTable) -> StationTable {
        var out = self
        out.entries.merge(other.entries) { _, theirs in theirs }
        return out
    }

    /// Stations in the table.
    public var count: Int { entries.count }

    /// What the table knows about a station; with `area` nil (gate log, pending entry: the
    /// record does not say), an answer comes only when exactly one area has that line/station.
    public func station(area: Int?, line: Int, station: Int) -> StationInfo? {
        guard (0...255).contains(line), (0...255).contains(station) else { return nil }
        if let area { return (0...3).contains(area) ? entries[Self.key(area, line, station)] : nil }
        let found = (0...3).compactMap { entries[Self.key($0, line, station)] }
        return found.count == 1 ? found[0] : nil
    }

    /// The station's name (see ``station(area:line:station:)``).
    public func name(area: Int?, line: Int, station: Int) -> String? {
        self.station(area: area, line: line, station: station)?.name
    }

    static func key(_ area: Int, _ line: Int, _ station: Int) -> Int { area << 16 | line << 8 | station }

    /// Parses the generated table (format: scripts/build-station-table.py). The text is
    /// ours and checked by a test, so a malformed line is skipped rather than reported.
    static func parseCompact(_ text: String) -> StationTable {
        var table = StationTable()
        var group: (area: Int, line: Int, company: String?, lineName: String?)?
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: ",", omittingEmptySubsequences: false)
            func text(_ i: Int) -> String? { i < fields.count && !fields[i].isEmpty ? String(fields[i]) : nil }
            if line.hasPrefix("=") {
                guard fields.count == 4, let area = Int(fields[0].dropFirst(), radix: 16), let l = Int(fields[1], radix: 16) else {
                    group = nil; continue
                }
                group = (area, l, text(2), text(3))
            } else if let g = group, fields.count == 2, let s = Int(fields[0], radix: 16), let name = text(1) {
                table.set(area: g.area, line: g.line, station: s, StationInfo(name: name, line: g.lineName, company: g.company))
            }
        }
        return table
    }
}

/// The rows of CSV text (RFC 4180): fields split at commas, `"` quoting with `""` for a
/// quote, and any line ending — CRLF, LF or a lone CR — ending a row outside quotes.
struct CSVRows: Sequence, IteratorProtocol {
    /// One row and the 1-based line it starts on; `fields` is nil when a quote is left open.
    struct Row {
        var line: Int
        var fields: [Substring]?
    }

    private let text: Substring
    private var index: Substring.Index
    private var line = 1

    init(_ text: String) {
        var t = Substring(text)
        if t.unicodeScalars.first == "\u{FEFF}" { t = Substring(t.unicodeScalars.dropFirst()) }
        self.text = t
        index = t.startIndex
    }

    mutating func next() -> Row? {
        let scalars = text.unicodeScalars
        guard index < scalars.endIndex else { return nil }
        let startLine = line
        var fields: [Substring] = []
        var field = ""
        var quoted = false, wasQuoted = false
        var fieldStart = index
        func finishField(at end: Substring.Index) {
            fields.append(wasQuoted ? Substring(field) : text[fieldStart..<end])
            field = ""; wasQuoted = false
        }
        var i = index
        while i < scalars.endIndex {
            let c = scalars[i]
            let after = scalars.index(after: i)
            if quoted {
                if c == "\"" {
                    if after < scalars.endIndex && scalars[after] == "\"" {
                        field.unicodeScalars.append("\""); i = scalars.index(after: after); continue
                    }
                    quoted = false
                } else {
                    if c == "\n" || (c == "\r" && (after == scalars.endIndex || scalars[after] != "\n")) { line += 1 }
                    field.unicodeScalars.append(c)
                }
                i = after
                continue
            }
            switch c {
            case "\"" where text[fieldStart..<i].allSatisfy({ $0 == " " || $0 == "\t" }):
                quoted = true; wasQuoted = true; field = ""
            case ",":
                finishField(at: i); fieldStart = after
            case "\r", "\n":
                finishField(at: i)
                var end = after
                if c == "\r" && end < scalars.endIndex && scalars[end] == "\n" { end = scalars.index(after: end) }
                index = end
                line += 1
                return Row(line: startLine, fields: fields)
            default:
                if wasQuoted { field.unicodeScalars.append(c) }
            }
            i = after
        }
        index = scalars.endIndex
        if quoted { return Row(line: startLine, fields: nil) }
        finishField(at: i)
        return Row(line: startLine, fields: fields)
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
