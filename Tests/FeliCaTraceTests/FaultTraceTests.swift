import FeliCa
import FeliCaTrace
import Testing

/// Regression (found by FuzzTrace, input Fuzz/Corpus/FuzzTrace/regress-huge-time): a trace
/// whose times are huge but finite parsed, and `felica trace show` then trapped converting
/// them to whole microseconds ("Double value cannot be converted to Int"); the pcap export
/// would have too. Times past 1e9 s are now refused with the line and the key.
@Test("absurd times are refused by the parser, naming line and key", arguments: [
    #"{"t":1.1e80,"tx":"0600ffff0100","rx":null,"error":"timeout"}"#,
    #"{"t":0,"tx":"0600ffff0100","rx":null,"error":"timeout","timeout":1e300}"#,
    #"{"t":0,"tx":"0600ffff0100","rx":"0100","elapsed":9.3e18}"#,
])
func absurdTimes(_ line: String) throws {
    let text = #"{"format":"felica-trace/1"}"# + "\n" + line + "\n"
    do {
        _ = try Trace.parse(text)
        Issue.record("parsed: \(line)")
    } catch {
        #expect(error.code == .badInput)
        #expect(error.reason.contains("line 2") && error.reason.contains("up to 1e9"), "\(error.reason)")
    }
    // Lenient: the damage is named, and what there is lists and exports without trapping.
    let lenient = try Trace.parse(text, lenient: true)
    #expect(lenient.exchanges.isEmpty && lenient.damage != nil)
    _ = lenient.listing()
    _ = Pcap.export(lenient)
}

@Test("the largest accepted times list and export")
func largestTimes() throws {
    let text = #"{"format":"felica-trace/1","started":"2026-11-29T10:00:00Z"}"# + "\n"
        + #"{"t":1e9,"tx":"0600ffff0100","rx":"0100","timeout":1e9,"elapsed":1e9}"# + "\n"
    let trace = try Trace.parse(text)
    #expect(trace.listing().contains("1000000000.000000"))
    #expect(Pcap.export(trace).frames == 2)
}
