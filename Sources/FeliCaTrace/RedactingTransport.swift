import FeliCa
import Synchronization

/// A transport that shows the session above it a redacted card (`--redact`): every IDm a
/// response carries becomes its pseudonym, the card numbers in the blocks read become
/// theirs, and a command addressed to a pseudonym goes to the card with the real IDm. What
/// sits above — the decoders, `-v`, the `--trace` recorder — never sees an original, and
/// a trace recorded above it replays the same session (``Trace/redacted(by:)`` gives the
/// same result from a plain trace).
///
///     card ──▶ IDm 0101120312345678 ──▶ RedactingTransport ──▶ IDm 07c5…  ──▶ session
public final class RedactingTransport: TransportWrapper {
    public let inner: any Transport
    private let redactor: Mutex<Redactor>

    public init(wrapping transport: any Transport, redactor: Redactor) {
        inner = transport
        self.redactor = Mutex(redactor)
    }

    public func exchange(_ packet: [UInt8], timeout: Duration) async throws(FeliCaError) -> [UInt8] {
        var tx = packet
        if let pseudonym = Trace.idm(command: packet), let original = redactor.withLock({ $0.original(ofIDm: pseudonym) }) {
            tx.replaceSubrange(2..<10, with: Redactor.bytes(original.rawValue))
        }
        let rx: [UInt8]
        do {
            rx = try await inner.exchange(tx, timeout: timeout)
        } catch {
            throw FeliCaError(error.code, redactor.withLock { $0.scrub(text: error.reason) }, statusFlags: error.statusFlags)
        }
        return redactor.withLock { r in
            if let idm = Trace.idm(response: rx) { _ = r.idm(idm) }
            return r.scrub(Trace.numbersRedacted(rx, command: tx, &r))
        }
    }

    public func readerReportedIdentity() async throws(FeliCaError) -> (idm: IDm, pmm: PMm)? {
        guard let found = try await inner.readerReportedIdentity() else { return nil }
        return (redactor.withLock { $0.idm(found.idm) }, found.pmm)
    }
}
