import FeliCa
import FeliCaScheduling
import FuzzSupport

/// The population file reader behind `felica order --population`: any text loads or
/// gives a `.badInput` error.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let text = String(decoding: fuzzBytes(data, size), as: UTF8.self)
    do {
        _ = try Population(jsonText: text)
    } catch {
        precondition(error.code == .badInput, "unexpected error code \(error.code)")
    }
    return 0
}

@_cdecl("FuzzPopulation_main")
func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv, fuzzOne)
}
