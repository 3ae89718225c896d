import FeliCa
import FeliCaSimulation

/// How long a reader takes for each exchange with a card, on a simulated clock.
///
/// A model only prices exchanges: whether the card answers is decided by the virtual
/// card, and detection times come out of ``PollingRunner`` running the sequence.
public protocol TimingModel: Sendable {
    /// The name used on the command line (`ios`, `rf`).
    var name: String { get }
    /// One line naming the parameters and where they come from.
    var summary: String { get }
    /// The reader session's lifetime: a poll is only started when it can finish inside it.
    var sessionLimit: Duration? { get }
    /// Longest one Polling of a listed code can take, answered or not.
    var pollWindow: Duration { get }
    /// Time from the start of the session until the first command goes out.
    var startLatency: Duration { get }
    /// Time `packet` occupies the reader until `reply` arrives (nil: until it gives up).
    /// Throws `FeliCaError.Code.unsupported` for exchanges the modelled reader cannot make.
    func duration(of packet: [UInt8], reply: [UInt8]?, card: VirtualCard) throws(FeliCaError) -> Duration
}

extension TimingModel {
    public var startLatency: Duration { .zero }
}

/// The built-in timing models by command-line name.
public enum TimingModels {
    /// Names accepted by ``named(_:)``.
    public static let names = ["ios", "rf"]

    /// The model called `name`; throws `.invalidArgument` naming the choices otherwise.
    public static func named(_ name: String) throws(FeliCaError) -> any TimingModel {
        switch name {
        case "ios": return IOSTimingModel.fitted
        case "rf": return RFTimingModel()
        default:
            throw FeliCaError(.invalidArgument, "unknown timing model \"\(name)\": use one of \(names.joined(separator: ", "))")
        }
    }
}

extension Duration {
    /// The duration in seconds as a `Double`.
    public var seconds: Double {
        let c = components
        return Double(c.seconds) + Double(c.attoseconds) * 1e-18
    }

    /// A duration of `s` seconds, rounded to the nanosecond.
    public static func seconds(fractional s: Double) -> Duration {
        .nanoseconds(Int64((s * 1e9).rounded()))
    }
}

