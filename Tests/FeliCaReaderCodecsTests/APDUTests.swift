import FeliCa
import FeliCaReaderCodecs
import Testing

/// Parses space-separated hex in test vectors.
func bytes(_ hex: String) -> [UInt8] {
    guard let b = Hex.decode(hex) else { fatalError("bad hex in test vector: \(hex)") }
    return b
}

@Suite("Command and response APDUs")
struct APDUTests {
    struct Vector: Sendable, CustomStringConvertible {
        var name: String
        var wire: String
        var apdu: CommandAPDU
        var description: String { name }
    }

    static let vectors: [Vector] = [
        Vector(name: "case 1", wire: "FF CA 00 00",
               apdu: CommandAPDU(cla: 0xFF, ins: 0xCA, p1: 0, p2: 0)),
        Vector(name: "case 2 short, Get Data (Docs/pcsc.md)", wire: "FF CA 00 00 00",
               apdu: CommandAPDU(cla: 0xFF, ins: 0xCA, p1: 0, p2: 0, le: 256)),
        Vector(name: "case 3 short, Part 3 start session (Docs/pcsc.md)", wire: "FF C2 00 00 02 81 00",
               apdu: CommandAPDU(cla: 0xFF, ins: 0xC2, p1: 0, p2: 0, data: [0x81, 0x00])),
        Vector(name: "case 4 short, GET RESPONSE style", wire: "FF 50 00 00 02 81 00 00",
               apdu: CommandAPDU(cla: 0xFF, ins: 0x50, p1: 0, p2: 0, data: [0x81, 0x00], le: 256)),
        Vector(name: "case 2 extended", wire: "00 B0 00 00 00 01 2C",
               apdu: CommandAPDU(cla: 0, ins: 0xB0, p1: 0, p2: 0, le: 300)),
        Vector(name: "case 3 extended (300 bytes)", wire: "FF 00 00 00 00 01 2C " + String(repeating: "AB ", count: 300),
               apdu: CommandAPDU(cla: 0xFF, ins: 0, p1: 0, p2: 0, data: [UInt8](repeating: 0xAB, count: 300))),
        Vector(name: "case 4 extended", wire: "FF 00 00 00 00 01 00 " + String(repeating: "01 ", count: 256) + "00 00",
               apdu: CommandAPDU(cla: 0xFF, ins: 0, p1: 0, p2: 0, data: [UInt8](repeating: 1, count: 256), le: 65536)),
        Vector(name: "case 4 extended though short would fit", wire: "FF C2 00 01 00 00 02 81 00 00 00",
               apdu: CommandAPDU(cla: 0xFF, ins: 0xC2, p1: 0, p2: 1, data: [0x81, 0x00], le: 65536, length: .extended)),
        Vector(name: "case 2 extended though short would fit", wire: "FF CA 00 00 00 00 08",
               apdu: CommandAPDU(cla: 0xFF, ins: 0xCA, p1: 0, p2: 0, le: 8, length: .extended)),
        Vector(name: "extended, Le as 00 hi lo (Sony's RC-S300 form)", wire: "FF 50 00 01 00 00 02 81 00 00 00 00",
               apdu: CommandAPDU(cla: 0xFF, ins: 0x50, p1: 0, p2: 1, data: [0x81, 0x00], le: 65536, length: .extendedWithThreeByteLe)),
    ]

    @Test("encodes and decodes", arguments: vectors)
    func roundTrip(_ v: Vector) throws {
        #expect(v.apdu.encode() == bytes(v.wire))
        #expect(try CommandAPDU.decode(bytes(v.wire)[...]) == v.apdu)
    }

    @Test("rejects a header cut short", arguments: 0..<4)
    func shortHeader(_ n: Int) {
        #expect(throws: FeliCaError.truncated) { try CommandAPDU.decode(bytes("FF C2 00 00")[..<n]) }
    }

