import FeliCa

/// Where a profile keeps a card or member number: block 0 of a service, a range of its
/// bytes. A redactor replaces what sits there (`FeliCaTrace`'s `Redactor` takes these as
/// its number fields).
public struct CardNumberField: Hashable, Sendable {
    /// The system the purse lives in.
    public var system: SystemCode
    /// The service whose block 0 holds the number.
    public var service: ServiceCode
    /// The bytes of block 0 the number takes.
    public var bytes: Range<Int>
    /// What it is (`Edy number`).
    public var name: String

    public init(system: SystemCode, service: ServiceCode, bytes: Range<Int>, name: String) {
        self.system = system; self.service = service; self.bytes = bytes; self.name = name
    }

    /// The card numbers the profiles read: Edy, nanaco, WAON, and the University Co-op
    /// member number.
    public static let all: [CardNumberField] = [
        CardNumberField(system: .common, service: Edy.numberService, bytes: 2..<10, name: "Edy number"),
        CardNumberField(system: .common, service: Nanaco.numberService, bytes: 0..<8, name: "nanaco number"),
        CardNumberField(system: .common, service: WAON.numberService, bytes: 0..<8, name: "WAON number"),
        CardNumberField(system: .common, service: UnivCoop.memberService, bytes: 0..<6, name: "University Co-op member number"),
        CardNumberField(system: .common, service: FCF.idService, bytes: FCF.digitBytes, name: "FCF ID number"),
    ]
}
