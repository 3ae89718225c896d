@testable import FeliCaCLI
import Testing

/// `log --from/--to`: whole days and months, checked, as the days of a query.
@Test(arguments: [
    ("2026-11-05", false, "2026-11-05"),
    ("2026-11", false, "2026-11-01"),
    ("2026-11", true, "2026-11-30"),
    ("2024-02", true, "2024-02-29"),
    ("2025-02", true, "2025-02-28"),
])
func logDatesBecomeDays(_ text: String, _ endOfMonth: Bool, _ expected: String) throws {
    #expect(try HistoryOptions.day(text, option: "from", endOfMonth: endOfMonth).isoDate == expected)
}

@Test(arguments: ["+202-01", "2026-+1", "2026-1", "2026-13", "2026-02-30", "2026-11-5", "26-11-05", "2026/11/05", "", "2026-11-05-01", "２０２６-11"])
func badLogDatesAreUsageErrors(_ text: String) {
    #expect {
        _ = try HistoryOptions.day(text, option: "from", endOfMonth: false)
    } throws: { ($0 as? UsageError)?.message == "option '--from': \"\(text)\" is not a date (YYYY-MM-DD or YYYY-MM)" }
}
