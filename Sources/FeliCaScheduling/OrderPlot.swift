import FeliCa
#if canImport(Glibc)
import Glibc
#endif

/// Draws a bench report as an SVG: detection time against position, the fitted line,
/// the session limit and the positions never detected.
///
/// Past 20 positions the x axis is logarithmic in 1 + position, and when the times span
/// more than a factor of 50 the time axis is logarithmic too: the first ten positions
/// (where an app's own codes sit) then take about half the width and their times stand
/// apart, instead of a clump of points in the corner below a 45 s scale.
public enum OrderPlot {
    static let width = 800.0, height = 500.0
    static let left = 80.0, right = 30.0, top = 60.0, bottom = 70.0

    /// A self-contained SVG document of `report`, with `measured` points (position,
    /// seconds) drawn for comparison under `measuredLabel`.
    public static func svg(_ report: OrderBenchmark.Report, measured: [(position: Int, seconds: Double)] = [], measuredLabel: String = "measured") -> String {
        let positions = report.rows.map(\.position)
        let maxX = Double(max(positions.max() ?? 1, 1))
        var maxY = report.rows.compactMap(\.mean).max() ?? 1
        if let fit = report.fit { maxY = max(maxY, fit.value(at: maxX)) }
        if let limit = report.sessionLimit?.seconds, limit < maxY * 1.3 { maxY = max(maxY, limit) }
        let scale = XScale(maximum: maxX)
        let minY = (report.rows.flatMap { $0.samples.compactMap { $0 } } + measured.map(\.seconds)).filter { $0 > 0 }.min() ?? maxY
        let yScale = YScale(minimum: minY, maximum: maxY > 0 ? maxY : 1)
        let xTicks = scale.ticks, yTicks = yScale.ticks
        let xMax = scale.maximum, yMax = yScale.maximum
        let plotW = width - left - right, plotH = height - top - bottom
        func px(_ x: Double) -> Double { left + scale.unit(x) * plotW }
        func py(_ y: Double) -> Double { top + plotH - yScale.unit(y) * plotH }

        var s = """
        <?xml version="1.0" encoding="UTF-8"?>
        <svg xmlns="http://www.w3.org/2000/svg" width="\(n(width))" height="\(n(height))" viewBox="0 0 \(n(width)) \(n(height))" font-family="Helvetica, Arial, sans-serif" font-size="12">
        <rect width="100%" height="100%" fill="white"/>
        <text x="\(n(width / 2))" y="24" text-anchor="middle" font-size="16" font-weight="bold">\(escape("Detection time by position of \(report.target) in the polled list"))</text>

        """
        let source = report.source.count > 60 ? "…" + report.source.suffix(59) : report.source
        let fitText = report.fit.map { "fit: \(format($0.base)) s + \(format($0.slope)) s per code, r² \(format($0.r2))" } ?? "no fit"
        s += "<text x=\"\(n(width / 2))\" y=\"44\" text-anchor=\"middle\" fill=\"#444\">\(escape("\(source) · \(fitText)"))</text>\n"
        // Grid, ticks and tick labels.
        s += "<g stroke=\"#e4e4e4\" stroke-width=\"1\">\n"
        for t in xTicks { s += "<line x1=\"\(n(px(t)))\" y1=\"\(n(top))\" x2=\"\(n(px(t)))\" y2=\"\(n(top + plotH))\"/>\n" }
        for t in yTicks { s += "<line x1=\"\(n(left))\" y1=\"\(n(py(t)))\" x2=\"\(n(left + plotW))\" y2=\"\(n(py(t)))\"/>\n" }
        s += "</g>\n<g fill=\"#222\">\n"
        for t in xTicks { s += "<text x=\"\(n(px(t)))\" y=\"\(n(top + plotH + 18))\" text-anchor=\"middle\">\(format(t))</text>\n" }
        for t in yTicks { s += "<text x=\"\(n(left - 8))\" y=\"\(n(py(t) + 4))\" text-anchor=\"end\">\(format(t))</text>\n" }
        s += "</g>\n"
        // Axes and their labels.
        s += "<g stroke=\"#222\" stroke-width=\"1.5\">\n"
        s += "<line x1=\"\(n(left))\" y1=\"\(n(top + plotH))\" x2=\"\(n(left + plotW))\" y2=\"\(n(top + plotH))\"/>\n"
        s += "<line x1=\"\(n(left))\" y1=\"\(n(top))\" x2=\"\(n(left))\" y2=\"\(n(top + plotH))\"/>\n</g>\n"
        let axis = "position of \(report.target) in the list (codes polled before it)" + (scale.logarithmic ? ", log scale" : "")
        s += "<text x=\"\(n(left + plotW / 2))\" y=\"\(n(height - 22))\" text-anchor=\"middle\">\(escape(axis))</text>\n"
        s += "<text transform=\"translate(22 \(n(top + plotH / 2))) rotate(-90)\" text-anchor=\"middle\">detection time (s\(yScale.logarithmic ? ", log scale" : ""))</text>\n"
        // Session limit.
        if let limit = report.sessionLimit?.seconds, limit <= yMax {
            s += "<line x1=\"\(n(left))\" y1=\"\(n(py(limit)))\" x2=\"\(n(left + plotW))\" y2=\"\(n(py(limit)))\" stroke=\"#c33\" stroke-dasharray=\"6 4\"/>\n"
            s += "<text x=\"\(n(left + 6))\" y=\"\(n(py(limit) - 6))\" fill=\"#c33\">session limit \(format(limit)) s</text>\n"
        }
        // Points: every sample faint, the mean solid.
        let radius = report.rows.count > 60 ? 2.5 : 3.5
        s += "<g fill=\"#ff7f0e\">\n"
        for row in report.rows {
            for sample in row.samples.compactMap({ $0 }) where row.samples.count > 1 {
                s += "<circle cx=\"\(n(px(Double(row.position))))\" cy=\"\(n(py(sample)))\" r=\"2\" opacity=\"0.35\"/>\n"
            }
            if let mean = row.mean, row.detected {
                s += "<circle cx=\"\(n(px(Double(row.position))))\" cy=\"\(n(py(mean)))\" r=\"\(n(radius))\"><title>\(row.position): \(format(mean)) s</title></circle>\n"
            }
        }
        s += "</g>\n"
        // Fit line over the fitted range.
        if let fit = report.fit {
            let xs = report.rows.filter(\.detected).map { Double($0.position) }
            if let a = xs.min(), let b = xs.max() {
                // A straight line on a linear axis, a curve on the log one.
                let points = scale.samples(from: a, to: b).map { "\(n(px($0))),\(n(py(fit.value(at: $0))))" }
                s += "<polyline points=\"\(points.joined(separator: " "))\" fill=\"none\" stroke=\"#1f77b4\" stroke-width=\"2\" stroke-dasharray=\"8 4\"/>\n"
            }
        }
        // Reference measurements: open squares.
        if !measured.isEmpty {
            s += "<g fill=\"none\" stroke=\"#111\" stroke-width=\"1.5\">\n"
            for m in measured where Double(m.position) <= xMax {
                let x = px(Double(m.position)), y = py(m.seconds)
                s += "<rect x=\"\(n(x - 5))\" y=\"\(n(y - 5))\" width=\"10\" height=\"10\"><title>\(escape(measuredLabel)) \(m.position): \(format(m.seconds)) s</title></rect>\n"
            }
            s += "</g>\n"
        }
        // Never detected: crosses along the top edge; a cross that would touch the one
        // before it goes one row lower, so neighbouring positions stay apart.
        let never = report.rows.filter { !$0.detected }
        if !never.isEmpty {
            s += "<g stroke=\"#c33\" stroke-width=\"2\">\n"
            var rowEnds: [Double] = []  // right edge of the last cross in each row
            for row in never {
                let x = px(Double(row.position))
                let level = rowEnds.firstIndex { x - 4 > $0 + 3 } ?? rowEnds.count
                if level == rowEnds.count { rowEnds.append(x + 4) } else { rowEnds[level] = x + 4 }
                let y = top + 8 + Double(level) * 12
                s += "<path d=\"M\(n(x - 4)) \(n(y - 4)) L\(n(x + 4)) \(n(y + 4)) M\(n(x - 4)) \(n(y + 4)) L\(n(x + 4)) \(n(y - 4))\"><title>\(row.position): never detected</title></path>\n"
            }
            s += "</g>\n"
        }
        // Legend.
        let lx = left + plotW - (measured.isEmpty ? 180 : 230), ly = top + plotH - 16 - Double(1 + (report.fit == nil ? 0 : 1) + (report.rows.contains { !$0.detected } ? 1 : 0)) * 18
        s += "<g font-size=\"12\">\n"
        let entries = 1 + (report.fit == nil ? 0 : 1) + (never.isEmpty ? 0 : 1) + (measured.isEmpty ? 0 : 1)
        let legendWidth = measured.isEmpty ? 186.0 : 236.0
        s += "<rect x=\"\(n(lx - 14))\" y=\"\(n(ly - (measured.isEmpty ? 14 : 32)))\" width=\"\(n(legendWidth))\" height=\"\(n(Double(entries) * 18 + 8))\" fill=\"white\" stroke=\"#ccc\"/>\n"
        if !measured.isEmpty {
            s += "<rect x=\"\(n(lx - 5))\" y=\"\(n(ly - 23))\" width=\"10\" height=\"10\" fill=\"none\" stroke=\"#111\" stroke-width=\"1.5\"/><text x=\"\(n(lx + 10))\" y=\"\(n(ly - 14))\">\(escape(measuredLabel))</text>\n"
        }
        s += "<circle cx=\"\(n(lx))\" cy=\"\(n(ly))\" r=\"3.5\" fill=\"#ff7f0e\"/><text x=\"\(n(lx + 10))\" y=\"\(n(ly + 4))\">mean detection time</text>\n"
        if report.fit != nil {
            s += "<line x1=\"\(n(lx - 6))\" y1=\"\(n(ly + 18))\" x2=\"\(n(lx + 6))\" y2=\"\(n(ly + 18))\" stroke=\"#1f77b4\" stroke-width=\"2\" stroke-dasharray=\"4 2\"/><text x=\"\(n(lx + 10))\" y=\"\(n(ly + 22))\">least-squares fit</text>\n"
        }
        if !never.isEmpty {
            s += "<path d=\"M\(n(lx - 4)) \(n(ly + 32)) L\(n(lx + 4)) \(n(ly + 40)) M\(n(lx - 4)) \(n(ly + 40)) L\(n(lx + 4)) \(n(ly + 32))\" stroke=\"#c33\" stroke-width=\"2\"/><text x=\"\(n(lx + 10))\" y=\"\(n(ly + 40))\">never detected (\(never.count))</text>\n"
        }
        s += "</g>\n</svg>\n"
        return s
    }

