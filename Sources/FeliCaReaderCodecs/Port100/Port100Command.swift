import FeliCa

/// A host-to-chip command of the Port-100 chip: command code and parameters (the payload
/// after `D6`).
public struct Port100Command: Hashable, Sendable, CustomStringConvertible {
    public var code: UInt8
    public var data: [UInt8]

    public init(code: UInt8, data: [UInt8] = []) {
        self.code = code
        self.data = data
    }

    /// InSetRF `00 BrTy(send) ? BrTy(receive) ?`: the bit rate and modulation of the field.
    public static let inSetRFCode: UInt8 = 0x00
    /// InSetProtocol `02 (item value)…`: framing details of the initiator.
    public static let inSetProtocolCode: UInt8 = 0x02
    /// InCommRF `04 TIMEOUT(2, LE, 0.1 ms) DATA…`: sends data on the air and waits for an answer.
    public static let inCommRFCode: UInt8 = 0x04
    /// SwitchRF `06 ON`: the field on (01) or off (00).
    public static let switchRFCode: UInt8 = 0x06
    /// ResetDevice `12 DELAY(2, LE, ms)`.
    public static let resetDeviceCode: UInt8 = 0x12
    /// GetFirmwareVersion `20 [option]` → `21 MINOR MAJOR`.
    public static let getFirmwareVersionCode: UInt8 = 0x20
    /// GetPDDataVersion `22` → `23 MINOR MAJOR`.
    public static let getPDDataVersionCode: UInt8 = 0x22
    /// GetProperty `24 …`.
    public static let getPropertyCode: UInt8 = 0x24
    /// InGetProtocol `26 item…` → `27 value…`.
    public static let inGetProtocolCode: UInt8 = 0x26
    /// GetCommandType `28` → `29 TYPES(8, BE bit mask)`.
    public static let getCommandTypeCode: UInt8 = 0x28
    /// SetCommandType `2A TYPE` → `2B STATUS`: which command set the chip speaks.
    public static let setCommandTypeCode: UInt8 = 0x2A

    /// InSetRF for FeliCa at `rate`, sending and receiving at the same speed.
    public static func inSetRF(_ rate: AirTiming.BitRate) -> Port100Command {
        let setting: [UInt8] = rate == .kbps212 ? [0x01, 0x01] : [0x01, 0x02]
        return Port100Command(code: inSetRFCode, data: setting + [0x0F, setting[1]])
    }

    /// The initiator protocol defaults (item, value pairs) hosts send before polling.
    public static let inSetProtocolDefaults: [UInt8] = [
        0x00, 0x18, 0x01, 0x01, 0x02, 0x01, 0x03, 0x00, 0x04, 0x00, 0x05, 0x00, 0x06, 0x00, 0x07, 0x08,
        0x08, 0x00, 0x09, 0x00, 0x0A, 0x00, 0x0B, 0x00, 0x0C, 0x00, 0x0E, 0x04, 0x0F, 0x00, 0x10, 0x00,
        0x11, 0x00, 0x12, 0x00, 0x13, 0x06,
    ]

    /// InSetProtocol with (item, value) pairs, e.g. `[0x00, 0x18]`: initial guard time 24.
    public static func inSetProtocol(_ pairs: [UInt8]) -> Port100Command {
        Port100Command(code: inSetProtocolCode, data: pairs)
    }

    /// InCommRF: `packet` (a FeliCa packet with its LEN byte) with the chip's own timeout.
    public static func inCommRF(_ packet: [UInt8], timeout: Duration) -> Port100Command {
        let t = timeoutValue(timeout)
        return Port100Command(code: inCommRFCode, data: [UInt8(t & 0xFF), UInt8(t >> 8)] + packet)
    }

    /// SwitchRF: the field on or off.
    public static func switchRF(on: Bool) -> Port100Command {
        Port100Command(code: switchRFCode, data: [on ? 0x01 : 0x00])
    }

    /// GetFirmwareVersion without an option.
    public static let getFirmwareVersion = Port100Command(code: getFirmwareVersionCode)
    /// GetPDDataVersion.
    public static let getPDDataVersion = Port100Command(code: getPDDataVersionCode)
    /// GetCommandType.
    public static let getCommandType = Port100Command(code: getCommandTypeCode)

    /// SetCommandType: hosts select type 1.
    public static func setCommandType(_ type: UInt8) -> Port100Command {
        Port100Command(code: setCommandTypeCode, data: [type])
    }

    /// InCommRF's timeout field: whole 0.1 ms units, rounded up, at least 1, at most 0xFFFF
    /// (6.5535 s).
    public static func timeoutValue(_ d: Duration) -> UInt16 {
        let (s, atto) = d.components
        guard s >= 0 else { return 1 }
        let units = s * 10_000 + (atto + 99_999_999_999_999) / 100_000_000_000_000
        return UInt16(clamping: max(1, units))
    }

    /// The Duration an InCommRF timeout field stands for.
    public static func timeout(fromValue v: UInt16) -> Duration {
        .microseconds(Int64(v) * 100)
    }

