import FeliCaJSON
import Testing

@Test(arguments: [
    #"{"a":1,"b":[true,false,null],"c":"x\"y\\z\n","d":-1.5e3,"e":{}}"#,
    #"[]"#, #""é\u0041""#, "0", "-0.25",
])
func parsesAndSerializesBack(_ text: String) throws {
    let v = try JSONValue.parse(text)
    #expect(try JSONValue.parse(v.serialized()) == v)
    #expect(try JSONValue.parse(v.serialized(pretty: true)) == v)
}

@Test func keepsMemberOrder() throws {
    let v = try JSONValue.parse(#"{"z":1,"a":2,"m":3}"#)
    #expect(v.objectValue?.keys == ["z", "a", "m"])
    #expect(v.serialized() == #"{"z":1,"a":2,"m":3}"#)
}

@Test(arguments: [
    ("{", "line 1, column 2"), ("[1,]", "line 1, column 4"), ("{\"a\" 1}", "line 1, column 6"),
    ("\n\n  tru", "line 3, column 3"), (#"{"a":1,"a":2}"#, "duplicate member"), ("01", "leading zero"),
    ("\"abc", "unterminated string"), ("[1] 2", "unexpected text"), ("1e999", "out of range"),
    ("\"\u{01}\"", "control character"),
] as [(String, String)])
func errorsSayWhere(_ text: String, _ fragment: String) {
    do {
        _ = try JSONValue.parse(text)
        Issue.record("parsed \(text)")
    } catch {
        #expect(error.description.contains(fragment), "\(error)")
    }
}

@Test func deepNestingIsRefusedNotCrashed() {
    let deep = String(repeating: "[", count: 100_000)
    #expect(throws: JSONError.self) { try JSONValue.parse(deep) }
}

@Test func integersPrintWithoutFraction() {
    #expect(JSONValue.int(850).serialized() == "850")
    #expect(JSONValue.number(0.0042).serialized() == "0.0042")
}

@Test(arguments: [7.6e-05, 1.5e-07, 0.1, 123.456, -2.5e-06, 1e-12, 3.0000001e-05])
func smallNumbersPrintInPlainDecimalAndReadBack(_ d: Double) throws {
    let text = JSONValue.number(d).serialized()
    #expect(!text.contains("e"))
    #expect(try JSONValue.parse(text) == .number(d))
}
