/// Any command, decoded from its packet: what a card (or a trace viewer) sees.
public enum Command: Hashable, Sendable {
    case polling(PollingCommand)
    case requestService(RequestServiceCommand)
    case requestResponse(RequestResponseCommand)
    case readWithoutEncryption(ReadWithoutEncryptionCommand)
    case writeWithoutEncryption(WriteWithoutEncryptionCommand)
    case searchServiceCode(SearchServiceCodeCommand)
    case requestSystemCode(RequestSystemCodeCommand)
    case requestBlockInformation(RequestBlockInformationCommand)
    case requestSpecificationVersion(RequestSpecificationVersionCommand)
    case resetMode(ResetModeCommand)

    /// Decodes a command packet (with its LEN byte).
    public static func decode(_ packet: ArraySlice<UInt8>) throws(FeliCaError) -> Command {
        if let len = packet.first, len < 2 {
            throw FeliCaError(.badLength, "command: LEN is \(len), a frame holds at least LEN and a code")
        }
        guard packet.count >= 2 else {
            throw FeliCaError(.truncated, "command: frame of \(packet.count) byte\(packet.count == 1 ? "" : "s") has no command code")
        }
        let raw = packet[packet.startIndex + 1]
        guard let code = CommandCode(rawValue: raw) else {
            throw FeliCaError(.unsupported, "command code \(hexByte(raw)) is not one this library knows")
        }
        switch code {
        case .polling: return .polling(try PollingCommand.decode(packet))
        case .requestService: return .requestService(try RequestServiceCommand.decode(packet))
        case .requestResponse: return .requestResponse(try RequestResponseCommand.decode(packet))
        case .readWithoutEncryption: return .readWithoutEncryption(try ReadWithoutEncryptionCommand.decode(packet))
        case .writeWithoutEncryption: return .writeWithoutEncryption(try WriteWithoutEncryptionCommand.decode(packet))
        case .searchServiceCode: return .searchServiceCode(try SearchServiceCodeCommand.decode(packet))
        case .requestSystemCode: return .requestSystemCode(try RequestSystemCodeCommand.decode(packet))
        case .requestBlockInformation: return .requestBlockInformation(try RequestBlockInformationCommand.decode(packet))
        case .requestSpecificationVersion: return .requestSpecificationVersion(try RequestSpecificationVersionCommand.decode(packet))
        case .resetMode: return .resetMode(try ResetModeCommand.decode(packet))
        }
    }

    /// The command itself, as its own type.
    public var command: any CardCommand {
        switch self {
        case .polling(let c): c
        case .requestService(let c): c
        case .requestResponse(let c): c
        case .readWithoutEncryption(let c): c
        case .writeWithoutEncryption(let c): c
        case .searchServiceCode(let c): c
        case .requestSystemCode(let c): c
        case .requestBlockInformation(let c): c
        case .requestSpecificationVersion(let c): c
        case .resetMode(let c): c
        }
    }

    // `code` and `idm` switch rather than open ``command``: a card asks them of every
    // packet, and a large command (a write) would be boxed to answer.
    public var code: CommandCode {
        switch self {
        case .polling: .polling
        case .requestService: .requestService
        case .requestResponse: .requestResponse
        case .readWithoutEncryption: .readWithoutEncryption
        case .writeWithoutEncryption: .writeWithoutEncryption
        case .searchServiceCode: .searchServiceCode
        case .requestSystemCode: .requestSystemCode
        case .requestBlockInformation: .requestBlockInformation
        case .requestSpecificationVersion: .requestSpecificationVersion
        case .resetMode: .resetMode
        }
    }

    /// The addressed IDm (nil for Polling).
    public var idm: IDm? {
        switch self {
        case .polling: nil
        case .requestService(let c): c.idm
        case .requestResponse(let c): c.idm
        case .readWithoutEncryption(let c): c.idm
        case .writeWithoutEncryption(let c): c.idm
        case .searchServiceCode(let c): c.idm
        case .requestSystemCode(let c): c.idm
        case .requestBlockInformation(let c): c.idm
        case .requestSpecificationVersion(let c): c.idm
        case .resetMode(let c): c.idm
        }
    }

