/// A straight line `y = base + slope × x` fitted by least squares, with its r².
public struct LinearFit: Hashable, Sendable {
    /// Value at x = 0.
    public var base: Double
    /// Change of y per unit of x.
    public var slope: Double
    /// Coefficient of determination of the fitted points (1 = every point on the line).
    public var r2: Double
    /// Number of points fitted.
    public var count: Int

    public init(base: Double, slope: Double, r2: Double, count: Int) {
        self.base = base
        self.slope = slope
        self.r2 = r2
        self.count = count
    }

    /// The line's value at `x`.
    public func value(at x: Double) -> Double { base + slope * x }

    /// Fits `points`, each weighted by `weight(point)` in the squared error (1 for ordinary
    /// least squares). Nil when fewer than two distinct x values are given.
    public static func fit(_ points: [(x: Double, y: Double)], weight: ((x: Double, y: Double)) -> Double = { _ in 1 }) -> LinearFit? {
        var sw = 0.0, sx = 0.0, sy = 0.0
        for p in points {
            let w = weight(p)
            sw += w; sx += w * p.x; sy += w * p.y
        }
        guard sw > 0 else { return nil }
        let mx = sx / sw, my = sy / sw
        var sxx = 0.0, sxy = 0.0
        for p in points {
            let w = weight(p)
            sxx += w * (p.x - mx) * (p.x - mx)
            sxy += w * (p.x - mx) * (p.y - my)
        }
        guard sxx > 0 else { return nil }
        let slope = sxy / sxx
        let base = my - slope * mx
        // r² of the ordinary (unweighted) residuals: how much of y's spread the line explains.
        let mean = points.reduce(0) { $0 + $1.y } / Double(points.count)
        var ssRes = 0.0, ssTot = 0.0
        for p in points {
            let r = p.y - (base + slope * p.x)
            ssRes += r * r
            ssTot += (p.y - mean) * (p.y - mean)
        }
        let r2 = ssTot > 0 ? 1 - ssRes / ssTot : 1
        return LinearFit(base: base, slope: slope, r2: r2, count: points.count)
    }
}