    /// Where positions go across the plot: linear up to 20, else logarithmic in 1 + x.
    struct XScale {
        let maximum: Double
        let logarithmic: Bool

        init(maximum: Double) {
            logarithmic = maximum > 20
            self.maximum = logarithmic ? maximum : OrderPlot.ticks(upTo: maximum).last!
        }

        /// 0 at the left edge, 1 at the right.
        func unit(_ x: Double) -> Double {
            logarithmic ? log10(1 + x) / log10(1 + maximum) : x / maximum
        }

        /// Tick positions: 0, 1, 2, 5, 10, 20, 50 ... on the log axis, ending at the maximum.
        var ticks: [Double] {
            guard logarithmic else { return OrderPlot.ticks(upTo: maximum) }
            var out: [Double] = [0]
            var decade = 1.0
            while decade <= maximum {
                for m in [1.0, 2, 5] where m * decade <= maximum { out.append(m * decade) }
                decade *= 10
            }
            if unit(maximum) - unit(out.last!) > 0.05 { out.append(maximum) }
            return out
        }

        /// Positions from `a` to `b` close enough that a line through them looks smooth.
        func samples(from a: Double, to b: Double) -> [Double] {
            guard logarithmic else { return [a, b] }
            let ua = log10(1 + a), ub = log10(1 + b)
            return (0...80).map { k in pow(10, ua + (ub - ua) * Double(k) / 80) - 1 }
        }
    }

