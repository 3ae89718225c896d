import FeliCa

/// Classic pcap export of a trace, for Wireshark's built-in FeliCa dissector.
///
/// Layout (all little-endian): a 24-byte file header (magic `a1b2c3d4`, version 2.4,
/// zone 0, sigfigs 0, snaplen 65535, link type 147 = USER0), then per packet a 16-byte
/// record header (seconds, microseconds, captured length, original length) and the packet
/// without its LEN byte, which is how the dissector expects FeliCa frames.
public enum Pcap {
    /// `LINKTYPE_USER0`: the first of the link types reserved for private use.
    public static let linkTypeUser0: UInt32 = 147
    static let magic: UInt32 = 0xA1B2_C3D4
    static let snapLength: UInt32 = 65535

    /// What an export produced.
    public struct Export: Sendable {
        /// The pcap file.
        public var bytes: [UInt8]
        /// Records written (commands and responses).
        public var frames: Int
        /// Packets left out because they hold nothing after the LEN byte.
        public var skipped: Int
    }

    /// The pcap of `trace`: each command at `started + t`, each response at
    /// `started + t + elapsed`; failed exchanges have only their command.
    public static func export(_ trace: Trace) -> Export {
        var out: [UInt8] = []
        out.reserveCapacity(24 + trace.exchanges.reduce(0) { $0 + 32 + $1.tx.count + ($1.rx?.count ?? 0) })
        append32(&out, magic)
        append16(&out, 2)
        append16(&out, 4)
        append32(&out, 0)  // thiszone: timestamps are UTC
        append32(&out, 0)  // sigfigs
        append32(&out, snapLength)
        append32(&out, linkTypeUser0)
        let base = Int64(((trace.started.flatMap(TraceFile.epochSeconds(iso8601:)) ?? 0) * 1e6).rounded())
        var frames = 0
        var skipped = 0
        func record(_ packet: [UInt8], at seconds: Double) {
            guard packet.count > 1 else { skipped += 1; return }
            let micros = base + Int64((seconds * 1e6).rounded())
            let payload = packet.dropFirst()
            append32(&out, UInt32(truncatingIfNeeded: micros / 1_000_000))
            append32(&out, UInt32(truncatingIfNeeded: micros % 1_000_000))
            append32(&out, UInt32(payload.count))
            append32(&out, UInt32(payload.count))
            out += payload
            frames += 1
        }
        for e in trace.exchanges {
            record(e.tx, at: e.t)
            if let rx = e.rx { record(rx, at: e.t + (e.elapsed ?? 0)) }
        }
        return Export(bytes: out, frames: frames, skipped: skipped)
    }

    /// Writes the export of `trace` to `path`, replacing it only once complete.
    @discardableResult
    public static func write(_ trace: Trace, to path: String) throws(FeliCaError) -> Export {
        let export = export(trace)
        try TraceFile.writeAtomically(export.bytes, to: path)
        return export
    }

    private static func append16(_ out: inout [UInt8], _ v: UInt16) {
        out.append(UInt8(v & 0xFF))
        out.append(UInt8(v >> 8))
    }

    private static func append32(_ out: inout [UInt8], _ v: UInt32) {
        for shift in stride(from: 0, to: 32, by: 8) { out.append(UInt8((v >> UInt32(shift)) & 0xFF)) }
    }
}
