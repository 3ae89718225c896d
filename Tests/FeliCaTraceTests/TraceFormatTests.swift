import FeliCa
import FeliCaJSON
import FeliCaTrace
import TestSupport
import Testing

/// Parsing and writing `felica-trace/1` (Docs/traces.md, "The file format").
@Suite struct TraceFormatTests {
    static let header = #"{"format":"felica-trace/1","device":"libnfc:pn532_uart:/dev/ttyUSB0","started":"2026-11-29T10:00:00Z"}"#
    static let ok1 = #"{"t":0.000000,"tx":"0600ffff0100","rx":"1401010112031234567810 0b4b428485d0ff0003","timeout":0.0036,"elapsed":0.0042}"#
        .replacingSpaces()
    static let timeout2 = #"{"t":0.004300,"tx":"0a0c0101120312345678","rx":null,"error":"timeout","timeout":0.0338,"elapsed":0.0401}"#

    @Test func theContractExampleParses() throws {
        let trace = try Trace.parse([Self.header, Self.ok1, Self.timeout2].joined(separator: "\n") + "\n")
        #expect(trace.device == "libnfc:pn532_uart:/dev/ttyUSB0")
        #expect(trace.started == "2026-11-29T10:00:00Z")
        #expect(trace.exchanges.count == 2)
        let (a, b) = (trace.exchanges[0], trace.exchanges[1])
        #expect(a.tx == [0x06, 0x00, 0xFF, 0xFF, 0x01, 0x00])
        #expect(a.rx?.count == 20)
        #expect(a.timeout == 0.0036 && a.elapsed == 0.0042 && a.line == 2)
        #expect(b.rx == nil && b.error?.code == .timeout && b.t == 0.0043 && b.line == 3)
        #expect(trace.damage == nil)
    }

    @Test func writingThenParsingKeepsEverything() throws {
        let trace = Trace(device: "virtual:suica", started: "2026-11-29T10:00:00Z", exchanges: [
            .init(t: 0.000001, tx: [6, 0, 0xFF, 0xFF, 1, 0], rx: [2, 1], timeout: 0.0068, elapsed: 0.000031),
            .init(t: 12.5, tx: [10, 0x0C, 1, 1, 0x12, 3, 0x12, 0x34, 0x56, 0x78], rx: nil,
                  error: FeliCaError(.cardGone, "card left \"the field\"\n"), timeout: 0.003625, elapsed: 0.0401),
        ])
        let text = trace.jsonLines()
        #expect(text.hasSuffix("\n") && lines(text).count == 3)
        let back = try Trace.parse(text)
        #expect(back.device == trace.device && back.started == trace.started)
        #expect(back.exchanges.map(\.tx) == trace.exchanges.map(\.tx))
        #expect(back.exchanges.map(\.rx) == trace.exchanges.map(\.rx))
        #expect(back.exchanges.map(\.t) == trace.exchanges.map(\.t))
        #expect(back.exchanges.map(\.elapsed) == trace.exchanges.map(\.elapsed))
        #expect(back.exchanges[1].error?.code == .cardGone)
        #expect(back.exchanges[1].error?.reason == "card left \"the field\"\n")
        #expect(back.jsonLines() == text)
    }

    @Test func timesAreKeptToTheMicrosecond() throws {
        let line = Trace.Exchange(t: 1.23456789, tx: [2, 0], rx: [2, 1], timeout: 0.1, elapsed: 0.0000004).jsonLine()
        let o = try JSONValue.parse(line)
        #expect(o["t"] == .number(1.234568))
        #expect(o["elapsed"] == .number(0))
    }

    /// Each damaged trace, the line its error must name and a phrase of the reason.
    static let damaged: [(name: String, text: String, line: Int, phrase: String)] = [
        ("bad JSON", "\(header)\n\(ok1)\n{\"t\":0,\"tx\":\"0600\",}\n", 3, "column"),
        ("cut off mid-line", "\(header)\n\(ok1)\n{\"t\":0.0043,\"tx\":\"0a0c01", 3, "cut off"),
        ("missing tx", "\(header)\n{\"t\":0,\"rx\":\"0201\"}\n", 2, "missing \"tx\""),
        ("missing rx", "\(header)\n{\"t\":0,\"tx\":\"0201\"}\n", 2, "missing \"rx\""),
        ("tx not hex", "\(header)\n{\"t\":0,\"tx\":\"06zz\",\"rx\":\"0201\"}\n", 2, "not hex"),
        ("tx odd digits", "\(header)\n{\"t\":0,\"tx\":\"060\",\"rx\":\"0201\"}\n", 2, "not hex"),
        ("tx a number", "\(header)\n{\"t\":0,\"tx\":6,\"rx\":\"0201\"}\n", 2, "must be a hex string"),
        ("empty tx", "\(header)\n{\"t\":0,\"tx\":\"\",\"rx\":\"0201\"}\n", 2, "\"tx\" is empty"),
        ("null rx without error", "\(header)\n{\"t\":0,\"tx\":\"0201\",\"rx\":null}\n", 2, "no \"error\""),
        ("unknown error code", "\(header)\n{\"t\":0,\"tx\":\"0201\",\"rx\":null,\"error\":\"gremlins\"}\n", 2, "unknown error code \"gremlins\""),
        ("negative time", "\(header)\n{\"t\":-1,\"tx\":\"0201\",\"rx\":\"0201\"}\n", 2, "non-negative"),
        ("string time", "\(header)\n{\"t\":\"0\",\"tx\":\"0201\",\"rx\":\"0201\"}\n", 2, "non-negative"),
        ("array line", "\(header)\n\(ok1)\n\(ok1)\n[1,2]\n", 4, "expected a JSON object"),
        ("no header", "\(ok1)\n", 1, "header"),
        ("other format", "{\"format\":\"felica-card/1\"}\n", 1, "format \"felica-card/1\" is not supported"),
        ("device not a string", "{\"format\":\"felica-trace/1\",\"device\":3}\n", 1, "\"device\" must be a string"),
    ]

