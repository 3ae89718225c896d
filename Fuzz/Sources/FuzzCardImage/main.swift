import FeliCa
import FeliCaSimulation
import FuzzSupport

/// The card-image reader: any text loads or throws a `.badInput` naming a JSON path; a
/// loaded image saves and loads back to itself, and a virtual card serves it.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let text = String(decoding: fuzzBytes(data, size), as: UTF8.self)
    do {
        let image = try CardImage(jsonText: text)
        precondition((try? CardImage(jsonText: image.jsonText())) == image, "image did not round-trip")
        let card = VirtualCard(image: image)
        _ = card.respond(to: PollingCommand().encode())
    } catch {
        precondition(error.code == .badInput, "unexpected error code \(error.code)")
    }
    return 0
}

@_cdecl("FuzzCardImage_main")
func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv, fuzzOne)
}
