internal import CPCSCLite
import FeliCa

/// Where a pcsc-lite call failed, so one return code can read differently (a card missing
/// when connecting is "no card"; missing during an exchange it is "removed").
enum PCSCPhase {
    case context, listing, waiting, connecting, exchanging, closing
}

/// PC/SC's own failure that the FeliCa layer has no code for: the daemon is not running, no
/// reader is connected to it, or it refuses this program. It reaches callers inside a `FeliCaError` whose code is
/// `noReader` (a reader cannot be had), as `FeliCaError.pcscError`.
public struct PCSCError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong.
    public enum Code: String, Hashable, Sendable {
        /// No PC/SC daemon answers (SCARD_E_NO_SERVICE, or SCARD_E_SERVICE_STOPPED when
        /// opening a context).
        case noService
        /// The daemon runs but no reader is connected to it (SCARD_E_NO_READERS_AVAILABLE,
        /// or an empty reader list).
        case noReaders
        /// The daemon refused this program (SCARD_W_SECURITY_VIOLATION): pcsc-lite 2 asks
        /// polkit who may use its readers (Debian 13's pcscd does), and the policy, or a
        /// polkit daemon that is not running, said no.
        case accessDenied
    }

    public var code: Code
    public var reason: String

    public init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    public var description: String { reason }

    /// No reader connected to the daemon, as a `noReader` error carrying this layer's code.
    static func noReaders(_ reason: String) -> FeliCaError {
        FeliCaError(.noReader, reason, underlying: PCSCError(.noReaders, reason))
    }
}

extension FeliCaError {
    /// The PC/SC layer's own error, when that is why the reader could not be had.
    public var pcscError: PCSCError? { underlying as? PCSCError }
}

/// `reason` as the error of a missing daemon when `phase` is opening the context, else as
/// a reader lost (the daemon was there and went away).
private func daemonMissing(_ phase: PCSCPhase, _ reason: String) -> FeliCaError {
    phase == .context ? FeliCaError(.noReader, reason, underlying: PCSCError(.noService, reason)) : FeliCaError(.readerGone, reason)
}

/// The one place pcsc-lite return codes become ``FeliCaError``s in plain words.
func pcscError(_ rc: LONG, _ call: String, reader: String? = nil, phase: PCSCPhase) -> FeliCaError {
    let on = reader.map { " '\($0)'" } ?? ""
    let code = "\(pcscName(rc) ?? "0x" + String(UInt32(truncatingIfNeeded: rc), radix: 16, uppercase: true))"
    switch rc {
    case SCARD_E_NO_SERVICE:
        // Past the context, the daemon was there and went away: the reader is lost, as
        // with SCARD_E_SERVICE_STOPPED.
        return daemonMissing(phase, "no PC/SC daemon is running (SCARD_E_NO_SERVICE): start it with `sudo systemctl start pcscd`")
    case SCARD_E_SERVICE_STOPPED:
        return daemonMissing(phase, "the PC/SC daemon stopped (SCARD_E_SERVICE_STOPPED): start it again with `sudo systemctl start pcscd`")
    case SCARD_F_COMM_ERROR:
        return FeliCaError(.readerGone, "lost the connection to the PC/SC daemon (SCARD_F_COMM_ERROR) during \(call): is pcscd still running?")
    case SCARD_W_SECURITY_VIOLATION:
        let reason = "pcscd refused this program access to its readers (SCARD_W_SECURITY_VIOLATION): it asks polkit, "
            + "whose default policy lets in only a user at the machine's own seat (not over ssh, not a service), "
            + "and no one at all when the polkit daemon is not running"
        return FeliCaError(.noReader, reason, underlying: PCSCError(.accessDenied, reason))
    case SCARD_E_NO_READERS_AVAILABLE:
        return PCSCError.noReaders("no PC/SC reader is connected (SCARD_E_NO_READERS_AVAILABLE): plug in a reader")
    case SCARD_E_UNKNOWN_READER:
        return FeliCaError(.noReader, "PC/SC reader\(on) is not connected (SCARD_E_UNKNOWN_READER)")
    case SCARD_E_READER_UNAVAILABLE:
        return FeliCaError(.readerGone, "PC/SC reader\(on) is unavailable (SCARD_E_READER_UNAVAILABLE): was it unplugged?")
    case SCARD_E_SHARING_VIOLATION:
        return FeliCaError(.busy, "PC/SC reader\(on) is in use by another program (SCARD_E_SHARING_VIOLATION): close that program and try again")
    case SCARD_E_NO_SMARTCARD, SCARD_W_REMOVED_CARD:
        if phase == .exchanging || phase == .closing {
            return FeliCaError(.cardGone, "the card was removed from reader\(on) during the exchange (\(code)): hold it still on the reader and try again")
        }
        return FeliCaError(.noCard, "no card on PC/SC reader\(on) (\(code)): place a card on the reader")
    case SCARD_W_RESET_CARD:
        return FeliCaError(.cardGone, "another program reset the card on reader\(on) (SCARD_W_RESET_CARD): try again")
    case SCARD_W_UNRESPONSIVE_CARD, SCARD_W_UNPOWERED_CARD:
        return FeliCaError(.cardGone, "the card on reader\(on) does not respond (\(code)): place it on the reader again")
    case SCARD_E_TIMEOUT:
        return FeliCaError(.timeout, "PC/SC reader\(on) timed out during \(call) (SCARD_E_TIMEOUT)")
    case SCARD_E_CANCELLED:
        return FeliCaError(.cancelled, phase == .waiting ? "waiting for a card was cancelled" : "\(call) on PC/SC reader\(on) was cancelled")
    case SCARD_E_PROTO_MISMATCH, SCARD_E_CARD_UNSUPPORTED, SCARD_W_UNSUPPORTED_CARD:
        return FeliCaError(.unsupported, "PC/SC reader\(on) cannot talk to this card (\(code))")
    case SCARD_E_NOT_TRANSACTED:
        return FeliCaError(.transmission, "PC/SC reader\(on) failed to transmit (SCARD_E_NOT_TRANSACTED)")
    default:
        return FeliCaError(.transmission, "\(call) on PC/SC reader\(on) failed: \(pcscMessage(rc)) (\(code))")
    }
}

