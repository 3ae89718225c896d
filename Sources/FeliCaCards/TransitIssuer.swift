import FeliCa

/// The brand of a transit IC card (Suica, PASMO, ICOCA ...), told by the node its issuer
/// created inside system 0003: all of them share the layout, the system code and the
/// services that hold balance and history, but each operator keeps its own area (or, for
/// Suica and nimoca, a service of its own) next to the shared ones.
///
/// One Request Service over ``probeNodes`` (11 nodes, one exchange) asks a card which of
/// them it holds; a card answers `FFFF` for a node it lacks. A card image answers from the
/// areas and services it lists, with no exchange at all. A brand is named only when
/// exactly one brand's node is present: none, or two, leaves the card unnamed, because a
/// wrong name is worse than none. Node codes and ranges: Docs/card-layouts.md, "Which
/// transit brand".
public struct TransitIssuer: Hashable, Sendable {
    /// The brand, nil for a node that is known but names no single brand (the area of the
    /// regional cards issued with Suica, whose own names the node does not tell).
    public var brand: String?
    /// The node Request Service asks about: the issuer's area, or its own service.
    public var node: NodeCode
    /// For an area, the last code it spans; nil for a service.
    public var end: NodeCode?

    public init(_ brand: String?, area: NodeCode, end: NodeCode) {
        self.brand = brand; self.node = area; self.end = end
    }

    public init(_ brand: String?, service: ServiceCode) {
        self.brand = brand; self.node = service; self.end = nil
    }

    /// The system the brands live in.
    public static let system: SystemCode = 0x0003

    /// Every node the library tells brands by, in Request Service order.
    public static let known: [TransitIssuer] = [
        TransitIssuer("Suica", service: 0x1808),
        TransitIssuer("PASMO", area: 0x1CC0, end: 0x1DFF),
        TransitIssuer("TOICA", area: 0x1E00, end: 0x1EFF),
        TransitIssuer("nimoca", service: 0x2008),
        TransitIssuer("Kitaca", area: 0x2080, end: 0x21BF),
        TransitIssuer("SUGOCA", area: 0x21C0, end: 0x22FF),
        TransitIssuer("Hayakaken", area: 0x2440, end: 0x257F),
        TransitIssuer(nil, area: 0x2580, end: 0x267F),
        TransitIssuer("ICOCA", area: 0x9600, end: 0x973F),
        TransitIssuer("manaca", area: 0x9880, end: 0x99BF),
        TransitIssuer("icsca", area: 0xBD40, end: 0xBE7F),
    ]

    /// The nodes of the one Request Service that tells the brand.
    public static var probeNodes: [NodeCode] { known.map(\.node) }

    /// Whether a card listing `node` holds this issuer's node: for an area, any node inside
    /// its range (an image may list the services without the area, as Metrodroid's dumps
    /// do); for a service, the same service number with any attribute.
    public func covers(_ node: NodeCode) -> Bool {
        if let end { return node >= self.node && node <= end }
        return node.number == self.node.number
    }

    /// The brand of a card that answered Request Service over ``probeNodes`` with
    /// `keyVersions` (nil = absent), nil when no single brand is present.
    public static func brand(answers keyVersions: [UInt16?]) -> String? {
        single(zip(known, keyVersions).filter { $0.1 != nil }.map(\.0))
    }

    /// The brand of a card whose system 0003 lists `nodes` (its areas and services, as a
    /// card image keeps them), nil when no single brand is present.
    public static func brand(nodes: [NodeCode]) -> String? {
        single(known.filter { issuer in nodes.contains { issuer.covers($0) } })
    }

    /// The one brand among `present`; nil for none, for two or more, and for a node that
    /// names no brand.
    static func single(_ present: [TransitIssuer]) -> String? {
        present.count == 1 ? present[0].brand : nil
    }
}
