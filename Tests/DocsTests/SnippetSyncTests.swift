import Foundation
import Testing

// Docs/library.md shows code; LibraryGuideTests.swift compiles and runs the same code.
// These tests keep the two identical: every ```swift block of the guide must appear,
// line for line (at one indentation), in the test source.

let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

/// The ```swift blocks of a Markdown file, in order, without their fences.
func swiftBlocks(in markdown: String) -> [String] {
    var blocks: [String] = []
    var current: [Substring]?
    for line in markdown.split(separator: "\n", omittingEmptySubsequences: false) {
        if current == nil {
            if line.trimmingCharacters(in: .whitespaces) == "```swift" { current = [] }
        } else if line.trimmingCharacters(in: .whitespaces) == "```" {
            blocks.append(current!.joined(separator: "\n"))
            current = nil
        } else {
            current!.append(line)
        }
    }
    return blocks
}

/// Whether `block` occurs in `source` with every non-empty line indented by the same amount.
func source(_ source: String, contains block: String) -> Bool {
    for indent in stride(from: 0, through: 16, by: 4) {
        let pad = String(repeating: " ", count: indent)
        let shifted = block.split(separator: "\n", omittingEmptySubsequences: false)
            .map { $0.isEmpty ? "" : pad + $0 }.joined(separator: "\n")
        if source.contains(shifted + "\n") { return true }
    }
    return false
}

@Test func everySwiftBlockOfTheLibraryGuideIsCompiledByTheTests() throws {
    let guide = try String(contentsOf: packageRoot.appendingPathComponent("Docs/library.md"), encoding: .utf8)
    // The guide's blocks live in the tests, or in the example program the tests run.
    let tests = try String(contentsOf: packageRoot.appendingPathComponent("Tests/DocsTests/LibraryGuideTests.swift"), encoding: .utf8)
        + String(contentsOf: packageRoot.appendingPathComponent("Examples/LibraryExample/main.swift"), encoding: .utf8)
    let blocks = swiftBlocks(in: guide)
    #expect(blocks.count >= 3, "the guide shows a balance, a profile and a trace test")
    for (i, block) in blocks.enumerated() {
        #expect(source(tests, contains: block), "Docs/library.md swift block \(i + 1) is not in LibraryGuideTests.swift or Examples/LibraryExample/main.swift verbatim:\n\(block)")
    }
}

@Test func theSyncCheckNoticesAChangedLine() {
    let md = "text\n```swift\nlet a = 1\n\nprint(a)\n```\n"
    #expect(swiftBlocks(in: md) == ["let a = 1\n\nprint(a)"])
    #expect(source("func f() {\n    let a = 1\n\n    print(a)\n}\n", contains: swiftBlocks(in: md)[0]))
    #expect(!source("func f() {\n    let a = 2\n\n    print(a)\n}\n", contains: swiftBlocks(in: md)[0]))
    #expect(!source("func f() {\n    let a = 1\n  print(a)\n}\n", contains: swiftBlocks(in: md)[0]))
}