/// pcsc-lite's own sentence for a return code.
func pcscMessage(_ rc: LONG) -> String {
    String(cString: pcsc_stringify_error(rc))
}

/// The C constant's name, for messages users can search for.
func pcscName(_ rc: LONG) -> String? {
    switch rc {
    case SCARD_E_CANCELLED: "SCARD_E_CANCELLED"
    case SCARD_E_INVALID_HANDLE: "SCARD_E_INVALID_HANDLE"
    case SCARD_E_INVALID_PARAMETER: "SCARD_E_INVALID_PARAMETER"
    case SCARD_E_INSUFFICIENT_BUFFER: "SCARD_E_INSUFFICIENT_BUFFER"
    case SCARD_E_UNKNOWN_READER: "SCARD_E_UNKNOWN_READER"
    case SCARD_E_TIMEOUT: "SCARD_E_TIMEOUT"
    case SCARD_E_SHARING_VIOLATION: "SCARD_E_SHARING_VIOLATION"
    case SCARD_E_NO_SMARTCARD: "SCARD_E_NO_SMARTCARD"
    case SCARD_E_PROTO_MISMATCH: "SCARD_E_PROTO_MISMATCH"
    case SCARD_E_NOT_READY: "SCARD_E_NOT_READY"
    case SCARD_F_COMM_ERROR: "SCARD_F_COMM_ERROR"
    case SCARD_E_NOT_TRANSACTED: "SCARD_E_NOT_TRANSACTED"
    case SCARD_E_READER_UNAVAILABLE: "SCARD_E_READER_UNAVAILABLE"
    case SCARD_E_NO_SERVICE: "SCARD_E_NO_SERVICE"
    case SCARD_E_SERVICE_STOPPED: "SCARD_E_SERVICE_STOPPED"
    case SCARD_E_NO_READERS_AVAILABLE: "SCARD_E_NO_READERS_AVAILABLE"
    case SCARD_W_UNRESPONSIVE_CARD: "SCARD_W_UNRESPONSIVE_CARD"
    case SCARD_W_UNPOWERED_CARD: "SCARD_W_UNPOWERED_CARD"
    case SCARD_W_RESET_CARD: "SCARD_W_RESET_CARD"
    case SCARD_W_REMOVED_CARD: "SCARD_W_REMOVED_CARD"
    case SCARD_W_SECURITY_VIOLATION: "SCARD_W_SECURITY_VIOLATION"
    default: nil
    }
}