    /// Where times go up the plot: linear from 0, or logarithmic when they span more than
    /// a factor of 50 (from the decade below the shortest to the one above the longest).
    struct YScale {
        let minimum: Double
        let maximum: Double
        let logarithmic: Bool

        init(minimum: Double, maximum: Double) {
            logarithmic = minimum > 0 && maximum / minimum > 50
            if logarithmic {
                self.minimum = pow(10, floor(log10(minimum)))
                self.maximum = pow(10, ceil(log10(maximum)))
            } else {
                self.minimum = 0
                self.maximum = OrderPlot.ticks(upTo: maximum).last!
            }
        }

        /// 0 at the bottom, 1 at the top; times below the axis stay at the bottom edge.
        func unit(_ y: Double) -> Double {
            guard logarithmic else { return y / maximum }
            return (log10(max(y, minimum)) - log10(minimum)) / (log10(maximum) - log10(minimum))
        }

        /// 1, 2 and 5 of each decade on the log axis.
        var ticks: [Double] {
            guard logarithmic else { return OrderPlot.ticks(upTo: maximum) }
            var out: [Double] = []
            var decade = minimum
            while decade < maximum * 1.0001 {
                for m in [1.0, 2, 5] where m * decade <= maximum * 1.0001 { out.append(m * decade) }
                decade *= 10
            }
            return out
        }
    }

    /// Round tick values from 0 covering `maximum`: steps of 1, 2 or 5 × 10^k, 4-10 ticks.
    static func ticks(upTo maximum: Double) -> [Double] {
        let raw = maximum / 6
        let magnitude = pow(10, floor(log10(raw)))
        let step = [1.0, 2, 5, 10].map { $0 * magnitude }.first { $0 >= raw } ?? 10 * magnitude
        var out: [Double] = [0]
        while out.last! < maximum - step * 1e-9 { out.append(Double(out.count) * step) }
        return out
    }

    /// Coordinates with at most two decimals.
    static func n(_ x: Double) -> String {
        let r = (x * 100).rounded() / 100
        return r == r.rounded() ? String(Int(r)) : String(r)
    }

    static func escape(_ s: String) -> String {
        var out = ""
        for c in s {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            default: out.append(c)
            }
        }
        return out
    }
}
