import FeliCa
import FeliCaCards
import FeliCaReaderCodecs
import FeliCaEmulators
import FeliCaSimulation
import FuzzSupport

let card = try! VirtualCard.named("suica")

/// The PN532 side: the frame parser cuts any byte stream into frames or typed errors
/// without losing track, and the emulator (either chip) answers any host bytes without crashing.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = fuzzBytes(data, size)
    var parser = PN532FrameParser()
    parser.append(bytes)
    var events = 0
    while let event = parser.next() {
        events += 1
        precondition(events <= bytes.count, "parser produced more events than bytes")
        if case .frame(let f) = event {
            precondition((try? PN532Frame.decode(f.encode()[...])) == f, "frame did not round-trip")
        }
    }
    // Both chips of the state machine (the PN532, and the RC-S956 of Sony's USB readers),
    // fed the stream in two pieces, as a UART or two bulk transfers deliver it.
    for chip in [PN532Emulator.Chip.pn532, .rcs956] {
        var emulator = PN532Emulator(card: card, options: .init(chip: chip))
        let cut = bytes.count / 2
        _ = emulator.receive(bytes[..<cut], at: .zero)
        _ = emulator.receive(bytes[cut...], at: .milliseconds(1))
    }
    return 0
}

@_cdecl("FuzzPN532_main")
func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv, fuzzOne)
}
