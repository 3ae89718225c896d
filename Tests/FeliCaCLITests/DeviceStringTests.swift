@testable import FeliCaCLI
import FeliCa
import FeliCaDevices
import Testing

// MARK: - Through the executable

@Test(arguments: [
    (["poll", "--device", "virtual:"], "nothing after 'virtual:'"),
    (["poll", "--device", "virtual:suca"], "Did you mean virtual:suica?"),
    (["poll", "--device", "libnfc:"], "nothing after 'libnfc:'"),
    (["poll", "--device", ""], "option '--device' is empty"),
    (["poll", "--device", "virtual:suica?timing=1"], "device option 'timing'"),
    (["balance", "--device", "bogus:x"], "'bogus' is not a kind of device"),
    (["poll", "--device", "virtual:suica", "--dialect", "sony"], "--dialect: a PC/SC dialect applies to PC/SC devices"),
    (["doctor", "--device", "virtual:suca"], "no built-in card named 'suca'"),
])
func badDevicesAreUsageErrors(_ args: [String], _ message: String) throws {
    let r = try run(args)
    #expect(r.status == 64, "\(args): \(r.stderr)")
    #expect(r.stderr.contains(message), "\(args): \(r.stderr)")
    #expect(r.stderr.hasPrefix("Error: "), "\(r.stderr)")
    #expect(r.stdout.isEmpty)
}

@Test func aBadFelicaDeviceIsNamedAsTheSource() throws {
    let r = try run(["poll"], environment: ["FELICA_DEVICE": "virtual:suca"])
    #expect(r.status == 64, "\(r.stderr)")
    #expect(r.stderr.contains("FELICA_DEVICE='virtual:suca'"), "\(r.stderr)")
    #expect(r.stderr.contains("Did you mean virtual:suica?"), "\(r.stderr)")
    // --device wins over the environment, bad or not.
    let given = try run(["poll", "--device", "virtual:suica"], environment: ["FELICA_DEVICE": "virtual:suca"])
    #expect(given.status == 0, "\(given.stderr)")
}

/// A driver libnfc does not have can never name a reader: a usage error, found before libnfc opens.
@Test func anUnknownLibnfcDriverIsNamed() throws {
    let r = try run(["poll", "--device", "libnfc:nosuchdriver:x"])
    #expect(r.status == 64, "\(r.stderr)")
    #expect(r.stderr.contains("libnfc has no driver named 'nosuchdriver'"), "\(r.stderr)")
    #expect(r.stderr.contains("pn532_uart"), "\(r.stderr)")
    #expect(!r.stderr.contains("permission"), "\(r.stderr)")
}

/// Without a reader on the bus (no umockdev here), each USB form says none was found.
@Test func usbWithoutAReaderSaysNoneWasFound() throws {
    for device in ["usb", "usb:054c:06c1", "usb:001:004"] {
        let r = try run(["poll", "--device", device])
        #expect(r.status == 69, "\(r.stderr)")
        #expect(r.stderr.contains("no Sony RC-S380 found on USB") || r.stderr.contains("libusb could not"), "\(r.stderr)")
        if r.stderr.contains("no Sony RC-S380 found on USB") {
            // The library names no command; felica adds the one that checks the readers.
            #expect(r.stderr.contains("(lsusb should list 054c:06c1 or 054c:06c3), then run `felica devices`. To try the tool without a reader: --device virtual:suica"), "\(r.stderr)")
        }
    }
    let other = try run(["poll", "--device", "usb:1234:5678"])
    #expect(other.status == 1, "\(other.stderr)")
    #expect(other.stderr.contains("1234:5678 is not a reader this build drives over USB"), "\(other.stderr)")
}
