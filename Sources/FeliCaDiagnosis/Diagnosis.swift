import FeliCa
import FeliCaUSB
import FeliCaDevices

/// How a check came out.
public enum Verdict: String, Sendable, Comparable {
    case ok, warning, problem

    public static func < (a: Verdict, b: Verdict) -> Bool { a.rank < b.rank }
    private var rank: Int { self == .ok ? 0 : self == .warning ? 1 : 2 }
}

/// One finding of `felica doctor`: what was checked, the verdict, and what fixes it.
public struct DoctorCheck: Sendable, Equatable {
    /// Short machine name: `libnfc`, `pcsc-lite`, `usb`, `kernel-modules`, `pcscd`, `permissions`, `poll`.
    public var check: String
    public var verdict: Verdict
    public var summary: String
    /// The exact command(s) or file that fix it; may span lines. nil when nothing needs fixing.
    public var fix: String?

    public init(check: String, verdict: Verdict, summary: String, fix: String? = nil) {
        self.check = check
        self.verdict = verdict
        self.summary = summary
        self.fix = fix
    }
}

/// A USB device matched against the known readers, with the route this tool would take.
public struct RecognizedReader: Sendable {
    public var usb: USBDevice
    public var model: KnownReader
    /// The route in use: PC/SC when pcscd can serve it, else libnfc; nil when none can.
    public var route: KnownReader.Route?
    /// Why it cannot be used right now (empty when nothing is in the way).
    public var blockers: [String]

    /// The device that reaches it.
    public var device: DeviceSpec? {
        switch route {
        case .libnfc(let driver): DeviceSpec(.libnfc(connstring: "\(driver):\(usb.busAddress)"))
        case .pcsc(let name): DeviceSpec(.pcsc(reader: .named(name), dialect: nil))
        case .usb: DeviceSpec(.usb(.path(bus: usb.bus, address: usb.device)))
        case nil: nil
        }
    }

    public var label: String { "\(model.label) on \(usb.location)" }
}

/// Turns a ``HostSnapshot`` into checks. Pure: no I/O, so every verdict is reachable from
/// a fake tree.
public struct Diagnosis: Sendable {
    public var checks: [DoctorCheck] = []
    public var readers: [RecognizedReader] = []

    /// `libnfcRequested`: the user asked for a libnfc device (`--device libnfc...`), so a
    /// reader pcscd holds is a problem rather than a choice.
    public init(_ host: HostSnapshot, libnfcRequested: Bool = false) {
        let pcscAvailable = host.pcscd != nil && host.ccid != nil && (host.pcscdProcess != nil || host.pcscdSocket)
        readers = (host.usb ?? []).compactMap { usb in
            guard let model = KnownReaders.match(vendor: usb.vendor, product: usb.product) else { return nil }
            let route: KnownReader.Route?
            if let name = model.pcscName, pcscAvailable || model.libnfcDriver == nil {
                route = .pcsc(name: name)
            } else if let driver = model.libnfcDriver {
                route = .libnfc(driver: driver)
            } else if model.direct {
                route = .usb
            } else {
                route = nil
            }
            return RecognizedReader(usb: usb, model: model, route: route, blockers: [])
        }
        checkLibraries(host)
        checkUSB(host)
        checkKernelModules(host)
        checkPCSCD(host, libnfcRequested: libnfcRequested)
        checkPermissions(host)
        checkPackagedFiles(host)
    }

    public var worst: Verdict { checks.map(\.verdict).max() ?? .ok }

    // MARK: - Libraries

