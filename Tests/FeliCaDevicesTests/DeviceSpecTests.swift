import FeliCa
@testable import FeliCaDevices
import FeliCaPCSC
import FeliCaReaderCodecs
import FeliCaTransportSupport
import FeliCaUSB
import Testing
#if canImport(Glibc)
import Glibc
#endif

// MARK: - Parsing

@Test(arguments: [
    ("libnfc", DeviceSpec(.libnfc(connstring: nil))),
    ("libnfc:pn532_uart:/dev/ttyUSB0", DeviceSpec(.libnfc(connstring: "pn532_uart:/dev/ttyUSB0"))),
    ("libnfc:pn53x_usb:001:004?wait=2.5", DeviceSpec(.libnfc(connstring: "pn53x_usb:001:004"), wait: .milliseconds(2500))),
    ("pn532:/dev/ttyUSB0", DeviceSpec(.pn532(path: "/dev/ttyUSB0"))),
    ("pn532:/dev/serial0?rate=424&wait=1", DeviceSpec(.pn532(path: "/dev/serial0", rate: .kbps424), wait: .seconds(1))),
    ("pn532:/dev/serial0?rate=fastest", DeviceSpec(.pn532(path: "/dev/serial0", rate: .fastest))),
    ("pn532:/dev/serial0?rate=212", DeviceSpec(.pn532(path: "/dev/serial0", rate: .kbps212))),
    ("pn532:/dev/serial0?baud=115200", DeviceSpec(.pn532(path: "/dev/serial0", baud: 115_200))),
    ("pcsc", DeviceSpec(.pcsc(reader: .first, dialect: nil))),
    ("pcsc:SONY FeliCa RC-S300/S", DeviceSpec(.pcsc(reader: .named("SONY FeliCa RC-S300/S"), dialect: nil))),
    ("pcsc?dialect=acr122u&wait=0", DeviceSpec(.pcsc(reader: .first, dialect: .acr122u), wait: .zero)),
    ("pcsc:ACS?wait=10&dialect=RAW", DeviceSpec(.pcsc(reader: .named("ACS"), dialect: .raw), wait: .seconds(10))),
    ("usb", DeviceSpec(.usb(.first))),
    ("usb:054c:06c1", DeviceSpec(.usb(.id(vendor: 0x054c, product: 0x06c1)))),
    ("usb:054C:06C3", DeviceSpec(.usb(.id(vendor: 0x054c, product: 0x06c3)))),
    ("usb:001:004", DeviceSpec(.usb(.path(bus: 1, address: 4)))),
    ("usb:003:127?wait=5", DeviceSpec(.usb(.path(bus: 3, address: 127)), wait: .seconds(5))),
    ("usb?rate=212", DeviceSpec(.usb(.first, rate: .kbps212))),
    ("usb:054c:06c1?rate=424&wait=1", DeviceSpec(.usb(.id(vendor: 0x054c, product: 0x06c1), rate: .kbps424), wait: .seconds(1))),
    ("usb?rate=auto", DeviceSpec(.usb(.first, rate: .automatic))),
    ("usb?rate=fastest", DeviceSpec(.usb(.first, rate: .fastest))),
    ("virtual:suica", DeviceSpec(.virtual(.builtIn("suica"), timing: nil))),
    ("virtual:wallet?timing=424", DeviceSpec(.virtual(.builtIn("wallet"), timing: .kbps424))),
    ("virtual:edy.json", DeviceSpec(.virtual(.image(path: "edy.json"), timing: nil))),
    ("virtual:/tmp/card?timing=212", DeviceSpec(.virtual(.image(path: "/tmp/card"), timing: .kbps212))),
    ("replay:a.jsonl", DeviceSpec(.replay(path: "a.jsonl", lenient: false))),
    ("replay:dir/a.jsonl?lenient", DeviceSpec(.replay(path: "dir/a.jsonl", lenient: true))),
])
func deviceStringsParse(_ text: String, _ expected: DeviceSpec) throws {
    let spec = try DeviceSpec(parsing: text)
    #expect(spec == expected)
    // Written back, it parses to the same spec.
    #expect(try DeviceSpec(parsing: spec.description) == spec)
}

