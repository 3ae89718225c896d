import FeliCaJSON
import FuzzSupport

/// The JSON parser: any bytes parse or throw a positioned error; a parsed value prints and
/// parses back to itself.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let text = String(decoding: fuzzBytes(data, size), as: UTF8.self)
    if let v = try? JSONValue.parse(text) {
        precondition((try? JSONValue.parse(v.serialized())) == v, "JSON did not round-trip")
    }
    return 0
}

@_cdecl("FuzzJSON_main")
func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv, fuzzOne)
}