    @Test("rejects data shorter than Lc, and bytes after Le")
    func bodyMismatch() {
        #expect(throws: FeliCaError.truncated) { try CommandAPDU.decode(bytes("FF C2 00 00 05 81 00")[...]) }
        #expect(throws: FeliCaError.trailingBytes) { try CommandAPDU.decode(bytes("FF C2 00 00 01 81 00 00")[...]) }
        #expect(throws: FeliCaError.truncated) { try CommandAPDU.decode(bytes("FF 00 00 00 00 01 2C AB")[...]) }
        #expect(throws: FeliCaError(.invalidField, "")) { try CommandAPDU.decode(bytes("FF 00 00 00 00 00 00 AB")[...]) }
        #expect(throws: FeliCaError(.invalidField, "")) { try CommandAPDU.decode(bytes("FF 50 00 01 00 00 02 81 00 01 00 00")[...]) }
        #expect(throws: FeliCaError.trailingBytes) { try CommandAPDU.decode(bytes("FF 50 00 01 00 00 02 81 00 00 00 00 00")[...]) }
    }

    @Test("reads PC/SC Part 10 features and properties as libccid reports them")
    func part10() throws {
        // Feature list: FEATURE_GET_TLV_PROPERTIES (12) at control code 0x42330012, big-endian.
        let features = bytes("06 04 42 33 00 06 12 04 42 33 00 12")
        #expect(try Part10.controlCode(of: Part10.getTLVProperties, in: features) == 0x4233_0012)
        #expect(try Part10.controlCode(of: 0x13, in: features) == nil)
        #expect(throws: FeliCaError(.invalidField, "")) { try Part10.controlCode(of: 0x12, in: bytes("12 02 00 01")) }
        #expect(throws: FeliCaError.truncated) { try Part10.controlCode(of: 0x12, in: bytes("12 04 42 33")) }
        // Properties, little-endian: bPPDUSupport 0, wIdVendor 054C, wIdProduct 0DC9,
        // dwMaxAPDUDataSize 0 (a short-APDU-level reader), then 65536 (extended level).
        let short = try Part10.properties(bytes("09 01 00 0B 02 4C 05 0C 02 C9 0D 0A 04 00 00 00 00"))
        #expect(short[Part10.Property.vendorID] == 0x054C && short[Part10.Property.productID] == 0x0DC9)
        #expect(short[Part10.Property.maxAPDUDataSize] == 0)
        #expect(try Part10.properties(bytes("0A 04 00 00 01 00"))[Part10.Property.maxAPDUDataSize] == 0x10000)
        #expect(throws: FeliCaError.truncated) { try Part10.properties(bytes("0A 04 00 00"))}
    }

    @Test("splits data from the status word")
    func response() throws {
        let r = try ResponseAPDU.decode(bytes("01 02 90 00")[...])
        #expect(r.data == [1, 2] && r.status.isSuccess)
        #expect(try ResponseAPDU.decode(bytes("61 0C")[...]).status.bytesAvailable == 12)
        #expect(throws: FeliCaError.truncated) { try ResponseAPDU.decode(bytes("90")[...]) }
        #expect(throws: FeliCaError.truncated) { try ResponseAPDU.decode([][...]) }
    }

    @Test("names status words in messages")
    func statusWordText() {
        #expect(StatusWord.insNotSupported.description == "SW 6D00 (instruction not supported)")
        #expect(StatusWord(0x61, 0x00).bytesAvailable == 256)
    }

    @Test("reads the IDm from Get Data")
    func getData() throws {
        #expect(PCSCStorageAPDU.getUID.encode() == bytes("FF CA 00 00 00"))
        let idm = try PCSCStorageAPDU.idm(fromGetUID: ResponseAPDU(data: bytes("01 01 12 03 12 34 56 78")))
        #expect(idm.hex == "0101120312345678")
        #expect(throws: FeliCaError(.invalidField, "")) { try PCSCStorageAPDU.idm(fromGetUID: ResponseAPDU(data: [1, 2, 3, 4])) }
        #expect(throws: FeliCaError(.status, "")) { try PCSCStorageAPDU.idm(fromGetUID: ResponseAPDU(status: .failed)) }
    }
}

@Suite("ATR")
struct ATRTests {
    struct Vector: Sendable, CustomStringConvertible {
        var name: String
        var atr: String
        var feliCa: Bool
        var description: String { name }
    }

