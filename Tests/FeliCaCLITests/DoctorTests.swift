@testable import FeliCaCLI
@testable import FeliCaDiagnosis
import FeliCa
import FeliCaUSB
import Foundation
import Synchronization
import Testing

// `felica doctor --root` on the fake trees in Fixtures/doctor (make-trees.sh writes them).
// Each test copies a tree, adjusts it (device node modes, which git does not keep; files
// added or removed), runs the built executable and checks verdicts and fix texts.

/// A private copy of a fixture tree.
struct FakeTree {
    let path: String

    init(_ name: String) throws {
        path = temporaryPath("doctor-\(name)-\(UUID().uuidString)")
        let cp = try runProgram("/bin/cp", ["-a", fixture("doctor/\(name)"), path])
        #expect(cp.status == 0, "\(cp.stderr)")
    }

    func file(_ p: String) -> String { path + p }

    func write(_ p: String, _ text: String) throws {
        try FileManager.default.createDirectory(atPath: (file(p) as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try text.write(toFile: file(p), atomically: false, encoding: .utf8)
    }

    func remove(_ p: String) throws { try FileManager.default.removeItem(atPath: file(p)) }

    func chmod(_ p: String, _ mode: Int) throws {
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: file(p))
    }

    func symlink(_ p: String, to target: String) throws {
        try? remove(p)
        try FileManager.default.createSymbolicLink(atPath: file(p), withDestinationPath: target)
    }
}

/// One check of a `--json` report.
struct Finding: Equatable {
    var check: String
    var verdict: String
    var summary: String
    var fix: String?
}

struct DoctorResult {
    var status: Int32
    var findings: [Finding]
    var readers: [[String: Any]]
    var ready: Bool
    var text: String

    func the(_ check: String, _ verdict: String, sourceLocation: SourceLocation = #_sourceLocation) -> Finding? {
        let hits = findings.filter { $0.check == check && $0.verdict == verdict }
        #expect(hits.count == 1, "expected one \(verdict) \(check) check, got \(findings)", sourceLocation: sourceLocation)
        return hits.first
    }

    func verdicts(_ check: String) -> [String] { findings.filter { $0.check == check }.map(\.verdict) }
}

/// Runs doctor on `tree` twice (JSON and text) with PC/SC and libnfc discovery off, so the
/// host's own readers never enter the report.
func doctor(_ tree: FakeTree, _ extra: [String] = []) throws -> DoctorResult {
    let env = ["PCSCLITE_CSOCK_NAME": temporaryPath("no-pcscd.comm"), "LIBNFC_AUTO_SCAN": "false"]
    let j = try run(["doctor", "--root", tree.path, "--json"] + extra, environment: env)
    let t = try run(["doctor", "--root", tree.path] + extra, environment: env)
    #expect(j.status == t.status)
    let object = try JSONSerialization.jsonObject(with: Data(j.stdout.utf8)) as? [String: Any] ?? [:]
    let checks = object["checks"] as? [[String: Any]] ?? []
    let findings = checks.map {
        Finding(check: $0["check"] as? String ?? "", verdict: $0["verdict"] as? String ?? "",
                summary: $0["summary"] as? String ?? "", fix: $0["fix"] as? String)
    }
    #expect(Array(object.keys).sorted() == ["checks", "readers", "ready"])
    return DoctorResult(status: j.status, findings: findings, readers: object["readers"] as? [[String: Any]] ?? [],
                        ready: object["ready"] as? Bool ?? false, text: t.stdout)
}

@Suite struct DoctorTests {
    @Test func helpDocumentsRootAndExitCodes() throws {
        // Wide enough that no sentence is wrapped.
        let r = try run(["doctor", "--help"], environment: ["COLUMNS": "400"])
        #expect(r.status == 0)
        #expect(r.stdout.contains("\nUSAGE: felica doctor [--device <device>] [--root <dir>] [--json]\n"))
        #expect(r.stdout.contains("Exits 0 when at least one reader can poll, 69 otherwise."))
        #expect(r.stdout.contains("--root reads /sys, /proc, /dev, /etc, /run, /usr and /var under another directory"))
    }

    @Test func aReadySystemIsAllOkAndExitsZeroWhenAReaderPolls() throws {
        let tree = try FakeTree("ready")
        try tree.chmod("/dev/bus/usb/001/004", 0o666)
        let r = try doctor(tree, ["--device", "virtual:suica"])
        #expect(r.status == 0)
        #expect(r.ready)
        #expect(r.findings.allSatisfy { $0.verdict == "ok" && $0.fix == nil }, "\(r.findings)")
        #expect(r.findings.map(\.check) == ["libnfc", "pcsc-lite", "usb", "kernel-modules", "pcscd", "permissions", "poll"])
        #expect(r.the("libnfc", "ok")?.summary == "libnfc 1.8.0 (Debian package libnfc6 1.8.0-2)")
        #expect(r.the("pcsc-lite", "ok")?.summary == "pcsc-lite 1.9.9 (Debian package libpcsclite1 1.9.9-2); daemon 1.9.9-2 (Debian package pcscd); CCID driver 1.5.2-1 (Debian package libccid)")
        #expect(r.the("usb", "ok")?.summary == "SCM SCL3711 (04e6:5591) on USB bus 001 device 004: served by libnfc (driver pn53x_usb); --device libnfc:pn53x_usb:001:004")
        #expect(r.the("kernel-modules", "ok")?.summary == "no kernel NFC driver that claims USB readers is loaded (pn533_usb, port100)")
        #expect(r.the("pcscd", "ok")?.summary == "pcscd is not running but starts on demand (socket /run/pcscd/pcscd.comm)")
        let perm = r.the("permissions", "ok")?.summary ?? ""
        #expect(perm.hasPrefix("you (user alice, uid 4242) can open /dev/bus/usb/001/004 ("), "\(perm)")
        #expect(perm.hasSuffix(" rw-rw-rw-) for SCM SCL3711"), "\(perm)")
        #expect(r.the("poll", "ok")?.summary.hasPrefix("virtual:suica: a card answered (IDm ") == true)
        #expect(r.readers.count == 1)
        #expect(r.readers.first?["device"] as? String == "libnfc:pn53x_usb:001:004")
        #expect(r.readers.first?["blockers"] as? [String] == [])
        #expect(r.text.hasSuffix("\nno problems; ready: 1 reader can poll (virtual:suica)\n"))
        #expect(r.text.hasPrefix("ok       libnfc 1.8.0 (Debian package libnfc6 1.8.0-2)\n"))
    }

