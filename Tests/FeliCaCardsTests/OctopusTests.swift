import FeliCa
import FeliCaCards
import FeliCaSimulation
import Testing

// Octopus and Shenzhen Tong (metrodroid transit/octopus/OctopusData.kt): (raw − offset) × 0.10,
// Octopus's offset 350 before 2017-10-01 and 500 from then, Shenzhen Tong's 350.

func octoDay(_ y: Int, _ m: Int, _ d: Int) -> CardDate { try! CardDate(year: y, month: m, day: d) }

func readCard(_ image: CardImage, on date: ReadingDate? = nil) async throws -> CardReport {
    var reader = CardReader(depth: .balance)
    if let date { reader.readingDate = date }
    return try await reader.read(CardSession(transport: VirtualTransport(card: VirtualCard(image: image), name: "virtual:test")))
}

@Test func octopusReadTodayUsesOffset500() async throws {
    let report = try await readCard(SampleCards.octopus)
    let p = try #require(report.purses.first)
    #expect(p.profile == .octopus)
    #expect(p.profile.currency.code == "HKD")
    #expect(p.balance == 5_000)  // HK$50.00 in cents
    #expect(p.rule?.offset == 500)
    #expect(p.rule?.readOn.source == .today)
}

@Test func octopusReadOnA2016ScanDateUsesOffset350() async throws {
    let report = try await readCard(SampleCards.octopus, on: ReadingDate(day: octoDay(2016, 8, 1), source: .scanDate))
    let p = try #require(report.purses.first)
    #expect(p.balance == (1_000 - 350) * 10)
    #expect(p.rule?.offset == 350)
    #expect(p.rule?.description.contains("before 2017-10-01") == true)
    #expect(p.rule?.description.contains("scan date") == true)
}

@Test(arguments: [(octoDay(2017, 9, 30), 350), (octoDay(2017, 10, 1), 500), (octoDay(2009, 1, 1), 350), (octoDay(2030, 1, 1), 500)])
func theOctopusOffsetChangesOn2017_10_01(_ date: CardDate, _ offset: Int) {
    #expect(Octopus.offset(.octopus, readOn: ReadingDate(day: date, source: .today)).offset == offset)
    #expect(Octopus.offset(.shenzhenTong, readOn: ReadingDate(day: date, source: .today)).offset == 350)
}

@Test func aDualCardShowsBothPurses() async throws {
    let report = try await readCard(SampleCards.octopusShenzhen)
    #expect(report.purses.map(\.profile) == [.octopus, .shenzhenTong])
    #expect(report.purses.map(\.balance) == [-1_440, 1_230])
    #expect(report.purses.map(\.profile.currency.code) == ["HKD", "CNY"])
    #expect(Currency.hkd.format(-1_440) == "-HK$14.40")
    #expect(Currency.hkd.format(5_000) == "HK$50.00")
    #expect(Currency.cny.format(1_230) == "CN¥12.30")
    #expect(Currency.jpy.format(1_234) == "¥1,234")
    #expect(Currency.hkd.format(123_456_7, signed: true) == "+HK$12,345.67")
}

@Test func aShortOctopusBlockIsAnIssueNotACrash() {
    let p = Octopus.purse(.octopus, system: 0x8008, block: [0, 1], readOn: .today())
    #expect(p.balance == nil)
    #expect(p.issues.first?.description.contains("block has 2 bytes") == true)
}
