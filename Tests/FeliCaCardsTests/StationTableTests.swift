import FeliCa
import FeliCaCards
import FeliCaEmulators
import FeliCaSimulation
import Testing

// MARK: - The user's CSV

@Test func stationTableParses() throws {
    let t = try StationTable(csv: "\u{FEFF}area,line,station,name\n# comment\n\n0,37,20,Shinjuku,Yamanote,JR East\n2, 0xE3 ,0x22,\"Osaka, Umeda\"\n1,1,1,Nagoya\n3,1,1,\"Say \"\"hi\"\"\"\n")
    #expect(t.count == 4)
    #expect(t.station(area: 0, line: 37, station: 20) == StationInfo(name: "Shinjuku", line: "Yamanote", company: "JR East"))
    #expect(t.name(area: 2, line: 0xE3, station: 0x22) == "Osaka, Umeda")
    #expect(t.name(area: 3, line: 1, station: 1) == "Say \"hi\"")
    #expect(t.name(area: 1, line: 37, station: 20) == nil)
    // Without an area: only an unambiguous line/station is named.
    #expect(t.name(area: nil, line: 37, station: 20) == "Shinjuku")
    #expect(t.name(area: nil, line: 1, station: 1) == nil)
}

/// Spreadsheets export CRLF; old Macs wrote a lone CR. Before the CSV reader split rows by
/// scalar, a CRLF file was one row: the first name swallowed the rest of the file, or the
/// header did and nothing was named.
@Test(arguments: ["\r\n", "\r", "\n"])
func stationTableTakesAnyLineEnding(_ eol: String) throws {
    let rows = ["area,line,station,name", "0,37,20,Shinjuku", "# comment", "", "0,37,30,\"Shibuya\"", "2,1,1,Osaka"]
    let t = try StationTable(csv: rows.joined(separator: eol) + eol)
    #expect(t.count == 3)
    #expect(t.name(area: 0, line: 37, station: 20) == "Shinjuku")
    #expect(t.name(area: 0, line: 37, station: 30) == "Shibuya")
    #expect(t.name(area: 2, line: 1, station: 1) == "Osaka")
    // Without a header, the first row's name ends at its line ending too.
    let bare = try StationTable(csv: rows.dropFirst().joined(separator: eol))
    #expect(bare.name(area: 0, line: 37, station: 20) == "Shinjuku")
    #expect(bare.count == 3)
}

