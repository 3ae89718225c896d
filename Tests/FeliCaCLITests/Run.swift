import Foundation
import Testing

/// What one run of a built executable printed and returned.
struct RunResult: Sendable {
    var stdout: String
    var stderr: String
    var status: Int32
}

/// The directory holding the built executables (beside the test bundle).
let binDirectory: URL = {
    if let dir = ProcessInfo.processInfo.environment["FELICA_BIN"] { return URL(fileURLWithPath: dir) }
    return URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
}()

/// The package root, for fixtures.
let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

func fixture(_ name: String) -> String {
    packageRoot.appendingPathComponent("Tests/FeliCaCLITests/Fixtures/\(name)").path
}

/// Runs `felica` (or another built executable) and captures its output.
func run(_ arguments: [String], executable: String = "felica", environment: [String: String] = [:], stdout: String? = nil) throws -> RunResult {
    try run(program: binDirectory.appendingPathComponent(executable).path, arguments, environment: environment, stdout: stdout)
}

/// Runs any program (a shell, man) the same way, with the built executables on `PATH`.
/// With `stdout`, the program writes its output to that file (e.g. /dev/full) instead of a pipe.
func run(program: String, _ arguments: [String], environment: [String: String] = [:], stdout: String? = nil) throws -> RunResult {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: program)
    p.arguments = arguments
    var env = ProcessInfo.processInfo.environment
    env["FELICA_DEVICE"] = nil
    env["LIBNFC_AUTO_SCAN"] = "false"
    // Help is wrapped to COLUMNS when set; the tests see the piped default (80) unless they set it.
    env["COLUMNS"] = nil
    env["NO_COLOR"] = nil
    env["PATH"] = binDirectory.path + ":" + (env["PATH"] ?? "/usr/bin:/bin")
    for (k, v) in environment { env[k] = v }
    p.environment = env
    let out = Pipe(), err = Pipe()
    let file = try stdout.map { path in
        guard let h = FileHandle(forWritingAtPath: path) else { throw CocoaError(.fileNoSuchFile) }
        return h
    }
    p.standardOutput = file ?? out
    p.standardError = err
    try p.run()
    // Read both pipes before waiting, so a large output cannot block the child.
    let o = file == nil ? out.fileHandleForReading.readDataToEndOfFile() : Data()
    let e = err.fileHandleForReading.readDataToEndOfFile()
    p.waitUntilExit()
    return RunResult(stdout: String(decoding: o, as: UTF8.self), stderr: String(decoding: e, as: UTF8.self), status: p.terminationStatus)
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
