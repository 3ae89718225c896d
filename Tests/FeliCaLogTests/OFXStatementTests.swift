import FeliCaLog
import Testing

@Suite struct OFXStatementTests {
    func record(_ purse: String = "transit-ic", sequence: Int?, date: String = "2026-11-30", time: String? = nil,
                amount: Int?, balance: Int, from: String? = "新宿", to: String? = "渋谷 <東口> & 西口") -> KeptRecord {
        kept(card: "0101120312345678", purse: purse, sequence: sequence, date: date, time: time, type: "transit",
                   detail: "ticket gate, fare", from: from, to: to, amount: amount, balance: balance)
    }

    @Test func theOldestRecordOpensTheStatementAndOthersAreTransactions() {
        var ofx = OFXStatement(generatedAt: "20261203120000")
        ofx.add(record(sequence: 1, amount: nil, balance: 1000))
        ofx.add(record(sequence: 2, time: "08:30", amount: -210, balance: 790))
        let text = ofx.render()
        #expect(ofx.incomplete.isEmpty)
        #expect(text.contains("<TRNAMT>-210</TRNAMT><FITID>0101120312345678-transit-ic-2-20261130</FITID>"))
        #expect(text.contains("<DTPOSTED>20261130083000[+9:JST]</DTPOSTED>"))
        #expect(text.contains("<NAME>新宿 - 渋谷 &lt;東口&gt; &amp; 西口</NAME>"))
        #expect(text.contains("<LEDGERBAL><BALAMT>790</BALAMT>"))
        #expect(!text.contains("-transit-ic-1-"))
        #expect(text.contains("<!-- incomplete: the record of 2026-11-30 (sequence 1) opens the statement"))
    }

    @Test func anUnknownAmountAfterTheFirstIsIncomplete() {
        var ofx = OFXStatement(generatedAt: "20261203120000")
        ofx.add(record(sequence: 1, amount: -100, balance: 1000))
        ofx.add(record(sequence: 5, amount: nil, balance: 500))
        #expect(ofx.incomplete == ["card 0101120312345678 transit-ic: the record of 2026-11-30 (sequence 5) has no known amount: left out"])
    }

    @Test func theCurrencyIsThePurses() {
        var ofx = OFXStatement(generatedAt: "20261203120000")
        ofx.add(record("octopus", sequence: 3, amount: -1440, balance: 5005))
        let text = ofx.render()
        #expect(text.contains("<CURDEF>HKD</CURDEF>"))
        #expect(text.contains("<TRNAMT>-14.40</TRNAMT>"))
        #expect(text.contains("<BALAMT>50.05</BALAMT>"))
    }

    @Test func recordsWithoutSequenceNumbersGetDistinctStableIDs() {
        var ofx = OFXStatement(generatedAt: "20261203120000")
        ofx.add(record("edy", sequence: nil, time: "10:00:00", amount: -100, balance: 900))
        ofx.add(record("edy", sequence: nil, time: "10:00:00", amount: -100, balance: 900))
        let text = ofx.render()
        #expect(text.contains("<FITID>0101120312345678-edy-20261130100000-900</FITID>"))
        #expect(text.contains("<FITID>0101120312345678-edy-20261130100000-900-2</FITID>"))
    }
}
