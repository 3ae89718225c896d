import FeliCa

/// How a PC/SC reader carries FeliCa packets (Docs/pcsc.md, "Dialects").
public enum PCSCDialect: String, Hashable, Sendable, CaseIterable, CustomStringConvertible {
    /// ACR122U: PN532 commands in `FF 00 00 00` (``ACR122``).
    case acr122u
    /// PC/SC Part 3 transparent exchange, INS `C2` (``TransparentExchange``).
    case part3
    /// Sony's Part 3 variant, INS `50` (RC-S300).
    case sony
    /// ACR1252U / ACR3x direct transmit `FF 00 00 00 Lc <packet>` (``DirectTransmit``).
    case raw

    /// From the name a user types (`acr122u`, `part3`, `sony`, `raw`), any case.
    public init?(name: String) {
        self.init(rawValue: name.lowercased())
    }

    /// Names accepted by ``init(name:)``, for usage messages.
    public static var names: String { allCases.map(\.rawValue).joined(separator: "|") }

    /// The dialect a reader speaks, judged from its PC/SC name; nil when the name says nothing.
    public static func guess(readerName: String) -> PCSCDialect? {
        let n = readerName.uppercased()
        if n.contains("ACR122") { return .acr122u }
        if n.contains("ACR125") || n.contains("ACR128") || n.contains("ACR3") { return .raw }
        if n.contains("RC-S300") || n.contains("RC-S660") || n.contains("SONY") { return .part3 }
        return nil
    }

    /// Dialects tried in order when the name says nothing: Part 3 first, then ACR-style.
    public static let fallbackOrder: [PCSCDialect] = [.part3, .acr122u, .raw]

    public var description: String { rawValue }
}
