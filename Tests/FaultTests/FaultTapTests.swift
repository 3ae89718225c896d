import FeliCa
import FeliCaReaderCodecs
import FeliCaEmulators
import FeliCaSimulation
import Testing
import FeliCaCards

@Suite("card taps in the PN532 emulator")
struct TapTests {
    @Test("PRESENT:ABSENT parses; anything else is refused with the expected form",
          arguments: [("6:3", 6, 3), ("1:1", 1, 1), ("0:3", nil, nil), ("6", nil, nil), ("6:3:1", nil, nil), ("a:b", nil, nil), ("-1:2", nil, nil), (":", nil, nil)] as [(String, Int?, Int?)])
    func parsing(_ text: String, _ present: Int?, _ absent: Int?) {
        do throws(FeliCaError) {
            let t = try PN532Emulator.Taps(parsing: text)
            #expect(t.present == present && t.absent == absent, "\(text)")
            #expect(t.description == text)
        } catch {
            #expect(present == nil, "\(text): \(error.reason)")
            #expect(error.code == .badInput && error.reason.contains("PRESENT:ABSENT"))
        }
    }

    @Test("the card answers PRESENT packets, is silent for ABSENT, and comes back")
    func cycle() throws {
        let card = try VirtualCard.named("suica")
        var emulator = PN532Emulator(card: card, options: .init(taps: .init(present: 2, absent: 3)))
        // InListPassiveTarget, FeliCa 212 kbps, Polling wildcard: NbTg tells whether the card answered.
        let polling: [UInt8] = [0x4A, 0x01, 0x01, 0x00, 0xFF, 0xFF, 0x01, 0x00]
        // One passive activation attempt (RFConfiguration item 05), as libnfc sets it; the
        // chip's default retries forever when no card answers.
        _ = emulator.receive(PN532Frame.command([0x32, 0x05, 0xFF, 0x01, 0x00]).encode(), at: .zero)
        var seen: [Bool] = []
        for i in 1...10 {
            let actions = emulator.receive(PN532Frame.command(polling).encode(), at: .milliseconds(i))
            let frames = actions.compactMap { a -> [UInt8]? in if case .send(let b, _) = a { b } else { nil } }
            let reply = try #require(frames.compactMap { try? PN532Frame.decode($0[...]) }.compactMap { f -> [UInt8]? in
                if case .response(let d) = f { d } else { nil }
            }.first)
            seen.append(reply[1] == 1)
        }
        #expect(seen == [true, true, false, false, false, true, true, false, false, false])
        #expect(emulator.cardExchanges == 10)
    }
}