    mutating func checkLibraries(_ host: HostSnapshot) {
        let libnfcOnly = readers.contains { $0.model.libnfcDriver != nil && $0.model.pcscName == nil }
        if let lib = host.libnfc {
            checks.append(DoctorCheck(check: "libnfc", verdict: .ok, summary: "libnfc \(lib.summary)"))
        } else {
            checks.append(DoctorCheck(
                check: "libnfc", verdict: libnfcOnly ? .problem : .warning,
                summary: "libnfc is not installed (no package libnfc6, no libnfc.pc, no libnfc.so): PN533, RC-S360, SCL3711 and ACR122U readers cannot be used through it",
                fix: "sudo apt-get install libnfc6 libnfc-bin"))
        }
        let pcscOnly = readers.contains { $0.model.pcscName != nil && $0.model.libnfcDriver == nil }
        var missing: [String] = []
        if host.pcscLibrary == nil { missing.append("libpcsclite1") }
        if host.pcscd == nil { missing.append("pcscd") }
        if host.ccid == nil { missing.append("libccid") }
        if missing.isEmpty {
            let lib = host.pcscLibrary!, daemon = host.pcscd!, ccid = host.ccid!
            checks.append(DoctorCheck(
                check: "pcsc-lite", verdict: .ok,
                summary: "pcsc-lite \(lib.summary); daemon \(daemon.summary); CCID driver \(ccid.summary)"))
        } else {
            let names = ["libpcsclite1": "the pcsc-lite library", "pcscd": "the pcscd daemon", "libccid": "the CCID driver"]
            checks.append(DoctorCheck(
                check: "pcsc-lite", verdict: pcscOnly ? .problem : .warning,
                summary: "pcsc-lite is incomplete, not installed: \(missing.map { names[$0]! }.joined(separator: ", ")); PC/SC readers (RC-S300, RC-S660, ACR122U) cannot be used",
                fix: "sudo apt-get install \(missing.joined(separator: " "))"))
        }
    }

    // MARK: - USB

    mutating func checkUSB(_ host: HostSnapshot) {
        guard let usb = host.usb else {
            checks.append(DoctorCheck(
                check: "usb", verdict: .warning,
                summary: "cannot read /sys/bus/usb/devices, so USB readers cannot be listed (no sysfs: a container or not Linux?)",
                fix: "run `felica doctor` on the machine the reader is plugged into (or give the container /sys and the reader's /dev/bus/usb node)"))
            return
        }
        if readers.isEmpty {
            checks.append(DoctorCheck(
                check: "usb", verdict: .problem,
                summary: "no known NFC reader among the \(usb.count) USB device\(usb.count == 1 ? "" : "s")",
                fix: """
                plug in a supported reader (\(PackagedFiles.guide("readers.md")) lists them: Sony RC-S380 directly over USB, Sony RC-S300 \
                or ACR122U through PC/SC, RC-S360, SCL3711 or other PN533 readers through libnfc). A PN532 on a serial port does not show up \
                here: pass --device libnfc:pn532_uart:/dev/ttyUSB0
                """))
            return
        }
        for (i, r) in readers.enumerated() {
            switch r.route {
            case .pcsc(let name):
                checks.append(DoctorCheck(
                    check: "usb", verdict: .ok,
                    summary: "\(r.label): served by PC/SC (pcscd with the CCID driver) as '\(name)'; --device 'pcsc:\(name)'"))
            case .libnfc(let driver):
                var summary = "\(r.label): served by libnfc (driver \(driver)); --device \(r.device!)"
                if r.model.pcscName != nil { summary += " (through PC/SC instead once pcscd runs)" }
                checks.append(DoctorCheck(check: "usb", verdict: .ok, summary: summary))
            case .usb:
                checks.append(DoctorCheck(
                    check: "usb", verdict: .ok,
                    summary: "\(r.label): driven directly over USB (libusb); --device \(r.device!) (or just usb)"))
            case nil:
                readers[i].blockers.append("unsupported model: no libnfc driver, not a CCID reader")
                checks.append(DoctorCheck(
                    check: "usb", verdict: .problem,
                    summary: "\(r.label) cannot be used: \(r.model.unsupportedReason ?? "no stack this tool uses supports it")",
                    fix: "use a supported reader instead (\(PackagedFiles.guide("readers.md"))): Sony RC-S300 through PC/SC, or an RC-S360, SCL3711 or ACR122U through libnfc"))
            }
        }
    }

    // MARK: - Kernel modules

