import FeliCa
import FeliCaCards
import FeliCaReaderCodecs
import FeliCaPCSC
import FeliCaEmulators
import FeliCaSimulation
import FuzzSupport

let card = try! VirtualCard.named("suica")

/// The PC/SC dialect codecs and the reader stand-in: any bytes parse to a value or a typed
/// error, values round-trip, and the stand-in answers every APDU with at least a status
/// word (vpcd takes an empty reply for a dead card).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = fuzzBytes(data, size)
    if let apdu = try? CommandAPDU.decode(bytes[...]) {
        precondition((try? CommandAPDU.decode(apdu.encode()[...])) == apdu, "command APDU did not round-trip")
    }
    if let objects = try? BERTLV.decodeList(bytes[...], frame: "fuzz") {
        let wire = objects.flatMap { $0.encode() }
        precondition((try? BERTLV.decodeList(wire[...], frame: "fuzz")) == objects, "TLV list did not round-trip")
    }
    if let atr = try? ATR(bytes) {
        precondition(atr.historicalBytes.count <= 15, "more than 15 historical bytes")
        _ = atr.isFeliCa
    }
    if let response = try? ResponseAPDU.decode(bytes[...]) {
        _ = try? TransparentExchange.packet(from: response)
        _ = try? DirectTransmit.packet(from: response)
        _ = try? ACR122.packet(from: response, for: .inDataExchange)
        _ = try? ACR122.pollingResponse(from: response)
        _ = try? PCSCStorageAPDU.idm(fromGetUID: response)
    }
    // A stream of APDUs, each prefixed by its length byte, through every dialect.
    for dialect in PCSCDialect.allCases {
        var responder = VPCDResponder(dialect: dialect, idm: card.systems[0].idm, getResponse: dialect == .acr122u) { card.respond(to: $0) }
        var rest = bytes[...]
        while let n = rest.first {
            let apdu = Array(rest.dropFirst().prefix(Int(n)))
            rest = rest.dropFirst(1 + Int(n))
            precondition(responder.respond(to: apdu).count >= 2, "reply without a status word")
        }
    }
    hostileReader(bytes)
    return 0
}

/// The client side against a hostile reader: the dialect driver (session set-up, Polling,
/// reads, GET RESPONSE chaining) over the stand-in's genuine replies, edited by the
/// fuzzer one APDU at a time. It returns packets or typed errors, within a bounded number
/// of APDUs.
func hostileReader(_ bytes: [UInt8]) {
    guard let first = bytes.first else { return }
    let dialect = PCSCDialect.allCases[Int(first) % PCSCDialect.allCases.count]
    var script = bytes.dropFirst()
    var responder = VPCDResponder(dialect: dialect, idm: card.systems[0].idm, getResponse: first & 0x80 != 0 && dialect == .acr122u) {
        card.respond(to: $0)
    }
    var transmits = 0
    func next() -> UInt8 { script.popFirst() ?? 0 }
    let transmit: PCSCDialectDriver.Transmit = { (apdu: CommandAPDU) throws(FeliCaError) -> ResponseAPDU in
        transmits += 1
        var reply = responder.respond(to: apdu.encode())
        if let op = script.popFirst() {
            switch op % 6 {
            case 0: break
            case 1: if !reply.isEmpty { reply[Int(next()) % reply.count] ^= max(next(), 1) }
            case 2: reply = Array(reply.prefix(Int(next())))
            case 3: reply = (0..<Int(next() % 64)).map { _ in next() }
            case 4: reply = Array(reply.dropLast(2)) + [0x61, next()]  // "more data waiting"
            default: throw FeliCaError(.transmission, "fuzz: the reader dropped the APDU")
            }
        }
        return try ResponseAPDU.decode(reply[...])
    }
    let driver = PCSCDialectDriver(dialect: dialect)
    let idm = card.systems[0].idm
    let read = try! ReadWithoutEncryptionCommand(idm: idm, service: 0x090F, blocks: 0..<4).encode()
    if case .answered(let polling)? = try? driver.probe(transmit) {
        precondition(polling.idm == idm || transmits > 0)
    }
    for packet in [read, RequestSystemCodeCommand(idm: idm).encode()] {
        let before = transmits
        if let reply = try? driver.exchange(packet, timeout: .milliseconds(100), transmit) {
            _ = try? Response.decode(reply[...], expecting: idm)
        }
        precondition(transmits - before <= 5, "one packet took \(transmits - before) APDUs")
    }
    driver.end(transmit)
}

@_cdecl("FuzzPCSC_main")
func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv, fuzzOne)
}
