import FeliCaFiles
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Where a command writes: data to stdout, diagnostics and progress to stderr.
///
/// Writes go straight to file descriptors 1 and 2 (no stdio buffers), so data and
/// diagnostics interleave correctly and nothing is lost on exit. A failed write to stdout
/// is remembered: ``finish(_:)`` turns it into an error and a failing exit code, so
/// output lost to a full disk never passes for success.
public final class Console: Sendable {
    /// `-v/--verbose`: frames go to stderr as they are exchanged.
    public let verbose: Bool
    /// The first error (errno) a write to stdout met; 0 when none.
    private let stdoutError = Atomic<Int32>(0)

    public init(verbose: Bool = false) {
        self.verbose = verbose
    }

    /// Writes all of `text`; returns errno when a write fails.
    private func write(_ fd: Int32, _ text: String) -> Int32 {
        SystemCalls.writeAll(Array(text.utf8)) { Glibc.write(fd, $0, $1) }
    }

    /// Writes data to stdout.
    public func out(_ text: String) {
        let e = write(1, text)
        if e != 0 { _ = stdoutError.compareExchange(expected: 0, desired: e, ordering: .relaxed) }
    }

    /// Writes a line of data to stdout.
    public func line(_ text: String = "") { out(text + "\n") }

    /// Whether a write to stdout has failed (a full disk, a closed pipe); a command that
    /// loops stops producing output then.
    public var outputFailed: Bool { stdoutError.load(ordering: .relaxed) != 0 }

    /// Writes a diagnostic line to stderr (nowhere left to report a failure of it).
    public func diag(_ text: String) { _ = write(2, text + "\n") }

    /// Writes `Error: <message>` to stderr, the label in red on a colour terminal.
    public func error(_ message: String) { diag("\(Self.errorLabel()) \(message)") }

    /// Writes a progress message to stderr, overwritten in place; only on a terminal, so
    /// logs and pipes stay clean.
    public func progress(_ text: String) {
        if isatty(2) != 0 { _ = write(2, "\r\u{1B}[K" + text) }
    }

    /// Ends a run of progress messages.
    public func endProgress() {
        if isatty(2) != 0 { _ = write(2, "\r\u{1B}[K") }
    }

    /// The exit code a command ends with: `code`, unless its data could not be written.
    /// A reader that went away (a closed pipe, as in `felica history | head -1`) ends it
    /// quietly, as Unix tools do; any other failure is reported and fails the command.
    public func finish(_ code: Int32) -> Int32 {
        let e = stdoutError.load(ordering: .relaxed)
        guard e != 0, e != EPIPE else { return code }
        error("cannot write the output: \(String(cString: strerror(e)))")
        return code == ExitCode.ok ? ExitCode.failure : code
    }

    /// `Error:`, red when stderr is a colour terminal.
    static func errorLabel() -> String { Colour.paint("Error:", .red, fd: 2) }
}

/// ANSI colour on a terminal; none when the stream is not a terminal, when `NO_COLOR` is
/// set (no-color.org) or when `TERM` is `dumb`.
enum Colour: Sendable {
    case red, yellow, green

    var code: String {
        switch self {
        case .red: "31"
        case .yellow: "33"
        case .green: "32"
        }
    }

    /// Whether text written to `fd` gets colour.
    static func enabled(fd: Int32) -> Bool {
        guard isatty(fd) != 0 else { return false }
        if let v = getenv("NO_COLOR"), v.pointee != 0 { return false }
        if let t = getenv("TERM"), String(cString: t) == "dumb" { return false }
        return true
    }

    /// `text` in `colour` when `fd` gets colour, else unchanged.
    static func paint(_ text: String, _ colour: Colour, fd: Int32) -> String {
        enabled(fd: fd) ? paint(text, colour) : text
    }

    /// `text` in `colour`.
    static func paint(_ text: String, _ colour: Colour) -> String {
        "\u{1B}[\(colour.code)m\(text)\u{1B}[0m"
    }
}
