import Foundation
@_exported import TestSupport
import Testing

/// The directory holding the built executables.
let binDirectory = Executables.directory

/// The package root, for fixtures.
let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

func fixture(_ name: String) -> String {
    packageRoot.appendingPathComponent("Tests/FeliCaCLITests/Fixtures/\(name)").path
}

/// Runs `felica` (or another built executable) and captures its output.
func run(_ arguments: [String], executable: String = "felica", environment: [String: String] = [:], stdout: String? = nil) throws -> RunResult {
    try runFelica(arguments, executable: executable, environment: environment, stdout: stdout)
}

/// Runs any program (a shell, man) the same way, with the built executables on `PATH`.
func run(program: String, _ arguments: [String], environment: [String: String] = [:], stdout: String? = nil) throws -> RunResult {
    try runProgram(program, arguments, environment: environment, stdout: stdout)
}

/// Compares `actual` with a golden file; `UPDATE_GOLDEN=1` rewrites the file instead.
func expectGolden(_ actual: String, _ name: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
    let url = packageRoot.appendingPathComponent("Tests/FeliCaCLITests/Golden/\(name)")
    if ProcessInfo.processInfo.environment["UPDATE_GOLDEN"] == "1" {
        try actual.write(to: url, atomically: true, encoding: .utf8)
        return
    }
    let expected = try String(contentsOf: url, encoding: .utf8)
    #expect(actual == expected, "output differs from Golden/\(name) (UPDATE_GOLDEN=1 rewrites it)", sourceLocation: sourceLocation)
}

func temporaryPath(_ name: String) -> String {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("felica-tests-\(getpid())")
    try? FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    return dir.appendingPathComponent(name).path
}
