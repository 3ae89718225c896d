import FeliCa

/// One USB device from sysfs.
public struct USBDevice: Sendable {
    /// Its directory name under `/sys/bus/usb/devices` (`1-2`).
    public var sysfsName: String
    public var vendor: UInt16
    public var product: UInt16
    public var productName: String?
    public var bus: Int
    public var device: Int
    /// Kernel drivers bound to its interfaces (`pn533_usb`, `usbfs` for a user-space claim).
    public var interfaceDrivers: [String]

    public var id: String { "\(Hex.digits(vendor, count: 4)):\(Hex.digits(product, count: 4))" }
    /// `001:004`, as libnfc's USB drivers and `lsusb` number it.
    public var busAddress: String { "\(pad3(bus)):\(pad3(device))" }
    /// The usbfs node libusb opens.
    public var node: String { "/dev/bus/usb/\(pad3(bus))/\(pad3(device))" }
    public var location: String { "USB bus \(pad3(bus)) device \(pad3(device))" }
}

private func pad3(_ n: Int) -> String {
    let s = String(n)
    return String(repeating: "0", count: max(0, 3 - s.count)) + s
}

/// A line of `/proc/modules`.
public struct LoadedModule: Sendable {
    public var name: String
    /// Modules that depend on it (the fourth column).
    public var usedBy: [String]
}

/// A running process.
public struct HostProcess: Sendable {
    public var pid: Int
    public var command: String
}

/// A library or program found installed, with where its version came from.
public struct Installed: Sendable {
    public var version: String?
    /// "Debian package libnfc6", "libnfc.pc", "/usr/lib/x86_64-linux-gnu/libnfc.so.6.0.0".
    public var source: String

    public var summary: String { (version.map { "\($0) " } ?? "") + "(\(source))" }
}

/// A udev rules file in effect, with the USB readers its access rules name.
public struct UdevRuleFile: Sendable, Equatable {
    public var path: String
    /// `vvvv:pppp` of each rule that names a vendor and product and sets a group, a mode or
    /// the `uaccess` tag.
    public var ids: Set<String>

    /// The file's name, without its directory.
    public var name: String { String(path.split(separator: "/").last ?? "") }
}

/// The files the felica Debian package installs for readers, where `felica doctor` looks for them.
public enum PackagedFiles {
    /// The Debian package that installs them.
    public static let package = "felica"
    /// The udev rule (a file of the same name in /etc/udev/rules.d replaces it, as udev does).
    public static let udevRule = "/usr/lib/udev/rules.d/60-felica.rules"
    /// The modprobe file blacklisting the kernel's `port100` driver.
    public static let blacklist = "/usr/lib/modprobe.d/felica.conf"
    /// Where the package installs the README and the guides of Docs/ (as in the source tree).
    public static let documentation = "/usr/share/doc/felica"
    /// An installed guide, by its name in Docs/: `guide("formats.md")`.
    public static func guide(_ name: String) -> String { "\(documentation)/Docs/\(name)" }
    /// Where the package installs the Wireshark dissector: Wireshark's global Lua plugin
    /// directory (`tshark -G folders`), which tshark and Wireshark load without -X.
    public static let dissector = "/usr/lib/\(multiarch)/wireshark/plugins/felica.lua"
    /// Debian's multiarch name of this machine.
    public static var multiarch: String {
        #if arch(x86_64)
        "x86_64-linux-gnu"
        #elseif arch(arm64)
        "aarch64-linux-gnu"
        #elseif arch(i386)
        "i386-linux-gnu"
        #elseif arch(powerpc64le)
        "powerpc64le-linux-gnu"
        #elseif arch(s390x)
        "s390x-linux-gnu"
        #else
        "arm-linux-gnueabihf"
        #endif
    }
    /// The directories udev reads rules from, earlier ones replacing later ones' files of the same name.
    public static let udevRuleDirectories = ["/etc/udev/rules.d", "/run/udev/rules.d", "/usr/lib/udev/rules.d", "/lib/udev/rules.d"]
}

