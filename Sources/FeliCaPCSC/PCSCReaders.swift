import FeliCa
import FeliCaReaderCodecs
import FeliCaTransportSupport

/// Which PC/SC reader to open.
public enum PCSCReaderSelector: Hashable, Sendable {
    /// The first reader that holds a FeliCa card (or gets one while the transport waits).
    case first
    /// The reader with this exact name, else the one reader whose name starts with it.
    case named(String)
}

/// One PC/SC reader as `felica devices` shows it.
public struct PCSCReaderInfo: Hashable, Sendable {
    /// What is on the reader.
    public enum State: Hashable, Sendable, CustomStringConvertible {
        case empty
        /// A card whose ATR does not say FeliCa.
        case cardPresent(atr: [UInt8])
        /// A card whose ATR says FeliCa.
        case feliCa(atr: [UInt8])
        /// A card that does not answer the reader (SCARD_STATE_MUTE).
        case mute
        /// The reader cannot be used (SCARD_STATE_UNAVAILABLE).
        case unavailable

        public var description: String {
            switch self {
            case .empty: "empty"
            case .cardPresent: "card present (not FeliCa)"
            case .feliCa: "FeliCa card present"
            case .mute: "card present (not responding)"
            case .unavailable: "unavailable"
            }
        }
    }

    public var name: String
    public var state: State
    /// Another program holds the reader (shared or exclusive).
    public var inUse: Bool

    /// Every PC/SC reader with its state, read at once (no waiting). Throws `.noReader`
    /// with a ``PCSCError`` (`FeliCaError.pcscError`) when pcscd is not running; no readers is an empty list.
    public static func list() async throws(FeliCaError) -> [PCSCReaderInfo] {
        let thread = DeviceThread(name: "felica.pcsc.list")
        defer { thread.stop() }
        return try await thread.run { () throws(FeliCaError) -> [PCSCReaderInfo] in
            let context = try PCSCContext.establish()
            let names = try context.readerNames()
            guard !names.isEmpty else { return [] }
            let states = try context.statusChange(names, known: nil, timeout: nil) ?? []
            return states.map { s in
                let state: State
                if s.isUnavailable { state = .unavailable }
                else if s.isMute { state = .mute }
                else if s.isPresent { state = s.holdsFeliCa ? .feliCa(atr: s.atr) : .cardPresent(atr: s.atr) }
                else { state = .empty }
                return PCSCReaderInfo(name: s.name, state: state, inUse: s.inUse)
            }
        }
    }
}
