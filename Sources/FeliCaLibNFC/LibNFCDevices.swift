import FeliCa
import FeliCaReaderCodecs
import FeliCaTransportSupport
import Glibc

/// One reader libnfc can reach.
public struct LibNFCDeviceInfo: Hashable, Sendable {
    /// libnfc's connection string, e.g. `pn532_uart:/dev/ttyUSB0`.
    public var connectionString: String
    /// libnfc's name for it once opened (`pn532_uart:/dev/ttyUSB0`), nil when it would not open.
    public var name: String?
    /// Why it would not open, in plain words.
    public var problem: String?
}

/// Finding libnfc readers, and explaining why none was found.
public enum LibNFCDevices {
    /// libnfc's version, e.g. `1.8.0`.
    public static var libnfcVersion: String { LibNFC.version }

    /// The readers libnfc knows (its configuration, `LIBNFC_DEVICE`, and its scan), each
    /// opened briefly for its name. Blocking calls run on a thread of their own.
    public static func list() async -> [LibNFCDeviceInfo] {
        await list(except: [])
    }

    /// ``list()`` without opening the readers named in `skipped` (connection strings
    /// another transport serves better); they are left out.
    public static func list(except skipped: Set<String>) async -> [LibNFCDeviceInfo] {
        let thread = DeviceThread(name: "libnfc list")
        defer { thread.stop() }
        return await thread.run { () -> [LibNFCDeviceInfo] in
            guard let context = LibNFC.context else { return [] }
            return LibNFC.listDevices(context).filter { !skipped.contains($0) }.map { connstring in
                guard let d = LibNFC.open(context, connstring) else {
                    return LibNFCDeviceInfo(connectionString: connstring, name: nil,
                                            problem: LibNFCDiagnosis.openFailure(connstring, context: context).reason)
                }
                defer { LibNFC.close(d) }
                return LibNFCDeviceInfo(connectionString: connstring, name: LibNFC.name(d), problem: nil)
            }
        }
    }

    /// The connection strings of the readers libnfc knows (its configuration,
    /// `LIBNFC_DEVICE`, and its scan), none opened.
    public static func connectionStrings() async -> [String] {
        let thread = DeviceThread(name: "libnfc list")
        defer { thread.stop() }
        return await thread.run { () -> [String] in
            guard let context = LibNFC.context else { return [] }
            return LibNFC.listDevices(context)
        }
    }

    /// Why a connection string cannot name a reader, when its driver is not one libnfc has
    /// (a typo such as `pn532-uart`): the message lists the drivers; or when a serial
    /// driver is given no port (`pn532_uart:`), which libnfc cannot open whatever the
    /// permissions. Nil for a known driver with what it needs.
    public static func unknownDriver(in connectionString: String) -> String? {
        let parts = connectionString.split(separator: ":", omittingEmptySubsequences: false)
        guard let driver = parts.first else { return nil }
        if let example = LibNFCDiagnosis.serialExamples[String(driver)], parts.count < 2 || parts[1].isEmpty {
            return "libnfc's \(driver) driver needs the port the board is wired to (in connection string '\(connectionString)'), e.g. libnfc:\(driver):\(example)"
        }
        guard !(LibNFCDiagnosis.drivers + LibNFCDiagnosis.optionalDrivers).contains(String(driver)) else { return nil }
        return "libnfc has no driver named '\(driver)' (in connection string '\(connectionString)'): its drivers are \(LibNFCDiagnosis.drivers.joined(separator: ", ")), e.g. libnfc:pn532_uart:/dev/ttyUSB0 or libnfc:pn53x_usb:001:004"
    }

    /// Why no reader could be opened, with what to do (for `felica doctor` and errors).
    public static func explainMissingReader(connectionString: String? = nil) -> String {
        LibNFCDiagnosis.reason(connectionString)
    }
}