    /// The command's name as Sony's documentation and nfcpy spell it.
    public var name: String {
        switch code {
        case 0x00: "InSetRF"
        case 0x02: "InSetProtocol"
        case 0x04: "InCommRF"
        case 0x06: "SwitchRF"
        case 0x10: "MaintainFlash"
        case 0x12: "ResetDevice"
        case 0x20: "GetFirmwareVersion"
        case 0x22: "GetPDDataVersion"
        case 0x24: "GetProperty"
        case 0x26: "InGetProtocol"
        case 0x28: "GetCommandType"
        case 0x2A: "SetCommandType"
        case 0x30: "InSetRCT"
        case 0x32: "InGetRCT"
        case 0x34: "GetPDData"
        case 0x36: "ReadRegister"
        case 0x40: "TgSetRF"
        case 0x42: "TgSetProtocol"
        case 0x44: "TgSetAuto"
        case 0x46: "TgSetRFOff"
        case 0x48: "TgCommRF"
        case 0x50: "TgGetProtocol"
        case 0x60: "TgSetRCT"
        case 0x62: "TgGetRCT"
        case 0xF0: "Diagnose"
        default: "command \(Hex.encode([code]))"
        }
    }

    public var description: String { "\(name) \(Hex.encode(data))" }
}

/// A chip-to-host response: response code (command code + 1) and data (the payload after `D7`).
public struct Port100Response: Hashable, Sendable {
    public var code: UInt8
    public var data: [UInt8]

    public init(code: UInt8, data: [UInt8] = []) {
        self.code = code
        self.data = data
    }

    /// The response to `command` with `data`.
    public init(to command: Port100Command, data: [UInt8]) {
        self.init(code: command.code &+ 1, data: data)
    }

    /// Checks that this answers `command`.
    public func check(answers command: Port100Command) throws(FeliCaError) {
        guard code == command.code &+ 1 else {
            throw FeliCaError(.unexpectedResponse, "Port-100 \(command.name): response code is \(Hex.encode([code])), expected \(Hex.encode([command.code &+ 1]))")
        }
    }

    /// The one-byte status of a configuration command (`response STATUS`); throws `.status`
    /// for anything but success.
    public func status(of command: Port100Command) throws(FeliCaError) {
        try check(answers: command)
        var r = ByteReader(data[...], frame: "Port-100 \(command.name) response")
        let s = Port100Status(rawValue: try r.readUInt8("status"))
        try r.finish()
        guard s == .success else {
            throw FeliCaError(.status, "the reader refused \(command.name) \(Hex.encode(command.data)): \(s)")
        }
    }

    /// Firmware version of GetFirmwareVersion / GetPDDataVersion: `MINOR MAJOR` → (major, minor).
    public func version(of command: Port100Command) throws(FeliCaError) -> (major: UInt8, minor: UInt8) {
        try check(answers: command)
        var r = ByteReader(data[...], frame: "Port-100 \(command.name) response")
        let minor = try r.readUInt8("minor version")
        let major = try r.readUInt8("major version")
        try r.finish()
        return (major, minor)
    }

    /// InCommRF's answer, `05 STATUS(4, LE) FLAGS PACKET`: the card's FeliCa packet (with
    /// LEN). A status with the receive-timeout bit throws `.timeout`; other status bits
    /// throw `.transmission`; a packet whose LEN does not match throws as the card codec does.
    public func inCommRFPacket() throws(FeliCaError) -> [UInt8] {
        guard code == Port100Command.inCommRFCode + 1 else {
            throw FeliCaError(.unexpectedResponse, "Port-100 InCommRF: response code is \(Hex.encode([code])), expected 05")
        }
        var r = ByteReader(data[...], frame: "Port-100 InCommRF response")
        let status = Port100CommStatus(rawValue: UInt32(try r.readUInt16(.littleEndian, "status")) | UInt32(try r.readUInt16(.littleEndian, "status")) << 16)
        if status.contains(.receiveTimeout) {
            throw FeliCaError(.timeout, "the card did not answer in time (reader status \(status))")
        }
        guard status.isEmpty else {
            throw FeliCaError(.transmission, "the reader reports \(status) for the card's answer")
        }
        _ = try r.readUInt8("receive flags")
        let packet = Array(r.readRest())
        guard let len = packet.first else {
            throw FeliCaError(.truncated, "Port-100 InCommRF response: no card packet after the status")
        }
        if Int(len) > packet.count {
            throw FeliCaError(.truncated, "Port-100 InCommRF response: card packet LEN says \(len) bytes, \(packet.count) came")
        }
        if Int(len) < packet.count {
            throw FeliCaError(.trailingBytes, "Port-100 InCommRF response: card packet LEN says \(len) bytes, \(packet.count) came")
        }
        return packet
    }

    /// InCommRF's answer carrying `packet` from the card.
    public static func inCommRF(packet: [UInt8]) -> Port100Response {
        Port100Response(code: Port100Command.inCommRFCode + 1, data: [0, 0, 0, 0, 0x08] + packet)
    }

    /// InCommRF's answer with an error status and no data.
    public static func inCommRF(status: Port100CommStatus) -> Port100Response {
        let v = status.rawValue
        return Port100Response(code: Port100Command.inCommRFCode + 1,
                               data: [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 24)])
    }
}
