import FeliCa
import FeliCaTrace
import Foundation
import Testing

/// Readable packet descriptions, the `trace show` listing and the pcap export.
@Suite struct DescriptionTests {
    static let idm = "0101120312345678"

    /// (packet hex, description). Packets built by hand from the layouts in Docs/protocol.md.
    static let commands: [(String, String)] = [
        ("0600ffff0100", "Polling system=FFFF request=system code slots=1"),
        ("06000003000f", "Polling system=0003 request=none slots=16"),
        ("1006\(idm)010f09018000", "Read Without Encryption IDm=\(idm) services=[090F] blocks=0"),
        ("2606\(idm)010f090c" + (0..<12).map { String(format: "80%02x", $0) }.joined(),
         "Read Without Encryption IDm=\(idm) services=[090F] blocks=0…11"),
        ("1606\(idm)028b000f090380008100810a",
         "Read Without Encryption IDm=\(idm) services=[008B,090F] blocks=008B:0,090F:0,090F:10"),
        ("2008\(idm)010909018000" + String(repeating: "00", count: 16), "Write Without Encryption IDm=\(idm) services=[0909] blocks=0 data=16 bytes"),
        ("0f02\(idm)028b000f09", "Request Service IDm=\(idm) nodes=[008B,090F]"),
        ("0c0a\(idm)0300", "Search Service Code IDm=\(idm) index=3"),
        ("0a0c\(idm)", "Request System Code IDm=\(idm)"),
        ("0a04\(idm)", "Request Response IDm=\(idm)"),
        ("03ff00", "03ff00 (undecodable command: \(codecError("03ff00")))"),
        ("01", "01 (undecodable command: \(codecError("01")))"),
    ]

    /// The codec's own reason for refusing a command packet.
    static func codecError(_ hex: String) -> String {
        do {
            _ = try Command.decode(Hex.decode(hex)![...])
            return "decoded"
        } catch {
            return error.reason
        }
    }

    @Test(arguments: commands)
    func commandsAreNamedWithTheirParameters(hex: String, description: String) {
        #expect(PacketDescription.command(Hex.decode(hex)!) == description)
    }

    static let responses: [(String, String?, String)] = [
        ("1401\(idm)100b4b428485d0ff0003", nil, "Polling response IDm=\(idm) PMm=100b4b428485d0ff system=0003"),
        // Request code 2 asks for communication performance, not the system code.
        ("1401\(idm)100b4b428485d0ff0083", "0600fe000203", "Polling response IDm=\(idm) PMm=100b4b428485d0ff performance=0083"),
        ("1d07\(idm)000001" + String(repeating: "00", count: 16), "1006\(idm)010f09018000", "Read Without Encryption response IDm=\(idm) SF1=0x00 SF2=0x00 (success) blocks=1"),
        ("0c07\(idm)01a6", "1006\(idm)010f09018000", "Read Without Encryption response IDm=\(idm) SF1=0x01 SF2=0xA6 (illegal service code list, "),
        ("0f03\(idm)020000ffff", nil, "Request Service response IDm=\(idm) keyVersions=[0000,none]"),
        ("0d0d\(idm)010003", nil, "Request System Code response IDm=\(idm) systems=[0003]"),
        ("0c0b\(idm)ffff", nil, "Search Service Code response IDm=\(idm) end of list"),
        // Answer from another card than the command addressed.
        ("0c07" + "0101120312345679" + "0000", "1006\(idm)010f09018000",
         "0c0701011203123456790000 (undecodable response: "),
    ]

    @Test(arguments: responses)
    func responsesShowDecodedStatusFlags(hex: String, command: String?, description: String) {
        let text = PacketDescription.response(Hex.decode(hex)!, to: command.flatMap { Hex.decode($0) })
        #expect(text.hasPrefix(description), "\(text)")
    }
}

