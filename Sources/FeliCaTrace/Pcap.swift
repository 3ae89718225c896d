import FeliCa

/// Capture files of a trace for Wireshark and tshark: pcapng (the default, with each
/// packet's direction and the device name) or classic pcap.
///
/// pcapng layout (little-endian): a Section Header Block naming the writer, one Interface
/// Description Block (link type 148 = USER1, `if_description` = the trace's device), then
/// per packet an Enhanced Packet Block holding the whole FeliCa packet *with* its LEN byte,
/// microsecond timestamps and the `epb_flags` direction: outbound for commands, inbound
/// for responses. A command that got no answer carries the failure as a packet comment.
///
/// Classic pcap layout: a 24-byte file header (magic `a1b2c3d4`, version 2.4, link type
/// 147 = USER0), then per packet a 16-byte record header and the packet *without* its LEN
/// byte, which is how Wireshark's built-in FeliCa dissector expects frames. It carries no
/// direction.
public enum Pcap {
    /// `LINKTYPE_USER0`: classic pcap, FeliCa packets without the LEN byte.
    public static let linkTypeUser0: UInt32 = 147
    /// `LINKTYPE_USER1`: pcapng, FeliCa packets with the LEN byte.
    public static let linkTypeUser1: UInt32 = 148
    static let magic: UInt32 = 0xA1B2_C3D4
    static let snapLength: UInt32 = 65535

    /// The container to write.
    public enum Format: String, Sendable, CaseIterable {
        case pcapng, pcap
    }

    /// What an export produced.
    public struct Export: Sendable {
        /// The capture file.
        public var bytes: [UInt8]
        /// Packets written (commands and responses).
        public var frames: Int
        /// Packets left out because they hold nothing a frame could carry.
        public var skipped: Int
    }

    /// One packet placed on the capture's timeline.
    struct Frame {
        var micros: Int64
        var bytes: ArraySlice<UInt8>
        var outbound: Bool
        var comment: String?
    }

    /// The packets of `trace` in order: each command at `started + t`, each response at
    /// `started + t + elapsed`; a failed exchange has only its command. Without
    /// `keepingLength`, the LEN byte is dropped and packets with nothing after it skipped.
    static func frames(of trace: Trace, keepingLength: Bool) -> (frames: [Frame], skipped: Int) {
        let base = Int64(((trace.started.flatMap(TraceFile.epochSeconds(iso8601:)) ?? 0) * 1e6).rounded())
        var frames: [Frame] = []
        var skipped = 0
        func add(_ packet: [UInt8], at seconds: Double, outbound: Bool, comment: String? = nil) {
            let bytes = keepingLength ? packet[...] : packet.dropFirst()
            guard !bytes.isEmpty else { skipped += 1; return }
            frames.append(Frame(micros: base + Int64((seconds * 1e6).rounded()), bytes: bytes, outbound: outbound, comment: comment))
        }
        for e in trace.exchanges {
            let failure = e.rx == nil ? e.error.map { "no answer: \($0.code): \($0.reason)" } : nil
            add(e.tx, at: e.t, outbound: true, comment: failure)
            if let rx = e.rx { add(rx, at: e.t + (e.elapsed ?? 0), outbound: false) }
        }
        return (frames, skipped)
    }

    /// The capture of `trace` in `format`.
    public static func export(_ trace: Trace, format: Format = .pcap) -> Export {
        switch format {
        case .pcap: classic(trace)
        case .pcapng: nextGeneration(trace)
        }
    }

    /// Writes the export of `trace` to `path`, replacing it only once complete.
    @discardableResult
    public static func write(_ trace: Trace, to path: String, format: Format = .pcap) throws(FeliCaError) -> Export {
        let export = export(trace, format: format)
        try TraceFile.writeAtomically(export.bytes, to: path)
        return export
    }

    private static func classic(_ trace: Trace) -> Export {
        let (frames, skipped) = frames(of: trace, keepingLength: false)
        var out: [UInt8] = []
        out.reserveCapacity(24 + frames.reduce(0) { $0 + 16 + $1.bytes.count })
        append32(&out, magic)
        append16(&out, 2)
        append16(&out, 4)
        append32(&out, 0)  // thiszone: timestamps are UTC
        append32(&out, 0)  // sigfigs
        append32(&out, snapLength)
        append32(&out, linkTypeUser0)
        for f in frames {
            append32(&out, UInt32(truncatingIfNeeded: f.micros / 1_000_000))
            append32(&out, UInt32(truncatingIfNeeded: f.micros % 1_000_000))
            append32(&out, UInt32(f.bytes.count))
            append32(&out, UInt32(f.bytes.count))
            out += f.bytes
        }
        return Export(bytes: out, frames: frames.count, skipped: skipped)
    }

