import FeliCa

/// The USB layer's own failure that the FeliCa layer has no code for. It reaches callers
/// inside a `FeliCaError` (code `noReader`), as `FeliCaError.usbError`.
public struct USBError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong.
    public enum Code: String, Hashable, Sendable {
        /// No supported reader (or none matching the device string) is on the bus.
        case notFound
    }

    public var code: Code
    public var reason: String

    public init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    public var description: String { reason }
}

extension FeliCaError {
    /// The USB layer's own error, when that is why the reader could not be had.
    public var usbError: USBError? { underlying as? USBError }
}