/// Plain-words reasons for a reader that would not open.
enum LibNFCDiagnosis {
    /// Kernel NFC drivers that take PN533/ACR122/RC-S380 readers before libnfc can.
    static let kernelModules = ["pn533_usb", "pn533", "port100"]

    /// The drivers of libnfc 1.8 as Debian builds it (its default set), in the order it lists them.
    static let drivers = ["acr122_usb", "acr122s", "arygon", "pn53x_usb", "pn532_uart", "pn532_spi", "pn532_i2c"]
    /// Drivers that open a port named in the connection string, with an example port.
    static let serialExamples = ["pn532_uart": "/dev/ttyUSB0", "arygon": "/dev/ttyUSB0", "acr122s": "/dev/ttyUSB0",
                                 "pn532_spi": "/dev/spidev0.0", "pn532_i2c": "/dev/i2c-1"]
    /// Drivers a libnfc built with other options may have besides.
    static let optionalDrivers = ["acr122_pcsc", "pcsc", "pn71xx"]

    static func openFailure(_ connstring: String?, context: OpaquePointer) -> FeliCaError {
        if let connstring, let problem = LibNFCDevices.unknownDriver(in: connstring) {
            return FeliCaError(.badInput, problem)
        }
        if connstring == nil && LibNFC.listDevices(context).isEmpty {
            return FeliCaError(.noReader, "no libnfc reader found: " + reason(nil))
        }
        return FeliCaError(.noReader, "libnfc could not open \(connstring ?? "its first reader"): " + reason(connstring))
    }

    /// The kernel NFC drivers loaded right now.
    static var loadedKernelModules: [String] { kernelModules.filter { access("/sys/module/\($0)", F_OK) == 0 } }

    static func reason(_ connstring: String?, loaded: [String] = loadedKernelModules) -> String {
        var reasons: [String] = []
        if let connstring, let path = serialPath(connstring) {
            if access(path, F_OK) != 0 {
                reasons.append("\(path) does not exist (is the board plugged in? `ls /dev/ttyUSB* /dev/ttyACM*` lists serial ports)")
            } else if access(path, R_OK | W_OK) != 0 {
                reasons.append("no permission to use \(path): add yourself to its group (`sudo usermod -aG dialout $USER`, then log in again)")
            } else {
                reasons.append("\(path) did not answer as a PN532 (check wiring, power and the serial speed; another program may hold the port — libnfc marks a port it uses as claimed)")
            }
        } else {
            if !loaded.isEmpty {
                reasons.append("the kernel's \(loaded.joined(separator: ", ")) driver\(loaded.count == 1 ? " is" : "s are") loaded and take\(loaded.count == 1 ? "s" : "") USB readers before libnfc can: `sudo modprobe -r \(loaded.joined(separator: " "))`, and blacklist \(loaded.count == 1 ? "it" : "them") in /etc/modprobe.d to make it last")
            }
            if connstring == nil, let scan = getenv("LIBNFC_AUTO_SCAN").map({ String(cString: $0) }),
               ["false", "no", "0", "off"].contains(scan.lowercased()) {
                reasons.append("LIBNFC_AUTO_SCAN=\(scan) is set, so libnfc does not look for readers itself")
            }
            if connstring == nil {
                reasons.append("libnfc finds USB readers by itself, but serial boards only when named: give a connection string such as pn532_uart:/dev/ttyUSB0, or set LIBNFC_DEVICE")
            }
            reasons.append("USB readers need permission for their /dev/bus/usb node (libnfc's udev rules, or run as a member of the plugdev group)")
        }
        return reasons.joined(separator: "; ") + "."
    }

    /// The tty path of a serial connection string (`pn532_uart:/dev/ttyUSB0[:115200]`).
    static func serialPath(_ connstring: String) -> String? {
        let parts = connstring.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count >= 2, ["pn532_uart", "arygon", "pn532_i2c", "pn532_spi"].contains(String(parts[0])),
              !parts[1].isEmpty else { return nil }
        return String(parts[1])
    }
}
