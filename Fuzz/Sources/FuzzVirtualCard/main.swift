import FeliCa
import FeliCaCards
import FeliCaSimulation
import FuzzSupport

let card = try! VirtualCard.named("suica")

/// The virtual card as a command parser: any packet is answered or ignored, and every
/// answer is a well-formed response. A malformed read or write (a service list cut short,
/// a block number past the card's limit) is answered with status flags, as a real card
/// answers it, so the packet itself need not decode; when it does, the answer is addressed
/// to the IDm it names.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let packet = fuzzBytes(data, size)
    if let reply = card.respond(to: packet) {
        let command = try? Command.decode(packet[...])
        let response = try! Response.decode(reply[...], expecting: command?.idm)
        _ = response
    }
    return 0
}

@_cdecl("FuzzVirtualCard_main")
func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv, fuzzOne)
}
