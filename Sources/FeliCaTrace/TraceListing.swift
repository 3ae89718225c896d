import FeliCa

extension Trace {
    /// The readable listing of `felica trace show`: per exchange the time, direction,
    /// decoded packet (status flags named) and timing; with `blocks`, the 16 bytes of each
    /// block read or written under its packet. Damage is not part of the listing: the
    /// caller reports ``damage`` where it reports errors.
    ///
    ///     #1  0.000000  →  Polling system=FFFF request=system code slots=1  (timeout 5.1 ms)
    ///         0.000042  ←  Polling response IDm=… PMm=… system=0003  (0.042 ms)
    public func listing(blocks: Bool = false) -> String {
        var out = "\(Self.formatName)"
        if let device { out += "  device \(device)" }
        if let started { out += "  started \(started)" }
        out += "  \(exchanges.count) exchange\(exchanges.count == 1 ? "" : "s")\n"
        let width = "#\(exchanges.count)".count
        var rate = AirTiming.BitRate.kbps212
        let blank = String(repeating: " ", count: width)
        for (i, e) in exchanges.enumerated() {
            out += readerIdentities.filter { $0.after == i }.map { Self.line($0, indent: blank) }.joined()
            let number = "#\(i + 1)"
            let lead = number + String(repeating: " ", count: width - number.count)
            if e.bitRate != rate {
                out += "\(blank)  \(Self.time(e.t))  ⇄  bit rate \(rate.rawValue) → \(e.bitRate.rawValue) kbps\n"
                rate = e.bitRate
            }
            var tx = "\(lead)  \(Self.time(e.t))  →  \(PacketDescription.command(e.tx))"
            if let timeout = e.timeout { tx += "  (timeout \(Self.milliseconds(timeout)))" }
            out += tx + "\n"
            if blocks { out += Self.blockLines(command: e.tx, response: nil, indent: blank) }
            let at = e.elapsed.map { Self.time(e.t + $0) } ?? String(repeating: " ", count: Self.time(0).count)
            let took = e.elapsed.map { "  (\(Self.milliseconds($0)))" } ?? ""
            if let rx = e.rx {
                out += "\(blank)  \(at)  ←  \(PacketDescription.response(rx, to: e.tx))\(took)\n"
                if blocks { out += Self.blockLines(command: e.tx, response: rx, indent: blank) }
            } else {
                let error = e.error ?? FeliCaError(.timeout, "no answer")
                out += "\(blank)  \(at)  ✕  \(error.code): \(error.reason)\(took)\n"
            }
        }
        out += readerIdentities.filter { $0.after >= exchanges.count }.map { Self.line($0, indent: blank) }.joined()
        return out
    }

    /// `    0.001234  ⌁  reader reports IDm … PMm …  (1.2 ms)`: the session asked the reader,
    /// not the card.
    static func line(_ r: ReaderIdentity, indent: String) -> String {
        let what: String
        if let idm = r.idm, let pmm = r.pmm {
            what = "reader reports IDm \(idm.hex) PMm \(pmm.hex)"
        } else if let error = r.error {
            what = "reader asked for the card's IDm and PMm: \(error.code): \(error.reason)"
        } else {
            what = "reader reports no IDm and PMm"
        }
        return "\(indent)  \(time(r.t))  ⌁  \(what)\(r.elapsed.map { "  (\(milliseconds($0)))" } ?? "")\n"
    }

    /// `        090F:3  16 03 00 00 …` per block a write command carries (`response` nil) or
    /// a successful read response returns, named by the command's block list.
    static func blockLines(command: [UInt8], response: [UInt8]?, indent: String) -> String {
        guard let decoded = try? Command.decode(command[...]) else { return "" }
        var services: [ServiceCode] = []
        var elements: [BlockListElement] = []
        var data: [ArraySlice<UInt8>] = []
        switch (decoded, response) {
        case (.writeWithoutEncryption(let c), nil):
            services = c.services
            elements = c.blocks
            data = c.blocks.indices.map { c.data[(16 * $0)..<(16 * $0 + 16)] }
        case (.readWithoutEncryption(let c), let rx?):
            guard case .readWithoutEncryption(let r)? = try? Response.decode(rx[...], expecting: c.idm) else { return "" }
            services = c.services
            elements = r.blockCount == c.blocks.count ? c.blocks : []
            data = (0..<r.blockCount).map { r[block: $0] }
        default:
            return ""
        }
        let names = data.indices.map { i in
            guard i < elements.count else { return "block \(i)" }
            let e = elements[i]
            let service = Int(e.serviceIndex) < services.count ? "\(services[Int(e.serviceIndex)])" : "#\(e.serviceIndex)"
            return "\(service):\(e.blockNumber)"
        }
        let width = names.map(\.count).max() ?? 0
        let pad = indent + String(repeating: " ", count: 2 + Self.time(0).count + 5)
        return zip(names, data).map { name, bytes in
            pad + name + String(repeating: " ", count: width - name.count) + "  " + Hex.encode(bytes, separator: " ") + "\n"
        }.joined()
    }

    /// Seconds with microseconds, fixed width for up to 9999 s.
    static func time(_ seconds: Double) -> String {
        let micros = Int((seconds * 1e6).rounded())
        let fraction = String(micros % 1_000_000)
        return "\(micros / 1_000_000)." + String(repeating: "0", count: 6 - fraction.count) + fraction
    }

    /// `4.2 ms`, three decimals below 1 ms.
    static func milliseconds(_ seconds: Double) -> String {
        let ms = seconds * 1000
        let decimals = ms < 1 ? 3 : 1
        let scale = decimals == 3 ? 1000.0 : 10.0
        let whole = Int((ms * scale).rounded())
        let fraction = String(whole % Int(scale))
        return "\(whole / Int(scale))." + String(repeating: "0", count: decimals - fraction.count) + fraction + " ms"
    }
}
