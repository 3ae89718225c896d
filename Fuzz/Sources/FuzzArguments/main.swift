import FeliCaCLI
import FeliCaDevices
import FeliCaSimCommands
import FuzzSupport

/// The argument parsers of `felica` and `felica-sim` (fault and tap specs, dialects,
/// ports...) and the device-string options: NUL-separated words are a command line; it
/// parses to a command or a usage error, never a crash. Each word is also tried as a
/// device string.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let words = fuzzBytes(data, size).split(separator: 0, omittingEmptySubsequences: false)
        .map { String(decoding: $0, as: UTF8.self) }
    let code = FeliCaCommandLine.checkArguments(words)
    precondition(code == 0 || code == 64)
    let sim = FeliCaSimCommandLine.checkArguments(words)
    precondition(sim == 0 || sim == 64)
    // A device string parses to a spec that writes back as a string parsing to the same
    // spec, or fails with a reason.
    for word in words.prefix(4) {
        do throws(DeviceSpec.ParseError) {
            let spec = try DeviceSpec(parsing: word)
            precondition((try? DeviceSpec(parsing: spec.description)) == spec, "\(word) → \(spec) does not parse back")
        } catch {
            precondition(!error.reason.isEmpty)
        }
    }
    return 0
}

@_cdecl("FuzzArguments_main")
func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv, fuzzOne)
}
