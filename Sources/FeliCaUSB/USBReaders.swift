import FeliCa
import FeliCaTransportSupport

#if canImport(Glibc)
import Glibc
#endif

/// The USB readers this module drives, and finding them on the bus.
public enum USBReaders {
    /// A reader model by its USB identity.
    public struct Model: Hashable, Sendable {
        public var vendor: UInt16
        public var product: UInt16
        public var name: String
    }

    /// Sony's RC-S380 (Port-100 chip): the /S (06c1) and /P (06c3) variants.
    public static let supported: [Model] = [
        Model(vendor: 0x054C, product: 0x06C1, name: "Sony RC-S380/S"),
        Model(vendor: 0x054C, product: 0x06C3, name: "Sony RC-S380/P"),
    ]

    /// The model with this identity, if supported.
    public static func model(vendor: UInt16, product: UInt16) -> Model? {
        supported.first { $0.vendor == vendor && $0.product == product }
    }

    /// Where a device sits on the USB bus: its bus number and its address on that bus.
    public struct Location: Hashable, Sendable, CustomStringConvertible {
        public var bus: Int
        public var address: Int

        public init(bus: Int, address: Int) {
            self.bus = bus
            self.address = address
        }

        /// The device node, `/dev/bus/usb/001/004`.
        public var node: String { "/dev/bus/usb/" + decimal3(bus) + "/" + decimal3(address) }
        /// `USB bus 001 device 004`, as lsusb numbers them, for messages.
        public var description: String { "USB bus " + decimal3(bus) + " device " + decimal3(address) }
    }

    /// One supported reader on the bus.
    public struct Found: Hashable, Sendable {
        public var model: Model
        public var location: Location
        /// Why it cannot be used right now (no permission on its node), nil when it can be opened.
        public var problem: String?
        /// Whether a kernel driver (`port100`) holds its interface (detached when opened).
        public var kernelDriverBound: Bool
    }

    /// The supported readers on the bus, each opened briefly to learn whether it can be used.
    /// Empty when libusb cannot start (no USB in this machine or container).
    public static func list() async -> [Found] {
        let thread = DeviceThread(name: "felica.usb.list")
        defer { thread.stop() }
        return await thread.run { () -> [Found] in
            guard case .success(let context) = LibUSB.makeContext() else { return [] }
            defer { LibUSB.exit(context) }
            guard case .success(let devices) = LibUSB.devices(context) else { return [] }
            defer { devices.forEach { LibUSB.unref($0.device) } }
            return devices.compactMap { d -> Found? in
                guard let model = model(vendor: d.vendor, product: d.product) else { return nil }
                var found = Found(model: model, location: Location(bus: d.bus, address: d.address), problem: nil, kernelDriverBound: false)
                switch LibUSB.open(d.device) {
                case .success(let handle):
                    found.kernelDriverBound = LibUSB.kernelDriverActive(handle, interface: 0) == 1
                    LibUSB.close(handle)
                case .failure(let status):
                    found.problem = RCS380Connection.openError(status, location: found.location, model: model).reason
                }
                return found
            }
        }
    }

    static func decimal3(_ n: Int) -> String {
        let s = String(n)
        return String(repeating: "0", count: max(0, 3 - s.count)) + s
    }

    static func hex4(_ n: UInt16) -> String {
        let s = String(n, radix: 16)
        return String(repeating: "0", count: max(0, 4 - s.count)) + s
    }

    /// The udev rule line that gives the logged-in user (and the plugdev group) access to
    /// the USB device `vendor`:`product`; `felica doctor` gives the same for every reader.
    public static func udevRule(vendor: UInt16, product: UInt16) -> String {
        "SUBSYSTEM==\"usb\", ATTRS{idVendor}==\"\(hex4(vendor))\", ATTRS{idProduct}==\"\(hex4(product))\", MODE=\"0660\", GROUP=\"plugdev\", TAG+=\"uaccess\""
    }
    /// The rules for the readers this module drives.
    public static var udevRule: String {
        supported.map { udevRule(vendor: $0.vendor, product: $0.product) }.joined(separator: "\n")
    }
    /// Where the rules go.
    public static let udevRulePath = "/etc/udev/rules.d/60-felica.rules"
    /// Where blacklist lines for the kernel's NFC drivers go (the file Debian's libnfc6 installs).
    public static let blacklistPath = "/etc/modprobe.d/blacklist-libnfc.conf"
    /// What the open error says when `port100` holds the reader and may not be detached.
    public static let port100Held = "is held by the kernel's port100 NFC driver, and it could not be detached"
    /// How to free the reader from the kernel's `port100` NFC driver: unload it now, and, unless
    /// `blacklistedIn` (a modprobe.d file) already keeps it from loading, blacklist it.
    public static func port100Fix(blacklistedIn: String?) -> String {
        if let blacklistedIn {
            return "unload it with `sudo modprobe -r port100` (\(blacklistedIn) already blacklists it, so it does not load again)"
        }
        return "unload it with `sudo modprobe -r port100`, and keep it from coming back with `echo 'blacklist port100' | sudo tee -a \(blacklistPath)`"
    }

    /// The modprobe.d file that blacklists `module` on this system (as modprobe reads them), or nil.
    public static func blacklistFile(for module: String) -> String? {
        for dir in ["/etc/modprobe.d", "/run/modprobe.d", "/usr/lib/modprobe.d", "/lib/modprobe.d"] {
            guard let d = opendir(dir) else { continue }
            var names: [String] = []
            while let entry = readdir(d) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
                if name.hasSuffix(".conf") { names.append(name) }
            }
            closedir(d)
            for name in names.sorted() {
                guard let f = fopen("\(dir)/\(name)", "r") else { continue }
                defer { fclose(f) }
                var line: UnsafeMutablePointer<CChar>? = nil
                var size = 0
                defer { free(line) }
                while getline(&line, &size, f) >= 0, let line {
                    let words = String(cString: line).split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" })
                    if words.count >= 2 && words[0] == "blacklist" && words[1] == module { return "\(dir)/\(name)" }
                }
            }
        }
        return nil
    }
}
