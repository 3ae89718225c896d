import FeliCa
import FeliCaNDEF
import FuzzSupport

/// The NDEF codec over arbitrary bytes: the message parser and each record's decoder throw
/// only their documented codes (truncated, trailing bytes, invalid field), never crash; a
/// message that parses writes back to bytes that parse to the same records; the first 16
/// bytes as a Type 3 Tag attribute block decode or throw a named field, and a block that
/// decodes (its reserved bytes 0) is written back byte for byte.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = fuzzBytes(data, size)
    let allowed: Set<FeliCaError.Code> = [.truncated, .trailingBytes, .invalidField]
    do {
        let records = try NDEFRecord.parseMessage(bytes)
        for r in records {
            do {
                _ = try NDEFContent(r)
            } catch {
                precondition(allowed.contains(error.code), "record content: unexpected error code \(error.code)")
            }
            _ = NDEFRendering.json(r)
        }
        let again = try NDEFRecord.parseMessage(NDEFRecord.encodeMessage(records, chunkSize: 7))
        precondition(again == records, "a parsed message did not survive writing it back")
    } catch {
        precondition(allowed.contains(error.code), "message: unexpected error code \(error.code)")
    }
    if bytes.count >= 16 {
        let block = Array(bytes.prefix(16))
        do {
            let a = try T3TAttributes(block: block)
            if block[5..<9].allSatisfy({ $0 == 0 }) { precondition(a.block == block, "attribute block not written back as read") }
        } catch {
            precondition(error.code == .invalidField, "attribute block: unexpected error code \(error.code)")
        }
    }
    return 0
}

@_cdecl("FuzzNDEF_main")
func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv, fuzzOne)
}