/// Everything `felica doctor` reads from the system, gathered once.
public struct HostSnapshot: Sendable {
    /// nil when `/sys/bus/usb/devices` cannot be read (no sysfs, e.g. some containers).
    public var usb: [USBDevice]?
    /// nil when `/proc/modules` cannot be read.
    public var modules: [String: LoadedModule]?
    public var processes: [HostProcess]
    public var identity: Identity
    public var libnfc: Installed?
    public var pcscLibrary: Installed?
    public var pcscd: Installed?
    public var ccid: Installed?
    /// Modules named by `blacklist` lines in modprobe.d, each with the file that names it.
    public var blacklist: [String: String]
    /// The udev rules files in effect that give access to USB devices by id.
    public var udevRules: [UdevRuleFile] = []
    /// The version of the installed felica Debian package; nil when not installed.
    public var felicaPackage: String?
    /// pcscd's socket exists: it starts on demand even when not running.
    public var pcscdSocket: Bool
    /// What pcscd has open (targets of `/proc/<pid>/fd/*`); nil when not running or not
    /// readable (another user's process).
    public var pcscdOpenFiles: [String]?
    /// Owner and mode of each USB device's `/dev/bus/usb` node, by node path.
    public var nodes: [String: FileStatus]
    /// The kernel's own answer to "may I open it read-write", by node path; only on the
    /// real system (see ``HostFiles/kernelAllowsReadWrite(_:)``).
    public var nodeAccess: [String: Bool] = [:]
    /// Group and user names by id, for messages.
    public var groupNames: [UInt32: String]
    public var userNames: [UInt32: String]

    public static func read(_ host: HostFiles) -> HostSnapshot {
        let dpkg = host.read("/var/lib/dpkg/status").map(parseDpkgStatus) ?? [:]
        let libDirs = libraryDirectories(host)
        let groups = host.read("/etc/group").map { parseNames($0, idField: 2) } ?? [:]
        let users = host.read("/etc/passwd").map { parseNames($0, idField: 2) } ?? [:]
        let usb = readUSB(host)
        var nodes: [String: FileStatus] = [:]
        var nodeAccess: [String: Bool] = [:]
        for d in usb ?? [] {
            nodes[d.node] = host.status(d.node)
            nodeAccess[d.node] = host.kernelAllowsReadWrite(d.node)
        }
        return HostSnapshot(
            usb: usb,
            modules: host.read("/proc/modules").map(parseModules),
            processes: readProcesses(host),
            identity: host.read("/proc/self/status").flatMap(Identity.init(status:)) ?? .current(),
            libnfc: findLibrary(host, libDirs, dpkg: dpkg, packagePrefix: "libnfc", pc: "libnfc.pc", so: "libnfc.so."),
            pcscLibrary: findLibrary(host, libDirs, dpkg: dpkg, packagePrefix: "libpcsclite", pc: "libpcsclite.pc", so: "libpcsclite.so."),
            pcscd: dpkg["pcscd"].map { Installed(version: $0, source: "Debian package pcscd") }
                ?? (host.exists("/usr/sbin/pcscd") ? Installed(version: nil, source: "/usr/sbin/pcscd") : nil),
            ccid: dpkg["libccid"].map { Installed(version: $0, source: "Debian package libccid") }
                ?? (host.exists("/usr/lib/pcsc/drivers/ifd-ccid.bundle") ? Installed(version: nil, source: "/usr/lib/pcsc/drivers/ifd-ccid.bundle") : nil),
            blacklist: packagedBlacklist(host, readBlacklist(host)),
            udevRules: readUdevRules(host),
            felicaPackage: dpkg[PackagedFiles.package],
            pcscdSocket: host.exists("/run/pcscd/pcscd.comm"),
            pcscdOpenFiles: nil,
            nodes: nodes, nodeAccess: nodeAccess,
            groupNames: groups, userNames: users)
        .withOpenFiles(host)
    }

    private func withOpenFiles(_ host: HostFiles) -> HostSnapshot {
        guard let pid = pcscdProcess?.pid, let fds = host.list("/proc/\(pid)/fd") else { return self }
        var copy = self
        copy.pcscdOpenFiles = fds.compactMap { host.link("/proc/\(pid)/fd/\($0)") }
        return copy
    }

    /// USB devices (not hubs' interfaces) with their ids and bound interface drivers.
    public static func readUSB(_ host: HostFiles) -> [USBDevice]? {
        let base = "/sys/bus/usb/devices"
        guard let names = host.list(base) else { return nil }
        var devices: [USBDevice] = []
        for name in names where !name.contains(":") {
            let dir = "\(base)/\(name)"
            guard let v = host.attribute("\(dir)/idVendor").flatMap({ UInt16($0, radix: 16) }),
                  let p = host.attribute("\(dir)/idProduct").flatMap({ UInt16($0, radix: 16) }),
                  let bus = host.attribute("\(dir)/busnum").flatMap({ Int($0) }),
                  let dev = host.attribute("\(dir)/devnum").flatMap({ Int($0) })
            else { continue }
            let drivers = names.filter { $0.hasPrefix(name + ":") }.compactMap { iface in
                host.link("\(base)/\(iface)/driver").map { String($0.split(separator: "/").last ?? "") }
            }
            devices.append(USBDevice(sysfsName: name, vendor: v, product: p, productName: host.attribute("\(dir)/product"),
                                     bus: bus, device: dev, interfaceDrivers: drivers))
        }
        return devices.sorted { ($0.bus, $0.device) < ($1.bus, $1.device) }
    }

