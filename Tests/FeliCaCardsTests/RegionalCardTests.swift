import FeliCa
import FeliCaCards
import FeliCaSimulation
import Testing

/// The regional profiles (OKICA, Ryuto, KMT, MRT Jakarta, FCF ID cards): records written
/// by hand from each public source's layout (Docs/cards.md cites file and line), the sample
/// cards through the card reader, and cards whose services belong to another system, which
/// must never be named as one of these.
@Suite struct RegionalCardTests {
    /// OKICA, TRETJapanNFCReader `Okica/OkicaCardData.swift`: usage 16 01 .. 02 (Yui Rail
    /// ride), date 2026-11-28, Naha Airport (DC 01) to Omoromachi (DC 17), ¥1,630 after (LE),
    /// sequence 0x0024 (BE, bytes 13-14).
    @Test func okicaHandVector() throws {
        let raw = Hex.decode("16010002357CDC01DC175E0600002400")!
        let r = try #require(try OKICA.HistoryRecord.decode(raw))
        #expect(r.date.iso == "2026-11-28")
        #expect(r.balance == 1_630 && r.sequence == 0x24)
        #expect(r.encode() == raw)
        let t = try #require(OKICA.decodeHistory([raw]).first?.transaction)
        #expect(t.kind == .transit && t.type.name == "Yui Rail ride")
        #expect(t.terminal == "Yui Rail Naha Airport → Yui Rail Omoromachi")
        #expect(t.amount == nil)  // the oldest record: no older balance to take it from
    }

    /// Ryuto, TRETJapanNFCReader `Ryuto/RyutoCardData.swift`: 2026-11-27, boarded 18:20,
    /// alighted 18:42, stops 0412 and 0433, type 52 (ride), ¥230 (BE), ¥2,540 after (BE).
    @Test func ryutoHandVector() throws {
        let raw = Hex.decode("357B4944AA041204335200E6000009EC")!
        let r = try #require(try Ryuto.HistoryRecord.decode(raw))
        #expect(r.date.iso == "2026-11-27T18:42:00+09:00")
        #expect(r.boarding == (18, 20))
        #expect(r.boardingStop == 0x0412 && r.alightingStop == 0x0433)
        #expect(r.type == 0x52 && r.amount == 230 && r.balance == 2_540)
        #expect(r.encode() == raw)
        let empty = try Ryuto.HistoryRecord.decode([UInt8](repeating: 0, count: 16))
        #expect(empty == nil)
        let t = try #require(Ryuto.decodeHistory([raw]).first?.transaction)
        #expect(t.amount == -230 && t.kind == .transit)
    }

    /// KMT, Metrodroid `transit/kmt/KMTTrip.kt` and `KMTTransitData.kt`: seconds since
    /// 2000-01-01 00:00 UTC (BE), shown in Jakarta time; Rp5,000 (BE); gate 0131; process 1
    /// (train); sequence 0x000412. The expected times were worked out with Python's datetime
    /// from the same rule, not with the decoder.
    @Test func kmtHandVector() throws {
        let raw = Hex.decode("329C1C6C000013880131000001000412")!
        let r = try #require(try KMT.HistoryRecord.decode(raw))
        let date = try r.date()
        #expect(date.iso == "2026-11-27T17:48:12+07:00")
        #expect(r.amount == 5_000 && r.gate == 0x0131 && r.process == 1 && r.sequence == 0x412)
        #expect(r.encode() == raw)
        // Before 2019-01-01 Metrodroid counts from six hours earlier.
        var old = raw
        old.replaceSubrange(0..<4, with: Hex.decode("22A3C088")!)
        let oldDate = try KMT.HistoryRecord.decode(old)?.date()
        #expect(oldDate?.iso == "2018-06-01T09:30:00+07:00")
        // Byte 0 or the gate zero: an empty slot.
        let empty = try KMT.HistoryRecord.decode([UInt8](repeating: 0, count: 16))
        #expect(empty == nil)
    }

    /// KMT and MRT Jakarta balance block: bytes 0-3 LE balance, 4-7 LE last amount, 13-15 BE
    /// counter (Metrodroid `KMTTransitData.kt`, `MRTJTransitData.kt`).
    @Test func balanceBlock() throws {
        let raw = Hex.decode("ECA90000881300000000000000000412")!
        let b = try KMT.BalanceBlock.decode(raw, "test")
        #expect(b.balance == 43_500 && b.lastAmount == 5_000 && b.counter == 0x412)
        #expect(b.encode() == raw)
    }

    /// FCF ID, TRETJapanNFCReader `FCFCampus/ICU/ICUCardData.swift`: the low digit of bytes 2-7.
    @Test func fcfNumber() throws {
        let number = try FCF.number(Hex.decode("0000323431303537FFFF000000000000")!)
        #expect(number == "241057")
        #expect(throws: CardDataError.self) { try FCF.number(Hex.decode("00003234313035FA0000000000000000")!) }
    }

