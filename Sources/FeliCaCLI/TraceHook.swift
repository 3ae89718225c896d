import FeliCa
import FeliCaTrace

/// Connects `--trace` and `replay:` to the trace module.
enum TraceHook {
    /// The suffix of `replay:<path>?lenient`: replay the exchanges before damage in a trace.
    static let lenientSuffix = "?lenient"

    /// Wraps the device's transport in a recorder that writes each exchange to `path` as
    /// it happens.
    static func record(_ transport: any Transport, to path: String) throws -> any Transport {
        try TraceRecorder(wrapping: transport, path: path)
    }

    /// `replay:<path>`, or `replay:<path>?lenient`; a lenient replay of a damaged trace
    /// names the damage on stderr.
    static func replay(_ spec: String, name: String) throws -> any Transport {
        let lenient = spec.hasSuffix(lenientSuffix)
        let path = lenient ? String(spec.dropLast(lenientSuffix.count)) : spec
        guard !path.isEmpty else { throw UsageError("device 'replay:' needs a trace file: replay:<trace.jsonl>") }
        let replay = try TraceReplay.load(path, lenient: lenient, name: name)
        if let damage = replay.trace.damage {
            let n = replay.trace.exchanges.count
            Console().diag("warning: \(damage.reason)\n  replaying the \(n) exchange\(n == 1 ? "" : "s") before the damage")
        }
        return replay
    }
}
