import FeliCa
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
    return 0
}

@_cdecl("FuzzPCSC_main")
func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv, fuzzOne)
}
