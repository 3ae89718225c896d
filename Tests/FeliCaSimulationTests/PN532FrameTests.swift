import FeliCa
import FeliCaReaderCodecs
import FeliCaEmulators
import FeliCaSimulation
import Testing
import FeliCaCards

/// Frame vectors: (name and source, frame, bytes on the wire).
let frameVectors: [(String, PN532Frame, [UInt8])] = [
    ("ACK (PN532 UM §6.2.1.3)", .ack, [0x00, 0x00, 0xFF, 0x00, 0xFF, 0x00]),
    ("NACK (PN532 UM §6.2.1.4)", .nack, [0x00, 0x00, 0xFF, 0xFF, 0x00, 0x00]),
    ("error frame (PN532 UM §6.2.1.5)", .applicationError, [0x00, 0x00, 0xFF, 0x01, 0xFF, 0x7F, 0x81, 0x00]),
    ("GetFirmwareVersion (PN532 UM §7.2.2)", .command([0x02]), [0x00, 0x00, 0xFF, 0x02, 0xFE, 0xD4, 0x02, 0x2A, 0x00]),
    ("GetFirmwareVersion answer, PN532 v1.6", .response([0x03, 0x32, 0x01, 0x06, 0x07]),
     [0x00, 0x00, 0xFF, 0x06, 0xFA, 0xD5, 0x03, 0x32, 0x01, 0x06, 0x07, 0xE8, 0x00]),
    ("SAMConfiguration normal mode, as libnfc sends it", .command([0x14, 0x01]),
     [0x00, 0x00, 0xFF, 0x03, 0xFD, 0xD4, 0x14, 0x01, 0x17, 0x00]),
    ("InListPassiveTarget FeliCa 212, Polling FFFF RC 1", .command([0x4A, 0x01, 0x01, 0x00, 0xFF, 0xFF, 0x01, 0x00]),
     [0x00, 0x00, 0xFF, 0x09, 0xF7, 0xD4, 0x4A, 0x01, 0x01, 0x00, 0xFF, 0xFF, 0x01, 0x00, 0xE1, 0x00]),
]

@Test("encode gives the documented bytes", arguments: frameVectors)
func frameEncodes(_ name: String, _ frame: PN532Frame, _ wire: [UInt8]) {
    #expect(frame.encode() == wire, "\(name)")
}

@Test("decode gives back the frame", arguments: frameVectors)
func frameDecodes(_ name: String, _ frame: PN532Frame, _ wire: [UInt8]) throws {
    #expect(try PN532Frame.decode(wire[...]) == frame, "\(name)")
    // The preamble is optional on input.
    #expect(try PN532Frame.decode(wire.dropFirst()) == frame, "\(name)")
}

@Test("every strict prefix of a frame is .truncated", arguments: frameVectors)
func frameTruncations(_ name: String, _ frame: PN532Frame, _ wire: [UInt8]) {
    for n in 0..<wire.count {
        #expect(throws: FeliCaError.truncated, "\(name), \(n) bytes") { try PN532Frame.decode(wire.prefix(n)) }
    }
}

@Test("every strict prefix waits in the stream parser, then the frame comes out", arguments: frameVectors)
func parserWaitsForWholeFrame(_ name: String, _ frame: PN532Frame, _ wire: [UInt8]) {
    var parser = PN532FrameParser()
    for b in wire.dropLast() {
        parser.append([b])
        #expect(parser.next() == nil, "\(name)")
    }
    parser.append([wire.last!])
    #expect(parser.next() == .frame(frame), "\(name)")
    #expect(parser.next() == nil)
}

@Test("trailing bytes after the postamble are reported")
func frameTrailingBytes() {
    #expect(throws: FeliCaError.trailingBytes) { try PN532Frame.decode(([0x00, 0x00, 0xFF, 0x00, 0xFF, 0x00, 0x00] as [UInt8])[...]) }
}

@Test("extended frames round-trip, forced or needed by the length", arguments: [0, 1, 254, 255, 300, 1000])
func extendedFrames(_ length: Int) throws {
    let data = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 7) }
    let forced = PN532Frame.response(data).encode(extended: true)
    #expect(Array(forced[3...4]) == [0xFF, 0xFF])
    #expect(try PN532Frame.decode(forced[...]) == .response(data))
    let natural = PN532Frame.response(data).encode()
    #expect((natural[3] == 0xFF && natural[4] == 0xFF) == (length + 1 > 255))
    #expect(try PN532Frame.decode(natural[...]) == .response(data))
    for n in stride(from: 0, to: forced.count, by: max(1, forced.count / 40)) {
        #expect(throws: FeliCaError.truncated) { try PN532Frame.decode(forced.prefix(n)) }
    }
}

