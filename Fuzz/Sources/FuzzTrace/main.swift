import Dispatch
import FeliCa
import FeliCaCards
import FeliCaTrace
import FuzzSupport

/// The trace reader (`felica-trace/1`, JSON Lines) and what reads traces: any text parses
/// or throws `.badInput` naming a line; a lenient parse keeps what came before the damage;
/// a parsed trace lists, exports to pcap, writes out and reads back with the same packets;
/// and replayed into `felica history`'s reader (CardReader) it gives a report or a typed
/// error — a recorded card that says anything at all.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let text = String(decoding: fuzzBytes(data, size), as: UTF8.self)
    let strict: Trace?
    do throws(FeliCaError) {
        strict = try Trace.parse(text)
    } catch {
        precondition(error.code == .badInput, "strict parse: unexpected error code \(error.code)")
        precondition(error.reason.hasPrefix("trace"), "the error does not name its source: \(error.reason)")
        strict = nil
    }
    let lenient: Trace?
    do throws(FeliCaError) {
        lenient = try Trace.parse(text, lenient: true)
    } catch {
        precondition(error.code == .badInput, "lenient parse: unexpected error code \(error.code)")
        lenient = nil
    }
    if let strict {
        precondition(lenient == strict && strict.damage == nil, "a lenient parse of an intact trace differs from the strict one")
    } else if let lenient {
        precondition(lenient.damage != nil, "the strict parse failed but the lenient one reports no damage")
    }
    guard let trace = lenient else { return 0 }
    _ = trace.listing(blocks: true)
    _ = trace.jsonListing()
    _ = Pcap.export(trace, format: .pcap)
    _ = Pcap.export(trace, format: .pcapng)
    let again = try? Trace.parse(trace.jsonLines())
    precondition(again?.exchanges.map(\.tx) == trace.exchanges.map(\.tx), "tx packets changed on a write and read back")
    precondition(again?.exchanges.map(\.rx) == trace.exchanges.map(\.rx), "rx packets changed on a write and read back")
    precondition(again?.exchanges.map { $0.error?.code } == trace.exchanges.map { $0.error?.code }, "errors changed on a write and read back")
    guard trace.exchanges.count <= 256 else { return 0 }
    let done = DispatchSemaphore(value: 0)
    Task {
        let replay = TraceReplay(trace, name: "replay:fuzz")
        do throws(FeliCaError) {
            _ = try await CardReader(depth: .history).read(CardSession(transport: replay))
        } catch {
            precondition(!error.reason.isEmpty)
        }
        precondition(replay.consumed <= trace.exchanges.count)
        done.signal()
    }
    done.wait()
    return 0
}

@_cdecl("FuzzTrace_main")
func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv, fuzzOne)
}
