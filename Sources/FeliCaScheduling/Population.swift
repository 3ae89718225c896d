import FeliCa
import FeliCaCards

/// The cards an app expects, each with its share of the users: what the order of the
/// app's system codes is optimised for.
public struct Population: Hashable, Sendable {
    /// One kind of card, its share and the systems it carries (in the card's order).
    public struct Card: Hashable, Sendable {
        public var name: String
        /// Share of the population; the weights of a ``Population`` add up to 1.
        public var weight: Double
        public var systems: [SystemCode]

        public init(name: String, weight: Double, systems: [SystemCode]) {
            self.name = name
            self.weight = weight
            self.systems = systems
        }
    }

    /// The cards with normalised weights.
    public let cards: [Card]

    /// Checks the weights (finite, not negative, not all zero) and normalises them.
    public init(cards: [Card]) throws(FeliCaError) {
        guard !cards.isEmpty else {
            throw FeliCaError(.badInput, "population: \"cards\" is empty; list at least one card")
        }
        var total = 0.0
        for (i, c) in cards.enumerated() {
            guard c.weight.isFinite, c.weight >= 0 else {
                throw FeliCaError(.badInput, "population: cards[\(i)] (\(c.name)): weight \(c.weight) must be a finite number ≥ 0")
            }
            guard !c.systems.isEmpty else {
                throw FeliCaError(.badInput, "population: cards[\(i)] (\(c.name)): \"systems\" is empty")
            }
            total += c.weight
        }
        guard total > 0 else {
            throw FeliCaError(.badInput, "population: every weight is 0; give the cards their shares")
        }
        self.cards = cards.map { Card(name: $0.name, weight: $0.weight / total, systems: $0.systems) }
    }

    /// Every system code the cards carry, in first-seen order.
    public var systemCodes: [SystemCode] {
        var seen = Set<SystemCode>()
        var out: [SystemCode] = []
        for c in cards { for s in c.systems where seen.insert(s).inserted { out.append(s) } }
        return out
    }
}

/// Parsing of system-code lists as given on the command line (`0003,fe00,0x8B61`).
public enum SystemCodeList {
    /// One code: 4 hex digits, or a name from FeliCaCards' `SystemDirectory` (`okica`, `kmt`).
    public static func code(_ item: String, what: String) throws(FeliCaError) -> SystemCode {
        if let code = SystemCode(hex: item) { return code }
        switch SystemDirectory.code(named: item) {
        case .success(let code): return code
        case .failure(let error): throw FeliCaError(.invalidArgument, "\(what): \(error.reason)")
        case nil: throw FeliCaError(.invalidArgument, "\(what) \"\(item)\" is neither a 4-digit hex system code (e.g. 0003, fe00) nor a system name `felica` knows (e.g. okica, kmt)")
        }
    }

    /// Parses comma- or space-separated codes (hex or names); wildcards and repeats are refused, since
    /// Core NFC takes neither (Apple: "Each system code must be a discrete value").
    public static func parse(_ text: String, what: String = "system codes") throws(FeliCaError) -> [SystemCode] {
        var out: [SystemCode] = []
        let items = text.split(whereSeparator: { $0 == "," || $0 == " " }).map(String.init)
        guard !items.isEmpty else { throw FeliCaError(.invalidArgument, "\(what): no system codes given") }
        for (i, item) in items.enumerated() {
            let code = try SystemCodeList.code(item, what: "\(what): item \(i + 1)")
            guard !code.isWildcard else {
                throw FeliCaError(.invalidArgument, "\(what): item \(i + 1) \(code) is a wildcard; list discrete system codes")
            }
            guard !out.contains(code) else {
                throw FeliCaError(.invalidArgument, "\(what): \(code) is listed twice (items \(out.firstIndex(of: code)! + 1) and \(i + 1))")
            }
            out.append(code)
        }
        return out
    }
}