    mutating func checkKernelModules(_ host: HostSnapshot) {
        let bound = Set(readers.flatMap(\.usb.interfaceDrivers))
        guard host.modules != nil || !bound.isEmpty else {
            checks.append(DoctorCheck(
                check: "kernel-modules", verdict: .warning,
                summary: "cannot read /proc/modules: kernel NFC drivers (pn533_usb, port100) that would hold a reader are not checked",
                fix: "check by hand: lsmod | grep -E '^(pn533|port100|nfc)'"))
            return
        }
        var any = false
        for driver in KnownReaders.kernelModules.keys.sorted() where host.isLoaded(driver) || bound.contains(driver) {
            any = true
            let claimed = readers.indices.filter { readers[$0].model.kernelDriver == driver }
            // This tool detaches the kernel driver from a reader it drives itself (libusb's
            // auto-detach), and hands it back on close.
            let direct = claimed.filter { readers[$0].route == .usb }
            if !direct.isEmpty {
                checks.append(DoctorCheck(
                    check: "kernel-modules", verdict: .ok,
                    summary: "kernel module \(driver) is loaded and claims \(direct.map { readers[$0].model.label }.joined(separator: ", ")): this tool detaches it while it uses the reader (when that is refused, the fix below frees the reader)",
                    fix: modulesFix(driver, host)))
                continue
            }
            let usable = claimed.filter { readers[$0].route != nil }
            if !claimed.isEmpty && usable.isEmpty {
                checks.append(DoctorCheck(
                    check: "kernel-modules", verdict: .ok,
                    summary: "kernel module \(driver) is loaded; it drives only \(claimed.map { readers[$0].model.name }.joined(separator: ", ")), which this tool cannot use anyway"))
                continue
            }
            for i in usable { readers[i].blockers.append("held by kernel module \(driver)") }
            let fix = modulesFix(driver, host)
            if usable.isEmpty {
                let families = KnownReaders.all.filter { $0.kernelDriver == driver && !$0.routes.isEmpty }.map(\.name)
                checks.append(DoctorCheck(
                    check: "kernel-modules", verdict: .warning,
                    summary: "kernel module \(driver) is loaded: it will take \(families.joined(separator: ", ")) readers away from libnfc and pcscd as soon as one is plugged in",
                    fix: fix))
            } else {
                let names = usable.map { readers[$0].model.label }.joined(separator: ", ")
                let who = usable.contains { readers[$0].model.pcscName != nil } ? "libnfc and pcscd" : "libnfc"
                let them = usable.count == 1 ? "it" : "them"
                checks.append(DoctorCheck(
                    check: "kernel-modules", verdict: .problem,
                    summary: "kernel module \(driver) is loaded and holds \(names): \(who) cannot open \(them) while the kernel driver is bound",
                    fix: fix))
            }
        }
        if !any {
            let others = ["pn533", "nfc"].filter(host.isLoaded)
            checks.append(DoctorCheck(
                check: "kernel-modules", verdict: .ok,
                summary: "no kernel NFC driver that claims USB readers is loaded (pn533_usb, port100)"
                    + (others.isEmpty ? "" : "; \(others.joined(separator: ", ")) loaded without one")))
        }
    }

    /// `sudo modprobe -r` for the driver and the modules it pulled in that nothing else
    /// uses, then the blacklist lines still missing from modprobe.d.
    public func modulesFix(_ driver: String, _ host: HostSnapshot) -> String {
        let chain = KnownReaders.kernelModules[driver] ?? [driver]
        var remove: [String] = []
        for m in chain {
            guard let loaded = host.modules?[m] else {
                if m == driver { remove.append(m) }  // bound per sysfs though /proc/modules is unreadable
                continue
            }
            if loaded.usedBy.allSatisfy(remove.contains) { remove.append(m) }
        }
        let wanted = driver == "pn533_usb" ? KnownReaders.blacklist : [driver]
        let missing = wanted.filter { !host.blacklisted.contains($0) }
        var fix = "unload it now: sudo modprobe -r \(remove.joined(separator: " "))"
        if missing.isEmpty {
            var files: [String] = []
            for m in wanted { if let f = host.blacklist[m], !files.contains(f) { files.append(f) } }
            fix += "\n(already blacklisted in \(files.joined(separator: " and ")), so it stays unloaded after a reboot)"
        } else {
            let existing = host.blacklist.values.contains(USBReaders.blacklistPath)
            fix += "\nkeep it from loading again: \(existing ? "add to \(USBReaders.blacklistPath)" : "create \(USBReaders.blacklistPath) containing")\n"
                + missing.map { "  blacklist \($0)" }.joined(separator: "\n")
        }
        return fix
    }

    // MARK: - pcscd

