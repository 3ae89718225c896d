/// What a Polling request asks the card to append to its reply.
public enum PollingRequestCode: UInt8, Sendable, CaseIterable {
    /// No request data.
    case none = 0
    /// Append the system code.
    case systemCode = 1
    /// Append communication performance (supported bit rates).
    case communicationPerformance = 2
}

/// Number of Polling time slots minus one: 0, 1, 3, 7 or 15.
public struct TimeSlot: Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8
    public init(rawValue: UInt8) throws(FeliCaError) {
        guard [0, 1, 3, 7, 15].contains(rawValue) else {
            throw FeliCaError(.invalidField, "time slot number \(rawValue) is not one of 0, 1, 3, 7, 15")
        }
        self.rawValue = rawValue
    }
    private init(unchecked v: UInt8) { rawValue = v }
    public static let one = TimeSlot(unchecked: 0)
    public static let two = TimeSlot(unchecked: 1)
    public static let four = TimeSlot(unchecked: 3)
    public static let eight = TimeSlot(unchecked: 7)
    public static let sixteen = TimeSlot(unchecked: 15)
    public var slots: Int { Int(rawValue) + 1 }
    public var description: String { "\(slots) slot\(slots == 1 ? "" : "s")" }
}

/// Polling command: `LEN 00 SC(2, BE) RC TSN` (no IDm).
public struct PollingCommand: CardCommand {
    public typealias Response = PollingResponse
    public static var code: CommandCode { .polling }

    public var systemCode: SystemCode
    public var requestCode: PollingRequestCode
    public var timeSlot: TimeSlot

    public init(systemCode: SystemCode = .wildcard, requestCode: PollingRequestCode = .systemCode, timeSlot: TimeSlot = .one) {
        self.systemCode = systemCode
        self.requestCode = requestCode
        self.timeSlot = timeSlot
    }

    public var addressedIDm: IDm? { nil }
    public var frameLength: Int { 6 }
    public var longestResponse: Int { 20 }

    public func encodeBody(into w: inout FrameWriter) {
        w.append(systemCode.rawValue, .bigEndian)
        w.append(requestCode.rawValue)
        w.append(timeSlot.rawValue)
    }

    public static func decodeBody(_ r: inout ByteReader) throws(FeliCaError) -> PollingCommand {
        let sc = SystemCode(try r.readUInt16(.bigEndian, "system code"))
        let rcRaw = try r.readUInt8("request code")
        guard let rc = PollingRequestCode(rawValue: rcRaw) else {
            throw FeliCaError(.invalidField, "\(r.frame): request code \(rcRaw) is not 0, 1 or 2")
        }
        let ts = try TimeSlot(rawValue: try r.readUInt8("time slot number"))
        return PollingCommand(systemCode: sc, requestCode: rc, timeSlot: ts)
    }

    /// The Polling `packet` carries; nil when it carries another command or a malformed
    /// Polling. Transports that treat Polling apart (to poll their own way, or to ask later
    /// whether a card is still there) decide it here, once.
    public init?(packet: [UInt8]) {
        guard packet.count >= 2, packet[1] == CommandCode.polling.rawValue,
              let polling = try? Self.decode(packet[...]) else { return nil }
        self = polling
    }

    /// Whether `packet` is a well-formed Polling command (``init(packet:)`` finds one).
    public static func isPolling(_ packet: [UInt8]) -> Bool {
        PollingCommand(packet: packet) != nil
    }
}

/// Polling response: `LEN 01 IDm(8) PMm(8) [RD(2)]`.
public struct PollingResponse: CardResponse {
    public static var code: CommandCode { .polling }

    public var idm: IDm
    public var pmm: PMm
    /// Request data: the system code (RC 1, big-endian) or communication performance (RC 2).
    public var requestData: UInt16?

    public init(idm: IDm, pmm: PMm, requestData: UInt16? = nil) {
        self.idm = idm
        self.pmm = pmm
        self.requestData = requestData
    }

    public var frameLength: Int { requestData == nil ? 18 : 20 }

    public func encodeBody(into w: inout FrameWriter) {
        w.appendBigEndian(idm.rawValue)
        w.appendBigEndian(pmm.rawValue)
        if let rd = requestData { w.append(rd, .bigEndian) }
    }

    public static func decodeBody(_ r: inout ByteReader, expecting idm: IDm?) throws(FeliCaError) -> PollingResponse {
        let got = try r.readIDm(expecting: idm)
        let pmm = PMm(rawValue: try r.readUInt64BigEndian("PMm"))
        var rd: UInt16? = nil
        if !r.isAtEnd { rd = try r.readUInt16(.bigEndian, "request data") }
        return PollingResponse(idm: got, pmm: pmm, requestData: rd)
    }

    /// The request data read as a system code (valid when polled with RC 1).
    public var systemCode: SystemCode? { requestData.map(SystemCode.init(rawValue:)) }
}
