// The program of Docs/library.md, "Open any reader": it imports library products only
// (no FeliCaCLI). `LibraryExample balance DEVICE` prints the balance of the card on DEVICE;
// `LibraryExample taps DEVICE N` prints each of the next N cards tapped. The docs tests run
// it against virtual cards and the PN532 emulator, the USB stage under `felica-sim rcs380`.
import FeliCa
import FeliCaCards
import FeliCaDevices

#if canImport(Glibc)
import Glibc
#endif

/// Prints the balance of each purse of the card on the reader `deviceString` names.
func printBalance(on deviceString: String) async throws {
    let device = try await Device.open(deviceString)    // "usb", "pcsc:SONY", "libnfc", "virtual:suica" ...
    let report = try await CardReader(depth: .balance).read(device.session())
    for purse in report.purses {
        print(purse.profile.displayName, purse.balance.map { "¥\($0)" } ?? "unreadable")
    }
    await device.close()
}

/// Reads every card tapped on the reader, until `count` have been read.
func watchTaps(on deviceString: String, count: Int) async throws {
    let device = try await Device.open(deviceString, options: .init(requiresCard: false))
    let session = device.session()
    let reader = CardReader(depth: .balance)
    var read = 0
    for try await tap in device.taps(session) {
        let report = try await reader.read(session, first: tap.target)
        print("card \(tap.target.idm):", report.purses.map { "\($0.balance ?? 0)" }.joined(separator: " "))
        read += 1
        if read == count { break }
    }
    await device.close()
}

/// A line on stderr.
func complain(_ message: String) {
    let line = Array((message + "\n").utf8)
    _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
}

let arguments = Array(CommandLine.arguments.dropFirst())
do {
    switch (arguments.first, arguments.count) {
    case ("balance", 2):
        try await printBalance(on: arguments[1])
    case ("taps", 3):
        guard let count = Int(arguments[2]), count > 0 else { throw DeviceError(.badDeviceString, "taps: '\(arguments[2])' is not a count") }
        try await watchTaps(on: arguments[1], count: count)
    default:
        complain("usage: LibraryExample balance DEVICE | LibraryExample taps DEVICE COUNT")
        exit(64)
    }
} catch {
    complain("LibraryExample: \(error)")
    exit(1)
}
