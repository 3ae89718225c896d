import FeliCa
import FeliCaReaderCodecs
import Testing

@Suite("Port-100 frames")
struct Port100FrameTests {
    struct Vector: Sendable, CustomStringConvertible {
        var name: String
        var wire: String
        var frame: Port100Frame
        var description: String { name }
    }

    /// Byte sequences of nfcpy's RC-S380 driver tests (tests/test_clf_rcs380.py), computed
    /// by hand from its FRAME/CMD/RSP helpers.
    static let vectors: [Vector] = [
        Vector(name: "ACK", wire: "00 00 FF 00 FF 00", frame: .ack),
        Vector(name: "error frame", wire: "00 00 FF 01 FF 7F 81 00", frame: .error),
        Vector(name: "SetCommandType 1", wire: "00 00 FF FF FF 03 00 FD D6 2A 01 FF 00",
               frame: .command(.setCommandType(1))),
        Vector(name: "GetFirmwareVersion", wire: "00 00 FF FF FF 02 00 FE D6 20 0A 00",
               frame: .command(.getFirmwareVersion)),
        Vector(name: "SwitchRF off", wire: "00 00 FF FF FF 03 00 FD D6 06 00 24 00",
               frame: .command(.switchRF(on: false))),
        Vector(name: "InSetRF 212F", wire: "00 00 FF FF FF 06 00 FA D6 00 01 01 0F 01 18 00",
               frame: .command(.inSetRF(.kbps212))),
        Vector(name: "SetCommandType response", wire: "00 00 FF FF FF 03 00 FD D7 2B 00 FE 00",
               frame: .response(Port100Response(code: 0x2B, data: [0x00]))),
        Vector(name: "GetFirmwareVersion response 1.11", wire: "00 00 FF FF FF 04 00 FC D7 21 11 01 F6 00",
               frame: .response(Port100Response(code: 0x21, data: [0x11, 0x01]))),
    ]

    @Test("encodes and decodes nfcpy's frames", arguments: vectors)
    func roundTrip(_ v: Vector) throws {
        let wire = bytes(v.wire)
        #expect(v.frame.encode() == wire)
        #expect(try Port100Frame.decode(wire[...]) == v.frame)
    }

    @Test("every strict prefix is truncated", arguments: vectors)
    func prefixes(_ v: Vector) {
        let wire = bytes(v.wire)
        for n in 0..<wire.count {
            #expect(throws: FeliCaError.truncated, "prefix of \(n) bytes") { try Port100Frame.decode(wire[..<n]) }
        }
    }

    @Test("trailing bytes are refused", arguments: vectors)
    func trailing(_ v: Vector) {
        #expect(throws: FeliCaError.trailingBytes) { try Port100Frame.decode((bytes(v.wire) + [0x00])[...]) }
    }

    @Test("a wrong length checksum, data checksum, postamble or direction is named")
    func broken() {
        let good = bytes("00 00 FF FF FF 03 00 FD D6 2A 01 FF 00")
        func mutate(_ i: Int, _ v: UInt8) -> ArraySlice<UInt8> { var b = good; b[i] = v; return b[...] }
        #expect(throws: FeliCaError(.badLength, "")) { try Port100Frame.decode(mutate(7, 0xFE)) }
        #expect(throws: FeliCaError(.transmission, "")) { try Port100Frame.decode(mutate(11, 0xFE)) }
        #expect(throws: FeliCaError(.invalidField, "")) { try Port100Frame.decode(mutate(12, 0x01)) }
        #expect(throws: FeliCaError(.invalidField, "")) { try Port100Frame.decode(mutate(2, 0xFE)) }
        #expect(throws: FeliCaError(.invalidField, "")) { try Port100Frame.decode(mutate(3, 0x05)) }
        // D5 (a PN532 response) is not a Port-100 direction byte; checksum fixed up to match.
        #expect(throws: FeliCaError(.invalidField, "")) {
            try Port100Frame.decode(bytes("00 00 FF FF FF 03 00 FD D5 2A 01 00 00")[...])
        }
        #expect(throws: FeliCaError(.badLength, "")) { try Port100Frame.decode(bytes("00 00 FF FF FF 01 00 FF D6 2A 00")[...]) }
        #expect(throws: FeliCaError(.invalidField, "")) { try Port100Frame.decode(bytes("00 00 FF 01 FF 7E 82 00")[...]) }
        do {
            _ = try Port100Frame.decode(mutate(11, 0xFE))
        } catch {
            #expect(error.reason.contains("data checksum fe"))
        }
    }

    @Test("long payloads use the 16-bit little-endian length")
    func extendedLength() throws {
        let command = Port100Command(code: 0x04, data: [UInt8](repeating: 0xAB, count: 300))
        let wire = Port100Frame.command(command).encode()
        #expect(Array(wire[5...7]) == [0x2E, 0x01, 0xD1])  // 302 = 0x012E
        #expect(try Port100Frame.decode(wire[...]) == .command(command))
    }

    @Test("the stream parser skips noise, waits for the rest, and resynchronises after a broken frame")
    func streamParser() {
        var p = Port100FrameParser()
        let ack = Port100Frame.ack.encode()
        let cmd = Port100Frame.command(.getFirmwareVersion).encode()
        var broken = cmd
        broken[broken.count - 2] &+= 1
        p.append([0x55, 0x55] + ack + broken + cmd.prefix(5))
        #expect(p.next() == .frame(.ack))
        guard case .invalid(let e)? = p.next() else { Issue.record("broken frame not reported"); return }
        #expect(e.code == .transmission)
        #expect(p.next() == nil)
        p.append(cmd.dropFirst(5))
        #expect(p.next() == .frame(.command(.getFirmwareVersion)))
        #expect(p.next() == nil)
        // The noise, and the broken frame after its preamble.
        #expect(p.skippedBytes == 2 + broken.count - 3)
    }
}

