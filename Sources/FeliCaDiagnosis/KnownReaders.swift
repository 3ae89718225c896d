import FeliCa

/// A USB reader model `felica doctor` recognises, and how this tool can reach it.
public struct KnownReader: Sendable {
    /// The ways a reader can be driven.
    public enum Route: Sendable, Equatable {
        /// libnfc talks to it over USB itself, with this libnfc driver.
        case libnfc(driver: String)
        /// pcscd drives it through the CCID driver, which names it like this.
        case pcsc(name: String)
        /// This tool drives it itself over libusb (the Sony RC-S380's Port-100 protocol).
        case usb
    }

    public var vendor: UInt16
    public var product: UInt16
    public var name: String
    /// Routes in order of preference; empty = nothing this tool uses can drive it.
    public var routes: [Route]
    /// The kernel driver whose USB id table claims it (and so keeps user space away).
    public var kernelDriver: String?
    /// Why there is no route, for readers without one.
    public var unsupportedReason: String?

    public var id: String { "\(Hex.digits(vendor, count: 4)):\(Hex.digits(product, count: 4))" }
    public var label: String { "\(name) (\(id))" }

    public var libnfcDriver: String? {
        for r in routes { if case .libnfc(let d) = r { return d } }
        return nil
    }

    /// Whether this tool drives it directly over USB.
    public var direct: Bool { routes.contains(.usb) }

    public var pcscName: String? {
        for r in routes { if case .pcsc(let n) = r { return n } }
        return nil
    }
}

/// The readers `felica doctor` knows by USB vendor:product id.
///
/// Sources (checked November 2026):
/// - libnfc's drivers, `libnfc/drivers/pn53x_usb.c` (`pn53x_usb_supported_devices`: PN531
///   04cc:0531, PN533 04cc:2533, SCL3711 04e6:5591, Sony PN531 054c:0193, ASK LoGO
///   1fd3:0608, Sony RC-S360 054c:02e1) and `libnfc/drivers/acr122_usb.c` (ACR122U
///   072f:2200), nfc-tools/libnfc on GitHub; the same ids are in Debian's
///   `/lib/udev/rules.d/93-pn53x.rules` (package libnfc-bin).
/// - The CCID driver's reader list, `readers/supported_readers.txt` in
///   LudovicRousseau/CCID, as installed by Debian 12's libccid in
///   `/usr/lib/pcsc/drivers/ifd-ccid.bundle/Contents/Info.plist`: "SONY FeliCa RC-S300/S"
///   054c:0dc8, "SONY FeliCa RC-S300/P" 054c:0dc9, "SONY FeliCa RC-S660/U" 054c:0d8f,
///   "ACS ACR122U PICC Interface" 072f:2200, "ACS ACR1252 Dual Reader" 072f:223b. No RC-S380
///   id is listed there.
/// - Linux `drivers/nfc/pn533/usb.c` (`pn533_usb_table`: 04cc:2533, 04e6:5591, 054c:02e1,
///   072f:2200) and `drivers/nfc/port100.c` (RC-S380/S 054c:06c1, RC-S380/P 054c:06c3),
///   torvalds/linux: the kernel drivers that claim these readers when loaded.
public enum KnownReaders {
    public static let all: [KnownReader] = [
        KnownReader(vendor: 0x04CC, product: 0x2533, name: "NXP PN533", routes: [.libnfc(driver: "pn53x_usb")], kernelDriver: "pn533_usb"),
        KnownReader(vendor: 0x04CC, product: 0x0531, name: "Philips PN531", routes: [.libnfc(driver: "pn53x_usb")]),
        KnownReader(vendor: 0x054C, product: 0x0193, name: "Sony PN531 reader", routes: [.libnfc(driver: "pn53x_usb")]),
        KnownReader(vendor: 0x04E6, product: 0x5591, name: "SCM SCL3711", routes: [.libnfc(driver: "pn53x_usb")], kernelDriver: "pn533_usb"),
        KnownReader(vendor: 0x1FD3, product: 0x0608, name: "ASK LoGO", routes: [.libnfc(driver: "pn53x_usb")]),
        KnownReader(vendor: 0x054C, product: 0x02E1, name: "Sony RC-S360 / RC-S330 / RC-S370", routes: [.libnfc(driver: "pn53x_usb")], kernelDriver: "pn533_usb"),
        KnownReader(vendor: 0x072F, product: 0x2200, name: "ACS ACR122U",
                    routes: [.pcsc(name: "ACS ACR122U PICC Interface"), .libnfc(driver: "acr122_usb")], kernelDriver: "pn533_usb"),
        KnownReader(vendor: 0x072F, product: 0x223B, name: "ACS ACR1252U", routes: [.pcsc(name: "ACS ACR1252 Dual Reader")]),
        KnownReader(vendor: 0x054C, product: 0x0DC8, name: "Sony RC-S300/S", routes: [.pcsc(name: "SONY FeliCa RC-S300/S")]),
        KnownReader(vendor: 0x054C, product: 0x0DC9, name: "Sony RC-S300/P", routes: [.pcsc(name: "SONY FeliCa RC-S300/P")]),
        KnownReader(vendor: 0x054C, product: 0x0D8F, name: "Sony RC-S660/U", routes: [.pcsc(name: "SONY FeliCa RC-S660/U")]),
        KnownReader(vendor: 0x054C, product: 0x06C1, name: "Sony RC-S380/S", routes: [.usb], kernelDriver: "port100"),
        KnownReader(vendor: 0x054C, product: 0x06C3, name: "Sony RC-S380/P", routes: [.usb], kernelDriver: "port100"),
    ]

    public static func match(vendor: UInt16, product: UInt16) -> KnownReader? {
        all.first { $0.vendor == vendor && $0.product == product }
    }

    /// The kernel modules that grab NFC readers, each with the modules it pulls in, in the
    /// order `modprobe -r` must remove them.
    public static let kernelModules: [String: [String]] = [
        "pn533_usb": ["pn533_usb", "pn533", "nfc"],
        "port100": ["port100", "nfc_digital", "nfc"],
    ]

    /// The modules libnfc's Debian package blacklists (`/etc/modprobe.d/blacklist-libnfc.conf`).
    public static let blacklist = ["nfc", "pn533", "pn533_usb"]

    /// Every module name doctor watches in `/proc/modules`.
    public static let watchedModules: Set<String> = ["pn533_usb", "pn533", "port100", "nfc", "nfc_digital"]
}
