import FeliCa

/// One NDEF record as the message carries it (NFC Forum NDEF 1.0): its type name format,
/// type, optional ID and payload. Chunks are joined: a chunked record parses as one record
/// whose payload is every chunk's payload in order.
///
/// Record layout, one header byte then the lengths, type, ID and payload:
///
///     MB ME CF SR IL TNF(3) | TYPE LENGTH | PAYLOAD LENGTH (1 byte if SR, else 4 BE)
///     | [ID LENGTH if IL] | TYPE | [ID] | PAYLOAD
///
/// MB marks the message's first record, ME its last; CF says the payload continues in the
/// next record (whose TNF is 6, "unchanged", with no type and no ID).
public struct NDEFRecord: Hashable, Sendable {
    /// The TNF field: how ``type`` is to be read.
    public enum TypeNameFormat: UInt8, Sendable, CaseIterable {
        case empty = 0, wellKnown = 1, media = 2, absoluteURI = 3, external = 4, unknown = 5, unchanged = 6, reserved = 7
    }

    public var tnf: TypeNameFormat
    public var type: [UInt8]
    public var id: [UInt8]
    public var payload: [UInt8]

    public init(tnf: TypeNameFormat, type: [UInt8], id: [UInt8] = [], payload: [UInt8]) {
        self.tnf = tnf
        self.type = type
        self.id = id
        self.payload = payload
    }

    /// A well-known (NFC Forum RTD) record of type `name` (`U`, `T`, `Sp`).
    public init(wellKnown name: String, payload: [UInt8]) {
        self.init(tnf: .wellKnown, type: Array(name.utf8), payload: payload)
    }

    /// The type as text (ASCII for every TNF that has one), or nil when it is not printable.
    public var typeText: String? {
        guard type.allSatisfy({ (0x20...0x7E).contains($0) }) else { return nil }
        return String(decoding: type, as: UTF8.self)
    }

    // MARK: - Parsing

    private static let mb: UInt8 = 0x80, me: UInt8 = 0x40, cf: UInt8 = 0x20, sr: UInt8 = 0x10, il: UInt8 = 0x08

    /// The records of one NDEF message, chunks joined. Throws `.truncated` when the bytes end
    /// inside a record, `.invalidField` naming the record and the flag or length at fault
    /// (MB missing or repeated, no ME, a chunk out of place, lengths an empty record may not
    /// have), and `.trailingBytes` when bytes follow the record flagged ME.
    public static func parseMessage(_ bytes: some Collection<UInt8>) throws(FeliCaError) -> [NDEFRecord] {
        var reader = ByteReader(ArraySlice(bytes), frame: "NDEF message")
        guard !reader.isAtEnd else { throw FeliCaError(.truncated, "NDEF message: empty (no record)") }
        var records: [NDEFRecord] = []
        var chunked: NDEFRecord? = nil
        var index = 0
        while true {
            let at = "NDEF record \(index + 1)"
            let header = try reader.readUInt8("\(at) header")
            let typeLength = Int(try reader.readUInt8("\(at) type length"))
            let payloadLength = header & sr != 0
                ? Int(try reader.readUInt8("\(at) payload length"))
                : Int(try reader.readBytes(4, "\(at) payload length").reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
            let idLength = header & il != 0 ? Int(try reader.readUInt8("\(at) ID length")) : 0
            let type = Array(try reader.readBytes(typeLength, "\(at) type (\(typeLength) bytes)"))
            let id = Array(try reader.readBytes(idLength, "\(at) ID (\(idLength) bytes)"))
            let payload = Array(try reader.readBytes(payloadLength, "\(at) payload (\(payloadLength) bytes)"))
            let tnf = TypeNameFormat(rawValue: header & 0x07)!
            let first = index == 0
            if first != (header & mb != 0) {
                throw FeliCaError(.invalidField, first ? "\(at): the first record lacks the MB (message begin) flag"
                                                       : "\(at): MB (message begin) flag set on a record after the first")
            }
            if var whole = chunked {
                // A middle or last chunk: TNF unchanged, no type, no ID.
                guard tnf == .unchanged, typeLength == 0, header & il == 0 else {
                    throw FeliCaError(.invalidField, "\(at): a chunk continuing record \(records.count + 1) must have TNF 6 (unchanged), no type and no ID (TNF \(tnf.rawValue), type length \(typeLength))")
                }
                whole.payload += payload
                chunked = header & cf != 0 ? whole : nil
                if chunked == nil { records.append(whole) }
            } else {
                guard tnf != .unchanged else {
                    throw FeliCaError(.invalidField, "\(at): TNF 6 (unchanged) outside a chunked record")
                }
                if tnf == .empty && (typeLength != 0 || idLength != 0 || payloadLength != 0) {
                    throw FeliCaError(.invalidField, "\(at): an empty record (TNF 0) has type length \(typeLength), ID length \(idLength), payload length \(payloadLength); all must be 0")
                }
                if tnf == .unknown && typeLength != 0 {
                    throw FeliCaError(.invalidField, "\(at): a record of unknown type (TNF 5) has a type of \(typeLength) bytes; it must have none")
                }
                let record = NDEFRecord(tnf: tnf, type: type, id: id, payload: payload)
                if header & cf != 0 { chunked = record } else { records.append(record) }
            }
            index += 1
            if header & me != 0 {
                if chunked != nil { throw FeliCaError(.invalidField, "\(at): ME (message end) flag set on a chunk that announces another (CF)") }
                break
            }
            if reader.isAtEnd {
                throw FeliCaError(.truncated, "NDEF message: ends after record \(index) without a record flagged ME (message end)" + (chunked != nil ? ", inside a chunked record" : ""))
            }
        }
        if !reader.isAtEnd {
            throw FeliCaError(.trailingBytes, "NDEF message: \(reader.count) byte\(reader.count == 1 ? "" : "s") after the record flagged ME (message end)")
        }
        return records
    }

    // MARK: - Encoding

    /// The message of `records`: MB on the first, ME on the last, short records (SR) where
    /// the payload is under 256 bytes. With `chunkSize`, payloads longer than it are written
    /// as chunks of that size (for tests and sample cards).
    public static func encodeMessage(_ records: [NDEFRecord], chunkSize: Int? = nil) -> [UInt8] {
        var out: [UInt8] = []
        for (i, r) in records.enumerated() {
            var pieces: [ArraySlice<UInt8>] = [r.payload[...]]
            if let size = chunkSize, size > 0, r.payload.count > size {
                pieces = stride(from: 0, to: r.payload.count, by: size).map { r.payload[$0..<min($0 + size, r.payload.count)] }
            }
            for (k, piece) in pieces.enumerated() {
                let firstPiece = k == 0, lastPiece = k == pieces.count - 1
                var header = firstPiece ? r.tnf.rawValue : TypeNameFormat.unchanged.rawValue
                if i == 0 && firstPiece { header |= mb }
                if i == records.count - 1 && lastPiece { header |= me }
                if !lastPiece { header |= cf }
                if piece.count < 256 { header |= sr }
                let id = firstPiece ? r.id : []
                if !id.isEmpty { header |= il }
                let type = firstPiece ? r.type : []
                out.append(header)
                out.append(UInt8(type.count))
                if piece.count < 256 {
                    out.append(UInt8(piece.count))
                } else {
                    let n = UInt32(piece.count)
                    out += [UInt8(n >> 24), UInt8(n >> 16 & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n & 0xFF)]
                }
                if !id.isEmpty { out.append(UInt8(id.count)) }
                out += type + id + piece
            }
        }
        return out
    }
}
