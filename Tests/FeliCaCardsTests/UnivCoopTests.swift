import FeliCa
import FeliCaCards
import FeliCaSimulation
import Testing

@Suite struct UnivCoopTests {
    /// A record written by hand from the layout: 2026-11-27 12:35:27, purchase, ¥563,
    /// ¥803 after.
    @Test func handVector() throws {
        let raw = Hex.decode("20261127123527050005630008030000")!
        let r = try #require(try UnivCoop.HistoryRecord.decode(raw))
        #expect(r.date.iso == "2026-11-27T12:35:27+09:00")
        #expect(r.type == 5 && r.amount == 563 && r.balance == 803)
        #expect(r.encode() == raw)
        #expect(try UnivCoop.HistoryRecord.decode([UInt8](repeating: 0, count: 16)) == nil)
    }

    /// A nibble above 9, or a month 13, is a malformed record kept with its bytes, never a
    /// wrong date or amount.
    @Test(arguments: ["20261127123527050005A30008030000", "20261327123527050005630008030000", "2026112712"])
    func malformedRecordsAreKept(_ hex: String) {
        let entries = UnivCoop.decodeHistory([Hex.decode(hex)!])
        guard case .malformed(let slot, _, let raw)? = entries.first else {
            Issue.record("\(hex) decoded: \(entries)")
            return
        }
        #expect(slot == 0 && raw == Hex.decode(hex)!)
    }

    /// The sample card through the card reader: balance, member number and dated history,
    /// amounts signed by type, an unknown type by its number and its balance difference.
    @Test func sampleCardReads() async throws {
        let report = try await CardReader(depth: .history).read(session(try sample("univ-coop")))
        let p = try #require(report.purses.first)
        #expect(report.purses.map(\.profile) == [.univCoop])
        #expect(p.balance == 803)
        #expect(p.number == "117519000272")
        #expect(p.issues.isEmpty && p.notes.isEmpty, "\(p.issues) \(p.notes)")
        let t = p.transactions
        #expect(t.map(\.amount) == [-563, 1_000, -685, 0, -130])
        #expect(t.map(\.kind) == [.purchase, .charge, .purchase, .other, .purchase])
        #expect(t[3].type.description == "unknown 0x03")
        #expect(t[0].date.iso == "2026-11-27T12:35:27+09:00")
        let balanceOnly = try await CardReader(depth: .balance).read(session(try sample("univ-coop")))
        #expect(balanceOnly.purses.first?.balance == 803)
        #expect(balanceOnly.purses.first?.history == nil)
    }

    /// A card whose balance block and newest record disagree says so.
    @Test func crossCheck() {
        let newest = UnivCoop.HistoryRecord(date: SampleDay.noon, type: 5, amount: 100, balance: 500).encode()
        let p = UnivCoop.purse(member: nil, balance: UnivCoop.encodeBalance(400), history: [newest])
        #expect(p.notes.count == 1)
    }
}

enum SampleDay {
    static let noon = (try? CardDate(year: 2026, month: 11, day: 1, hour: 12, minute: 0, second: 0)) ?? (try! CardDate(year: 2026, month: 1, day: 1))
}
