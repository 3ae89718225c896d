import FeliCa

/// Why a device could not be named or chosen: the devices layer's own error.
///
/// Failures of the reader or card itself stay `FeliCaError`s from the transports. Equality
/// compares ``code`` only, so tests match codes while users read the ``reason``.
public struct DeviceError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What kind of failure this is; extensible, compared by identity.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case badDeviceString, badEnvironment, inapplicableOption, noReaderFound
        }
        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// A device string given by the caller does not parse.
        public static let badDeviceString = Code(.badDeviceString)
        /// An environment variable (`FELICA_DEVICE`, `FELICA_PCSC_DIALECT`) holds a value that does not parse.
        public static let badEnvironment = Code(.badEnvironment)
        /// An option was given for a kind of device it does not apply to (a PC/SC dialect for a USB reader).
        public static let inapplicableOption = Code(.inapplicableOption)
        /// No device was given and no stack found a reader. It reaches callers inside a
        /// `FeliCaError` whose code is `noReader`, as `FeliCaError.deviceError`.
        public static let noReaderFound = Code(.noReaderFound)

        public var description: String { base.rawValue }
    }

    public var code: Code
    /// What was wrong and how to fix it, in plain words.
    public var reason: String

    public init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    public static func == (lhs: DeviceError, rhs: DeviceError) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }
    public var description: String { reason }
}

extension FeliCaError {
    /// The device layer's own error, when that is why no reader could be had.
    public var deviceError: DeviceError? { underlying as? DeviceError }
}
