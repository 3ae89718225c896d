// The program of Docs/library.md, "Open any reader": it imports library products only
// (no FeliCaCLI). `LibraryExample balance DEVICE` prints the balance of the card on DEVICE;
// `LibraryExample history DEVICE` its transactions, stations by name;
// `LibraryExample taps DEVICE N` prints each of the next N cards tapped, and
// `LibraryExample ride DEVICE N` does the same riding through the reader's loss. The docs
// tests run it against virtual cards and the PN532 emulator, the USB stage under
// `felica-sim rcs380`.
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

/// Prints the transactions of each purse of the card on the reader `deviceString` names,
/// newest first, with the stations of transit records by name.
func printHistory(on deviceString: String) async throws {
    let device = try await Device.open(deviceString)
    let report = try await CardReader(depth: .history).read(device.session())
    for purse in report.purses {
        print(purse.displayName)
        for t in purse.transactions {
            print(" ", t.date, t.kind, t.amount.map { "\($0)" } ?? "?", t.details)
        }
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

/// Reads every card tapped on the reader, until `count` have been read, riding through
/// the reader being unplugged and plugged in again.
func watchThroughReaderLoss(on deviceString: String, count: Int) async throws {
    let options = Device.OpenOptions(requiresCard: false, reconnectInterval: .milliseconds(500))
    let device = try await Device.open(deviceString, options: options)
    let session = device.session()
    let reader = CardReader(depth: .balance)
    let taps = device.taps(session) { event in
        if case .readerLost = event { print("reader lost, waiting for it") }
        if case .readerBack = event { print("reader back") }
    }
    var read = 0
    for try await tap in taps {
        guard let report = try await readTap(tap, with: reader, on: session, of: taps) else { continue }
        print("card \(tap.target.idm):", report.purses.map { "\($0.balance ?? 0)" }.joined(separator: " "))
        read += 1
        if read == count { break }
    }
    await device.close()
}

/// The report of the card just tapped; nil when the reader was lost during the read (the
/// loop is told, waits for the reader, and yields the card again if it is still there).
func readTap(_ tap: Tap, with reader: CardReader, on session: CardSession, of taps: Taps) async throws(FeliCaError) -> CardReport? {
    do {
        return try await reader.read(session, first: tap.target)
    } catch where error.code == .readerGone && taps.reconnects {
        taps.readerFailed(error)
        return nil
    }
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
    case ("history", 2):
        try await printHistory(on: arguments[1])
    case ("taps", 3), ("ride", 3):
        guard let count = Int(arguments[2]), count > 0 else { throw DeviceError(.badDeviceString, "\(arguments[0]): '\(arguments[2])' is not a count") }
        if arguments[0] == "taps" {
            try await watchTaps(on: arguments[1], count: count)
        } else {
            try await watchThroughReaderLoss(on: arguments[1], count: count)
        }
    default:
        complain("usage: LibraryExample balance DEVICE | LibraryExample history DEVICE | LibraryExample taps|ride DEVICE COUNT")
        exit(64)
    }
} catch {
    complain("LibraryExample: \(error)")
    exit(1)
}
