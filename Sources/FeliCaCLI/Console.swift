#if canImport(Glibc)
import Glibc
#endif

/// Where a command writes: data to stdout, diagnostics and progress to stderr.
///
/// Writes go straight to file descriptors 1 and 2 (no stdio buffers), so data and
/// diagnostics interleave correctly and nothing is lost on exit.
public final class Console: Sendable {
    public init() {}

    private func write(_ fd: Int32, _ text: String) {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let n = bytes.withUnsafeBufferPointer { Glibc.write(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                return  // closed pipe or full disk: nothing useful left to do with this stream
            }
            bytes = bytes.dropFirst(n)
        }
    }

    /// Writes data to stdout.
    public func out(_ text: String) { write(1, text) }

    /// Writes a line of data to stdout.
    public func line(_ text: String = "") { write(1, text + "\n") }

    /// Writes a diagnostic line to stderr.
    public func diag(_ text: String) { write(2, text + "\n") }

    /// Writes a progress message to stderr, overwritten in place; only on a terminal, so
    /// logs and pipes stay clean.
    public func progress(_ text: String) {
        if isatty(2) != 0 { write(2, "\r\u{1B}[K" + text) }
    }

    /// Ends a run of progress messages.
    public func endProgress() {
        if isatty(2) != 0 { write(2, "\r\u{1B}[K") }
    }
}
