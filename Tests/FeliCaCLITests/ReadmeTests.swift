@testable import FeliCaCLI
import FeliCaSimCommands
import Foundation
import Testing

/// The README's command list is the usage line of every command, generated from the
/// option model: when a command or option changes, this test names the line to change.
@Suite struct ReadmeTests {
    /// Every command's usage line, in help order: `felica`, then `felica-sim`.
    static func usageLines() -> [String] {
        (CommandTree.roots + [FeliCaSimCommandLine.root]).flatMap { root in
            CommandNode.all(root)
                .filter { !$0.isRoot && $0.config.subcommands.isEmpty && ObjectIdentifier($0.command) != ObjectIdentifier(HelpCommand.self) }
                .map { HelpFormatter.usage($0.command, path: $0.path) }
        }
    }

    /// `felica bench order` from `felica bench order [--model <model>] ...`.
    static func commandName(_ line: String) -> String {
        line.split(separator: " ").prefix { !$0.hasPrefix("[") && !$0.hasPrefix("-") && !$0.hasPrefix("<") }.joined(separator: " ")
    }

    @Test func theCommandListMatchesTheOptionModel() throws {
        let readme = try String(contentsOf: packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
        let lines = readme.components(separatedBy: "\n")
        let heading = try #require(lines.firstIndex(of: "## Commands"), "README.md has no '## Commands' section")
        let open = try #require(lines[heading...].firstIndex { $0.hasPrefix("```") })
        let close = try #require(lines[(open + 1)...].firstIndex { $0.hasPrefix("```") })
        let listed = Array(lines[(open + 1)..<close])
        let expected = Self.usageLines()
        var fixes: [String] = []
        for (k, line) in listed.enumerated() where !expected.contains(line) {
            let n = open + 2 + k
            if let want = expected.first(where: { Self.commandName($0) == Self.commandName(line) }) {
                fixes.append("README.md line \(n): replace\n    \(line)\n  with\n    \(want)")
            } else {
                fixes.append("README.md line \(n): remove (no command '\(Self.commandName(line))')\n    \(line)")
            }
        }
        for (k, want) in expected.enumerated() where !listed.contains(where: { Self.commandName($0) == Self.commandName(want) }) {
            let before = k == 0 ? nil : listed.firstIndex(of: expected[k - 1])
            fixes.append("README.md: add " + (before.map { "after line \(open + 2 + $0)" } ?? "at the start of the list (line \(open + 2))") + "\n    \(want)")
        }
        if fixes.isEmpty && listed != expected {
            fixes.append("README.md lines \(open + 2)-\(close): same commands, other order; list them as help does:\n" + expected.map { "    " + $0 }.joined(separator: "\n"))
        }
        let report = "the README's command list (under '## Commands') differs from the commands' options:\n" + fixes.joined(separator: "\n")
        #expect(fixes.isEmpty, "\(report)")
    }
}