    @Test(arguments: damaged)
    func damageIsReportedWithItsLine(name: String, text: String, line: Int, phrase: String) {
        let error = thrownError { try Trace.parse(text, source: "t.jsonl") }
        #expect(error != nil, "expected a FeliCaError")
        #expect(error?.code == .badInput)
        #expect(error?.reason.contains("t.jsonl line \(line)") == true, "\(name): \(error?.reason ?? "")")
        #expect(error?.reason.contains(phrase) == true, "\(name): \(error?.reason ?? "")")
    }

    @Test(arguments: damaged)
    func lenientParsingKeepsTheExchangesBeforeTheDamage(name: String, text: String, line: Int, phrase: String) {
        if line == 1 {
            // A bad header leaves nothing to trust, lenient or not.
            #expect(throws: FeliCaError.badInputCode) { try Trace.parse(text, lenient: true) }
            return
        }
        let trace = try? Trace.parse(text, source: "t.jsonl", lenient: true)
        #expect(trace?.exchanges.count == line - 2, "\(name)")
        #expect(trace?.damage?.reason.contains("t.jsonl line \(line)") == true, "\(name)")
    }

    @Test func emptyFileNamesTheMissingHeader() {
        let error = thrownError { try Trace.parse("\n\n", source: "t.jsonl") }
        #expect(error != nil, "expected a FeliCaError")
        #expect(error?.reason == "t.jsonl: empty file, expected the felica-trace/1 header line")
    }

    @Test func blankLinesCRLFAndUnknownKeysAreAccepted() throws {
        let text = "\(Self.header)\r\n\r\n\(Self.ok1.dropLast()),\"note\":\"by hand\"}\r\n  \n"
        let trace = try Trace.parse(text)
        #expect(trace.exchanges.count == 1 && trace.exchanges[0].line == 2 + 1)
    }

    @Test func handWrittenExchangesNeedOnlyTxAndRx() throws {
        let trace = try Trace.parse("{\"format\":\"felica-trace/1\"}\n{\"tx\":\"0600ffff0100\",\"rx\":null,\"error\":\"timeout\"}\n")
        #expect(trace.exchanges[0].t == 0 && trace.exchanges[0].timeout == nil && trace.exchanges[0].error?.code == .timeout)
    }

    /// Every strict prefix of a recorded trace, as a recording cut short at any byte would
    /// leave it: strict parsing fails or yields the complete lines, lenient parsing keeps
    /// every complete line.
    @Test func everyPrefixOfATraceIsHandled() throws {
        let text = [Self.header, Self.ok1, Self.timeout2, Self.ok1].joined(separator: "\n") + "\n"
        let bytes = Array(text.utf8)
        let headerEnd = Self.header.utf8.count + 1
        for cut in headerEnd..<bytes.count {
            let prefix = String(decoding: bytes[..<cut], as: UTF8.self)
            // A line cut just before its newline is still a whole JSON object.
            let lineWhole = bytes[cut] == UInt8(ascii: "\n")
            let complete = bytes[..<cut].filter { $0 == UInt8(ascii: "\n") }.count - 1 + (lineWhole ? 1 : 0)
            let lenient = try Trace.parse(prefix, lenient: true)
            #expect(lenient.exchanges.count == complete, "cut at \(cut)")
            if bytes[cut - 1] == UInt8(ascii: "\n") || lineWhole {
                #expect(try Trace.parse(prefix).exchanges.count == complete)
            } else {
                #expect(throws: FeliCaError.badInputCode, "cut at \(cut)") { try Trace.parse(prefix) }
            }
        }
    }

    @Test func loadNamesAMissingFile() {
        let error = thrownError { try Trace.load(path: "/nonexistent/t.jsonl") }
        #expect(error != nil, "expected a FeliCaError")
        #expect(error?.code == .badInput)
        #expect(error?.reason.contains("cannot open trace /nonexistent/t.jsonl: No such file or directory") == true)
    }
}

extension String {
    fileprivate func replacingSpaces() -> String { String(filter { $0 != " " }) }
}