    public func encode() -> [UInt8] { command.encode() }

    /// The longest response packet (LEN included) a card can send to this command
    /// (``CardCommand/longestResponse``).
    public var longestResponse: Int { command.longestResponse }

    /// Time-bound parameters of this command, for ``PMm/maximumResponseTime(for:units:)``.
    public var timing: (kind: ResponseTimeKind, units: Int) { command.timing }
}

/// Any response, decoded from its packet.
public enum Response: Hashable, Sendable {
    case polling(PollingResponse)
    case requestService(RequestServiceResponse)
    case requestResponse(RequestResponseResponse)
    case readWithoutEncryption(ReadWithoutEncryptionResponse)
    case writeWithoutEncryption(WriteWithoutEncryptionResponse)
    case searchServiceCode(SearchServiceCodeResponse)
    case requestSystemCode(RequestSystemCodeResponse)
    case requestBlockInformation(RequestBlockInformationResponse)
    case requestSpecificationVersion(RequestSpecificationVersionResponse)
    case resetMode(ResetModeResponse)

    /// Decodes a response packet (with its LEN byte) by its response code.
    public static func decode(_ packet: ArraySlice<UInt8>, expecting idm: IDm? = nil) throws(FeliCaError) -> Response {
        if let len = packet.first, len < 2 {
            throw FeliCaError(.badLength, "response: LEN is \(len), a frame holds at least LEN and a code")
        }
        guard packet.count >= 2 else {
            throw FeliCaError(.truncated, "response: frame of \(packet.count) byte\(packet.count == 1 ? "" : "s") has no response code")
        }
        let raw = packet[packet.startIndex + 1]
        guard raw & 1 == 1, let code = CommandCode(rawValue: raw - 1) else {
            throw FeliCaError(.unexpectedResponse, "response code \(hexByte(raw)) is not one this library knows")
        }
        switch code {
        case .polling: return .polling(try PollingResponse.decode(packet))
        case .requestService: return .requestService(try RequestServiceResponse.decode(packet, expecting: idm))
        case .requestResponse: return .requestResponse(try RequestResponseResponse.decode(packet, expecting: idm))
        case .readWithoutEncryption: return .readWithoutEncryption(try ReadWithoutEncryptionResponse.decode(packet, expecting: idm))
        case .writeWithoutEncryption: return .writeWithoutEncryption(try WriteWithoutEncryptionResponse.decode(packet, expecting: idm))
        case .searchServiceCode: return .searchServiceCode(try SearchServiceCodeResponse.decode(packet, expecting: idm))
        case .requestSystemCode: return .requestSystemCode(try RequestSystemCodeResponse.decode(packet, expecting: idm))
        case .requestBlockInformation: return .requestBlockInformation(try RequestBlockInformationResponse.decode(packet, expecting: idm))
        case .requestSpecificationVersion: return .requestSpecificationVersion(try RequestSpecificationVersionResponse.decode(packet, expecting: idm))
        case .resetMode: return .resetMode(try ResetModeResponse.decode(packet, expecting: idm))
        }
    }

    /// The response itself, as its own type.
    public var response: any CardResponse {
        switch self {
        case .polling(let r): r
        case .requestService(let r): r
        case .requestResponse(let r): r
        case .readWithoutEncryption(let r): r
        case .writeWithoutEncryption(let r): r
        case .searchServiceCode(let r): r
        case .requestSystemCode(let r): r
        case .requestBlockInformation(let r): r
        case .requestSpecificationVersion(let r): r
        case .resetMode(let r): r
        }
    }

    /// Encodes the response packet.
    public func encode() -> [UInt8] { response.encode() }

    /// Status flags, for the responses that carry them.
    public var status: StatusFlags? {
        switch self {
        case .readWithoutEncryption(let r): r.status
        case .writeWithoutEncryption(let r): r.status
        case .requestSpecificationVersion(let r): r.status
        case .resetMode(let r): r.status
        default: nil
        }
    }
}
