import FeliCa
import FeliCaCards
import FeliCaJSON
import FeliCaEmulators
import FeliCaSimulation
import Foundation
import Testing

/// Moving a session to 424 kbps: the card is asked, the link switches, the card answers at
/// the new rate only when it runs at it, and the next card is polled at 212 kbps again.
@Suite struct BitRateTests {
    func image(rates: [AirTiming.BitRate]?) -> CardImage {
        var i = twoSystemImage()
        i.bitRates = rates
        return i
    }

    func switchable(_ image: CardImage, rates: [AirTiming.BitRate] = [.kbps212, .kbps424]) -> (CardSession, VirtualTransport) {
        let t = VirtualTransport(card: VirtualCard(image: image), name: "virtual:test", bitRates: rates)
        return (CardSession(transport: t), t)
    }

    @Test func communicationPerformanceNamesTheCardsRates() async throws {
        let (both, _) = switchable(image(rates: nil))
        #expect(try await both.poll(requestCode: .communicationPerformance)?.requestData == 0x0083)
        let (slow, _) = switchable(image(rates: [.kbps212]))
        #expect(try await slow.poll(requestCode: .communicationPerformance)?.requestData == 0x0001)
        #expect(AirTiming.BitRate.kbps424.isSupported(byCommunicationPerformance: 0x0083))
        #expect(!AirTiming.BitRate.kbps424.isSupported(byCommunicationPerformance: 0x0001))
        #expect(AirTiming.BitRate.kbps212.isSupported(byCommunicationPerformance: 0x0001))
    }

    @Test func switchesWhenBothOfferTheFasterRate() async throws {
        let (s, t) = switchable(image(rates: nil))
        let first = try await s.detect()
        let before = await s.exchangeCount
        #expect(try await s.useFastestBitRate(for: first) == .kbps424)
        #expect(t.bitRate == .kbps424)
        #expect(await s.exchangeCount == before + 1)
        // The card goes on answering at the new rate.
        #expect(try await s.systemCodes(of: first) == [0x0003, 0xFE00])
        // Already there: nothing more is sent.
        #expect(try await s.useFastestBitRate(for: first) == .kbps424)
        #expect(await s.exchangeCount == before + 2)
    }

    @Test func staysWhenTheCardRunsAt212Only() async throws {
        let (s, t) = switchable(image(rates: [.kbps212]))
        let first = try await s.detect()
        #expect(try await s.useFastestBitRate(for: first) == .kbps212)
        #expect(t.bitRate == .kbps212)
        #expect(try await s.systemCodes(of: first) == [0x0003, 0xFE00])
    }

    @Test func costsNothingOnALinkWithOneRate() async throws {
        let (s, _) = session(twoSystemImage())
        let first = try await s.detect()
        let before = await s.exchangeCount
        #expect(try await s.useFastestBitRate(for: first) == .kbps212)
        #expect(await s.exchangeCount == before)
    }