@Test func canonicalStrings() throws {
    #expect(try DeviceSpec(parsing: "usb:054C:06C1").description == "usb:054c:06c1")
    #expect(try DeviceSpec(parsing: "pcsc:ACS?wait=10&dialect=RAW").description == "pcsc:ACS?dialect=raw&wait=10")
    #expect(DeviceSpec(.usb(.path(bus: 1, address: 4))).description == "usb:001:004")
    #expect(try DeviceSpec(parsing: "usb?rate=auto").description == "usb")
    #expect(try DeviceSpec(parsing: "pn532:/dev/ttyS0?rate=auto").description == "pn532:/dev/ttyS0")
    #expect(try DeviceSpec(parsing: "pn532:/dev/ttyS0?baud=115200&rate=212").description == "pn532:/dev/ttyS0?rate=212&baud=115200")
    #expect(try DeviceSpec(parsing: "usb:001:004?wait=2&rate=212").description == "usb:001:004?rate=212&wait=2")
    #expect(DeviceSpec(.pcsc(reader: .first, dialect: nil), wait: .milliseconds(500)).description == "pcsc?wait=0.5")
}

@Test(arguments: [
    ("", "empty"),
    ("virtual", "'virtual' needs a card"),
    ("virtual:", "nothing after 'virtual:'"),
    ("virtual:suca", "no built-in card named 'suca'"),
    ("virtual:suca", "Did you mean virtual:suica?"),
    ("virtual:suica?timing=100", "device option 'timing': '100'"),
    ("virtual:suica?speed=212", "device option 'speed' is not known to virtual devices (they take: timing)"),
    ("virtual:suica?timeing=212", "did you mean 'timing'?"),
    ("libnfc:", "nothing after 'libnfc:'"),
    ("pn532", "'pn532' needs the serial port"),
    ("pn532:", "nothing after 'pn532:'"),
    ("pn532:/dev/ttyUSB0?rate=848", "device option 'rate': '848'"),
    ("pn532:/dev/ttyUSB0?baud=9600", "device option 'baud': '9600' is not one of 115200, 230400, 460800, 921600"),
    ("libnfc?dialect=raw", "device option 'dialect' is not known to libnfc devices (they take: wait)"),
    ("virtual:suica?wait=3", "device option 'wait' is not known to virtual devices"),
    ("pcsc:", "nothing after 'pcsc:'"),
    ("pcsc?dialect=nope", "'nope' is not a PC/SC dialect"),
    ("pcsc?wait=forever", "device option 'wait': 'forever' is not a number of seconds"),
    ("pcsc?wait=-1", "device option 'wait': '-1'"),
    ("pcsc?wait", "device option 'wait' needs a value"),
    ("pcsc?wait=1&wait=2", "device option 'wait' is given twice"),
    ("pcsc?&wait=1", "an empty device option"),
    ("replay", "'replay' needs a trace file"),
    ("replay:", "nothing after 'replay:'"),
    ("replay:a.jsonl?lenient=yes", "device option 'lenient' takes no value"),
    ("usb:", "nothing after 'usb:'"),
    ("usb:54c:6c1", "'usb:54c:6c1' names no USB reader"),
    ("usb:1:4", "'usb:1:4' names no USB reader"),
    ("usb:001:0004", "names no USB reader"),
    ("usb:054c", "names no USB reader"),
    ("usb?rate=848", "device option 'rate': '848' is not one of auto, fastest, 212, 424"),
    ("usb?rate", "device option 'rate' needs a value"),
    ("virtual:suica?rate=424", "device option 'rate' is not known to virtual devices"),
    ("virtaul:suica", "'virtaul' is not a kind of device"),
    ("virtaul:suica", "did you mean virtual:suica?"),
    ("suica", "did you mean virtual:suica?"),
    ("nfc", "'nfc' is not a kind of device"),
])
func badDeviceStringsSayWhatIsWrong(_ text: String, _ reason: String) {
    #expect {
        try DeviceSpec(parsing: text)
    } throws: { error in
        (error as? DeviceSpec.ParseError)?.reason.contains(reason) == true
    }
}

// MARK: - The default device

private func reader(_ spec: DeviceSpec, _ availability: DeviceListing.Availability) -> DeviceListing {
    DeviceListing(stack: spec.kindName, name: spec.description, spec: spec, availability: availability)
}

private let serial = DeviceSpec(.libnfc(connstring: "pn532_uart:/dev/ttyUSB9"))
private let sony = DeviceSpec(.pcsc(reader: .named("Sony RC-S300"), dialect: nil))