    /// Each sample card through the card reader, with the values its source implies.
    @Test func samples() async throws {
        let okica = try await CardReader(depth: .history).read(session(try sample("okica")))
        let o = try #require(okica.purses.first)
        #expect(okica.purses.map(\.profile) == [.okica])
        #expect(o.balance == 1_630 && o.profile.currency == .jpy)
        #expect(o.transactions.map(\.amount) == [-270, -240, 2_000, -300, nil])
        #expect(o.transactions.map(\.kind) == [.transit, .transit, .charge, .transit, .other])

        let ryuto = try await CardReader(depth: .history).read(session(try sample("ryuto")))
        let r = try #require(ryuto.purses.first)
        #expect(ryuto.purses.map(\.profile) == [.ryuto])
        #expect(r.balance == 2_540)
        #expect(r.transactions.map(\.amount) == [-230, -230, 3_000])

        let kmt = try await CardReader(depth: .history).read(session(try sample("kmt")))
        let k = try #require(kmt.purses.first)
        #expect(kmt.purses.map(\.profile) == [.kmt])
        #expect(k.balance == 43_500 && k.profile.currency == .idr && k.number == "0195123456789012")
        #expect(k.transactions.map(\.amount) == [-5_000, -4_000, 50_000, -3_000])
        #expect(k.transactions.map(\.balance) == [43_500, 48_500, 52_500, 2_500])
        #expect(k.transactions.first?.date.iso == "2026-11-27T17:48:12+07:00")
        #expect(Currency.idr.format(43_500) == "Rp43,500")

        let mrtj = try await CardReader(depth: .balance).read(session(try sample("mrtj")))
        #expect(mrtj.purses.map(\.profile) == [.mrtj])
        #expect(mrtj.purses.first?.balance == 86_000)

        let fcf = try await CardReader(depth: .balance).read(session(try sample("fcf")))
        #expect(fcf.purses.map(\.profile) == [.fcf])
        #expect(fcf.purses.first?.number == "241057" && fcf.purses.first?.balance == nil)

        // A system the lists name but nothing decodes: no purse, and the report says why.
        let ntasu = try await CardReader(depth: .history).read(session(try sample("ntasu")))
        #expect(ntasu.purses.isEmpty && ntasu.skipped.map(\.system) == [0x93EC])
    }

    /// A system that holds another card's services is never named as the new card: OKICA's
    /// system code with Suica's services, Suica's system with OKICA's history service, KMT's
    /// services under MRT Jakarta's code, and a University Co-op card (same common area as
    /// an FCF card, without its ID service).
    @Test func otherSystemsServicesAreNeverNamed() async throws {
        var suicaAsOkica = try sample("suica")
        suicaAsOkica.systems = [suicaAsOkica.systems[0]]
        suicaAsOkica.systems[0].code = OKICA.system
        let a = try await CardReader(depth: .history).read(session(suicaAsOkica))
        #expect(a.purses.isEmpty)

        var okicaAsSuica = try sample("okica")
        okicaAsSuica.systems[0].code = .transit
        let b = try await CardReader(depth: .history).read(session(okicaAsSuica))
        #expect(!b.purses.contains { $0.profile == .okica } && !b.purses.contains { $0.balance != nil })

        var kmtAsMRTJ = try sample("kmt")
        kmtAsMRTJ.systems[0].code = KMT.mrtjSystem
        let c = try await CardReader(depth: .history).read(session(kmtAsMRTJ))
        #expect(c.purses.isEmpty)

        let coop = try await CardReader(depth: .history).read(session(try sample("univ-coop")))
        #expect(coop.purses.map(\.profile) == [.univCoop])
    }
}

/// The system-code directory and the IC table against the public lists.
@Suite struct DirectoryTests {
    @Test func entries() throws {
        #expect(Set(SystemDirectory.entries.map(\.code)).count == SystemDirectory.entries.count)
        #expect(SystemDirectory.lookup(0x93EC)?.name == "NTasu")
        #expect(SystemDirectory.lookup(0x93EC)?.isDecoded == false)
        #expect(SystemDirectory.lookup(0x8FC1)?.isDecoded == true)
        #expect(SystemDirectory.lookup(0x1234) == nil)
        // Every system a profile lives in is named.
        for layout in PurseLayout.all {
            if case .ownSystem(let codes) = layout.placement {
                for c in codes { #expect(SystemDirectory.lookup(c) != nil, "\(c)") }
            }
        }
    }

    @Test(arguments: [("okica", 0x8FC1), ("KMT", 0x90B7), ("mrtj", 0x9373), ("Ryuto", 0x8B5D), ("ayuca", 0x83EE), ("RapiCa", 0x8194), ("LuLuCa", 0x04A6), ("nimoca", nil)])
    func names(_ name: String, _ code: Int?) throws {
        let found = try SystemDirectory.code(named: name)?.get()
        #expect(found == code.map { SystemCode(UInt16($0)) })
    }

    /// The IC codes the proxmark3 list and nfcf-info agree on (nfcpy names 0x35 RC-SA00/2).
    @Test(arguments: [(0x32, "RC-SA00/1"), (0x33, "RC-SA00/2"), (0x34, "RC-SA01/1"), (0x35, "RC-SA01/2"), (0x44, "RC-SA20/1"), (0x17, "mobile FeliCa 4.0")])
    func icNames(_ code: Int, _ name: String) {
        #expect(ICType(code: UInt8(code)).name == name)
    }
}