    static let vectors: [Vector] = [
        Vector(name: "PC/SC Part 3 FeliCa (Docs/pcsc.md)", atr: "3B 8F 80 01 80 4F 0C A0 00 00 03 06 11 00 3B 00 00 00 00 42", feliCa: true),
        Vector(name: "older ACS firmware, FeliCa 212K (Docs/pcsc.md)", atr: "3B 8F 80 01 80 4F 0C A0 00 00 03 06 03 F0 11 00 00 00 00 8A", feliCa: true),
        Vector(name: "ACS FeliCa 424K", atr: "3B 8F 80 01 80 4F 0C A0 00 00 03 06 03 F0 12 00 00 00 00 89", feliCa: true),
        Vector(name: "MIFARE Classic 1K (PC/SC Part 3)", atr: "3B 8F 80 01 80 4F 0C A0 00 00 03 06 03 00 01 00 00 00 00 6A", feliCa: false),
        Vector(name: "contact card, T=0 only, no TCK", atr: "3B 02 14 50", feliCa: false),
    ]

    @Test("recognises FeliCa from the historical bytes", arguments: vectors)
    func recognise(_ v: Vector) throws {
        let atr = try ATR(bytes(v.atr))
        #expect(atr.isFeliCa == v.feliCa)
    }

    @Test("builds a valid FeliCa ATR equal to the documented one")
    func build() throws {
        #expect(ATR.feliCa() == bytes("3B 8F 80 01 80 4F 0C A0 00 00 03 06 11 00 3B 00 00 00 00 42"))
        let atr = try ATR(ATR.feliCa())
        #expect(atr.protocols == [0, 1])
        #expect(atr.historicalBytes.count == 15)
        #expect(atr.storageCard?.standard == 0x11 && atr.storageCard?.cardName == 0x003B)
    }

    @Test("rejects every strict prefix", arguments: 0..<20)
    func prefixes(_ n: Int) {
        let full = bytes("3B 8F 80 01 80 4F 0C A0 00 00 03 06 11 00 3B 00 00 00 00 42")
        #expect(throws: FeliCaError.truncated) { try ATR(Array(full[..<n])) }
    }

    @Test("rejects a wrong TCK, a bad TS and trailing bytes")
    func garbage() {
        #expect(throws: FeliCaError(.invalidField, "")) { try ATR(bytes("3B 8F 80 01 80 4F 0C A0 00 00 03 06 11 00 3B 00 00 00 00 43")) }
        #expect(throws: FeliCaError(.invalidField, "")) { try ATR(bytes("12 00")) }
        #expect(throws: FeliCaError.trailingBytes) { try ATR(bytes("3B 8F 80 01 80 4F 0C A0 00 00 03 06 11 00 3B 00 00 00 00 42 00")) }
    }
}

@Suite("BER-TLV")
struct BERTLVTests {
    @Test("parses one- and two-byte tags and long lengths")
    func parse() throws {
        let long = [UInt8](repeating: 7, count: 200)
        let wire = bytes("5F 46 04 10 27 00 00 95 81 C8") + long + bytes("81 00")
        let objects = try BERTLV.decodeList(wire[...], frame: "test")
        #expect(objects == [
            BERTLV(tag: 0x5F46, value: [0x10, 0x27, 0, 0]),
            BERTLV(tag: 0x95, value: long),
            BERTLV(tag: 0x81, value: []),
        ])
        #expect(objects.flatMap { $0.encode() } == wire)
    }

    @Test("rejects every strict prefix that cuts an object", arguments: [1, 2, 3, 4, 5, 6, 8])
    func prefixes(_ n: Int) {
        let wire = bytes("5F 46 04 10 27 00 00 81")
        #expect(throws: FeliCaError.truncated) { try BERTLV.decodeList(wire[..<n], frame: "test") }
    }

    @Test("rejects an impossible length byte")
    func badLength() {
        #expect(throws: FeliCaError(.invalidField, "")) { try BERTLV.decodeList(bytes("97 85 00")[...], frame: "test") }
    }
}
