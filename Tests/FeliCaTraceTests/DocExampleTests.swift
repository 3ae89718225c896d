import FeliCa
import FeliCaCards
import FeliCaTrace
import Foundation
import Testing

// docs:begin — Docs/traces.md shows this test verbatim; a test below keeps the two equal.
@Test func suicaBalanceStillReads() async throws {
    let replay = try TraceReplay.load("Tests/Traces/suica-balance.jsonl")
    let card = try await CardReader(depth: .balance).read(CardSession(transport: replay))
    try replay.assertFullyConsumed()

    #expect(card.purses.map(\.balance) == [1234])
}
// docs:end

/// The guide's example is the test above, character for character.
@Test func theGuideShowsTheTestedExample() throws {
    let source = try Support.text(#filePath)
    let begin = try #require(source.range(of: "// docs:begin"))
    let codeStart = try #require(source[begin.upperBound...].firstIndex(of: "\n"))
    let end = try #require(source.range(of: "// docs:end"))
    let code = String(source[source.index(after: codeStart)..<end.lowerBound])
    let guide = try Support.text(Support.root + "/Docs/traces.md")
    #expect(guide.contains("```swift\nimport FeliCa\nimport FeliCaCards\nimport FeliCaTrace\nimport Testing\n\n" + code + "```\n"))
}
