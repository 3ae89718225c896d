import Foundation
import Testing

/// The repository stands alone: no comment, doc, help text, golden output or plot points
/// to notes outside it (the team's design notes) or to issue numbers of a tracker. What
/// a reader needs lives in Docs/.
@Suite struct StandAloneTests {
    /// Names of notes that live outside the repository (spelled in pieces so this file
    /// does not match itself).
    static let outsideNotes = ["FELICA", "CARDS", "EMULATION", "ARCHITECTURE", "STYLE", "USB"].map { $0 + ".md" }
        + ["shared" + "/design"]

    /// The word issue (or issues) followed by a number, with or without `#`.
    static var issueNumber: Regex<AnyRegexOutput> { try! Regex("(?i)\\bissues?\\s+#?[0-9]+") }

    /// Every text file of the repository outside build output and version control.
    static func repositoryTextFiles() -> [(path: String, text: String)] {
        let root = packageRoot.path
        guard let walker = FileManager.default.enumerator(atPath: root) else { return [] }
        var files: [(String, String)] = []
        while let relative = walker.nextObject() as? String {
            let name = (relative as NSString).lastPathComponent
            if name.hasPrefix(".") || name == "core" {
                if (walker.fileAttributes?[.type] as? FileAttributeType) == .typeDirectory { walker.skipDescendants() }
                continue
            }
            guard (walker.fileAttributes?[.type] as? FileAttributeType) == .typeRegular,
                  let data = FileManager.default.contents(atPath: root + "/" + relative), data.count < 4 << 20,
                  let text = String(data: data, encoding: .utf8) else { continue }
            files.append((relative, text))
        }
        return files
    }

    @Test func nothingPointsOutsideTheRepository() throws {
        let files = Self.repositoryTextFiles()
        #expect(files.contains { $0.path == "README.md" } && files.contains { $0.path.hasPrefix("Sources/FeliCa/") })
        let issueNumber = Self.issueNumber
        var found: [String] = []
        for (path, text) in files {
            for (n, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                if let note = Self.outsideNotes.first(where: { line.contains($0) }) {
                    found.append("\(path):\(n + 1): points to \(note), which is not in the repository: \(line.trimmingCharacters(in: .whitespaces))")
                }
                if let match = line.firstMatch(of: issueNumber) {
                    found.append("\(path):\(n + 1): names \"\(line[match.range])\"; say what is meant instead: \(line.trimmingCharacters(in: .whitespaces))")
                }
            }
        }
        #expect(found.isEmpty, "\(found.joined(separator: "\n"))")
    }

    @Test func helpAndGeneratedTextStandAloneToo() throws {
        let runs = [try run(["--help"]), try run(["bench", "order", "--help"]), try run(["--generate-manual"]),
                    try run(["bench", "order"]), try run(["order", "--model", "rf"])]
        for r in runs {
            #expect(r.status == 0 && !r.stdout.isEmpty, "\(r.stderr)")
        }
        for text in runs.map(\.stdout) {
            #expect(!Self.outsideNotes.contains { text.contains($0) })
            #expect(text.firstMatch(of: Self.issueNumber) == nil)
        }
    }
}
