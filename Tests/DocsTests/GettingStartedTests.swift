import Foundation
import TestSupport
import Testing

// The commands Docs/getting-started.md has a newcomer type without hardware (every
// `felica ...` line of its sh blocks that names a virtual device) run here, in order, in
// one scratch directory, and must succeed.

/// Lines of the ```sh blocks of a Markdown file.
func shellLines(in markdown: String) -> [String] {
    var lines: [String] = []
    var inside = false
    for line in markdown.split(separator: "\n", omittingEmptySubsequences: false) {
        let t = line.trimmingCharacters(in: .whitespaces)
        if !inside && t == "```sh" { inside = true; continue }
        if inside && t == "```" { inside = false; continue }
        if inside { lines.append(String(line)) }
    }
    return lines
}

@Test func theVirtualCardCommandsOfGettingStartedWork() throws {
    let guide = try String(contentsOf: packageRoot.appendingPathComponent("Docs/getting-started.md"), encoding: .utf8)
    let commands = shellLines(in: guide)
        .map { $0.split(separator: "#", maxSplits: 1)[0].trimmingCharacters(in: .whitespaces) }
        .filter { $0.hasPrefix("felica ") && $0.contains("--device virtual:") }
    #expect(commands.count >= 5, "\(commands)")
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("getting-started-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: dir) }
    for command in commands {
        let r = try runFelica(command.split(separator: " ").dropFirst().map(String.init), directory: dir)
        #expect(r.status == 0, "`\(command)` exited \(r.status): \(r.stderr)")
    }
}