    @Test func aCardSpokenToAtARateItLacksStaysSilent() async throws {
        let t = VirtualTransport(card: VirtualCard(image: image(rates: [.kbps212])), name: "virtual:test", bitRates: [.kbps212, .kbps424])
        try await t.switchBitRate(to: .kbps424)
        let polling = PollingCommand().encode()
        await #expect(throws: FeliCaError.self) { try await t.exchange(polling, timeout: .milliseconds(5)) }
        try await t.switchBitRate(to: .kbps212)
        #expect(try await t.exchange(polling, timeout: .milliseconds(5)).count == 20)
        await #expect(throws: FeliCaError.self) {
            try await VirtualTransport(card: VirtualCard(image: twoSystemImage()), name: "v").switchBitRate(to: .kbps424)
        }
    }

    @Test func detectPollsAtTheSlowestRateAgain() async throws {
        let (s, t) = switchable(image(rates: nil))
        let first = try await s.detect()
        try await s.useFastestBitRate(for: first)
        #expect(t.bitRate == .kbps424)
        _ = try await s.detect()
        #expect(t.bitRate == .kbps212)

        // Whatever order the transport lists its rates in.
        let (u, ut) = switchable(image(rates: nil), rates: [.kbps424, .kbps212])
        try await ut.switchBitRate(to: .kbps424)
        _ = try await u.detect()
        #expect(ut.bitRate == .kbps212)
    }

    @Test func historyReadingsSwitchAndBalanceReadingsDoNot() async throws {
        let suica = try #require(SampleCards.image(named: "suica"))
        let (fast, ft) = switchable(suica)
        let plain = CardSession(transport: VirtualTransport(card: VirtualCard(image: suica), name: "virtual:suica"))
        let history = CardReader(depth: .history)
        let a = try await history.read(fast)
        let b = try await history.read(plain)
        #expect(ft.bitRate == .kbps424)
        #expect(a.purses == b.purses)
        #expect(await fast.exchangeCount == (await plain.exchangeCount) + 1)

        let (slow, st) = switchable(suica)
        _ = try await CardReader(depth: .balance).read(slow)
        #expect(st.bitRate == .kbps212)

        // Told to move up always, a balance reading moves up too.
        let eager = VirtualTransport(card: VirtualCard(image: suica), name: "virtual:suica", bitRates: [.kbps212, .kbps424])
        var options = CardSession.Options()
        options.fasterBitRate = .always
        _ = try await CardReader(depth: .balance).read(CardSession(transport: eager, options: options))
        #expect(eager.bitRate == .kbps424)
    }

    @Test func dumpSwitchesAndGivesTheSameImage() async throws {
        let suica = try #require(SampleCards.image(named: "suica"))
        let (fast, ft) = switchable(suica)
        let plain = CardSession(transport: VirtualTransport(card: VirtualCard(image: suica), name: "virtual:suica"))
        let a = try await CardImage.read(using: fast)
        let b = try await CardImage.read(using: plain)
        #expect(ft.bitRate == .kbps424)
        #expect(a.jsonText() == b.jsonText())
    }

    @Test func imageKeepsBitRatesAndRejectsBadOnes() throws {
        var i = twoSystemImage()
        i.bitRates = [.kbps212]
        let text = i.jsonText()
        #expect(i.json().objectValue?["bitRates"] == .array([.int(212)]))
        #expect(try CardImage(jsonText: text).bitRates == [.kbps212])
        #expect(try CardImage(jsonText: text) == i)
        #expect(try CardImage(jsonText: twoSystemImage().jsonText()).bitRates == nil)
        let base = twoSystemImage().jsonText()
        for (bad, path) in [("[]", "$.bitRates"), ("[212,300]", "$.bitRates[1]"), ("[424]", "$.bitRates"), ("[212,212]", "$.bitRates[1]"), ("\"fast\"", "$.bitRates")] {
            let broken = base.replacingFirst("\"format\"", with: "\"bitRates\":\(bad),\"format\"")
            #expect(broken != base)
            #expect {
                _ = try CardImage(jsonText: broken)
            } throws: { ($0 as? FeliCaError)?.reason.contains(path) == true }
        }
    }
}

extension String {
    func replacingFirst(_ target: String, with replacement: String) -> String {
        guard let r = firstRange(of: target) else { return self }
        return String(self[..<r.lowerBound]) + replacement + String(self[r.upperBound...])
    }
}

/// When moving up is worth its Polling.
@Suite struct BitRateCostTests {
    final class Link: Transport {
        let name = "link"
        let linkLatency: Duration
        let bitRates: [AirTiming.BitRate]
        init(latency: Duration, rates: [AirTiming.BitRate]) { linkLatency = latency; bitRates = rates }
        func exchange(_ packet: [UInt8], timeout: Duration) async throws(FeliCaError) -> [UInt8] {
            throw FeliCaError(.timeout, "no card")
        }
        func close() async {}
    }

    @Test func aLongReadingPaysAndAShortOneDoesNot() {
        let usb = CardSession(transport: Link(latency: .milliseconds(2), rates: [.kbps212, .kbps424]))
        #expect(!usb.fasterBitRatePays(forBlocks: 4))
        #expect(!usb.fasterBitRatePays(forBlocks: 15))
        #expect(usb.fasterBitRatePays(forBlocks: 30))
        #expect(usb.fasterBitRatePays(forBlocks: 200))
        // The turn moves later as the link's latency grows.
        let slow = CardSession(transport: Link(latency: .milliseconds(10), rates: [.kbps212, .kbps424]))
        #expect(!slow.fasterBitRatePays(forBlocks: 30))
        let one = CardSession(transport: Link(latency: .zero, rates: [.kbps212]))
        #expect(!one.fasterBitRatePays(forBlocks: 1000))
    }

    @Test func historyIsLongEnoughOnAnRCS380AndBalanceIsNot() {
        let usb = CardSession(transport: Link(latency: .milliseconds(2), rates: [.kbps212, .kbps424]))
        let history = CardReader(depth: .history).expectedBlocks
        let balance = CardReader(depth: .balance).expectedBlocks
        #expect(usb.fasterBitRatePays(forBlocks: history))
        #expect(!usb.fasterBitRatePays(forBlocks: balance))
    }

    @Test func aShortReadingSendsNothing() async throws {
        let s = CardSession(transport: Link(latency: .milliseconds(2), rates: [.kbps212, .kbps424]))
        let target = Target(idm: IDm(rawValue: 1), pmm: CardImage.defaultPMm, systemCode: 0x0003)
        // A Polling would throw through this link's timeout as no answer: the rate stays and nothing is sent.
        #expect(try await s.useFastestBitRate(for: target, expectedBlocks: 3) == .kbps212)
        #expect(await s.exchangeCount == 0)
    }
}