/// Line numbers in errors count every line ending the same way.
@Test(arguments: ["\r\n", "\r", "\n"])
func stationTableErrorLinesWithAnyEnding(_ eol: String) {
    let csv = ["0,1,1,A", "# c", "0,1,x,B"].joined(separator: eol)
    #expect(throws: CardDataError.self) { try StationTable(csv: csv) }
    do { _ = try StationTable(csv: csv) } catch { #expect(error.reason.hasPrefix("stations:3: station \"x\""), "\(error.reason)") }
}

@Test(arguments: [
    ("0,1,2\n", "stations:1: 3 fields"),
    ("0,1,2,A,B,C,D\n", "stations:1: 7 fields"),
    ("0,1,2,A\n4,1,2,B\n", "stations:2: area \"4\" is not a number 0-3"),
    ("0,256,2,A\n", "stations:1: line \"256\" is not a number 0-255"),
    ("0,1,0xZZ,A\n", "stations:1: station \"0xZZ\" is not a number 0-255"),
    ("0,1,2,\n", "stations:1: the name is empty"),
    ("0,1,2,A\n# c\n0,0x01,0x02,B\n", "stations:3: 0/1/2 is listed twice"),
    ("0,1,2,A\n0,1,3,\"B\n0,1,4,C\n", "stations:2: a quoted field is not closed"),
    ("area,line,station,name\r\n# only a header\r\n", "stations: names no station"),
    ("", "stations: names no station"),
    ("\u{FEFF}\r\n\r\n", "stations: names no station"),
])
func stationTableErrors(_ csv: String, _ message: String) {
    do {
        _ = try StationTable(csv: csv)
        Issue.record("expected an error for \(csv.debugDescription)")
    } catch {
        #expect(error.code == .badTable)
        #expect(error.reason.hasPrefix(message), "\(error.reason)")
    }
}

// MARK: - The bundled table

@Test func bundledTableHasTheStationsOfTheSourceTable() {
    let t = StationTable.bundled
    // suica-viewer's 6,956 stations, and the 914 of ICCardManager's table it lacks.
    #expect(t.count == 7_870)
    #expect(t.station(area: 0, line: 0x25, station: 0x0A) == StationInfo(name: "新宿", line: "山手線", company: "東日本旅客鉄道"))
    #expect(t.station(area: 0, line: 0x01, station: 0x01) == StationInfo(name: "東京", line: "東海道線", company: "東日本旅客鉄道"))
    #expect(t.station(area: 2, line: 0xE3, station: 0x01)?.name == "大阪阿部野橋")
    // A "-" line name in the source is unknown, not a name.
    #expect(t.station(area: 0, line: 0, station: 0xF0) == StationInfo(name: "札幌市内", line: nil, company: "北海道旅客鉄道"))
    // A whole line only the second table has: the Yurikamome (line 0x82 from station 0x41;
    // the same line code's first stations are the Rinkai line's).
    #expect(t.station(area: 0, line: 0x82, station: 0x41) == StationInfo(name: "新橋", line: "東京臨海新交通臨海", company: "ゆりかもめ"))
    #expect(t.station(area: 0, line: 0x82, station: 0x01)?.name == "新木場")
    #expect(t.station(area: 3, line: 0x2D, station: 0x81) == StationInfo(name: "槻木", line: "阿武隈急行", company: "阿武隈急行"))
    #expect(t.station(area: 1, line: 0x25, station: 0x0A) == nil)
    #expect(t.station(area: 4, line: 0x25, station: 0x0A) == nil)
}

@Test func userTableOverridesAndAddsToTheBundledOne() throws {
    let user = try StationTable(csv: "0,37,10,Shinjuku (mine)\n0,37,200,New stop\n")
    let t = StationTable.bundled.merging(user)
    #expect(t.count == StationTable.bundled.count + 1)
    #expect(t.station(area: 0, line: 37, station: 10) == StationInfo(name: "Shinjuku (mine)"))
    #expect(t.name(area: 0, line: 37, station: 200) == "New stop")
    #expect(t.name(area: 0, line: 37, station: 7) == "渋谷")
}

// MARK: - Names on records

@Test func stationNamesReachTransactions() throws {
    var table = StationTable()
    table.set(area: 0, line: 1, station: 2, StationInfo(name: "Tokyo", line: "Tokaido", company: "JR East"))
    let rec = TransitIC.HistoryRecord(console: 0x16, process: 0x01, date: try CardDate(year: 2026, month: 1, day: 1),
                                      route: .rail(entryLine: 1, entryStation: 2, exitLine: 1, exitStation: 3), balance: 100, sequence: 1)
    let t = try #require(TransitIC.decodeHistory([rec.encode()], stations: table).first?.transaction)
    #expect(t.transit?.entry == StationRef(area: 0, line: 1, station: 2, name: "Tokyo", lineName: "Tokaido", company: "JR East"))
    #expect(t.transit?.entry?.description == "Tokyo")
    #expect(t.transit?.exit?.description == "0/1/3")
}

/// The area comes from the record's byte 15: bits 7-6 for the entry, 5-4 for the exit.
@Test func eachEndOfARideLooksUpItsOwnArea() throws {
    var table = StationTable()
    table.set(area: 2, line: 1, station: 2, name: "Kansai entry")
    table.set(area: 1, line: 1, station: 3, name: "Chubu exit")
    table.set(area: 0, line: 1, station: 2, name: "wrong area")
    let rec = TransitIC.HistoryRecord(console: 0x16, process: 0x01, date: try CardDate(year: 2026, month: 1, day: 1),
                                      route: .rail(entryLine: 1, entryStation: 2, exitLine: 1, exitStation: 3), balance: 100,
                                      sequence: 1, region: 0b1001_0000)
    let t = try #require(TransitIC.decodeHistory([rec.encode()], stations: table).first?.transaction)
    #expect(t.transit?.entry?.name == "Kansai entry")
    #expect(t.transit?.exit?.name == "Chubu exit")
}

/// The built-in Suica's rides are named from the bundled table; records that carry no
/// station (shop sales, the bus ride, a phone charge) get no name.
@Test func builtInCardsRecordsAreNamed() throws {
    for card in ["suica", "wallet"] {
        let image = try VirtualCard.named(card).image
        let system = try #require(image.systems.first { $0.code == 0x0003 })
        let blocks = try #require(system.services.first { $0.code == TransitIC.historyService }?.blocks)
        let entries = TransitIC.decodeHistory(blocks, stations: .bundled).compactMap(\.transaction)
        for t in entries {
            let x = try #require(t.transit)
            if x.console.code == 0xC7 || x.console.code == 0xC8 || x.console.code == 0x05 || x.console.code == 0x1B {
                #expect(x.entry == nil && x.exit == nil, "\(card) sequence \(t.sequence)")
            } else {
                #expect(x.entry?.name != nil, "\(card) sequence \(t.sequence)")
            }
        }
        let first = try #require(entries.first?.transit)
        #expect("\(first.entry!) → \(first.exit!)" == (card == "suica" ? "新宿 → 渋谷" : "新宿 → 東京"))
    }
}