    /// pcapng block types and option codes (the pcapng specification's names).
    private enum NG {
        static let sectionHeader: UInt32 = 0x0A0D_0D0A
        static let interfaceDescription: UInt32 = 1
        static let enhancedPacket: UInt32 = 6
        static let byteOrderMagic: UInt32 = 0x1A2B_3C4D
        static let optEndOfOptions: UInt16 = 0
        static let optComment: UInt16 = 1
        static let shbUserApplication: UInt16 = 4
        static let ifDescription: UInt16 = 3
        static let epbFlags: UInt16 = 2
        static let inbound: UInt32 = 1
        static let outbound: UInt32 = 2
    }

    private static func nextGeneration(_ trace: Trace) -> Export {
        let (frames, skipped) = frames(of: trace, keepingLength: true)
        var out: [UInt8] = []
        out.reserveCapacity(128 + frames.reduce(0) { $0 + 48 + $1.bytes.count + ($1.comment?.utf8.count ?? 0) })

        var shb: [UInt8] = []
        append32(&shb, NG.byteOrderMagic)
        append16(&shb, 1)  // major version
        append16(&shb, 0)  // minor version
        append32(&shb, 0xFFFF_FFFF)  // section length: not given
        append32(&shb, 0xFFFF_FFFF)
        option(&shb, NG.shbUserApplication, Array("felica trace export".utf8))
        option(&shb, NG.optEndOfOptions, [])
        block(&out, NG.sectionHeader, shb)

        var idb: [UInt8] = []
        append16(&idb, UInt16(linkTypeUser1))
        append16(&idb, 0)  // reserved
        append32(&idb, snapLength)
        if let device = trace.device, !device.isEmpty { option(&idb, NG.ifDescription, Array(device.utf8)) }
        option(&idb, NG.optEndOfOptions, [])  // if_tsresol absent: microseconds
        block(&out, NG.interfaceDescription, idb)

        for f in frames {
            var epb: [UInt8] = []
            append32(&epb, 0)  // interface 0
            let micros = UInt64(bitPattern: f.micros)
            append32(&epb, UInt32(truncatingIfNeeded: micros >> 32))
            append32(&epb, UInt32(truncatingIfNeeded: micros))
            append32(&epb, UInt32(f.bytes.count))
            append32(&epb, UInt32(f.bytes.count))
            epb += f.bytes
            pad(&epb)
            var flags: [UInt8] = []
            append32(&flags, f.outbound ? NG.outbound : NG.inbound)
            option(&epb, NG.epbFlags, flags)
            if let comment = f.comment { option(&epb, NG.optComment, Array(comment.utf8)) }
            option(&epb, NG.optEndOfOptions, [])
            block(&out, NG.enhancedPacket, epb)
        }
        return Export(bytes: out, frames: frames.count, skipped: skipped)
    }

    /// A block: type, total length, body (already padded to 32 bits), total length again.
    private static func block(_ out: inout [UInt8], _ type: UInt32, _ body: [UInt8]) {
        let length = UInt32(12 + body.count)
        append32(&out, type)
        append32(&out, length)
        out += body
        append32(&out, length)
    }

    /// An option: code, length, value padded to 32 bits (values past the 16-bit length cut).
    private static func option(_ out: inout [UInt8], _ code: UInt16, _ value: [UInt8]) {
        let value = value.prefix(0xFFFC)
        append16(&out, code)
        append16(&out, UInt16(value.count))
        out += value
        pad(&out)
    }

    private static func pad(_ out: inout [UInt8]) {
        while out.count % 4 != 0 { out.append(0) }
    }

    private static func append16(_ out: inout [UInt8], _ v: UInt16) {
        out.append(UInt8(v & 0xFF))
        out.append(UInt8(v >> 8))
    }

    private static func append32(_ out: inout [UInt8], _ v: UInt32) {
        for shift in stride(from: 0, to: 32, by: 8) { out.append(UInt8((v >> UInt32(shift)) & 0xFF)) }
    }
}
