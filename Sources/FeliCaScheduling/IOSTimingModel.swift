import FeliCa
import FeliCaSimulation

/// Core NFC's FeliCa polling as measured on iOS 13: the reader polls the listed system
/// codes in list order, spends a fixed time on every code the card lacks, and gives up
/// when its session ends.
///
/// The two times are not constants typed in here: they are fitted by least squares to
/// ``measurements`` when the model is made.
public struct IOSTimingModel: TimingModel {
    /// One measured point: detection time of a card whose only listed system sits at
    /// `position` (behind codes it lacks); nil = never detected.
    public struct Measurement: Hashable, Sendable {
        public var position: Int
        public var seconds: Double?
        public init(position: Int, seconds: Double?) {
            self.position = position
            self.seconds = seconds
        }
    }

    /// Measured on iOS 13 with an Edy card (systems 8B61 and FE00), FE00 moved down the
    /// app's list; each time is the mean of 3 runs (Docs/ordering.md, "The figures side by side").
    public static let measurements: [Measurement] = [
        Measurement(position: 0, seconds: 0.045911),
        Measurement(position: 1, seconds: 0.347383),
        Measurement(position: 2, seconds: 0.647835),
        Measurement(position: 3, seconds: 0.950227),
        Measurement(position: 4, seconds: 1.250553),
        Measurement(position: 5, seconds: 1.551381),
        Measurement(position: 148, seconds: 44.682030),
        Measurement(position: 149, seconds: nil),
    ]

    /// In the same measurements, past about 149 codes the 45 s reader session ends first.
    public static let measuredSessionLimit: Duration = .seconds(45)

    /// The model fitted to ``measurements``.
    public static let fitted = IOSTimingModel(measurements: measurements, sessionLimit: measuredSessionLimit)

    public let name = "ios"
    /// Time from the start of the poll that finds the card until Core NFC reports it.
    public let firstPollLatency: Duration
    /// Time Core NFC spends on each listed code the card lacks before it polls the next.
    public let perCode: Duration
    public let sessionLimit: Duration?
    /// The measured points the model was fitted to.
    public let measured: [Measurement]

    /// Fits the model to detected `measurements` by least squares on the relative error:
    /// the points span 0.05 s to 45 s, and an ordinary fit would let the 45 s point
    /// swamp the 0.05 s one (position 0 would miss by 2 %; relative weighting keeps
    /// every point within 0.2 %).
    ///
    /// The never-detected points decide how the session limit bites: at position 149 a
    /// poll would still find the card at 44.94 s, inside 45 s, yet it was never
    /// detected; so the model starts a code's poll only when the whole time it may take
    /// (``perCode``) fits before the limit, which puts the cut between 148 and 149.
    public init(measurements: [Measurement], sessionLimit: Duration?) {
        let points = measurements.compactMap { m in m.seconds.map { (x: Double(m.position), y: $0) } }
        let fit = LinearFit.fit(points, weight: { 1 / ($0.y * $0.y) })
            ?? LinearFit(base: points.first?.y ?? 0, slope: 0, r2: 1, count: points.count)
        firstPollLatency = .seconds(fractional: fit.base)
        perCode = .seconds(fractional: fit.slope)
        self.sessionLimit = sessionLimit
        measured = measurements
    }

    public var summary: String {
        let limit = sessionLimit.map { "\(format($0.seconds)) s session" } ?? "no session limit"
        return "ios: \(format(perCode.seconds)) s per listed code the card lacks, \(format(firstPollLatency.seconds)) s first-poll latency, \(limit) (least squares over \(measured.filter { $0.seconds != nil }.count) points measured on iOS 13)"
    }

    public var pollWindow: Duration { max(perCode, firstPollLatency) }

    public func duration(of packet: [UInt8], reply: [UInt8]?, card: VirtualCard) throws(FeliCaError) -> Duration {
        guard let polling = PollingCommand(packet: packet) else {
            throw FeliCaError(.unsupported, "the ios model is fitted to Polling only and has no time for command 0x\(Hex.encode(Array(packet.dropFirst().prefix(1))))")
        }
        if polling.systemCode.isWildcard {
            // Apple: "Each system code must be a discrete value. The wild card value (0xFF)
            // isn't allowed." (com.apple.developer.nfc.readersession.felica.systemcodes)
            throw FeliCaError(.unsupported, "Core NFC cannot poll the wildcard system code \(polling.systemCode): Info.plist codes must be discrete values")
        }
        return reply == nil ? perCode : firstPollLatency
    }
}

/// Six significant digits, no trailing zeros.
func format(_ x: Double) -> String {
    var s = String(format6: x)
    while s.contains("."), s.hasSuffix("0") { s.removeLast() }
    if s.hasSuffix(".") { s.removeLast() }
    return s
}

extension String {
    /// `x` with 6 decimals, without Foundation.
    init(format6 x: Double) {
        let scaled = (abs(x) * 1e6).rounded()
        let whole = Int(scaled / 1e6)
        let frac = Int(scaled) - whole * 1_000_000
        var f = String(frac)
        while f.count < 6 { f = "0" + f }
        self = (x < 0 && scaled > 0 ? "-" : "") + "\(whole).\(f)"
    }
}
