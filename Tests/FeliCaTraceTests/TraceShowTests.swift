import FeliCa
import FeliCaJSON
import FeliCaTrace
import Foundation
import Testing

/// `felica trace show --json`'s fields, and what `trace show` and `trace export` say
/// about damaged traces, card images and capture formats.
@Suite struct TraceShowTests {
    static let idm = "0101120312345678"

    @Test func jsonNamesEveryFieldOfAReadAndItsBlocks() throws {
        let block = String(repeating: "5a", count: 16)
        let tx = "1506\(Self.idm)02 8b00 0f09 02 8000 01 2c01".replacingOccurrences(of: " ", with: "")
        let rx = "2d07\(Self.idm)000002\(block)\(block)"
        #expect(PacketFields.command(Hex.decode(tx)!).serialized() == """
            {"name":"Read Without Encryption","code":6,"idm":"\(Self.idm)","services":["008B","090F"],\
            "blocks":[{"service":"008B","serviceIndex":0,"block":0,"accessMode":0,"length":2},\
            {"service":"090F","serviceIndex":1,"block":300,"accessMode":0,"length":3}]}
            """.replacingOccurrences(of: "\n", with: ""))
        #expect(PacketFields.response(Hex.decode(rx)!, to: Hex.decode(tx)!).serialized() == """
            {"name":"Read Without Encryption","code":7,"idm":"\(Self.idm)","status":{"sf1":0,"sf2":0,"meaning":"success"},\
            "blocks":[{"service":"008B","serviceIndex":0,"block":0,"accessMode":0,"data":"\(block)"},\
            {"service":"090F","serviceIndex":1,"block":300,"accessMode":0,"data":"\(block)"}]}
            """.replacingOccurrences(of: "\n", with: ""))
    }

    /// Responses and their JSON (in a property: Swift 6.0's compiler crashes on string
    /// interpolation inside `@Test(arguments:)`).
    static let responses: [(String, String)] = [
        ("0f03\(idm)020000ffff", #"{"name":"Request Service","code":3,"idm":"\#(idm)","keyVersions":["0000",null]}"#),
        ("0c07\(idm)ffa5", #"{"name":"Read Without Encryption","code":7,"idm":"\#(idm)","status":{"sf1":255,"sf2":165,"meaning":"access not allowed","location":"not tied to one block"}}"#),
        ("0c0b\(idm)ffff", #"{"name":"Search Service Code","code":11,"idm":"\#(idm)","endOfList":true}"#),
        ("0e0b\(idm)0000feff", #"{"name":"Search Service Code","code":11,"idm":"\#(idm)","area":"0000","areaEnd":"FFFE"}"#),
        ("0c07\(idm)00", #"{"undecodable":"Read Without Encryption response: truncated: SF2 needs 1 byte, 0 left"}"#),
    ]

    @Test(arguments: responses)
    func jsonOfResponses(hex: String, json: String) {
        let decoded = PacketFields.response(Hex.decode(hex)!).serialized()
        if json.contains("undecodable") {
            #expect(decoded.hasPrefix(#"{"undecodable":""#))
        } else {
            #expect(decoded == json)
        }
    }

    @Test func showJSONIsOneObjectPerExchange() throws {
        let path = Support.tracesDirectory + "/suica-dump.jsonl"
        let trace = try Trace.load(path: path)
        let r = try CLIReplayTests.felica(["trace", "show", "--json", path])
        #expect(r.status == 0 && r.stderr.isEmpty)
        let objects = try r.stdout.split(separator: "\n").map { try JSONValue.parse(String($0)) }
        #expect(objects.count == trace.exchanges.count)
        for (o, e) in zip(objects, trace.exchanges) {
            #expect(o["tx"]?.stringValue == Hex.encode(e.tx))
            #expect(o["command"]?["name"]?.stringValue != nil)
            if let rx = e.rx {
                #expect(o["rx"]?.stringValue == Hex.encode(rx))
                #expect(o["response"]?["name"]?.stringValue != nil)
            } else {
                #expect(o["rx"]?.isNull == true && o["error"]?.stringValue != nil)
            }
        }
    }

    /// The damage used to be printed twice, on stdout in the listing and on stderr.
    @Test func damageIsReportedOnceOnStderr() throws {
        let dir = try Support.scratch()
        defer { Support.cleanUp(dir) }
        let cut = dir + "/cut.jsonl"
        try Support.write("{\"format\":\"felica-trace/1\"}\n{\"tx\":\"0600ffff0100\",\"rx\":null,\"error\":\"timeout\"}\n{\"tx\":\"06", to: cut)
        for arguments in [["trace", "show", cut], ["trace", "show", "--json", cut]] {
            let r = try CLIReplayTests.felica(arguments)
            #expect(r.status == 1)
            #expect(!r.stdout.contains("line 3"))
            #expect(r.stderr.components(separatedBy: "\(cut) line 3").count == 2)
            #expect(r.stderr.contains("1 exchange listed"))
        }
    }

    /// A card image given to `trace show` used to fail with a bare header error.
    @Test func aCardImageIsNamedAsOneWithTheDeviceThatServesIt() throws {
        let dir = try Support.scratch()
        defer { Support.cleanUp(dir) }
        let image = dir + "/suica.json"
        let dump = try CLIReplayTests.felica(["dump", "--device", "virtual:suica", "--json", "--output", image])
        #expect(dump.status == 0)
        for arguments in [["trace", "show", image], ["trace", "export", image, "--pcap", dir + "/x.pcapng"]] {
            let r = try CLIReplayTests.felica(arguments)
            #expect(r.status == 1)
            #expect(r.stderr == "Error: \(image) is a card image (felica-card/1), not a trace (felica-trace/1); to talk to the card it holds, use --device virtual:\(image)\n")
        }
    }

    @Test func exportWritesPcapngByDefaultAndClassicPcapOnRequest() throws {
        let dir = try Support.scratch()
        defer { Support.cleanUp(dir) }
        let path = Support.tracesDirectory + "/suica-balance.jsonl"
        let trace = try Trace.load(path: path)
        let ng = try CLIReplayTests.felica(["trace", "export", path, "--pcap", dir + "/t.pcapng"])
        #expect(ng.status == 0)
        #expect(try Array(Data(contentsOf: URL(fileURLWithPath: dir + "/t.pcapng"))) == Pcap.export(trace, format: .pcapng).bytes)
        let classic = try CLIReplayTests.felica(["trace", "export", path, "--pcap", dir + "/t.pcap", "--format", "pcap"])
        #expect(classic.status == 0)
        #expect(classic.stderr == "wrote \(Pcap.export(trace).frames) frames to \(dir)/t.pcap (pcap)\n")
        #expect(try Array(Data(contentsOf: URL(fileURLWithPath: dir + "/t.pcap"))) == Pcap.export(trace, format: .pcap).bytes)
        let bad = try CLIReplayTests.felica(["trace", "export", path, "--pcap", dir + "/t.x", "--format", "pcapx"])
        #expect(bad.status == 64)
    }
}

/// A file of another kind given as a trace: what it is, with a code of its own, and no
/// command-line word (felica adds `--trace` / `--device virtual:`).
@Test func aFileOfAnotherKindIsNamedWithoutCommandLineWords() throws {
    let dir = try Support.scratch()
    defer { Support.cleanUp(dir) }
    let cases: [(String, String, TraceFileError.Code)] = [
        ("card.json", "{\n  \"format\": \"felica-card/1\"\n}\n", .cardImage),
        ("doc.json", "{\n  \"answer\": 42\n}\n", .otherJSON),
    ]
    for (name, text, code) in cases {
        let path = dir + "/" + name
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        do throws(FeliCaError) {
            _ = try Trace.load(path: path)
            Issue.record("\(name) loaded as a trace")
        } catch {
            #expect(error.code == .badInput)
            #expect(error.traceFileError?.code == code, "\(error.reason)")
            #expect(error.traceFileError?.file == path)
            #expect(!error.reason.contains("--") && !error.reason.contains("virtual:"), "\(error.reason)")
        }
    }
}
