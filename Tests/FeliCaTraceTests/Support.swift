import FeliCa
import FeliCaEmulators
import FeliCaSimulation
import FeliCaTrace
import Foundation
import FeliCaCards

/// Paths and scratch files shared by the trace tests.
enum Support {
    /// The package root, found from this file's path (tests may run from any directory).
    static let root: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url.path
    }()

    /// The committed traces.
    static let tracesDirectory = root + "/Tests/Traces"

    /// A fresh scratch directory, removed by the caller with `cleanUp`.
    static func scratch() throws -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("felica-trace-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir.path
    }

    static func cleanUp(_ dir: String) { try? FileManager.default.removeItem(atPath: dir) }

    static func text(_ path: String) throws -> String { try String(contentsOfFile: path, encoding: .utf8) }

    static func write(_ text: String, to path: String) throws {
        try text.write(toFile: path, atomically: false, encoding: .utf8)
    }

    /// Reads a sample card completely through a recorder writing to `path`; returns the
    /// image read.
    static func recordDump(card name: String, to path: String) async throws -> CardImage {
        let card = try VirtualCard.named(name)
        let recorder = try TraceRecorder(wrapping: VirtualTransport(card: card, name: "virtual:\(name)"), path: path)
        let image = try await CardImage.read(using: CardSession(transport: recorder))
        await recorder.close()
        return image
    }
}

/// Lines of a trace text.
func lines(_ text: String) -> [Substring] { text.split(separator: "\n") }
/// The number of lines in the file at `path`.
func lineCount(_ path: String) throws -> Int { lines(try Support.text(path)).count }