    @Test func noReaderToPollExits69() throws {
        let tree = try FakeTree("ready")
        try tree.chmod("/dev/bus/usb/001/004", 0o666)
        let r = try doctor(tree)
        #expect(r.status == 69)
        #expect(!r.ready)
        // Every system check is ok and the tree's reader is not this machine's: no "problems above".
        #expect(r.findings.filter { $0.check != "poll" }.allSatisfy { $0.verdict == "ok" }, "\(r.findings)")
        let poll = r.the("poll", "problem")
        #expect(poll?.summary == "no reader to poll: the readers found under \(tree.path) are not this machine's, and neither libnfc nor PC/SC lists one")
        #expect(poll?.fix == "name a reader of this machine with --device (`felica devices` lists them); to try the tool without hardware: felica balance --device virtual:suica")
        #expect(r.text.hasSuffix("\n1 problem; not ready: no reader can poll\n"))
        #expect(!r.text.contains("above"), "\(r.text)")
    }

    /// With no reader at all, the fix points back to the problem that says so.
    @Test func noReaderAtAllPointsToTheProblemAbove() throws {
        let r = try doctor(try FakeTree("bare"))
        #expect(r.status == 69)
        #expect(r.verdicts("usb") == ["problem"])
        #expect(r.the("poll", "problem")?.fix == "fix the problems above, then check with `felica devices`; to try the tool without hardware: felica balance --device virtual:suica")
    }

    /// A device that cannot open on a system where every check is ok: no "fix the problems
    /// above", but what to check.
    @Test func aDeviceThatCannotOpenOnAHealthySystemNamesNoProblemAbove() throws {
        let tree = try FakeTree("ready")
        try tree.chmod("/dev/bus/usb/001/004", 0o666)
        let r = try doctor(tree, ["--device", "virtual:/no/such/card.json", "--device", "virtual:suica"])
        #expect(r.status == 0)
        #expect(r.the("poll", "problem")?.fix == "check the device string, then try again: felica poll --device virtual:/no/such/card.json")
        #expect(!r.text.contains("above"), "\(r.text)")
    }

    @Test func felicaDeviceIsPolledToo() throws {
        let tree = try FakeTree("ready")
        let r = try run(["doctor", "--root", tree.path, "--json"],
                        environment: ["FELICA_DEVICE": "virtual:suica", "PCSCLITE_CSOCK_NAME": temporaryPath("no-pcscd.comm")])
        #expect(r.status == 0)
        #expect(r.stdout.contains(#""summary":"virtual:suica: a card answered (IDm "#))
    }

    /// A device that opens but fails the poll: a replay recorded polling for 0003 only,
    /// asked for the wildcard.
    @Test func aPollThatFailsIsAProblem() throws {
        let tree = try FakeTree("ready")
        let trace = temporaryPath("doctor-diverges-\(UUID().uuidString).jsonl")
        try """
            {"format":"felica-trace/1","device":"virtual:suica","started":"2026-11-29T10:00:00Z"}
            {"t":0.0,"tx":"0600000301 00","rx":null,"error":"timeout","timeout":0.004,"elapsed":0.004}

            """.replacingOccurrences(of: "01 00", with: "0100").write(toFile: trace, atomically: true, encoding: .utf8)
        let r = try doctor(tree, ["--device", "replay:" + trace])
        #expect(r.status == 69)
        let p = r.the("poll", "problem")
        #expect(p?.summary.hasPrefix("replay:\(trace): polling failed: ") == true, "\(String(describing: p))")
        #expect(p?.fix == "try it on its own: felica poll --device replay:\(trace)")
        #expect(r.text.contains("\n         fix: try it on its own: felica poll --device replay:\(trace)\n"))
        for line in r.text.split(separator: "\n\n")[0].split(separator: "\n") {
            #expect(["ok       ", "warning  ", "problem  ", "         "].contains { line.hasPrefix($0) }, "\(line)")
        }
    }

    @Test func aDeviceThatCannotOpenIsAProblem() throws {
        let tree = try FakeTree("ready")
        let r = try doctor(tree, ["--device", "virtual:/no/such/card.json", "--device", "virtual:suica"])
        #expect(r.status == 0, "one of two polls worked")
        let bad = r.the("poll", "problem")
        #expect(bad?.summary.hasPrefix("virtual:/no/such/card.json: cannot open: card image /no/such/card.json: cannot open") == true)
        #expect(bad?.fix == "fix the problems above, then try again: felica poll --device virtual:/no/such/card.json")
    }