/// Broken frames: (what, bytes, expected error code).
let brokenFrames: [(String, [UInt8], FeliCaError.Code)] = [
    ("length checksum off by one", [0x00, 0x00, 0xFF, 0x02, 0xFF, 0xD4, 0x02, 0x2A, 0x00], .badLength),
    ("data checksum off by one", [0x00, 0x00, 0xFF, 0x02, 0xFE, 0xD4, 0x02, 0x2B, 0x00], .transmission),
    ("postamble not zero", [0x00, 0x00, 0xFF, 0x02, 0xFE, 0xD4, 0x02, 0x2A, 0x01], .invalidField),
    ("unknown frame identifier", [0x00, 0x00, 0xFF, 0x02, 0xFE, 0xD3, 0x02, 0x2B, 0x00], .invalidField),
    ("extended length checksum wrong", [0x00, 0x00, 0xFF, 0xFF, 0xFF, 0x00, 0x02, 0xFF, 0xD4, 0x02, 0x2A, 0x00], .badLength),
    ("extended LEN 0", [0x00, 0x00, 0xFF, 0xFF, 0xFF, 0x00, 0x00, 0x00, 0x00, 0x00], .badLength),
    ("no start code", [0x00, 0x00, 0xFE, 0x00, 0xFF, 0x00], .invalidField),
]

@Test("broken frames are reported with what is wrong", arguments: brokenFrames)
func brokenFrame(_ name: String, _ bytes: [UInt8], _ code: FeliCaError.Code) {
    #expect(throws: FeliCaError(code, name)) { try PN532Frame.decode(bytes[...]) }
}

@Test("the parser skips the wake-up preamble and noise, and recovers after a broken frame")
func parserResynchronises() {
    var parser = PN532FrameParser()
    let wakeUp: [UInt8] = [0x55, 0x55] + [UInt8](repeating: 0, count: 14)
    let sam = PN532Frame.command([0x14, 0x01]).encode()
    var broken = PN532Frame.command([0x02]).encode()
    broken[broken.count - 2] &+= 1
    parser.append(wakeUp + sam + [0x12, 0x34] + broken + PN532Frame.ack.encode())
    #expect(parser.next() == .frame(.command([0x14, 0x01])))
    guard case .invalid(let e)? = parser.next() else {
        Issue.record("expected the broken frame")
        return
    }
    #expect(e.code == .transmission)
    #expect(parser.next() == .frame(.ack))
    #expect(parser.next() == nil)
    #expect(parser.pendingCount <= 1)
}

@Test("frames hidden in random noise all come out, in order, whatever the chunking", arguments: 0..<20)
func parserFindsFramesInNoise(_ seed: Int) {
    var rng = SplitMix(seed: UInt64(seed))
    var stream: [UInt8] = []
    var sent: [PN532Frame] = []
    for _ in 0..<30 {
        // Noise without the start code, so it cannot fake a frame.
        for _ in 0..<Int(rng.next() % 8) {
            let b = UInt8(truncatingIfNeeded: rng.next())
            stream.append(b == 0x00 ? 0x55 : b)
        }
        let data = (0..<Int(rng.next() % 300)).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
        let frame: PN532Frame = [.ack, .nack, .applicationError, .command(data), .response(data)][Int(rng.next() % 5)]
        sent.append(frame)
        stream += frame.encode(extended: rng.next() % 4 == 0)
    }
    var parser = PN532FrameParser()
    var received: [PN532Frame] = []
    var i = 0
    while i < stream.count {
        let n = min(stream.count - i, 1 + Int(rng.next() % 64))
        parser.append(stream[i..<(i + n)])
        i += n
        while let event = parser.next() {
            if case .frame(let f) = event { received.append(f) } else { Issue.record("unexpected \(event)") }
        }
    }
    #expect(received == sent)
}

@Test("random bytes never crash the parser or the emulator", arguments: 0..<20)
func randomBytes(_ seed: Int) {
    var rng = SplitMix(seed: UInt64(seed) &+ 1000)
    var chip = PN532Emulator(card: try? VirtualCard.named("suica"))
    var parser = PN532FrameParser()
    for step in 0..<200 {
        var chunk = (0..<Int(rng.next() % 40)).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
        // Now and then a well-formed command with random parameters.
        if rng.next() % 3 == 0 {
            let codes: [UInt8] = [0x00, 0x02, 0x06, 0x08, 0x10, 0x12, 0x14, 0x16, 0x32, 0x40, 0x42, 0x44, 0x4A, 0x52, 0x60]
            chunk += PN532Frame.command([codes[Int(rng.next() % UInt64(codes.count))]] + chunk.prefix(Int(rng.next() % 12))).encode()
        }
        parser.append(chunk)
        while parser.next() != nil {}
        _ = chip.receive(chunk, at: .milliseconds(step))
    }
}

/// A small deterministic generator for reproducible random tests.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