    mutating func checkPCSCD(_ host: HostSnapshot, libnfcRequested: Bool) {
        let pcscOnly = readers.filter { $0.model.pcscName != nil && $0.model.libnfcDriver == nil }
        guard let process = host.pcscdProcess else {
            if host.pcscdSocket {
                checks.append(DoctorCheck(check: "pcscd", verdict: .ok, summary: "pcscd is not running but starts on demand (socket /run/pcscd/pcscd.comm)"))
            } else if !pcscOnly.isEmpty {
                for r in pcscOnly { if let i = readers.firstIndex(where: { $0.usb.sysfsName == r.usb.sysfsName }) { readers[i].blockers.append("pcscd is not running") } }
                checks.append(DoctorCheck(
                    check: "pcscd", verdict: .problem,
                    summary: "pcscd is not running, and \(pcscOnly.map(\.model.label).joined(separator: ", ")) is reached only through it",
                    fix: host.pcscd == nil ? "sudo apt-get install pcscd libccid" : "sudo systemctl enable --now pcscd.socket"))
            } else {
                checks.append(DoctorCheck(check: "pcscd", verdict: .ok, summary: "pcscd is not running (only PC/SC readers need it)"))
            }
            return
        }
        var held: [String] = []
        for i in readers.indices where readers[i].model.libnfcDriver != nil {
            let r = readers[i]
            let holds: Bool
            if let files = host.pcscdOpenFiles {
                holds = files.contains(r.usb.node)
            } else {
                // pcscd's open files are not readable (it runs as root); its CCID driver claims
                // every reader it lists, and a user-space claim shows as usbfs in sysfs.
                holds = r.model.pcscName != nil && (r.usb.interfaceDrivers.isEmpty || r.usb.interfaceDrivers.contains("usbfs"))
            }
            guard holds else { continue }
            held.append(r.model.label)
            let stop = "sudo systemctl stop pcscd.socket pcscd.service"
            if let name = r.model.pcscName, !libnfcRequested {
                checks.append(DoctorCheck(
                    check: "pcscd", verdict: .ok,
                    summary: "pcscd (pid \(process.pid)) holds \(r.label), so this tool reaches it through PC/SC ('pcsc:\(name)'), not libnfc"))
            } else if let name = r.model.pcscName {
                readers[i].blockers.append("held by pcscd")
                checks.append(DoctorCheck(
                    check: "pcscd", verdict: .warning,
                    summary: "pcscd (pid \(process.pid)) holds \(r.label): libnfc cannot open it while pcscd runs",
                    fix: "use it through PC/SC instead: --device 'pcsc:\(name)'\nor, to use libnfc, stop pcscd: \(stop)"))
            } else {
                readers[i].blockers.append("held by pcscd")
                checks.append(DoctorCheck(
                    check: "pcscd", verdict: .problem,
                    summary: "pcscd (pid \(process.pid)) holds \(r.label), which only libnfc can drive: libnfc cannot open it while pcscd runs",
                    fix: "stop pcscd: \(stop)\n(or remove the pcscd driver that claims \(r.model.id))"))
            }
        }
        if held.isEmpty {
            checks.append(DoctorCheck(check: "pcscd", verdict: .ok, summary: "pcscd is running (pid \(process.pid)) and holds no reader libnfc needs"))
        }
    }

    // MARK: - Permissions

