/// The one error type of the history database.
///
/// Equality compares ``code`` only; ``reason`` says what failed, on which file, and what to do.
public struct HistoryError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What kind of failure this is; extensible, compared by identity.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable { case cannotOpen, sqlite, newerSchema, busy, incompleteReading, notADatabase, notOurs, noDatabase }
        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// The database file or its directory could not be opened or created.
        public static let cannotOpen = Code(.cannotOpen)
        /// SQLite reported an error (the reason carries its message and code).
        public static let sqlite = Code(.sqlite)
        /// The file was written by a newer version of this tool (schema version above ours).
        public static let newerSchema = Code(.newerSchema)
        /// Another process held the database for longer than the busy timeout.
        public static let busy = Code(.busy)
        /// The reading is incomplete (a purse's history was not read), so nothing was saved.
        public static let incompleteReading = Code(.incompleteReading)
        /// The file is not an SQLite database.
        public static let notADatabase = Code(.notADatabase)
        /// The file is another program's SQLite database, which felica leaves as it is.
        public static let notOurs = Code(.notOurs)
        /// There is no database at the path a read-only command was given.
        public static let noDatabase = Code(.noDatabase)

        public var description: String { base.rawValue }
    }

    /// What kind of failure.
    public let code: Code
    /// What failed, on which file, and what to do.
    public let reason: String

    /// An error of `code`, explained by `reason`.
    public init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    public var description: String { reason }
    public static func == (a: HistoryError, b: HistoryError) -> Bool { a.code == b.code }
    public func hash(into h: inout Hasher) { h.combine(code) }
}
