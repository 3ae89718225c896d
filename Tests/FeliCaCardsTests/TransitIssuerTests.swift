import FeliCa
import FeliCaCards
import FeliCaSimulation
import Testing

/// The Suica sample with its issuer's own nodes replaced by `areas` (each with one
/// key-protected service inside, as issuers' areas hold) and `services`: a card of another
/// brand, or of none, or of two.
func transitCard(areas: [(AreaCode, AreaCode)] = [], services: [ServiceCode] = []) throws -> CardImage {
    var image = try sample("suica")
    var system = image.systems[0]
    system.services.removeAll { $0.code == 0x1808 || $0.code == 0x1848 }
    system.services += [.init(code: 0x1848, keyVersion: 0x0100, blockCount: 3)]
    for (code, end) in areas {
        system.areas.append(CardImage.Area(code: code, end: end))
        system.services.append(.init(code: ServiceCode(code.rawValue + 0x08), keyVersion: 0x0200, blockCount: 2))
    }
    system.services += services.map { .init(code: $0, keyVersion: 0x0100, blockCount: 1) }
    system.services.sort { $0.code < $1.code }
    system.areas.sort { $0.code < $1.code }
    image.systems[0] = system
    return image
}

/// Each brand the library names, with the node that tells it (Docs/card-layouts.md).
let brandCards: [(brand: String, areas: [(AreaCode, AreaCode)], services: [ServiceCode])] = [
    ("Suica", [], [0x1808]),
    ("PASMO", [(0x1CC0, 0x1DFF)], []),
    ("TOICA", [(0x1E00, 0x1EFF)], []),
    ("nimoca", [], [0x2008]),
    ("Kitaca", [(0x2080, 0x21BF)], []),
    ("SUGOCA", [(0x21C0, 0x22FF)], []),
    ("Hayakaken", [(0x2440, 0x257F)], []),
    ("ICOCA", [(0x9600, 0x973F)], []),
    ("manaca", [(0x9880, 0x99BF)], []),
    ("icsca", [(0xBD40, 0xBE7F)], []),
]

/// Reads `image` at `depth` and returns the transit purse's issuer and the exchanges used.
func readIssuer(_ image: CardImage, depth: CardReader.Depth, names: Bool?, known: Bool = false) async throws -> (String?, Int) {
    let s = session(image)
    var reader = CardReader(depth: depth)
    reader.namesIssuer = names
    if known { reader.knownNodes = image.nodesBySystem }
    let report = try await reader.read(s)
    let p = try #require(report.purses.first { $0.profile == .transitIC })
    return (p.issuer, await s.exchangeCount)
}

@Suite struct TransitIssuerTests {
    /// Every brand is named at history depth, from exactly one more exchange than the same
    /// reading without naming; from the image's own nodes it takes none.
    @Test(arguments: brandCards.map(\.brand))
    func eachBrandIsNamedWithOneMoreExchange(_ brand: String) async throws {
        let c = try #require(brandCards.first { $0.brand == brand })
        let image = try transitCard(areas: c.areas, services: c.services)
        let (named, used) = try await readIssuer(image, depth: .history, names: nil)
        let (unnamed, without) = try await readIssuer(image, depth: .history, names: false)
        #expect(named == brand)
        #expect(unnamed == nil)
        #expect(used == without + 1, "\(brand): \(used) exchanges naming, \(without) without")
        let (fromImage, free) = try await readIssuer(image, depth: .history, names: nil, known: true)
        #expect(fromImage == brand)
        #expect(free == without)
        #expect(image.transitIssuer == brand)
    }

    /// A balance reading stays as short as it was unless asked.
    @Test func balanceNamesOnlyWhenAsked() async throws {
        let image = try transitCard(areas: [(0x1CC0, 0x1DFF)])
        let (plain, used) = try await readIssuer(image, depth: .balance, names: nil)
        #expect(plain == nil)
        #expect(used == 2)  // Polling + one read, as before
        let (asked, more) = try await readIssuer(image, depth: .balance, names: true)
        #expect(asked == "PASMO")
        #expect(more == used + 1)
    }

    /// Areas of no known brand: the card stays "Transit IC".
    @Test func unknownAreasNameNothing() async throws {
        let image = try transitCard(areas: [(0x2700, 0x27FF), (0x3000, 0x30FF)])
        let (issuer, _) = try await readIssuer(image, depth: .history, names: nil)
        #expect(issuer == nil)
        #expect(image.transitIssuer == nil)
        let report = try await CardReader(depth: .history).read(session(image))
        #expect(report.purses[0].displayName == "Transit IC")
    }

    /// Nodes of two brands (or a brand and the regional cards' area): no name rather than
    /// a wrong one.
    @Test(arguments: [
        ([(AreaCode(0x1CC0), AreaCode(0x1DFF))], [ServiceCode(0x1808)]),
        ([(0x9600, 0x973F), (0x9880, 0x99BF)], []),
        ([(0x2580, 0x267F)], [0x1808]),
    ] as [([(AreaCode, AreaCode)], [ServiceCode])])
    func twoBrandsNameNothing(areas: [(AreaCode, AreaCode)], services: [ServiceCode]) async throws {
        let image = try transitCard(areas: areas, services: services)
        let (issuer, _) = try await readIssuer(image, depth: .history, names: nil)
        #expect(issuer == nil)
        let (fromImage, _) = try await readIssuer(image, depth: .history, names: nil, known: true)
        #expect(fromImage == nil)
        #expect(image.transitIssuer == nil)
    }

    /// The regional cards' area alone names no brand.
    @Test func regionalAreaAloneNamesNothing() async throws {
        let (issuer, _) = try await readIssuer(try transitCard(areas: [(0x2580, 0x267F)]), depth: .history, names: nil)
        #expect(issuer == nil)
    }

    /// An image that lists services without their areas (Metrodroid's dumps do) is told by
    /// the services inside a brand's range; a service of the same number with another
    /// attribute counts for the service-named brands.
    @Test func imageNodesDecideByRange() {
        #expect(TransitIssuer.brand(nodes: [0x008B, 0x090F, 0x1CC8, 0x1D0A]) == "PASMO")
        #expect(TransitIssuer.brand(nodes: [0x008B, 0x960A]) == "ICOCA")
        #expect(TransitIssuer.brand(nodes: [0x180A]) == "Suica")
        #expect(TransitIssuer.brand(nodes: [0x1848, 0x2308]) == nil)  // shared by several brands
        #expect(TransitIssuer.brand(nodes: [0x1DFF, 0x1E00]) == nil)  // the last PASMO code and the first TOICA one
        #expect(TransitIssuer.probeNodes.count <= RequestServiceCommand.maximumNodes)
    }

    /// A reader that will not forward Request Service leaves the card unnamed and the
    /// reading intact.
    @Test func refusedProbeNamesNothing() async throws {
        let t = RecordingTransport(try transitCard(areas: [(0x1CC0, 0x1DFF)]), refusing: [0x02])
        let report = try await CardReader(depth: .history).read(CardSession(transport: t))
        #expect(report.purses.first?.issuer == nil)
        #expect(report.purses.first?.balance == 1_234)
    }
}
