import FeliCa

extension Trace {
    /// The readable listing of `felica trace show`: per exchange the time, direction,
    /// decoded packet (status flags named) and timing.
    ///
    ///     #1  0.000000  →  Polling system=FFFF request=system code slots=1  (timeout 5.1 ms)
    ///         0.000042  ←  Polling response IDm=… PMm=… system=0003  (0.042 ms)
    public func listing() -> String {
        var out = "\(Self.formatName)"
        if let device { out += "  device \(device)" }
        if let started { out += "  started \(started)" }
        out += "  \(exchanges.count) exchange\(exchanges.count == 1 ? "" : "s")\n"
        let width = "#\(exchanges.count)".count
        for (i, e) in exchanges.enumerated() {
            let number = "#\(i + 1)"
            let lead = number + String(repeating: " ", count: width - number.count)
            let blank = String(repeating: " ", count: width)
            var tx = "\(lead)  \(Self.time(e.t))  →  \(PacketDescription.command(e.tx))"
            if let timeout = e.timeout { tx += "  (timeout \(Self.milliseconds(timeout)))" }
            out += tx + "\n"
            let at = e.elapsed.map { Self.time(e.t + $0) } ?? String(repeating: " ", count: Self.time(0).count)
            let took = e.elapsed.map { "  (\(Self.milliseconds($0)))" } ?? ""
            if let rx = e.rx {
                out += "\(blank)  \(at)  ←  \(PacketDescription.response(rx, to: e.tx))\(took)\n"
            } else {
                let error = e.error ?? FeliCaError(.timeout, "no answer")
                out += "\(blank)  \(at)  ✕  \(error.code): \(error.reason)\(took)\n"
            }
        }
        if let damage {
            out += "trace damaged, listing stops here: \(damage.reason)\n"
        }
        return out
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
