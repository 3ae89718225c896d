import Foundation
import Synchronization

/// What one run of a program printed and returned.
public struct RunResult: Sendable {
    public var stdout: String
    public var stderr: String
    public var status: Int32

    public init(stdout: String, stderr: String, status: Int32) {
        self.stdout = stdout
        self.stderr = stderr
        self.status = status
    }
}

/// Where the built executables are, and the environment every test run gives them.
public enum Executables {
    /// The directory holding `felica` and `felica-sim`: `FELICA_BIN` (set by scripts/test.sh),
    /// else the directory of the test bundle, which SwiftPM builds beside them.
    public static let directory: URL = {
        if let dir = ProcessInfo.processInfo.environment["FELICA_BIN"] { return URL(fileURLWithPath: dir) }
        return URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    }()

    /// The path of a built executable, e.g. `felica` or `felica-sim`.
    public static func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    /// This process's environment with the settings that would leak into a test removed
    /// (a user's `FELICA_DEVICE`, libnfc's auto-scan, colour and terminal width, a PC/SC
    /// test's private pcscd), the built
    /// executables first on `PATH`, and `overrides` applied last.
    public static func environment(_ overrides: [String: String] = [:]) -> [String: String] {
        var env = ProcessInfo.processInfo.environment
        env["FELICA_DEVICE"] = nil
        env["LIBNFC_AUTO_SCAN"] = "false"
        env["LIBNFC_LOG_LEVEL"] = "0"
        env["COLUMNS"] = nil
        env["NO_COLOR"] = nil
        // A PC/SC test points this process at its private pcscd (whose virtual reader holds
        // a card); a program another test starts meanwhile must not find that reader.
        env["PCSCLITE_CSOCK_NAME"] = nil
        env["PATH"] = directory.path + ":" + (env["PATH"] ?? "/usr/bin:/bin")
        for (k, v) in overrides { env[k] = v }
        return env
    }
}

/// Runs a program to its end and captures what it printed. With `stdout`, the program
/// writes its output to that file (e.g. /dev/full) instead of a pipe.
public func runProgram(_ program: String, _ arguments: [String], environment: [String: String] = [:],
                       stdout: String? = nil, directory: URL? = nil) throws -> RunResult {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: program)
    p.arguments = arguments
    p.environment = Executables.environment(environment)
    if let directory { p.currentDirectoryURL = directory }
    let out = Pipe(), err = Pipe()
    let file = try stdout.map { path in
        guard let h = FileHandle(forWritingAtPath: path) else { throw CocoaError(.fileNoSuchFile) }
        return h
    }
    p.standardOutput = file ?? out
    p.standardError = err
    try p.run()
    // Read both pipes before waiting, so a large output cannot block the child: stderr on a
    // thread of its own while this one drains stdout.
    let errData = Mutex(Data())
    let errDone = DispatchSemaphore(value: 0)
    Thread.detachNewThread {
        let d = err.fileHandleForReading.readDataToEndOfFile()
        errData.withLock { $0 = d }
        errDone.signal()
    }
    let o = file == nil ? out.fileHandleForReading.readDataToEndOfFile() : Data()
    errDone.wait()
    p.waitUntilExit()
    return RunResult(stdout: String(decoding: o, as: UTF8.self),
                     stderr: String(decoding: errData.withLock { $0 }, as: UTF8.self),
                     status: p.terminationStatus)
}

/// Runs a built executable (`felica` unless named) to its end.
public func runFelica(_ arguments: [String], executable: String = "felica", environment: [String: String] = [:],
                      stdout: String? = nil, directory: URL? = nil) throws -> RunResult {
    try runProgram(Executables.path(executable), arguments, environment: environment, stdout: stdout, directory: directory)
}

/// A program running in the background, its output collected as it comes; killed when the
/// value goes away if it is still running.
public final class BackgroundProcess: Sendable {
    /// The running process.
    public let process: Process
    private let out = Collected()
    private let err = Collected()
    private let outPipe = Pipe(), errPipe = Pipe()

    /// Starts a built executable (`felica` unless named).
    public convenience init(felica arguments: [String], executable: String = "felica", environment: [String: String] = [:]) throws {
        try self.init(program: Executables.path(executable), arguments, environment: environment)
    }

    /// Starts any program.
    public init(program: String, _ arguments: [String], environment: [String: String] = [:]) throws {
        process = Process()
        process.executableURL = URL(fileURLWithPath: program)
        process.arguments = arguments
        process.environment = Executables.environment(environment)
        process.standardOutput = outPipe
        process.standardError = errPipe
        outPipe.fileHandleForReading.readabilityHandler = { [out] h in out.append(h.availableData) }
        errPipe.fileHandleForReading.readabilityHandler = { [err] h in err.append(h.availableData) }
        try process.run()
    }

    deinit {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
        outPipe.fileHandleForReading.readabilityHandler = nil
        errPipe.fileHandleForReading.readabilityHandler = nil
    }

    /// What the program has written to stdout so far.
    public var stdout: String { out.text }
    /// What the program has written to stderr so far.
    public var stderr: String { err.text }
    /// Whether it is still running.
    public var isRunning: Bool { process.isRunning }

    /// Waits until `condition` holds, up to `seconds`; whether it held.
    @discardableResult
    public func until(_ seconds: Double, _ condition: () -> Bool) -> Bool {
        let end = Date().addingTimeInterval(seconds)
        while Date() < end {
            if condition() { return true }
            usleep(10_000)
        }
        return condition()
    }

    /// Sends a signal.
    public func signal(_ sig: Int32) { kill(process.processIdentifier, sig) }

    /// Waits for the exit, killing the program after `seconds`: everything it printed, its
    /// exit status, and whether it had to be killed.
    public func finish(within seconds: Double) -> (result: RunResult, timedOut: Bool) {
        let ended = until(seconds) { !process.isRunning }
        if !ended { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        outPipe.fileHandleForReading.readabilityHandler = nil
        errPipe.fileHandleForReading.readabilityHandler = nil
        // Whatever arrived after the last callback.
        let restOut = outPipe.fileHandleForReading.readDataToEndOfFile()
        let restErr = errPipe.fileHandleForReading.readDataToEndOfFile()
        out.append(restOut)
        err.append(restErr)
        return (RunResult(stdout: stdout, stderr: stderr, status: process.terminationStatus), !ended)
    }
}

/// Bytes a pipe's reading thread appends while a test reads them.
private final class Collected: Sendable {
    private let data = Mutex(Data())
    func append(_ d: Data) { data.withLock { $0.append(d) } }
    var text: String { String(decoding: data.withLock { $0 }, as: UTF8.self) }
}