@Suite struct ListingTests {
    @Test func listingShowsTimeDirectionNamesAndTiming() throws {
        let idm = "0101120312345678"
        let trace = try Trace.parse("""
            {"format":"felica-trace/1","device":"virtual:suica","started":"2026-11-29T10:00:00Z"}
            {"t":0.000054,"tx":"0600ffff0100","rx":"1401\(idm)100b4b428485d0ff0003","timeout":0.006757,"elapsed":0.00003}
            {"t":0.0043,"tx":"1006\(idm)010f09018000","rx":null,"error":"timeout","reason":"no answer within 4 ms","timeout":0.0338,"elapsed":0.0401}

            """)
        #expect(trace.listing() == """
            felica-trace/1  device virtual:suica  started 2026-11-29T10:00:00Z  2 exchanges
            #1  0.000054  →  Polling system=FFFF request=system code slots=1  (timeout 6.8 ms)
                0.000084  ←  Polling response IDm=\(idm) PMm=100b4b428485d0ff system=0003  (0.030 ms)
            #2  0.004300  →  Read Without Encryption IDm=\(idm) services=[090F] blocks=0  (timeout 33.8 ms)
                0.044400  ✕  timeout: no answer within 4 ms  (40.1 ms)

            """)
    }

    /// The damage is reported once, as the error `felica trace show` ends with, not also in
    /// the listing on stdout.
    @Test func damageIsNotPartOfTheListing() throws {
        let text = "{\"format\":\"felica-trace/1\"}\n{\"tx\":\"0600ffff0100\",\"rx\":null,\"error\":\"timeout\",\"reason\":\"silence\"}\n{\"tx\":\"0600ffff0100\",\"rx\":\"02"
        let trace = try Trace.parse(text, source: "t.jsonl", lenient: true)
        let damage = try #require(trace.damage)
        #expect(damage.reason.hasPrefix("t.jsonl line 3, column "))
        #expect(damage.reason.contains("cut off"))
        #expect(trace.listing() == """
            felica-trace/1  1 exchange
            #1  0.000000  →  Polling system=FFFF request=system code slots=1
                          ✕  timeout: silence

            """)
    }

    /// Codes traces were recorded with before they moved to their own layers still read: pcscd
    /// not running is a missing reader; a replay's failures are the transport's own.
    @Test func codesOfEarlierTracesStillRead() throws {
        let text = "{\"format\":\"felica-trace/1\"}\n"
            + "{\"tx\":\"0600ffff0100\",\"rx\":null,\"error\":\"noService\",\"reason\":\"no PC/SC daemon is running\"}\n"
            + "{\"tx\":\"0600ffff0100\",\"rx\":null,\"error\":\"divergence\",\"reason\":\"r\"}\n"
        let trace = try Trace.parse(text, source: "t.jsonl")
        #expect(trace.exchanges.map { $0.error?.code } == [.noReader, .transportFailure])
        #expect(trace.exchanges.first?.error?.isUnavailable == true)
    }

    @Test func blocksShowsEachBlockReadOrWrittenUnderItsPacket() throws {
        let idm = "0101120312345678"
        let block0 = "00000000000000002000" + "00d204000000", block1 = String(repeating: "ab", count: 16)
        let trace = try Trace.parse("""
            {"format":"felica-trace/1"}
            {"tx":"1406\(idm)028b000f090280008100","rx":"2d07\(idm)000002\(block0)\(block1)"}
            {"tx":"2008\(idm)010809018000\(block1)","rx":"0c09\(idm)0000"}
            {"tx":"1006\(idm)01cb10018000","rx":"0c07\(idm)ffa5"}

            """)
        let spaced = { (hex: String) in Hex.encode(Hex.decode(hex)!, separator: " ") }
        let listing = trace.listing(blocks: true).split(separator: "\n").map(String.init)
        #expect(listing.filter { $0.hasPrefix("                ") && !$0.contains("←") } == [
            "                 008B:0  \(spaced(block0))",
            "                 090F:0  \(spaced(block1))",
            "                 0908:0  \(spaced(block1))",
        ])
        #expect(trace.listing(blocks: false) == trace.listing())
        #expect(!trace.listing().contains(spaced(block1)))
    }
}

@Suite struct PcapTests {
    static let trace = """
        {"format":"felica-trace/1","device":"virtual:suica","started":"2026-11-29T10:00:00Z"}
        {"t":0.25,"tx":"0600ffff0100","rx":"1401010112031234567810 0b4b428485d0ff0003","timeout":0.0068,"elapsed":0.000031}
        {"t":1.5,"tx":"0a0c0101120312345678","rx":null,"error":"timeout","timeout":0.0036,"elapsed":0.004}

        """.replacingOccurrences(of: " ", with: "")

    @Test func fileHeaderIsClassicLittleEndianUser0() throws {
        let bytes = Pcap.export(try Trace.parse(Self.trace)).bytes
        #expect(Array(bytes[0..<24]) == [
            0xD4, 0xC3, 0xB2, 0xA1,  // magic, microsecond timestamps
            0x02, 0x00, 0x04, 0x00,  // version 2.4
            0, 0, 0, 0, 0, 0, 0, 0,  // zone, sigfigs
            0xFF, 0xFF, 0x00, 0x00,  // snaplen 65535
            147, 0, 0, 0,  // LINKTYPE_USER0
        ])
    }

    @Test func oneRecordPerPacketWithoutLENAtStartedPlusT() throws {
        let export = Pcap.export(try Trace.parse(Self.trace))
        #expect(export.frames == 3 && export.skipped == 0)
        var records: [(sec: UInt32, usec: UInt32, data: [UInt8])] = []
        var i = 24
        let b = export.bytes
        func u32(_ at: Int) -> UInt32 { (0..<4).reduce(0) { $0 | UInt32(b[at + $1]) << (8 * $1) } }
        while i < b.count {
            let length = Int(u32(i + 8))
            #expect(u32(i + 12) == UInt32(length))
            records.append((u32(i), u32(i + 4), Array(b[(i + 16)..<(i + 16 + length)])))
            i += 16 + length
        }
        #expect(i == b.count)
        let started: UInt32 = 1_795_946_400  // 2026-11-29T10:00:00Z
        #expect(records.map(\.sec) == [started, started, started + 1])
        #expect(records.map(\.usec) == [250_000, 250_031, 500_000])
        #expect(records.map(\.data) == [
            [0x00, 0xFF, 0xFF, 0x01, 0x00],
            Array(Hex.decode("01010112031234567810 0b4b428485d0ff0003")!),
            Array(Hex.decode("0c0101120312345678")!),
        ])
    }

    @Test func emptyPacketsAreLeftOutAndCounted() throws {
        let export = Pcap.export(try Trace.parse("{\"format\":\"felica-trace/1\"}\n{\"tx\":\"06\",\"rx\":\"\"}\n"))
        #expect(export.frames == 0 && export.skipped == 2 && export.bytes.count == 24)
    }

    @Test func withoutAStartTimeTheCaptureStartsAtTheEpoch() throws {
        let export = Pcap.export(try Trace.parse("{\"format\":\"felica-trace/1\"}\n{\"t\":2.000001,\"tx\":\"0600ffff0100\",\"rx\":null,\"error\":\"timeout\"}\n"))
        #expect(Array(export.bytes[24..<32]) == [2, 0, 0, 0, 1, 0, 0, 0])
    }

    /// pcapng: SHB, one IDB (USER1, device as if_description), one EPB per packet with its
    /// LEN byte, direction flags, and the failure of an unanswered command as a comment.
    @Test func pcapngCarriesDirectionDeviceAndWholePackets() throws {
        let export = Pcap.export(try Trace.parse(Self.trace), format: .pcapng)
        #expect(export.frames == 3 && export.skipped == 0)
        let b = export.bytes
        func u16(_ at: Int) -> Int { Int(b[at]) | Int(b[at + 1]) << 8 }
        func u32(_ at: Int) -> UInt32 { (0..<4).reduce(0) { $0 | UInt32(b[at + $1]) << (8 * $1) } }
        /// Options of a block body from `at` to `end`: code → value.
        func options(_ at: Int, _ end: Int) -> [(Int, [UInt8])] {
            var out: [(Int, [UInt8])] = []
            var i = at
            while i < end {
                let code = u16(i), length = u16(i + 2)
                if code == 0 { break }
                out.append((code, Array(b[(i + 4)..<(i + 4 + length)])))
                i += 4 + (length + 3) / 4 * 4
            }
            return out
        }
        var blocks: [(type: UInt32, body: Range<Int>)] = []
        var i = 0
        while i < b.count {
            let length = Int(u32(i + 4))
            #expect(length % 4 == 0 && u32(i + length - 4) == UInt32(length))
            blocks.append((u32(i), (i + 8)..<(i + length - 4)))
            i += length
        }
        #expect(i == b.count)
        #expect(blocks.map(\.type) == [0x0A0D_0D0A, 1, 6, 6, 6])
        #expect(u32(blocks[0].body.lowerBound) == 0x1A2B_3C4D && u16(blocks[0].body.lowerBound + 4) == 1)
        let idb = blocks[1].body
        #expect(u16(idb.lowerBound) == 148)
        #expect(options(idb.lowerBound + 8, idb.upperBound).map { $0.0 } == [3])
        #expect(options(idb.lowerBound + 8, idb.upperBound).first.map { String(decoding: $0.1, as: UTF8.self) } == "virtual:suica")
        let started: UInt64 = 1_795_946_400_000_000
        var packets: [[UInt8]] = [], stamps: [UInt64] = [], flags: [UInt32] = [], comments: [String?] = []
        for epb in blocks[2...].map(\.body) {
            let s = epb.lowerBound
            stamps.append(UInt64(u32(s + 4)) << 32 | UInt64(u32(s + 8)))
            let length = Int(u32(s + 12))
            #expect(u32(s + 16) == UInt32(length))
            packets.append(Array(b[(s + 20)..<(s + 20 + length)]))
            let opts = options(s + 20 + (length + 3) / 4 * 4, epb.upperBound)
            flags.append(opts.first { $0.0 == 2 }.map { UInt32($0.1[0]) } ?? 0)
            comments.append(opts.first { $0.0 == 1 }.map { String(decoding: $0.1, as: UTF8.self) })
        }
        #expect(stamps == [started + 250_000, started + 250_031, started + 1_500_000])
        #expect(packets == [
            [0x06, 0x00, 0xFF, 0xFF, 0x01, 0x00],
            Array(Hex.decode("1401010112031234567810 0b4b428485d0ff0003")!),
            Array(Hex.decode("0a0c0101120312345678")!),
        ])
        #expect(flags == [2, 1, 2])  // outbound, inbound, outbound
        #expect(comments == [nil, nil, "no answer: timeout: timeout"])
    }

    @Test func writeReplacesTheFileWhole() throws {
        let dir = try Support.scratch()
        defer { Support.cleanUp(dir) }
        let path = dir + "/t.pcap"
        let export = try Pcap.write(try Trace.parse(Self.trace), to: path)
        #expect(try Array(Data(contentsOf: URL(fileURLWithPath: path))) == export.bytes)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir) == ["t.pcap"])
        #expect(throws: FeliCaError.badInputCode) { try Pcap.write(Trace(), to: "/nonexistent/t.pcap") }
    }
}
