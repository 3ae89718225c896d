import FeliCa
import FuzzSupport

/// Every command and response decoder: any input must decode or throw, never crash, and a
/// decoded command must encode to bytes that decode to the same command. (Not always the
/// same bytes: a block number below 256 may arrive in the 3-byte form, and is re-encoded
/// in the 2-byte one.)
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = fuzzBytes(data, size)
    if let c = try? Command.decode(bytes[...]) {
        precondition((try? Command.decode(c.encode()[...])) == c, "command did not round-trip")
    }
    _ = try? Response.decode(bytes[...])
    _ = try? Response.decode(bytes[...], expecting: IDm(rawValue: 0x0101_1203_1234_5678))
    return 0
}

@_cdecl("FuzzCodec_main")
func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv, fuzzOne)
}