@Suite("Port-100 commands")
struct Port100CommandTests {
    @Test("InCommRF's timeout is 0.1 ms units, little-endian, rounded up and capped", arguments: [
        (Duration.microseconds(100), UInt16(1)),
        (Duration.microseconds(150), UInt16(2)),
        (Duration.milliseconds(10), UInt16(100)),
        (Duration.zero, UInt16(1)),
        (Duration.seconds(7), UInt16(0xFFFF)),
        (Duration.seconds(-1), UInt16(1)),
    ])
    func timeout(_ d: Duration, _ v: UInt16) {
        #expect(Port100Command.timeoutValue(d) == v)
        #expect(Port100Command.inCommRF([0x06, 0x00, 0xFF, 0xFF, 0x01, 0x00], timeout: d).data.prefix(2).elementsEqual([UInt8(v & 0xFF), UInt8(v >> 8)]))
    }

    @Test("InSetRF and InSetProtocol match nfcpy's bytes")
    func settings() {
        #expect(Port100Command.inSetRF(.kbps212).data == bytes("01 01 0F 01"))
        #expect(Port100Command.inSetRF(.kbps424).data == bytes("01 02 0F 02"))
        #expect(Port100Command.inSetProtocol(Port100Command.inSetProtocolDefaults).data
                == bytes("00 18 01 01 02 01 03 00 04 00 05 00 06 00 07 08 08 00 09 00 0A 00 0B 00 0C 00 0E 04 0F 00 10 00 11 00 12 00 13 06"))
    }

    @Test("InCommRF answers: a packet, a timeout, another error, a LEN that does not match")
    func inCommRF() throws {
        let polling = bytes("14 01 01 01 07 01 26 0C CA 02 0F 0D 23 04 2F 77 83 FF 12 FC")
        #expect(try Port100Response(code: 0x05, data: bytes("00 00 00 00 08") + polling).inCommRFPacket() == polling)
        #expect(throws: FeliCaError.timeout) { try Port100Response(code: 0x05, data: bytes("80 00 00 00")).inCommRFPacket() }
        #expect(throws: FeliCaError(.transmission, "")) { try Port100Response(code: 0x05, data: bytes("04 00 00 00")).inCommRFPacket() }
        #expect(throws: FeliCaError.truncated) { try Port100Response(code: 0x05, data: bytes("00 00 00")).inCommRFPacket() }
        #expect(throws: FeliCaError.truncated) { try Port100Response(code: 0x05, data: bytes("00 00 00 00 08 05 01")).inCommRFPacket() }
        #expect(throws: FeliCaError.trailingBytes) { try Port100Response(code: 0x05, data: bytes("00 00 00 00 08 02 01 00")).inCommRFPacket() }
        #expect(throws: FeliCaError(.unexpectedResponse, "")) { try Port100Response(code: 0x07, data: bytes("00")).inCommRFPacket() }
        #expect(Port100Response.inCommRF(packet: polling).data == bytes("00 00 00 00 08") + polling)
        #expect(Port100Response.inCommRF(status: .receiveTimeout).data == bytes("80 00 00 00"))
    }

    @Test("status bytes are named")
    func statuses() throws {
        try Port100Response(code: 0x07, data: [0]).status(of: .switchRF(on: false))
        #expect(throws: FeliCaError(.status, "")) { try Port100Response(code: 0x07, data: [1]).status(of: .switchRF(on: false)) }
        #expect(throws: FeliCaError.trailingBytes) { try Port100Response(code: 0x07, data: [0, 0]).status(of: .switchRF(on: false)) }
        #expect(Port100Status.commandTypeError.description == "command type error (7)")
        #expect(Port100CommStatus(rawValue: 0x80).description == "receive timeout (0x00000080)")
        #expect(Port100CommStatus(rawValue: 0xFFFF_FFFF).description.contains("bits 0x7ffff020"))
        let v = try Port100Response(code: 0x21, data: [0x11, 0x01]).version(of: .getFirmwareVersion)
        #expect(v.major == 1 && v.minor == 0x11)
    }
}