    mutating func checkPermissions(_ host: HostSnapshot) {
        let me = host.identity
        let who = "you (user \(host.userName(me.uid)), uid \(me.uid))"
        for i in readers.indices {
            switch readers[i].route {
            case .libnfc?, .usb?: break
            default: continue
            }
            let r = readers[i]
            guard let st = host.nodes[r.usb.node] else {
                readers[i].blockers.append("no device node")
                checks.append(DoctorCheck(
                    check: "permissions", verdict: .problem,
                    summary: "\(r.usb.node) does not exist for \(r.label): libusb cannot open the reader (is /dev/bus/usb mounted? in a container, pass the device in)",
                    fix: "docker/podman: run with --device \(r.usb.node); otherwise check that udev is running: systemctl status systemd-udevd"))
                continue
            }
            let owner = "\(host.userName(st.uid)):\(host.groupName(st.gid)) \(st.permissions)"
            if host.nodeAccess[r.usb.node] ?? st.allowsReadWrite(by: me) {
                checks.append(DoctorCheck(check: "permissions", verdict: .ok, summary: "\(who) can open \(r.usb.node) (\(owner)) for \(r.model.name)"))
                continue
            }
            readers[i].blockers.append("no permission on \(r.usb.node)")
            let plugdev = host.groupNames.first { $0.value == "plugdev" }?.key
            let inPlugdev = plugdev.map { me.groups.contains($0) || me.gid == $0 } ?? false
            let join = "join the plugdev group (then log in again): sudo usermod -aG plugdev \(host.userName(me.uid))"
            var summary = "\(who) cannot open \(r.usb.node) (\(owner)) for \(r.label): \(r.route == .usb ? "this tool" : "libnfc") will not see the reader"
            var fix: String
            if let installed = host.udevRule(covering: r.model.id) {
                if st.gid != plugdev {
                    // The rule sets group plugdev: a node without it has not been through the rule.
                    summary += "; the udev rule \(installed.path) covers it, but the node was made before the rule was in place (the reader was plugged in before it was installed)"
                    fix = """
                        apply the rule to the plugged-in reader: sudo udevadm control --reload-rules && \
                        sudo udevadm trigger --action=change --subsystem-match=usb --attr-match=idVendor=\(Hex.digits(r.model.vendor, count: 4))
                        or unplug the reader and plug it in again
                        """
                    if !inPlugdev { fix += "\n(logged in remotely, not at the seat? also \(join))" }
                } else {
                    summary += "; the udev rule \(installed.path) is applied, but it grants access only to the user at the seat and to group plugdev"
                    fix = inPlugdev ? "log in again, so that the session has the plugdev group" : join
                }
            } else {
                let rule = USBReaders.udevRule(vendor: r.model.vendor, product: r.model.product)
                fix = """
                    install a udev rule, \(USBReaders.udevRulePath):
                      \(rule)
                    then: sudo udevadm control --reload-rules && sudo udevadm trigger --subsystem-match=usb
                    """
                if !inPlugdev { fix += "\nand " + join }
            }
            checks.append(DoctorCheck(check: "permissions", verdict: .problem, summary: summary, fix: fix))
        }
    }
}

// MARK: - Packaged files

extension Diagnosis {
    /// The felica package's udev rule and port100 blacklist: reported when the package is
    /// installed or either file is there; a problem when the package is installed and one is gone.
    mutating func checkPackagedFiles(_ host: HostSnapshot) {
        let rule = host.udevRules.first { $0.name == String(PackagedFiles.udevRule.split(separator: "/").last ?? "") }
        let blacklist = host.blacklist["port100"]
        guard host.felicaPackage != nil || rule != nil || blacklist != nil else { return }
        let from = host.felicaPackage.map { " (package \(PackagedFiles.package) \($0))" } ?? ""
        var found: [String] = []
        var missing: [String] = []
        if let rule {
            found.append("udev rule \(rule.path) gives the user at the seat and group plugdev access to \(rule.ids.count) reader model\(rule.ids.count == 1 ? "" : "s")")
        } else {
            missing.append("the udev rule \(PackagedFiles.udevRule)")
        }
        if let blacklist {
            found.append("port100 is blacklisted (\(blacklist))")
        } else {
            missing.append("the port100 blacklist \(PackagedFiles.blacklist)")
        }
        if missing.isEmpty {
            checks.append(DoctorCheck(check: "setup", verdict: .ok, summary: found.joined(separator: "; ") + from))
        } else if let version = host.felicaPackage {
            checks.append(DoctorCheck(
                check: "setup", verdict: .problem,
                summary: "package \(PackagedFiles.package) \(version) is installed, but \(missing.joined(separator: " and ")) \(missing.count == 1 ? "is" : "are") gone"
                    + (found.isEmpty ? "" : "; " + found.joined(separator: "; ")),
                fix: "sudo apt-get install --reinstall \(PackagedFiles.package)"))
        } else {
            checks.append(DoctorCheck(
                check: "setup", verdict: .ok,
                summary: found.joined(separator: "; ") + "; not from the felica package, which would install \(missing.joined(separator: " and "))"))
        }
    }
}
