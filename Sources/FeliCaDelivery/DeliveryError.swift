/// The one error type of delivery: the spool, the HTTP and MQTT destinations, the command.
///
/// Equality compares ``code`` only; ``reason`` says what failed, on which file or server,
/// and what to do.
public struct DeliveryError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What kind of failure this is; extensible, compared by identity.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable { case spool, spoolBusy, badDestination, passwordInAddress, library }
        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// The spool directory or one of its files could not be made, read or written.
        public static let spool = Code(.spool)
        /// Another process delivers from the same spool directory.
        public static let spoolBusy = Code(.spoolBusy)
        /// A destination that cannot be used as given (a URL that does not parse, a
        /// scheme not served, a header without a colon).
        public static let badDestination = Code(.badDestination)
        /// A destination address that carries a password, which is given apart (from a
        /// file of its own) so that it shows in no process listing.
        public static let passwordInAddress = Code(.passwordInAddress)
        /// libcurl or libmosquitto refused to start (out of memory, a broken installation).
        public static let library = Code(.library)

        public var description: String { base.rawValue }
    }

    /// What kind of failure.
    public let code: Code
    /// What failed, with what, and what to do.
    public let reason: String

    /// An error of `code`, explained by `reason`.
    public init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    public var description: String { reason }
    public static func == (a: DeliveryError, b: DeliveryError) -> Bool { a.code == b.code }
    public func hash(into h: inout Hasher) { h.combine(code) }
}