    /// `name size refcount used,by, state address`.
    public static func parseModules(_ text: String) -> [String: LoadedModule] {
        var out: [String: LoadedModule] = [:]
        for line in text.split(separator: "\n") {
            let f = line.split(separator: " ")
            guard let name = f.first else { continue }
            let users = f.count > 3 && f[3] != "-" ? f[3].split(separator: ",").map(String.init) : []
            out[String(name)] = LoadedModule(name: String(name), usedBy: users)
        }
        return out
    }

    public static func readProcesses(_ host: HostFiles) -> [HostProcess] {
        (host.list("/proc") ?? []).compactMap { name in
            guard let pid = Int(name), let comm = host.attribute("/proc/\(name)/comm") else { return nil }
            return HostProcess(pid: pid, command: comm)
        }.sorted { $0.pid < $1.pid }
    }

    /// Installed packages and versions from dpkg's database (what `dpkg-query -W` prints).
    public static func parseDpkgStatus(_ text: String) -> [String: String] {
        var out: [String: String] = [:]
        for stanza in text.split(separator: "\n\n", omittingEmptySubsequences: true) {
            var name: String?, version: String?, installed = false
            for line in stanza.split(separator: "\n") {
                if line.hasPrefix("Package: ") { name = String(line.dropFirst(9)).trimmingWhitespace() }
                if line.hasPrefix("Version: ") { version = String(line.dropFirst(9)).trimmingWhitespace() }
                if line.hasPrefix("Status: ") { installed = line.hasSuffix(" installed") }
            }
            if let name, let version, installed {
                // Multi-arch packages appear as `libnfc6` with an Architecture line; the name is enough here.
                out[name] = version
            }
        }
        return out
    }

    /// `name:x:id:...` files (/etc/group, /etc/passwd).
    public static func parseNames(_ text: String, idField: Int) -> [UInt32: String] {
        var out: [UInt32: String] = [:]
        for line in text.split(separator: "\n") {
            let f = line.split(separator: ":", omittingEmptySubsequences: false)
            if f.count > idField, let id = UInt32(f[idField]), out[id] == nil { out[id] = String(f[0]) }
        }
        return out
    }

    public static func libraryDirectories(_ host: HostFiles) -> [String] {
        var dirs: [String] = []
        for base in ["/usr/lib", "/lib"] {
            for name in host.list(base) ?? [] where name.hasSuffix("-linux-gnu") { dirs.append("\(base)/\(name)") }
        }
        return dirs + ["/usr/lib64", "/usr/lib", "/usr/local/lib", "/lib64"]
    }

    /// A library's version from dpkg, else its pkg-config file, else the shared object's name.
    public static func findLibrary(_ host: HostFiles, _ dirs: [String], dpkg: [String: String], packagePrefix: String, pc: String, so: String) -> Installed? {
        // Runtime packages are named <prefix><soname digits>: libnfc6, libpcsclite1.
        let runtime = dpkg.filter { $0.key.count > packagePrefix.count && $0.key.hasPrefix(packagePrefix)
            && $0.key.dropFirst(packagePrefix.count).allSatisfy(\.isNumber) }
        if let hit = runtime.max(by: { $0.key < $1.key }) {
            return Installed(version: upstreamVersion(hit.value), source: "Debian package \(hit.key) \(hit.value)")
        }
        for dir in dirs {
            if let text = host.read("\(dir)/pkgconfig/\(pc)"),
               let line = text.split(separator: "\n").first(where: { $0.hasPrefix("Version:") }) {
                return Installed(version: String(line.dropFirst(8)).trimmingWhitespace(), source: "\(dir)/pkgconfig/\(pc)")
            }
        }
        for dir in dirs {
            if let file = host.list(dir)?.filter({ $0.hasPrefix(so) }).max(by: { $0.count < $1.count }) {
                return Installed(version: nil, source: "\(dir)/\(file)")
            }
        }
        return nil
    }

