/// Command codes; a response code is always the command code + 1.
public enum CommandCode: UInt8, Sendable, CaseIterable, CustomStringConvertible {
    case polling = 0x00
    case requestService = 0x02
    case requestResponse = 0x04
    case readWithoutEncryption = 0x06
    case writeWithoutEncryption = 0x08
    case searchServiceCode = 0x0A
    case requestSystemCode = 0x0C
    case requestBlockInformation = 0x0E
    case requestSpecificationVersion = 0x3C
    case resetMode = 0x3E

    public var responseCode: UInt8 { rawValue + 1 }

    public var description: String {
        switch self {
        case .polling: "Polling"
        case .requestService: "Request Service"
        case .requestResponse: "Request Response"
        case .readWithoutEncryption: "Read Without Encryption"
        case .writeWithoutEncryption: "Write Without Encryption"
        case .searchServiceCode: "Search Service Code"
        case .requestSystemCode: "Request System Code"
        case .requestBlockInformation: "Request Block Information"
        case .requestSpecificationVersion: "Request Specification Version"
        case .resetMode: "Reset Mode"
        }
    }

    /// The name in option lists and card images: `request-block-information`.
    public var name: String {
        var out = ""
        for c in description {
            if c == " " { out.append("-") } else { out += c.lowercased() }
        }
        return out
    }

    /// From ``name`` (`polling`, `request-service`, ...), any case.
    public init?(name: String) {
        guard let c = Self.allCases.first(where: { $0.name == name.lowercased() }) else { return nil }
        self = c
    }

    /// Every ``name``, for usage messages.
    public static var names: String { allCases.map(\.name).joined(separator: ", ") }

    /// Which PMm byte bounds this command's response time.
    public var timing: ResponseTimeKind {
        switch self {
        case .polling: .fixed
        case .requestService: .requestService
        case .readWithoutEncryption: .read
        case .writeWithoutEncryption: .write
        case .requestResponse, .searchServiceCode, .requestSystemCode: .fixed
        case .requestBlockInformation, .requestSpecificationVersion, .resetMode: .other
        }
    }
}
