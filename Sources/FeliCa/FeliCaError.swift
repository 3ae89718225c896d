/// The one error type of the codec, the card session and the transports.
///
/// Equality compares ``code`` only, so tests can match `#expect(throws: FeliCaError.truncated)`
/// while users still see the ``reason`` that names the field or the fix.
public struct FeliCaError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What kind of failure this is; extensible, compared by identity.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case truncated, trailingBytes, badLength, unexpectedResponse, wrongCard, invalidField
            case invalidArgument, status, timeout, transmission, readerGone, cardGone
            case noReader, noCard, unsupported, cancelled, busy, ambiguousWrite
            case badInput, refused, transportFailure
        }
        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// A frame ended before a field it announces.
        public static let truncated = Code(.truncated)
        /// Bytes follow the last field of a frame.
        public static let trailingBytes = Code(.trailingBytes)
        /// The LEN byte is impossible (below 2) or the frame exceeds 255 bytes.
        public static let badLength = Code(.badLength)
        /// The response code is not the command code + 1.
        public static let unexpectedResponse = Code(.unexpectedResponse)
        /// The response echoes another IDm than the one addressed.
        public static let wrongCard = Code(.wrongCard)
        /// A field holds a value the protocol does not allow.
        public static let invalidField = Code(.invalidField)
        /// A caller asked for something the protocol cannot express.
        public static let invalidArgument = Code(.invalidArgument)
        /// The card answered with error status flags.
        public static let status = Code(.status)
        /// No answer within the timeout.
        public static let timeout = Code(.timeout)
        /// The reader reported a transmission error (CRC, framing, collision).
        public static let transmission = Code(.transmission)
        /// The reader disappeared (unplugged, daemon gone).
        public static let readerGone = Code(.readerGone)
        /// The card left the field during an exchange.
        public static let cardGone = Code(.cardGone)
        /// No reader could be found or opened.
        public static let noReader = Code(.noReader)
        /// No card answered.
        public static let noCard = Code(.noCard)
        /// The reader would not forward the command to the card (a PC/SC reader answering
        /// `6A xx` in a transparent exchange); the card never saw it.
        public static let refused = Code(.refused)
        /// The card or reader does not support the request.
        public static let unsupported = Code(.unsupported)
        /// The operation was cancelled.
        public static let cancelled = Code(.cancelled)
        /// The reader is held by another program.
        public static let busy = Code(.busy)
        /// A write failed in a way that leaves unknown whether the card stored it.
        public static let ambiguousWrite = Code(.ambiguousWrite)
        /// A file or argument handed in by the user is malformed.
        public static let badInput = Code(.badInput)
        /// The transport failed for a reason of its own layer, which ``FeliCaError/underlying``
        /// holds in that layer's error type: a replay that left its recording (FeliCaTrace's
        /// `ReplayError`). The card never saw the command.
        public static let transportFailure = Code(.transportFailure)

        public var description: String { base.rawValue }
    }

    public var code: Code
    public var reason: String
    /// The card's status flags when ``code`` is ``Code/status``.
    public var statusFlags: StatusFlags?
    /// The error of the layer below in its own type, where that layer has codes of its own:
    /// a replay's (``Code/transportFailure``), the PC/SC daemon's (a ``Code/noReader``
    /// whose cause is pcscd not running). Transports throw only `FeliCaError`, so a
    /// layer's own error travels here; the reason is the same words.
    public var underlying: (any Error)?

    public init(_ code: Code, _ reason: String, statusFlags: StatusFlags? = nil, underlying: (any Error)? = nil) {
        self.code = code
        self.reason = reason
        self.statusFlags = statusFlags
        self.underlying = underlying
    }

    public static func == (lhs: FeliCaError, rhs: FeliCaError) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }

    public var description: String { reason }

    /// Whether the failure means "no reader or no card": nothing to read rather than
    /// something that went wrong (``Code/noReader``, ``Code/noCard``; no PC/SC daemon is a
    /// ``Code/noReader`` too).
    public var isUnavailable: Bool {
        code == .noReader || code == .noCard
    }

    /// A code-only value for matching in tests and `catch` clauses.
    public static let truncated = FeliCaError(.truncated, "truncated")
    public static let trailingBytes = FeliCaError(.trailingBytes, "trailing bytes")
    public static let timeout = FeliCaError(.timeout, "timeout")
    public static let wrongCard = FeliCaError(.wrongCard, "answer from wrong card")
}
