import FeliCa
import FeliCaJSON
import FeliCaFiles

extension Population {
    /// Parses `{"cards":[{"name":..., "weight":..., "systems":["0003","fe00"]}]}`.
    /// `weight` defaults to 1; errors name the JSON path (`cards[2].systems[0]`).
    public init(jsonText: String, source: String = "population") throws(FeliCaError) {
        let root: JSONValue
        do {
            root = try JSONValue.parse(jsonText)
        } catch {
            throw FeliCaError(.badInput, "\(source): \(error)")
        }
        guard let list = root["cards"]?.arrayValue else {
            throw FeliCaError(.badInput, "\(source): expected an object with a \"cards\" array, got \(root["cards"]?.typeName ?? root.typeName)")
        }
        var cards: [Card] = []
        for (i, item) in list.enumerated() {
            let path = "\(source): cards[\(i)]"
            guard item.objectValue != nil else { throw FeliCaError(.badInput, "\(path): expected an object, got \(item.typeName)") }
            let name: String
            switch item["name"] {
            case nil: name = "card \(i + 1)"
            case .string(let s)?: name = s
            case let other?: throw FeliCaError(.badInput, "\(path).name: expected a string, got \(other.typeName)")
            }
            let weight: Double
            switch item["weight"] {
            case nil: weight = 1
            case .number(let d)?: weight = d
            case let other?: throw FeliCaError(.badInput, "\(path).weight: expected a number, got \(other.typeName)")
            }
            guard let systemList = item["systems"]?.arrayValue else {
                throw FeliCaError(.badInput, "\(path).systems: expected an array of system codes, got \(item["systems"]?.typeName ?? "nothing")")
            }
            var systems: [SystemCode] = []
            for (k, s) in systemList.enumerated() {
                guard let text = s.stringValue else {
                    throw FeliCaError(.badInput, "\(path).systems[\(k)]: \(s.serialized()) is not a 4-digit hex system code (e.g. \"fe00\") or a system name (\"okica\")")
                }
                let code: SystemCode
                do throws(FeliCaError) { code = try SystemCodeList.code(text, what: "\(path).systems[\(k)]") } catch {
                    throw FeliCaError(.badInput, error.reason)
                }
                guard !code.isWildcard else {
                    throw FeliCaError(.badInput, "\(path).systems[\(k)]: \(code) is a wildcard, not a system a card can hold")
                }
                systems.append(code)
            }
            cards.append(Card(name: name, weight: weight, systems: systems))
        }
        do {
            try self.init(cards: cards)
        } catch {
            throw FeliCaError(.badInput, error.reason.replacingPrefix("population", with: source))
        }
    }

    /// Reads a population file.
    public static func load(path: String) throws(FeliCaError) -> Population {
        let text: String
        switch SystemCalls.readText(path) {
        case .success(let t): text = t
        case .failure(let e): throw FeliCaError(.badInput, "population \(path): cannot read it: \(e.reason)")
        }
        return try Population(jsonText: text, source: path)
    }
}

extension String {
    func replacingPrefix(_ prefix: String, with other: String) -> String {
        hasPrefix(prefix) ? other + dropFirst(prefix.count) : self
    }
}