    @Test func permissionProblemGivesTheUdevRule() throws {
        let tree = try FakeTree("ready")
        try tree.chmod("/dev/bus/usb/001/004", 0o664)
        let r = try doctor(tree)
        let p = r.the("permissions", "problem")
        #expect(p?.summary.hasPrefix("you (user alice, uid 4242) cannot open /dev/bus/usb/001/004 (") == true)
        #expect(p?.summary.hasSuffix(" rw-rw-r--) for SCM SCL3711 (04e6:5591) on USB bus 001 device 004: libnfc will not see the reader") == true)
        #expect(p?.fix == """
            install a udev rule, /etc/udev/rules.d/60-felica.rules:
              SUBSYSTEM=="usb", ATTRS{idVendor}=="04e6", ATTRS{idProduct}=="5591", MODE="0660", GROUP="plugdev", TAG+="uaccess"
            then: sudo udevadm control --reload-rules && sudo udevadm trigger --subsystem-match=usb
            and join the plugdev group (then log in again): sudo usermod -aG plugdev alice
            """)
        #expect(r.readers.first?["blockers"] as? [String] == ["no permission on /dev/bus/usb/001/004"])
        #expect(r.text.contains("""
            problem  you (user alice, uid 4242) cannot open /dev/bus/usb/001/004
            """))
        #expect(r.text.contains("""
                     fix: install a udev rule, /etc/udev/rules.d/60-felica.rules:
                            SUBSYSTEM=="usb", ATTRS{idVendor}=="04e6"
            """))
    }

    /// The node's group is the test runner's; the fake user joins it (and plugdev) through
    /// /proc/self/status, so the group bits decide, as they do for the kernel.
    @Test(arguments: [(0o660, "ok"), (0o606, "problem"), (0o640, "problem")])
    func groupBitsDecideForAGroupMember(_ mode: Int, _ verdict: String) throws {
        let tree = try FakeTree("ready")
        try tree.chmod("/dev/bus/usb/001/004", mode)
        try tree.write("/proc/self/status", "Name:\tfelica\nUid:\t4242\t4242\t4242\t4242\nGid:\t4242\t4242\t4242\t4242\nGroups:\t46 \(getegid())\n")
        let r = try doctor(tree)
        #expect(r.verdicts("permissions") == [verdict])
        if verdict == "problem" {
            #expect(r.the("permissions", "problem")?.fix?.contains("usermod") == false, "already in plugdev")
        }
    }

    @Test func aMissingDeviceNodeIsAProblem() throws {
        let tree = try FakeTree("ready")
        try tree.remove("/dev/bus/usb/001/004")
        let r = try doctor(tree)
        let p = r.the("permissions", "problem")
        #expect(p?.summary.hasPrefix("/dev/bus/usb/001/004 does not exist for SCM SCL3711 (04e6:5591) on USB bus 001 device 004") == true)
        #expect(p?.fix == "docker/podman: run with --device /dev/bus/usb/001/004; otherwise check that udev is running: systemctl status systemd-udevd")
    }

    @Test func kernelDriverHoldingReadersGivesModprobeAndBlacklist() throws {
        let tree = try FakeTree("blocked")
        let r = try doctor(tree)
        let k = r.the("kernel-modules", "problem")
        #expect(k?.summary == "kernel module pn533_usb is loaded and holds SCM SCL3711 (04e6:5591), ACS ACR122U (072f:2200): libnfc and pcscd cannot open them while the kernel driver is bound")
        #expect(k?.fix == """
            unload it now: sudo modprobe -r pn533_usb pn533 nfc
            keep it from loading again: create /etc/modprobe.d/blacklist-libnfc.conf containing
              blacklist nfc
              blacklist pn533
              blacklist pn533_usb
            """)
        #expect(r.readers.map { $0["blockers"] as? [String] ?? [] }.allSatisfy { $0.contains("held by kernel module pn533_usb") })
        // Libraries found without dpkg: by pkg-config file and by shared object.
        #expect(r.the("libnfc", "ok")?.summary == "libnfc 1.8.0 (/usr/lib/x86_64-linux-gnu/pkgconfig/libnfc.pc)")
        #expect(r.the("pcsc-lite", "ok")?.summary == "pcsc-lite (/usr/lib/x86_64-linux-gnu/libpcsclite.so.1.0.0); daemon (/usr/sbin/pcscd); CCID driver (/usr/lib/pcsc/drivers/ifd-ccid.bundle)")
    }

    @Test func kernelDriverHoldingALibnfcOnlyReader() throws {
        let tree = try FakeTree("blocked")
        try tree.remove("/sys/bus/usb/devices/1-4")
        let r = try doctor(tree)
        #expect(r.the("kernel-modules", "problem")?.summary == "kernel module pn533_usb is loaded and holds SCM SCL3711 (04e6:5591): libnfc cannot open it while the kernel driver is bound")
    }

    @Test func anAlreadyBlacklistedDriverOnlyNeedsUnloading() throws {
        let tree = try FakeTree("blocked")
        try tree.write("/etc/modprobe.d/blacklist-libnfc.conf", "# from libnfc\nblacklist nfc\nblacklist pn533\nblacklist pn533_usb\n")
        let r = try doctor(tree)
        #expect(r.the("kernel-modules", "problem")?.fix == """
            unload it now: sudo modprobe -r pn533_usb pn533 nfc
            (already blacklisted in /etc/modprobe.d/blacklist-libnfc.conf, so it stays unloaded after a reboot)
            """)
    }

    /// Libnfc's file blacklists some of the modules: the fix adds the others to it, and does
    /// not tell the user to create a file that exists.
    @Test func aPartlyBlacklistedDriverNeedsOnlyTheMissingLines() throws {
        let tree = try FakeTree("blocked")
        try tree.write("/etc/modprobe.d/blacklist-libnfc.conf", "# from libnfc\nblacklist pn533_usb\n")
        let r = try doctor(tree)
        #expect(r.the("kernel-modules", "problem")?.fix == """
            unload it now: sudo modprobe -r pn533_usb pn533 nfc
            keep it from loading again: add to /etc/modprobe.d/blacklist-libnfc.conf
              blacklist nfc
              blacklist pn533
            """)
    }

    @Test func aCoreModuleOthersStillUseIsLeftLoaded() throws {
        let tree = try FakeTree("blocked")
        try tree.write("/proc/modules", """
            pn533_usb 20480 0 - Live 0x0000000000000000
            pn533 45056 1 pn533_usb, Live 0x0000000000000000
            nci 90112 1 nxp_nci, Live 0x0000000000000000
            nfc 131072 3 pn533_usb,pn533,nci, Live 0x0000000000000000

            """)
        let r = try doctor(tree)
        #expect(r.the("kernel-modules", "problem")?.fix?.hasPrefix("unload it now: sudo modprobe -r pn533_usb pn533\n") == true)
    }

    @Test func aLoadedDriverWithoutItsReaderIsAWarning() throws {
        let tree = try FakeTree("ready")
        try tree.chmod("/dev/bus/usb/001/004", 0o666)
        try tree.write("/proc/modules", "pn533_usb 20480 0 - Live 0x0\npn533 45056 1 pn533_usb, Live 0x0\nnfc 131072 2 pn533_usb,pn533, Live 0x0\n")
        // Swap the SCL3711 for a keyboard: nothing for pn533_usb to claim yet.
        try tree.write("/sys/bus/usb/devices/1-2/idVendor", "046d\n")
        let r = try doctor(tree)
        let w = r.the("kernel-modules", "warning")
        #expect(w?.summary == "kernel module pn533_usb is loaded: it will take NXP PN533, SCM SCL3711, Sony RC-S360 / RC-S330 / RC-S370, ACS ACR122U readers away from libnfc and pcscd as soon as one is plugged in")
        #expect(w?.fix?.hasPrefix("unload it now: sudo modprobe -r pn533_usb pn533 nfc\nkeep it from loading again:") == true)
    }

    @Test func pcscdHoldingAReaderItServesIsNotedAndAskingForLibnfcWarns() throws {
        let tree = try FakeTree("blocked")
        let r = try doctor(tree)
        #expect(r.the("pcscd", "ok")?.summary == "pcscd (pid 812) holds ACS ACR122U (072f:2200) on USB bus 001 device 005, so this tool reaches it through PC/SC ('pcsc:ACS ACR122U PICC Interface'), not libnfc")
        let asked = try doctor(tree, ["--device", "libnfc:acr122_usb:001:005"])
        let w = asked.the("pcscd", "warning")
        #expect(w?.summary == "pcscd (pid 812) holds ACS ACR122U (072f:2200) on USB bus 001 device 005: libnfc cannot open it while pcscd runs")
        #expect(w?.fix == "use it through PC/SC instead: --device 'pcsc:ACS ACR122U PICC Interface'\nor, to use libnfc, stop pcscd: sudo systemctl stop pcscd.socket pcscd.service")
        #expect(asked.verdicts("poll") == ["problem"], "nothing answers at that address here")
        #expect(asked.status == 69)
    }

    @Test func pcscdHoldingALibnfcOnlyReaderIsAProblem() throws {
        let tree = try FakeTree("blocked")
        try tree.symlink("/proc/812/fd/7", to: "/dev/bus/usb/001/004")
        let r = try doctor(tree)
        let p = r.the("pcscd", "problem")
        #expect(p?.summary == "pcscd (pid 812) holds SCM SCL3711 (04e6:5591) on USB bus 001 device 004, which only libnfc can drive: libnfc cannot open it while pcscd runs")
        #expect(p?.fix == "stop pcscd: sudo systemctl stop pcscd.socket pcscd.service\n(or remove the pcscd driver that claims 04e6:5591)")
    }

    @Test func unreadablePcscdFilesFallBackToWhatTheCCIDDriverClaims() throws {
        let tree = try FakeTree("blocked")
        try tree.remove("/proc/812/fd")
        let r = try doctor(tree)
        #expect(r.the("pcscd", "ok")?.summary.hasPrefix("pcscd (pid 812) holds ACS ACR122U (072f:2200)") == true)
    }

    @Test func sonyRCS380IsDrivenDirectlyAndRCS300NeedsPcscd() throws {
        let tree = try FakeTree("sony")
        let r = try doctor(tree)
        let lib = r.the("pcsc-lite", "problem")
        #expect(lib?.summary == "pcsc-lite is incomplete, not installed: the pcscd daemon, the CCID driver; PC/SC readers (RC-S300, RC-S660, ACR122U) cannot be used")
        #expect(lib?.fix == "sudo apt-get install pcscd libccid")
        let usb = r.findings.filter { $0.check == "usb" && $0.verdict == "ok" }.map(\.summary)
        #expect(usb == [
            "Sony RC-S380/S (054c:06c1) on USB bus 001 device 006: driven directly over USB (libusb); --device usb:001:006 (or just usb)",
            "Sony RC-S300/S (054c:0dc8) on USB bus 001 device 007: served by PC/SC (pcscd with the CCID driver) as 'SONY FeliCa RC-S300/S'; --device 'pcsc:SONY FeliCa RC-S300/S'",
        ])
        let k = r.the("kernel-modules", "ok")
        #expect(k?.summary == "kernel module port100 is loaded and claims Sony RC-S380/S (054c:06c1): this tool detaches it while it uses the reader (when that is refused, the fix below frees the reader)")
        #expect(k?.fix?.hasPrefix("unload it now: sudo modprobe -r port100") == true, "\(k?.fix ?? "")")
        #expect(k?.fix?.contains("blacklist port100") == true, "\(k?.fix ?? "")")
        let d = r.the("pcscd", "problem")
        #expect(d?.summary == "pcscd is not running, and Sony RC-S300/S (054c:0dc8) is reached only through it")
        #expect(d?.fix == "sudo apt-get install pcscd libccid")
        // The RC-S380's node in the fixture is root-only: the user needs the udev rule.
        let p = r.the("permissions", "problem")
        #expect(p?.summary.hasSuffix("for Sony RC-S380/S (054c:06c1) on USB bus 001 device 006: this tool will not see the reader") == true, "\(p?.summary ?? "")")
        #expect(p?.fix?.contains("ATTRS{idVendor}==\"054c\", ATTRS{idProduct}==\"06c1\"") == true, "\(p?.fix ?? "")")
    }

    @Test func anInstalledButStoppedPcscdIsEnabled() throws {
        let tree = try FakeTree("sony")
        let status = try String(contentsOfFile: tree.file("/var/lib/dpkg/status"), encoding: .utf8)
        try tree.write("/var/lib/dpkg/status", status + "Package: pcscd\nStatus: install ok installed\nVersion: 1.9.9-2\n\nPackage: libccid\nStatus: install ok installed\nVersion: 1.5.2-1\n\n")
        let r = try doctor(tree)
        #expect(r.verdicts("pcsc-lite") == ["ok"])
        #expect(r.the("pcscd", "problem")?.fix == "sudo systemctl enable --now pcscd.socket")
    }

    @Test func aBareSystemWarnsAndSaysWhatToPlugIn() throws {
        let tree = try FakeTree("bare")
        let r = try doctor(tree)
        #expect(r.the("libnfc", "warning")?.fix == "sudo apt-get install libnfc6 libnfc-bin")
        #expect(r.the("pcsc-lite", "warning")?.fix == "sudo apt-get install libpcsclite1 pcscd libccid")
        let usb = r.the("usb", "problem")
        #expect(usb?.summary == "no known NFC reader among the 2 USB devices")
        #expect(usb?.fix?.hasSuffix("A PN532 on a serial port does not show up here: pass --device libnfc:pn532_uart:/dev/ttyUSB0") == true)
        let k = r.the("kernel-modules", "warning")
        #expect(k?.summary == "cannot read /proc/modules: kernel NFC drivers (pn533_usb, port100) that would hold a reader are not checked")
        #expect(k?.fix == "check by hand: lsmod | grep -E '^(pn533|port100|nfc)'")
        #expect(r.the("pcscd", "ok")?.summary == "pcscd is not running (only PC/SC readers need it)")
        #expect(r.text.hasSuffix("\n2 problems, 3 warnings; not ready: no reader can poll\n"))
    }

    @Test func missingLibnfcIsAProblemWhenAReaderNeedsIt() throws {
        let tree = try FakeTree("ready")
        try tree.write("/var/lib/dpkg/status", "Package: pcscd\nStatus: install ok installed\nVersion: 1.9.9-2\n\n")
        let r = try doctor(tree)
        #expect(r.the("libnfc", "problem")?.fix == "sudo apt-get install libnfc6 libnfc-bin")
    }

    @Test func withoutSysfsUSBIsAWarning() throws {
        let tree = try FakeTree("bare")
        try tree.remove("/sys")
        let r = try doctor(tree)
        // The poll names what is known: USB could not be listed, not that no reader is there.
        #expect(r.the("poll", "problem")?.summary == "no reader to poll: USB readers cannot be listed here, and neither libnfc nor PC/SC lists one")
        let w = r.the("usb", "warning")
        #expect(w?.summary == "cannot read /sys/bus/usb/devices, so USB readers cannot be listed (no sysfs: a container or not Linux?)")
        #expect(w?.fix == "run `felica doctor` on the machine the reader is plugged into (or give the container /sys and the reader's /dev/bus/usb node)")
    }

    /// Over every tree: each line of the text report starts with a verdict, and every check
    /// that is not ok carries a fix.
    @Test(arguments: ["ready", "blocked", "sony", "bare"])
    func everyFailingCheckNamesAFix(_ name: String) throws {
        let r = try doctor(try FakeTree(name))
        for f in r.findings where f.verdict != "ok" {
            #expect(f.fix?.isEmpty == false, "\(f)")
        }
        let body = r.text.split(separator: "\n\n")[0]
        for line in body.split(separator: "\n") {
            #expect(line.hasPrefix("ok       ") || line.hasPrefix("warning  ") || line.hasPrefix("problem  ") || line.hasPrefix("         "), "\(line)")
        }
        #expect(r.findings.count == body.split(separator: "\n").filter { !$0.hasPrefix(" ") }.count)
    }

    // MARK: The felica package's rule and blacklist

    /// The rule the package installs, as it is in the source tree.
    static func packagedRule() throws -> String {
        try String(contentsOf: packageRoot.appendingPathComponent("packaging/60-felica.rules"), encoding: .utf8)
    }

    /// A tree with the package's files (and, when `installed`, the package in dpkg's database).
    func packagedTree(installed: Bool = true, rule: Bool = true, blacklist: Bool = true) throws -> FakeTree {
        let tree = try FakeTree("ready")
        if rule { try tree.write("/usr/lib/udev/rules.d/60-felica.rules", try Self.packagedRule()) }
        if blacklist { try tree.write("/usr/lib/modprobe.d/felica.conf", "# from felica\nblacklist port100\n") }
        if installed {
            let status = try String(contentsOfFile: tree.file("/var/lib/dpkg/status"), encoding: .utf8)
            try tree.write("/var/lib/dpkg/status", status + "Package: felica\nStatus: install ok installed\nArchitecture: amd64\nVersion: 0.1.0\n\n")
        }
        return tree
    }

    /// The packaged rule gives access to exactly the USB readers doctor would write a rule for:
    /// those this tool or libnfc drive over USB, with doctor's own line for each.
    @Test func thePackagedRuleCoversEveryReaderDrivenOverUSB() throws {
        let lines = try Self.packagedRule().split(separator: "\n").map(String.init).filter { !$0.hasPrefix("#") && !$0.isEmpty }
        let wanted = KnownReaders.all.filter { $0.direct || $0.libnfcDriver != nil }
            .map { USBReaders.udevRule(vendor: $0.vendor, product: $0.product) }
        #expect(Set(lines) == Set(wanted))
        #expect(lines.count == wanted.count)
        #expect(HostSnapshot.parseUdevAccessRules(lines.joined(separator: "\n")).count == wanted.count)
    }

    @Test func thePackagedRuleAndBlacklistInPlaceAreOk() throws {
        let tree = try packagedTree()
        try tree.chmod("/dev/bus/usb/001/004", 0o666)
        let r = try doctor(tree, ["--device", "virtual:suica"])
        #expect(r.status == 0)
        #expect(r.the("setup", "ok")?.summary == "udev rule /usr/lib/udev/rules.d/60-felica.rules gives the user at the seat and group plugdev access to 9 reader models; port100 is blacklisted (/usr/lib/modprobe.d/felica.conf) (package felica 0.1.0)")
        #expect(r.findings.allSatisfy { $0.verdict == "ok" }, "\(r.findings)")
    }

    /// The blacklist is named where the package put it (dpkg's list), though /usr/lib finds
    /// it first when /lib is a link to it (Debian 12 ships it in /lib/modprobe.d).
    @Test func theBlacklistIsNamedAsThePackageListsIt() throws {
        let tree = try packagedTree()
        try tree.write("/lib/modprobe.d/felica.conf", "# from felica\nblacklist port100\n")
        try tree.write("/var/lib/dpkg/info/felica.list", "/.\n/lib\n/lib/modprobe.d\n/lib/modprobe.d/felica.conf\n/usr/lib/udev/rules.d/60-felica.rules\n")
        let r = try doctor(tree)
        #expect(r.the("setup", "ok")?.summary.contains("port100 is blacklisted (/lib/modprobe.d/felica.conf) (package felica 0.1.0)") == true, "\(r.findings)")
    }

    /// A copy in /etc replaces the packaged file of the same name, as udev does.
    @Test func aRuleCopiedToEtcReplacesThePackagedOne() throws {
        let tree = try packagedTree()
        try tree.write("/etc/udev/rules.d/60-felica.rules", try Self.packagedRule().split(separator: "\n").prefix(6).joined(separator: "\n"))
        let r = try doctor(tree)
        #expect(r.the("setup", "ok")?.summary.hasPrefix("udev rule /etc/udev/rules.d/60-felica.rules gives the user at the seat and group plugdev access to 2 reader models;") == true)
    }

    @Test(arguments: [(false, true, "the udev rule /usr/lib/udev/rules.d/60-felica.rules is gone; port100 is blacklisted (/usr/lib/modprobe.d/felica.conf)"),
                      (true, false, "the port100 blacklist /usr/lib/modprobe.d/felica.conf is gone; udev rule /usr/lib/udev/rules.d/60-felica.rules gives the user at the seat and group plugdev access to 9 reader models"),
                      (false, false, "the udev rule /usr/lib/udev/rules.d/60-felica.rules and the port100 blacklist /usr/lib/modprobe.d/felica.conf are gone")])
    func aPackagedFileGoneIsAProblemFixedByReinstalling(_ rule: Bool, _ blacklist: Bool, _ tail: String) throws {
        let r = try doctor(try packagedTree(rule: rule, blacklist: blacklist))
        let p = r.the("setup", "problem")
        #expect(p?.summary == "package felica 0.1.0 is installed, but " + tail)
        #expect(p?.fix == "sudo apt-get install --reinstall felica")
    }

    @Test func withoutThePackageOrItsFilesThereIsNoSetupCheck() throws {
        let r = try doctor(try packagedTree(installed: false, rule: false, blacklist: false))
        #expect(r.verdicts("setup") == [])
        let byHand = try doctor(try packagedTree(installed: false, rule: false, blacklist: true))
        #expect(byHand.the("setup", "ok")?.summary == "port100 is blacklisted (/usr/lib/modprobe.d/felica.conf); not from the felica package, which would install the udev rule /usr/lib/udev/rules.d/60-felica.rules")
    }

    /// The rule is installed but the reader's node was made before it (group not plugdev):
    /// re-run udev on it, or replug.
    @Test func aRuleInstalledAfterTheReaderWasPluggedInNeedsATrigger() throws {
        let tree = try packagedTree()
        try tree.chmod("/dev/bus/usb/001/004", 0o664)
        let r = try doctor(tree)
        let p = r.the("permissions", "problem")
        #expect(p?.summary.hasSuffix("for SCM SCL3711 (04e6:5591) on USB bus 001 device 004: libnfc will not see the reader; the udev rule /usr/lib/udev/rules.d/60-felica.rules covers it, but the node was made before the rule was in place (the reader was plugged in before it was installed)") == true, "\(String(describing: p))")
        #expect(p?.fix == """
            apply the rule to the plugged-in reader: sudo udevadm control --reload-rules && sudo udevadm trigger --action=change --subsystem-match=usb --attr-match=idVendor=04e6
            or unplug the reader and plug it in again
            (logged in remotely, not at the seat? also join the plugdev group (then log in again): sudo usermod -aG plugdev alice)
            """)
    }

    /// The rule has been applied (the node is root:plugdev 0660) but the user is neither at
    /// the seat nor in plugdev.
    @Test func anAppliedRuleStillNeedsPlugdevOffTheSeat() throws {
        let tree = try packagedTree()
        try tree.chmod("/dev/bus/usb/001/004", 0o660)
        try FileManager.default.setAttributes([.groupOwnerAccountID: 46], ofItemAtPath: tree.file("/dev/bus/usb/001/004"))
        let r = try doctor(tree)
        let p = r.the("permissions", "problem")
        #expect(p?.summary.hasSuffix("; the udev rule /usr/lib/udev/rules.d/60-felica.rules is applied, but it grants access only to the user at the seat and to group plugdev") == true, "\(String(describing: p))")
        #expect(p?.fix == "join the plugdev group (then log in again): sudo usermod -aG plugdev alice")
    }

    @Test(arguments: [(["doctor", "--root", ""], "Error: option '--root' needs a directory"),
                      (["doctor", "--root", "/no/such/root"], "Error: --root /no/such/root: no such directory"),
                      (["devices", "--root", "/no/such/root"], "Error: --root /no/such/root: no such directory")] as [([String], String)])
    func doctorUsageErrors(_ args: [String], _ message: String) throws {
        let r = try run(args)
        #expect(r.status == 64)
        #expect(r.stderr.hasPrefix(message), "\(r.stderr)")
        #expect(r.stderr.contains("\nUsage: felica \(args[0])"), "\(r.stderr)")
    }
}

/// `felica devices` lists known USB readers that something keeps from the stacks.
@Test(arguments: [
    ("blocked", [["libnfc", "SCM SCL3711 (04e6:5591)", "libnfc:pn53x_usb:001:004",
                  "unusable: held by kernel module pn533_usb; no permission on /dev/bus/usb/001/004 (see felica doctor)"],
                 ["pcsc", "ACS ACR122U (072f:2200)", "pcsc:ACS ACR122U PICC Interface", "unusable: held by kernel module pn533_usb (see felica doctor)"]]),
    ("sony", [["usb", "Sony RC-S380/S (054c:06c1)", "usb:001:006", "unusable: no permission on /dev/bus/usb/001/006 (see felica doctor)"],
              ["pcsc", "Sony RC-S300/S (054c:0dc8)", "pcsc:SONY FeliCa RC-S300/S", "unusable: pcscd is not running (see felica doctor)"]]),
    ("bare", []),
] as [(String, [[String]])])
func devicesListsReadersSomethingBlocks(_ name: String, _ expected: [[String]]) throws {
    let tree = try FakeTree(name)
    let env = ["PCSCLITE_CSOCK_NAME": temporaryPath("no-pcscd.comm"), "LIBNFC_AUTO_SCAN": "false"]
    let r = try run(["devices", "--root", tree.path, "--json"], environment: env)
    #expect(r.status == 0)
    // Built-in cards carry their systems too (an array), so rows are read member by member.
    let rows = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [[String: Any]] ?? []
    let real = rows.filter { $0["stack"] as? String != "virtual" }.map { row in ["stack", "name", "device", "state"].map { row[$0] as? String ?? "" } }
    #expect(real == expected)
    let okica = rows.first { $0["device"] as? String == "virtual:okica" }?["systems"] as? [[String: Any]]
    #expect(okica?.first?["name"] as? String == "OKICA" && okica?.first?["decoded"] as? Bool == true)
    let text = try run(["devices", "--root", tree.path], environment: env)
    for row in expected { #expect(text.stdout.contains(row[3]), "\(text.stdout)") }
    #expect(text.stderr == "no reader found; `felica doctor` explains why. The virtual cards work without hardware.\n")
}

@Test(arguments: [
    ("Uid:\t1000\t1001\t1000\t1000\nGid:\t100\t100\t100\t100\nGroups:\t46 100\n", Identity(uid: 1001, gid: 100, groups: [46, 100])),
    ("Uid:\t0\t0\t0\t0\nGid:\t0\t0\t0\t0\nGroups:\t\n", Identity(uid: 0, gid: 0, groups: [])),
] as [(String, Identity)])
func identityFromProcStatus(_ text: String, _ expected: Identity) {
    #expect(Identity(status: text) == expected)
}

@Test func dpkgStatusKeepsOnlyInstalledPackages() {
    let db = HostSnapshot.parseDpkgStatus("Package: a\nStatus: install ok installed\nVersion: 1:2.0-3\n\nPackage: b\nStatus: deinstall ok config-files\nVersion: 1\n")
    #expect(db == ["a": "1:2.0-3"])
    #expect(HostSnapshot.upstreamVersion("1:2.0.1-3") == "2.0.1")
    #expect(HostSnapshot.upstreamVersion("1.8.0") == "1.8.0")
}

// MARK: - Polling through real libnfc, against the PN532 emulator

/// `felica-sim pn532` on a pseudo-terminal; stopped when the value goes away.
final class EmulatedPN532 {
    let sim: BackgroundProcess
    /// libnfc's connection string, `pn532_uart:/dev/pts/N`.
    let connectionString: String

    init(_ arguments: [String]) throws {
        let process = try BackgroundProcess(felica: ["pn532"] + arguments, executable: "felica-sim")
        // The emulator prints its connection string as its first line once it is ready.
        process.until(30) { process.stdout.contains("\n") || !process.isRunning }
        sim = process
        connectionString = process.stdout.split(separator: "\n").first.map(String.init) ?? ""
    }
}

@Suite struct DoctorPollTests {
    func readyTree() throws -> FakeTree {
        let tree = try FakeTree("ready")
        try tree.chmod("/dev/bus/usb/001/004", 0o666)
        return tree
    }

    @Test func aReaderLibnfcListsIsPolledAndACardAnswers() throws {
        let sim = try EmulatedPN532(["--card", "suica"])
        #expect(sim.connectionString.hasPrefix("pn532_uart:/dev/"))
        let tree = try readyTree()
        let r = try run(["doctor", "--root", tree.path],
                        environment: ["LIBNFC_DEVICE": sim.connectionString, "PCSCLITE_CSOCK_NAME": temporaryPath("no-pcscd.comm")])
        #expect(r.status == 0, "\(r.stdout)")
        // libnfc finds it; the native transport drives it.
        let native = "pn532:" + sim.connectionString.dropFirst("pn532_uart:".count)
        #expect(r.stdout.contains("\nok       \(native): a card answered (IDm 0101120312345678, IC "), "\(r.stdout)")
        #expect(r.stdout.hasSuffix("\nno problems; ready: 1 reader can poll (\(native))\n"))
    }

    @Test func aReaderWithoutACardCanPoll() throws {
        let sim = try EmulatedPN532(["--no-card"])
        let tree = try readyTree()
        let r = try run(["doctor", "--root", tree.path, "--device", "libnfc:" + sim.connectionString])
        #expect(r.status == 0, "\(r.stdout)")
        #expect(r.stdout.contains("\nok       libnfc:\(sim.connectionString): polls, no card on it (place a card to read one)\n"), "\(r.stdout)")
    }

    @Test func aReaderThatIsNotThereIsAProblemWithLibnfcsReason() throws {
        let tree = try readyTree()
        let r = try run(["doctor", "--root", tree.path, "--device", "libnfc:pn532_uart:/dev/felica-no-such-tty"])
        #expect(r.status == 69)
        #expect(r.stdout.contains("\nproblem  libnfc:pn532_uart:/dev/felica-no-such-tty: cannot open: libnfc could not open pn532_uart:/dev/felica-no-such-tty: /dev/felica-no-such-tty does not exist"), "\(r.stdout)")
        // Every check above is ok: the fix says what to check, not "fix the problems above".
        #expect(r.stdout.contains("\n         fix: check that the reader is connected and that the device string names it, then try again: felica poll --device libnfc:pn532_uart:/dev/felica-no-such-tty\n"), "\(r.stdout)")
    }
}

/// A link with two rates whose card says it runs at 424 kbps but is silent there.
final class BoastingCardLink: Transport {
    let name = "boast"
    let linkLatency: Duration = .milliseconds(2)
    let bitRates: [AirTiming.BitRate] = [.kbps212, .kbps424]
    private let rate = Mutex(AirTiming.BitRate.kbps212)
    var bitRate: AirTiming.BitRate { rate.withLock { $0 } }
    func switchBitRate(to newRate: AirTiming.BitRate) async throws(FeliCaError) { rate.withLock { $0 = newRate } }
    func exchange(_ packet: [UInt8], timeout: Duration) async throws(FeliCaError) -> [UInt8] {
        guard bitRate == .kbps212, let polling = try? PollingCommand.decode(packet[...]) else {
            throw FeliCaError(.timeout, "silent")
        }
        let data: UInt16? = polling.requestCode == .communicationPerformance ? 0x0083 : nil
        return PollingResponse(idm: IDm(rawValue: 0x0101_1203_1234_5678), pmm: PMm(rawValue: 0x100b_4b42_8485_d0ff), requestData: data).encode()
    }
    func close() async {}
}

@Test func doctorFindsACardThatDoesNotAnswerAtTheRateItClaims() async throws {
    let link = BoastingCardLink()
    let session = CardSession(transport: link)
    let r = try #require(try await session.poll())
    let check = try #require(try await DoctorRun.bitRateCheck(session, Target(idm: r.idm, pmm: r.pmm, systemCode: nil)))
    #expect(check.summary == "it says it runs at 424 kbps but did not answer there")
    #expect(check.keepSlow)
    #expect(link.bitRate == .kbps212)
}
