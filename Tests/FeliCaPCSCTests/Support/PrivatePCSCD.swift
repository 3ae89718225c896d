import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A real pcscd for one test, with Debian's vpcd driver on a private port, in a private
/// mount namespace (a tmpfs on /run/pcscd) so it runs beside any other pcscd.
///
/// The test process reaches the daemon's socket through `/proc/<pid>/root/…` — the view
/// into the daemon's mount namespace — via a symlink that `PCSCLITE_CSOCK_NAME` names.
/// libpcsclite reads that variable once per process, so the symlink stays and is
/// repointed for each daemon.
final class PrivatePCSCD: Sendable {
    let pid: Int32
    /// vpcd's port for "Virtual PCD 00 00" (the next one serves "00 01").
    let port: UInt16
    private let process: Process
    private let directory: URL

    /// The stable socket path libpcsclite uses in this process.
    static let socketLink: String = {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("felica-pcsc-test-\(getpid())")
        try? FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let path = dir.appendingPathComponent("pcscd.comm").path
        setenv("PCSCLITE_CSOCK_NAME", path, 1)
        return path
    }()

    /// " --disable-polkit" where pcscd has that option. A pcscd built with polkit (Debian
    /// 13's) asks polkit whether each client may connect, and where no polkit daemon runs
    /// (a container, a chroot) it refuses them all ("Access denied"); Debian 12's has no
    /// polkit and no such option.
    static let polkitOption: String = {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = ["pcscd", "--help"]
        let pipe = Pipe()
        p.standardOutput = pipe
        p.standardError = pipe
        do { try p.run() } catch { return "" }
        let help = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        return help.contains("--disable-polkit") ? " --disable-polkit" : ""
    }()

    /// Whether pcscd here asks polkit and no polkit daemon can answer (no system bus): a
    /// pcscd started with `polkit: true` then refuses every client, as it does on a Debian 13
    /// system without polkitd, or for a user polkit does not let in.
    static let refusesWithoutPolkit: Bool = !polkitOption.isEmpty && access("/run/dbus/system_bus_socket", F_OK) != 0

    /// Starts pcscd and waits until its socket exists; `readers: false` configures no
    /// reader (the daemon runs with none connected); `polkit: true` leaves polkit on where
    /// pcscd has it.
    init(readers: Bool = true, polkit: Bool = false) throws {
        let link = Self.socketLink
        port = try Self.freePortPair()
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("felica-pcscd-\(getpid())-\(port)")
        let conf = directory.appendingPathComponent("reader.conf.d")
        try FileManager.default.createDirectory(at: conf, withIntermediateDirectories: true)
        let channel = "0x" + String(port, radix: 16)
        if readers { try """
            FRIENDLYNAME "Virtual PCD"
            DEVICENAME   /dev/null:\(channel)
            LIBPATH      /usr/lib/pcsc/drivers/serial/libifdvpcd.so
            CHANNELID    \(channel)

            """.write(to: conf.appendingPathComponent("vpcd"), atomically: true, encoding: .utf8) }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/unshare")
        // Root mounts directly; anyone else maps themselves to root in a user namespace.
        p.arguments = (getuid() == 0 ? ["-m"] : ["-r", "-m"]) + ["--", "sh", "-c",
            "mkdir -p /run/pcscd 2>/dev/null; mount -t tmpfs tmpfs /run/pcscd && exec pcscd --foreground\(polkit ? "" : Self.polkitOption) -c '\(conf.path)'"]
        // FELICA_PCSCD_LOG=<file> keeps the daemon's debug log with every APDU.
        let logPath = ProcessInfo.processInfo.environment["FELICA_PCSCD_LOG"]
        if logPath != nil { p.arguments![p.arguments!.count - 1] += " --debug --apdu" }
        if let logPath { _ = FileManager.default.createFile(atPath: logPath, contents: nil) }
        let log = FileHandle(forWritingAtPath: logPath ?? "/dev/null")
        p.standardOutput = log
        p.standardError = log
        try p.run()
        process = p
        pid = p.processIdentifier
        let socket = "/proc/\(pid)/root/run/pcscd/pcscd.comm"
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(10)
        // The daemon signals readiness only by creating its socket; poll for it.
        while access(socket, F_OK) != 0 {
            guard p.isRunning, clock.now < deadline else {
                p.terminate()
                throw TestFailure("pcscd did not start (needs pcscd, vsmartcard-vpcd and permission to `unshare -m`; exit \(p.isRunning ? "-" : String(p.terminationStatus)))")
            }
            usleep(5_000)
        }
        unlink(link)
        guard symlink(socket, link) == 0 else { throw TestFailure("cannot link \(link) to \(socket)") }
    }

    /// Stops the daemon and waits for it to exit.
    func stop() {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: directory)
    }

    deinit { stop() }

    /// Two consecutive free TCP ports (vpcd opens one per slot).
    private static func freePortPair() throws -> UInt16 {
        for _ in 0..<50 {
            let base = UInt16.random(in: 20000...59000)
            if isFree(base) && isFree(base + 1) { return base }
        }
        throw TestFailure("no free TCP port pair for vpcd")
    }

    private static func isFree(_ port: UInt16) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = 0
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        } == 0
    }
}

struct TestFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
