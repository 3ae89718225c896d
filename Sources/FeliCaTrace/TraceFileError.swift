import FeliCa

/// Why a file given as a trace is not one, when it is a document of another kind. It
/// reaches callers inside a `FeliCaError` (code `badInput`), as
/// `FeliCaError.traceFileError`, so a caller can say how such a file is used.
public struct TraceFileError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What the file is instead.
    public enum Code: String, Hashable, Sendable {
        /// One JSON document (a trace has one JSON object per line).
        case otherJSON
        /// A card image (`felica-card/1`): it is read as a virtual card, not replayed.
        case cardImage
    }

    public var code: Code
    public var reason: String
    /// The file as it was named.
    public var file: String

    public init(_ code: Code, _ reason: String, file: String) {
        self.code = code
        self.reason = reason
        self.file = file
    }

    public var description: String { reason }
}

extension FeliCaError {
    /// The trace file's own error, when a file is not a trace.
    public var traceFileError: TraceFileError? { underlying as? TraceFileError }
}
