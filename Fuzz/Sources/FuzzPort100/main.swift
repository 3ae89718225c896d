import FeliCa
import FeliCaCards
import FeliCaReaderCodecs
import FeliCaEmulators
import FeliCaSimulation
import FuzzSupport

let card = try! VirtualCard.named("suica")

/// The Port-100 side: the frame parser cuts any byte stream into frames or typed errors
/// without losing track, frames round-trip, InCommRF replies parse or fail with a typed
/// error, and the RC-S380 emulator answers any host bytes without crashing.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = fuzzBytes(data, size)
    var parser = Port100FrameParser()
    parser.append(bytes)
    var events = 0
    while let event = parser.next() {
        events += 1
        precondition(events <= bytes.count, "parser produced more events than bytes")
        if case .frame(let f) = event {
            precondition((try? Port100Frame.decode(f.encode()[...])) == f, "frame did not round-trip")
            if case .response(let r) = f { _ = try? r.inCommRFPacket() }
        }
    }
    var emulator = RCS380Emulator(card: card)
    // Feed the stream in two transfers, as a host writes frames.
    let cut = bytes.count / 2
    _ = emulator.receive(bytes[..<cut], at: .zero)
    _ = emulator.receive(bytes[cut...], at: .milliseconds(1))
    return 0
}

@_cdecl("FuzzPort100_main")
func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv, fuzzOne)
}
