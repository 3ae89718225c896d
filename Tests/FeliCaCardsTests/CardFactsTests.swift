import FeliCa
import FeliCaCards
import Testing

// Facts the profiles and dates carry as types: what a service holds, how finely a date was
// stored, and each profile's own properties.

@Suite struct CardFactsTests {
    @Test func aDateKnowsWhatTheCardStored() throws {
        let day = try CardDate(year: 2026, month: 11, day: 27)
        let minute = try CardDate(year: 2026, month: 11, day: 27, hour: 8, minute: 47)
        let second = try CardDate(year: 2026, month: 11, day: 27, hour: 8, minute: 47, second: 5)
        #expect(day.precision == .day && minute.precision == .minute && second.precision == .second)
        #expect(day.display(upTo: .second) == "2026-11-27")
        #expect(minute.display(upTo: .second) == "2026-11-27 08:47")
        #expect(second.display(upTo: .second) == "2026-11-27 08:47:05")
        #expect(second.display(upTo: .minute) == "2026-11-27 08:47")
        #expect(second.timeOfDay(upTo: .day) == nil && day.timeOfDay() == nil)
        let edy = try CardDate(daysSince2000: 0, secondsOfDay: 61)
        #expect(edy.precision == .second && edy.timeOfDay() == "00:01:01")
        #expect(second.isoDate == "2026-11-27")
    }

    @Test func eachProfileKeepsItsOwnProperties() {
        // Edy and KMT keep seconds and count records in 24 bits (KMT: Metrodroid's KMTTrip.kt reads 3 bytes).
        for p in [PurseProfile.edy, .kmt] { #expect(p.keepsSeconds && p.sequenceModulus == 1 << 24, "\(p)") }
        for p in PurseProfile.allCases where p != .edy && p != .kmt {
            #expect(!p.keepsSeconds, "\(p)")
            #expect(p.sequenceModulus == 1 << 16, "\(p)")
        }
    }

    /// Issues name what the service holds with the enum's words, which the JSON carries.
    @Test func whatAServiceHoldsIsItsLayoutsWord() async throws {
        let words = Set(PurseLayout.all.flatMap { $0.services.map(\.content.rawValue) })
        #expect(words == Set(ServiceContent.allCases.map(\.rawValue)))
        let issue = ServiceIssue(service: 0x090F, content: .gateLog, problem: .absent)
        #expect(issue.description == "gate log (service 090F) is not on the card")
    }
}
