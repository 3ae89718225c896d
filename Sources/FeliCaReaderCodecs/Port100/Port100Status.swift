/// The one-byte status of a Port-100 configuration command (InSetRF, InSetProtocol,
/// SwitchRF, SetCommandType).
public struct Port100Status: Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let success = Port100Status(rawValue: 0)
    /// A parameter is out of range or the wrong size.
    public static let parameterError = Port100Status(rawValue: 1)
    public static let pbError = Port100Status(rawValue: 2)
    /// RF collision avoidance found another field.
    public static let rfcaError = Port100Status(rawValue: 3)
    public static let temperatureError = Port100Status(rawValue: 4)
    public static let pwdError = Port100Status(rawValue: 5)
    public static let receiveError = Port100Status(rawValue: 6)
    /// The command does not belong to the command type in force (SetCommandType).
    public static let commandTypeError = Port100Status(rawValue: 7)

    public var description: String {
        let names = ["success", "parameter error", "PB error", "RF collision (RFCA) error", "temperature error",
                     "PWD error", "receive error", "command type error"]
        return rawValue < names.count ? "\(names[Int(rawValue)]) (\(rawValue))" : "unknown status \(rawValue)"
    }
}

/// The four-byte status of InCommRF (little-endian bit mask): what went wrong on the air.
public struct Port100CommStatus: OptionSet, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    public static let protocolError = Port100CommStatus(rawValue: 0x0000_0001)
    public static let parityError = Port100CommStatus(rawValue: 0x0000_0002)
    public static let crcError = Port100CommStatus(rawValue: 0x0000_0004)
    public static let collisionError = Port100CommStatus(rawValue: 0x0000_0008)
    public static let overflowError = Port100CommStatus(rawValue: 0x0000_0010)
    public static let temperatureError = Port100CommStatus(rawValue: 0x0000_0040)
    /// Nothing came back before InCommRF's timeout: no card, or it did not answer.
    public static let receiveTimeout = Port100CommStatus(rawValue: 0x0000_0080)
    public static let crypto1Error = Port100CommStatus(rawValue: 0x0000_0100)
    public static let rfcaError = Port100CommStatus(rawValue: 0x0000_0200)
    /// The field is off.
    public static let rfOff = Port100CommStatus(rawValue: 0x0000_0400)
    public static let transmitTimeout = Port100CommStatus(rawValue: 0x0000_0800)
    public static let receiveLengthError = Port100CommStatus(rawValue: 0x8000_0000)

    private static let names: [(Port100CommStatus, String)] = [
        (.protocolError, "protocol error"), (.parityError, "parity error"), (.crcError, "CRC error"),
        (.collisionError, "collision"), (.overflowError, "overflow"), (.temperatureError, "temperature error"),
        (.receiveTimeout, "receive timeout"), (.crypto1Error, "Crypto-1 error"), (.rfcaError, "RF collision"),
        (.rfOff, "RF field off"), (.transmitTimeout, "transmit timeout"), (.receiveLengthError, "receive length error"),
    ]

    public var description: String {
        let known = Self.names.filter { contains($0.0) }.map(\.1)
        var rest = self
        for (flag, _) in Self.names { rest.remove(flag) }
        let v = rawValue
        let hex = String(v, radix: 16)
        let parts = known + (rest.isEmpty ? [] : ["bits 0x\(String(rest.rawValue, radix: 16))"])
        return parts.isEmpty ? "no error" : parts.joined(separator: ", ") + " (0x\(String(repeating: "0", count: max(0, 8 - hex.count)) + hex))"
    }
}
