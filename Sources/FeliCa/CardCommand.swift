/// A FeliCa command: its code, its body, and the response that answers it.
///
/// Every frame is `LEN code body`. A command writes and reads only its body (the IDm
/// included, for every command but Polling); the frame around it is this protocol's, the
/// same for all: ``encode()`` sets LEN, ``decode(_:)`` checks LEN against the frame, the
/// code, and that nothing follows the last field. ``CardSession/send(_:to:retries:)``
/// sends any command and returns its ``Response``; ``Command`` is the enum for a packet
/// whose code is not known in advance (a card's side, a trace).
public protocol CardCommand: Hashable, Sendable {
    /// The response that answers this command.
    associatedtype Response: CardResponse
    /// The command code; the response's code is one more.
    static var code: CommandCode { get }
    /// Whether sending the command twice does no more than sending it once, so a lost
    /// reply may be asked for again. A write is not: the first one may have been stored.
    static var isRepeatable: Bool { get }
    /// The IDm of the system addressed; nil for Polling, which addresses none.
    var addressedIDm: IDm? { get }
    /// Bytes of the encoded frame, LEN included: the value of LEN.
    var frameLength: Int { get }
    /// The longest response packet (LEN included) a card can send to this command; 255
    /// (the frame limit) where the layout bounds nothing smaller. A reader link that
    /// carries replies of limited size uses it to pick the APDU form.
    var longestResponse: Int { get }
    /// Time-bound parameters of this command, for ``PMm/maximumResponseTime(for:units:)``.
    var timing: (kind: ResponseTimeKind, units: Int) { get }
    /// Writes the fields after LEN and the code.
    func encodeBody(into frame: inout FrameWriter)
    /// Reads the fields after LEN and the code; ``decode(_:)`` refuses what is left after them.
    static func decodeBody(_ body: inout ByteReader) throws(FeliCaError) -> Self
}

/// A FeliCa response: the answer to one ``CardCommand``, which always echoes an IDm.
///
/// As with commands, a response reads and writes its body (from the IDm on) and the frame
/// is the protocol's (``encode()``, ``decode(_:expecting:)``).
public protocol CardResponse: Hashable, Sendable {
    /// The code of the command this answers; the response's own is one more.
    static var code: CommandCode { get }
    /// The IDm of the system that answered.
    var idm: IDm { get }
    /// Bytes of the encoded frame, LEN included: the value of LEN.
    var frameLength: Int { get }
    /// Writes the fields after LEN and the code.
    func encodeBody(into frame: inout FrameWriter)
    /// Reads the fields after LEN and the code. With `idm`, an answer from another system
    /// throws `.wrongCard` as soon as its IDm is read (``ByteReader/readIDm(expecting:)``).
    static func decodeBody(_ body: inout ByteReader, expecting idm: IDm?) throws(FeliCaError) -> Self
}

extension CardCommand {
    /// Repeatable unless said otherwise.
    public static var isRepeatable: Bool { true }

    /// Bounded by the PMm byte of the command code, over no units.
    public var timing: (kind: ResponseTimeKind, units: Int) { (Self.code.timing, 0) }

    /// The frame: `LEN code body`.
    @inlinable
    public func encode() -> [UInt8] {
        var w = FrameWriter(code: Self.code.rawValue, capacity: frameLength)
        encodeBody(into: &w)
        assert(w.bytes.count == frameLength, "\(Self.code) command: frameLength \(frameLength), encoded \(w.bytes.count) bytes")
        return w.finish()
    }

    /// Decodes a command packet (with its LEN byte).
    @inlinable
    public static func decode(_ packet: ArraySlice<UInt8>) throws(FeliCaError) -> Self {
        var r = try openFrame(packet, code: Self.code.rawValue, name: .command(Self.code))
        let command = try decodeBody(&r)
        try r.finish()
        return command
    }
}

extension CardResponse {
    /// The frame: `LEN code body`.
    @inlinable
    public func encode() -> [UInt8] {
        var w = FrameWriter(code: Self.code.responseCode, capacity: frameLength)
        encodeBody(into: &w)
        assert(w.bytes.count == frameLength, "\(Self.code) response: frameLength \(frameLength), encoded \(w.bytes.count) bytes")
        return w.finish()
    }

    /// Decodes a response packet (with its LEN byte); with `idm`, an answer from another
    /// system throws `.wrongCard`.
    @inlinable
    public static func decode(_ packet: ArraySlice<UInt8>, expecting idm: IDm? = nil) throws(FeliCaError) -> Self {
        var r = try openFrame(packet, code: Self.code.responseCode, name: .response(Self.code))
        let response = try decodeBody(&r, expecting: idm)
        try r.finish()
        return response
    }
}

extension ByteReader {
    /// Reads the IDm that follows the code in every frame but the Polling command.
    public mutating func readIDm() throws(FeliCaError) -> IDm {
        IDm(rawValue: try readUInt64BigEndian("IDm"))
    }

    /// Reads a response's IDm and checks that it is `expected` (when given): a response
    /// from another system is `.wrongCard`, whatever follows.
    public mutating func readIDm(expecting expected: IDm?) throws(FeliCaError) -> IDm {
        let actual = try readIDm()
        if let expected, actual != expected {
            throw FeliCaError(.wrongCard, "\(frame): answer from wrong card (IDm \(actual), expected \(expected))")
        }
        return actual
    }
}
