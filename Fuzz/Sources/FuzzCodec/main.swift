import FeliCa
import FuzzSupport

/// Every command and response decoder: any input must decode or throw, never crash, and a
/// decoded command must encode back to the same bytes.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = fuzzBytes(data, size)
    if let c = try? Command.decode(bytes[...]) {
        precondition(c.encode() == bytes, "command did not round-trip")
    }
    _ = try? Response.decode(bytes[...])
    _ = try? Response.decode(bytes[...], expecting: IDm(rawValue: 0x0101_1203_1234_5678))
    return 0
}

@_cdecl("FuzzCodec_main")
func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv, fuzzOne)
}
