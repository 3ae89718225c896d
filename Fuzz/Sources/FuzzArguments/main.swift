import FeliCaCLI
import FuzzSupport

/// The argument parser: NUL-separated words are a command line; it parses to a command
/// or a usage error, never a crash.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let words = fuzzBytes(data, size).split(separator: 0, omittingEmptySubsequences: false)
        .map { String(decoding: $0, as: UTF8.self) }
    let code = FeliCaCommandLine.checkArguments(words)
    precondition(code == 0 || code == 64)
    return 0
}

@_cdecl("FuzzArguments_main")
func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv, fuzzOne)
}