@Test func defaultDeviceSkipsReadersThatCannotBeOpened() throws {
    let readers = [reader(serial, .cannotOpen(reason: "no such file")), reader(sony, .usable(state: "card present"))]
    let (chosen, note) = try #require(Device.choose(readers))
    #expect(chosen.spec == sony)
    #expect(note == "2 readers found, using pcsc:Sony RC-S300 (1 cannot be opened)")
}

@Test func defaultDeviceChoiceIgnoresTheStateText() throws {
    // A usable reader whose state reads like a failure is still usable: the choice is typed.
    let odd = reader(sony, .usable(state: "cannot open: looks alarming but is a reader's own name for a state"))
    let (chosen, _) = try #require(Device.choose([reader(serial, .cannotOpen(reason: "busy")), odd]))
    #expect(chosen.spec == sony)
}

@Test func defaultDeviceFallsBackToTheFirstWhenNoneCanBeOpened() throws {
    let a = DeviceSpec(.libnfc(connstring: "a")), b = DeviceSpec(.libnfc(connstring: "b"))
    let readers = [reader(a, .cannotOpen(reason: "busy")), reader(b, .blocked(reasons: ["kernel driver"]))]
    #expect(try #require(Device.choose(readers)).0.spec == a)
    #expect(Device.choose([]) == nil)
    #expect(try #require(Device.choose([reader(sony, .usable(state: "empty"))])).note == nil)
}

@Test func availabilityShowsAsBefore() {
    #expect(DeviceListing.Availability.cannotOpen(reason: "busy").state == "cannot open: busy")
    #expect(DeviceListing.Availability.blocked(reasons: ["a", "b"]).state == "unusable: a; b")
    #expect(DeviceListing.Availability.usable(state: "empty").state == "empty")
}


@Test func libnfcSerialPN532sTheNativeTransportTakesOver() {
    #expect(DeviceListing.nativePN532Path(libnfc: "pn532_uart:/dev/ttyUSB0") == "/dev/ttyUSB0")
    #expect(DeviceListing.nativePN532Path(libnfc: "pn532_uart:/dev/ttyUSB0:115200") == "/dev/ttyUSB0")
    #expect(DeviceListing.nativePN532Path(libnfc: "pn532_uart:/dev/ttyUSB0:9600") == nil)
    #expect(DeviceListing.nativePN532Path(libnfc: "pn532_uart:") == nil)
    #expect(DeviceListing.nativePN532Path(libnfc: "pn53x_usb:001:004") == nil)
    #expect(DeviceListing.nativePN532Path(libnfc: "acr122_usb") == nil)
}

// MARK: - Errors name no command-line word

/// The devices layer and the transports under it say what is wrong in plain words with a
/// code of their own; the command that checks the readers (`felica devices`), `felica
/// doctor` and the `--device` option are the command line's to add.
@Test func noReaderErrorsNameNoCommandLineWord() async throws {
    func plain(_ text: String) -> Bool { !text.contains("--") && !text.contains("felica ") }
    #expect(plain(DeviceListing.Availability.blocked(reasons: ["held by kernel module pn533_usb"]).state))
    // No RC-S380 is on this machine's bus (or no USB access at all).
    do {
        _ = try await Device.open("usb:054c:06c1")
        Issue.record("opened a USB reader")
    } catch let error as FeliCaError {
        #expect(error.code == .noReader, "\(error.reason)")
        #expect(error.usbError?.code == .notFound || error.reason.hasPrefix("libusb could not"), "\(error.reason)")
        #expect(plain(error.reason), "\(error.reason)")
    }
    // No reader named: where no stack finds one (this machine has none), the device
    // layer's own code; a host with a reader opens it. In a child process (an exit test),
    // with the system's pcscd: this process may see a PC/SC test's private pcscd, whose
    // virtual reader, opened here, would be in use for that test. Exit tests came with
    // Swift 6.2; Debian's Swift 6.0 builds the suite without this part.
    #if compiler(>=6.2)
    await #expect(processExitsWith: .success) {
        unsetenv("PCSCLITE_CSOCK_NAME")
        do {
            let device = try await Device.open(nil as DeviceSpec?)
            await device.close()
        } catch let error as FeliCaError {
            let reason = error.reason
            if reason.contains("--") || reason.contains("felica ") { fatalError("names a command-line word: \(reason)") }
            if let own = error.deviceError, own.code != .noReaderFound || error.code != .noReader || !reason.hasPrefix("no reader found") {
                fatalError("not the device layer's no-reader error: \(reason)")
            }
        } catch {
            fatalError("\(error)")
        }
    }
    #endif
}
