import FeliCa
import FeliCaTrace

/// Connects `--trace` and `replay:` to the trace module.
enum TraceHook {
    /// Wraps the device's transport in a recorder that writes each exchange to `path` as
    /// it happens.
    static func record(_ transport: any Transport, to path: String) throws -> any Transport {
        try TraceRecorder(wrapping: transport, path: path)
    }

    /// With `-v/--verbose`, wraps the device's transport so that every frame goes to
    /// stderr as it is exchanged; otherwise returns it unchanged.
    static func watch(_ transport: any Transport, console: Console) -> any Transport {
        guard console.verbose else { return transport }
        return LiveTrace(wrapping: transport) { console.diag($0) }
    }
}
