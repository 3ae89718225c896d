import FeliCa
import FeliCaEmulators
import FeliCaSimulation
import FeliCaCards

/// Whole reads over the virtual card: without timing (library overhead) and with the
/// card's real air and PMm times (what a user would wait with a perfect reader).
func sessionBenchmarks() async {
    guard section("session") else { return }
    for name in SampleCards.names {
        guard let image = SampleCards.image(named: name) else { continue }
        let card = VirtualCard(image: image)
        await measureAsync("dump virtual:\(name), no timing") {
            let s = CardSession(transport: VirtualTransport(card: card, name: "virtual:\(name)"))
            blackHole(try! await CardImage.read(using: s))
        }
        await measureAsync("dump virtual:\(name), card timing at 212 kbps", runs: 3) {
            let s = CardSession(transport: VirtualTransport(card: card, name: "virtual:\(name)", timing: .kbps212))
            blackHole(try! await CardImage.read(using: s))
        }
    }
}
