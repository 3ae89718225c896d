import FeliCa

/// Connects `--trace` to the trace module.
enum TraceHook {
    static func record(_ transport: any Transport, to path: String) throws -> any Transport {
        throw CLIError("--trace is not available in this build yet", exitCode: ExitCode.usage)
    }
}