    /// `1.8.0-2` → `1.8.0`; `1:2.0.1-3` → `2.0.1`.
    public static func upstreamVersion(_ v: String) -> String {
        var s = Substring(v)
        if let colon = s.firstIndex(of: ":") { s = s[s.index(after: colon)...] }
        if let dash = s.lastIndex(of: "-") { s = s[..<dash] }
        return String(s)
    }

    /// `found`, with port100's file named as the felica package lists it (dpkg's
    /// info/felica.list) when that file blacklists it: with /lib a link to /usr/lib, the same
    /// file is found under both names, and the package's own is the one its docs give.
    static func packagedBlacklist(_ host: HostFiles, _ found: [String: String]) -> [String: String] {
        var out = found
        guard let list = host.read("/var/lib/dpkg/info/\(PackagedFiles.package).list"),
              let path = list.split(separator: "\n").map(String.init).first(where: { $0.hasSuffix("/modprobe.d/felica.conf") }),
              let current = found["port100"], current.hasSuffix("/modprobe.d/felica.conf"),
              let text = host.read(path),
              text.split(separator: "\n").contains(where: { $0.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init) == ["blacklist", "port100"] })
        else { return found }
        out["port100"] = path
        return out
    }

    public static func readBlacklist(_ host: HostFiles) -> [String: String] {
        var out: [String: String] = [:]
        for dir in ["/etc/modprobe.d", "/run/modprobe.d", "/usr/lib/modprobe.d", "/lib/modprobe.d"] {
            for file in host.list(dir) ?? [] where file.hasSuffix(".conf") {
                for line in (host.read("\(dir)/\(file)") ?? "").split(separator: "\n") {
                    let f = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
                    if f.count >= 2 && f[0] == "blacklist" && out[String(f[1])] == nil { out[String(f[1])] = "\(dir)/\(file)" }
                }
            }
        }
        return out
    }

    /// The `.rules` files udev uses (one per name, the first directory of
    /// ``PackagedFiles/udevRuleDirectories`` that has it), keeping those that grant access by USB id.
    public static func readUdevRules(_ host: HostFiles) -> [UdevRuleFile] {
        var seen: Set<String> = []
        var out: [UdevRuleFile] = []
        for dir in PackagedFiles.udevRuleDirectories {
            for file in host.list(dir) ?? [] where file.hasSuffix(".rules") && !seen.contains(file) {
                seen.insert(file)
                let ids = parseUdevAccessRules(host.read("\(dir)/\(file)") ?? "")
                if !ids.isEmpty { out.append(UdevRuleFile(path: "\(dir)/\(file)", ids: ids)) }
            }
        }
        // The package's own file first, so that is the one a verdict names.
        let own = String(PackagedFiles.udevRule.split(separator: "/").last ?? "")
        return out.sorted { ($0.name != own ? 1 : 0, $0.path) < ($1.name != own ? 1 : 0, $1.path) }
    }

    /// `vvvv:pppp` of each rule line matching `idVendor` and `idProduct` (ATTR or ATTRS) that
    /// sets `GROUP=`, `MODE=` or adds the `uaccess` tag; comments are skipped.
    public static func parseUdevAccessRules(_ text: String) -> Set<String> {
        func value(_ line: Substring, _ key: String) -> String? {
            for prefix in ["ATTRS{\(key)}==\"", "ATTR{\(key)}==\""] {
                guard let r = line.firstRange(of: prefix) else { continue }
                let rest = line[r.upperBound...]
                guard let end = rest.firstIndex(of: "\"") else { return nil }
                return rest[..<end].lowercased()
            }
            return nil
        }
        var ids: Set<String> = []
        for line in text.split(separator: "\n") where !line.trimmingWhitespace().hasPrefix("#") {
            guard line.contains("GROUP=") || line.contains("MODE=") || line.contains("uaccess"),
                  let v = value(line, "idVendor"), let p = value(line, "idProduct") else { continue }
            ids.insert("\(v):\(p)")
        }
        return ids
    }

    /// The rules file in effect that gives access to USB device `id` (`vvvv:pppp`), if any.
    public func udevRule(covering id: String) -> UdevRuleFile? { udevRules.first { $0.ids.contains(id) } }

    public var blacklisted: Set<String> { Set(blacklist.keys) }

    // MARK: - Questions

    public var pcscdProcess: HostProcess? { processes.first { $0.command == "pcscd" } }

    public func isLoaded(_ module: String) -> Bool { modules?[module] != nil }

    public func groupName(_ gid: UInt32) -> String { groupNames[gid] ?? String(gid) }
    public func userName(_ uid: UInt32) -> String { userNames[uid] ?? String(uid) }
}
