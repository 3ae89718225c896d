import FeliCa
import FeliCaReaderCodecs
import FeliCaEmulators
import FeliCaCLI
import FeliCaDevices
import FeliCaSimulation
import FeliCaTransportSupport
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// What an emulated USB reader shows on the fake bus: its descriptors and strings, which
/// the bridge turns into the fake sysfs entry and device node.
struct EmulatedUSBDevice: Sendable {
    var vendor: UInt16
    var product: UInt16
    /// bcdDevice.
    var release: UInt16
    var outEndpoint: UInt8
    var inEndpoint: UInt8
    var packetSize: UInt16 = 64
    /// In units of 2 mA, as the configuration descriptor counts it.
    var maxPower: UInt8
    /// String descriptors 1 and 2; nil = the device has none (index 0 in the descriptor).
    var manufacturer: String?
    var productName: String?

    /// The device descriptor, then the configuration descriptor with its one vendor-specific
    /// interface and two bulk endpoints.
    var descriptors: [UInt8] {
        func le(_ v: UInt16) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8)] }
        // In pieces: Swift 6.0's type checker gives up on the whole sum in one expression.
        let strings: [UInt8] = [manufacturer == nil ? 0 : 1, productName == nil ? 0 : 2, 0, 1]
        var device: [UInt8] = [18, 1] + le(0x0200) + [0, 0, 0, 64]
        device += le(vendor) + le(product) + le(release)
        device += strings
        let configuration: [UInt8] = [9, 2] + le(32) + [1, 1, 0, 0x80, maxPower]
        let interface: [UInt8] = [9, 4, 0, 0, 2, 0xFF, 0xFF, 0xFF, 0]
        let endpoints: [UInt8] = [outEndpoint, inEndpoint].flatMap { (address: UInt8) -> [UInt8] in [7, 5, address, 2] + le(packetSize) + [0] }
        return device + configuration + interface + endpoints
    }
}

/// Runs a command with an emulated reader on a umockdev USB bus: starts the bridge script
/// (umockdev's usbdevfs plumbing, in Python) with the command under it, and serves the
/// bridge with the reader's state machine on a thread of its own.
enum USBBridge {
    /// Runs `command` with `device` on the bus, behaving as `emulator`; returns the command's
    /// exit status. `bridgeOptions` go to the bridge as they are (kernel-driver states).
    static func run<E: USBBridgedEmulator>(
        _ command: [String], device: EmulatedUSBDevice, emulator: E, bridgeOptions: [String] = [],
        name: String, console: Console
    ) async throws -> Int32 {
        guard let bridge = script() else {
            throw CLIError("felica-sim \(name): the USB bridge script (usb-bridge.py) is missing from the build's resources; rebuild, or set FELICA_USB_BRIDGE to its path", exitCode: ExitCode.unavailable)
        }
        var pair: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0 else {
            throw CLIError("felica-sim \(name): cannot create a socket pair: \(String(cString: strerror(errno)))")
        }
        var argv = ["umockdev-wrapper", "/usr/bin/python3", bridge, "--fd", "3", "--descriptors", Hex.encode(device.descriptors)]
        if let m = device.manufacturer { argv += ["--manufacturer", m] }
        if let p = device.productName { argv += ["--product-name", p] }
        argv += bridgeOptions + ["--"] + command
        let pid: pid_t
        do {
            pid = try ChildProcess.spawn(argv, redirections: [(pair[1], 3)])
        } catch {
            close(pair[0]); close(pair[1])
            throw CLIError("cannot start \(argv[0]): \(error.reason)", exitCode: ExitCode.unavailable)
        }
        close(pair[1])
        let server = USBBridgeServer(socket: pair[0], emulator: emulator)
        let serving = Thread { server.serve() }
        serving.name = "felica-sim \(name)"
        serving.start()
        // Waited for on a thread of its own: waitpid blocks.
        let status = await withCheckedContinuation { (c: CheckedContinuation<Int32, Never>) in
            Thread.detachNewThread { c.resume(returning: ChildProcess.wait(pid).status) }
        }
        if status == 127 {
            console.diag("felica-sim \(name): could not start the bridge (needs umockdev-wrapper and /usr/bin/python3 with gi: sudo apt-get install umockdev gir1.2-umockdev-1.0 python3-gi)")
        }
        return status
    }

    /// The bridge script: `$FELICA_USB_BRIDGE`, else the installed copy (see
    /// ``installedScript(executable:)``), else the copy in the build's resources.
    static func script() -> String? {
        if let path = getenv("FELICA_USB_BRIDGE").map({ String(cString: $0) }), !path.isEmpty { return path }
        if let installed = Bundle.main.executablePath.flatMap(installedScript(executable:)) { return installed }
        return Bundle.module.path(forResource: "usb-bridge", ofType: "py")
    }

    /// Where the Debian package puts the bridge for a program installed as
    /// `<prefix>/bin/felica-sim`: `<prefix>/share/felica-sim/usb-bridge.py`; nil when it is not there.
    static func installedScript(executable: String) -> String? {
        let prefix = URL(fileURLWithPath: executable).deletingLastPathComponent().deletingLastPathComponent()
        let path = prefix.appendingPathComponent("share/felica-sim/usb-bridge.py").path
        return access(path, R_OK) == 0 ? path : nil
    }
}
