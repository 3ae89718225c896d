import FeliCa
import FeliCaCards
import FeliCaEmulators
import FeliCaSimulation

/// Reading purses from the built-in cards with the card's real air and PMm times at
/// 212 kbps: the batched, probing `CardReader` against two common strategies from other
/// libraries — one block per command (nfcpy's default) and one service per command (the
/// iOS libraries) — which are given the services to read for free (no probing).
func cardBenchmarks() async {
    guard section("cards") else { return }
    func services(_ layout: PurseLayout) -> [(ServiceCode, Int)] { layout.reads(at: .history).map { ($0.service, $0.historyBlocks) } }
    let transit = services(TransitIC.layout)
    let plans: [String: [(SystemCode, [(ServiceCode, Int)])]] = [
        "suica": [(.transit, transit)],
        "edy": [(.common, services(Edy.layout))],
        "nanaco": [(.common, services(Nanaco.layout))],
        "waon": [(.common, services(WAON.layout))],
        "wallet": [(.transit, transit), (.common, services(Edy.layout) + services(Nanaco.layout) + services(WAON.layout))],
    ]
    for name in SampleCards.names {
        guard let image = SampleCards.image(named: name), let plan = plans[name] else { continue }
        let card = VirtualCard(image: image)
        for depth in [CardReader.Depth.balance, .history] {
            var exchanges = 0
            do {
                let took = try await measureAsync("\(name) \(depth): CardReader", runs: 3) {
                    let s = CardSession(transport: VirtualTransport(card: card, name: "virtual:\(name)", timing: .kbps212))
                    blackHole(try await CardReader(depth: depth).read(s))
                    exchanges = await s.exchangeCount
                }
                print("    \(exchanges) exchanges")
                if name == "wallet" && depth == .history {
                    record("wallet sample (transit, Edy, nanaco, WAON), full history, `CardReader` (batched, probing)", fixed(millis(took), 0) + " ms / \(exchanges) exchanges", model: CardModel.virtual212)
                }
            } catch {
                print("    failed: \(error)")
            }
            guard depth == .history else { continue }
            for perBlock in [true, false] {
                var n = 0
                do { let took = try await measureAsync("\(name) history: one \(perBlock ? "block" : "service") per command", runs: 3) {
                    let s = CardSession(transport: VirtualTransport(card: card, name: "virtual:\(name)", timing: .kbps212))
                    let first = try await s.detect()
                    _ = try await s.systemCodes(of: first)
                    for (system, services) in plan {
                        guard let t = first.systemCode == system ? first : try await s.select(system) else { continue }
                        for (service, count) in services {
                            if perBlock {
                                for b in 0..<count { blackHole(try await s.read(service: service, blocks: b..<(b + 1), from: t)) }
                            } else {
                                blackHole(try await s.read(service: service, blocks: 0..<count, from: t))
                            }
                        }
                    }
                    n = await s.exchangeCount
                }
                print("    \(n) exchanges")
                if name == "wallet" && perBlock {
                    record("  the same, one block per command (nfcpy's default), services given", fixed(millis(took), 0) + " ms / \(n) exchanges", model: CardModel.virtual212)
                }
                } catch {
                    print("    failed: \(error)")
                }
            }
        }
    }
    // A dump of a card that refuses Search Service Code: the Request Service sweep over
    // every service code (Docs/cards.md, "Finding services on a card that hides them"), at
    // the command's 32 nodes a request and on a card that takes only 8.
    for limit in [32, 8] {
        var image = SampleCards.okica
        image.ignores = [.searchServiceCode]
        image.maxNodesPerRequest = limit == 32 ? nil : limit
        let card = VirtualCard(image: image)
        var exchanges = 0
        do {
            _ = try await measureAsync("okica dump, Search Service Code refused, card takes \(limit) nodes a Request Service", runs: 1) {
                let s = CardSession(transport: VirtualTransport(card: card, name: "virtual:okica", timing: .kbps212))
                blackHole(try await CardImage.read(using: s))
                exchanges = await s.exchangeCount
            }
            print("    \(exchanges) exchanges")
        } catch {
            print("    failed: \(error)")
        }
    }
}
