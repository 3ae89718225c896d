import FeliCa
import FeliCaReaderCodecs
import FeliCaPCSC
import FeliCaEmulators
import FeliCaSimulation
import Foundation

#if canImport(Glibc)
import Glibc
import FeliCaCards
#endif

/// Exchanges through the real pcscd and vpcd, with the virtual card served from this
/// process: per-exchange cost for each dialect, with and without TCP_QUICKACK, and the
/// time a whole `felica balance` takes (in-process and as the command a user runs).
func pcscBenchmarks() async {
    guard section("pcsc") else { return }
    let daemon: BenchPCSCD
    do {
        daemon = try BenchPCSCD()
    } catch {
        print("skipped: \(error)")
        return
    }
    defer { daemon.stop() }

    let read = try! ReadWithoutEncryptionCommand(
        idm: IDm(hex: "0101120312345678"), services: [0x008B], blocks: [BlockListElement(serviceIndex: 0, block: 0)]).encode()
    var rates: [String] = []
    for (dialect, getResponse, quickAck) in [
        (PCSCDialect.part3, false, true), (.sony, false, true), (.acr122u, false, true), (.acr122u, true, true),
        (.raw, false, true), (.part3, false, false),
    ] {
        let label = "\(dialect)\(getResponse ? " (61 xx)" : "")\(quickAck ? "" : ", no TCP_QUICKACK")"
        guard let served = ServedCard(port: daemon.port, dialect: dialect, getResponse: getResponse, quickAck: quickAck),
              let transport = try? await PCSCTransport.open(.first, options: .init(dialect: dialect, cardWait: .seconds(10)))
        else {
            print("\(label): could not open the reader")
            continue
        }
        // Median of five runs: the machine is shared, single runs wander.
        let iterations = quickAck ? 500 : 10
        let clock = ContinuousClock()
        var runs: [Duration] = []
        for _ in 0..<5 {
            let start = clock.now
            for _ in 0..<iterations {
                blackHole(try! await transport.exchange(read, timeout: .milliseconds(50)))
            }
            runs.append((clock.now - start) / iterations)
        }
        runs.sort()
        let each = runs[2]
        let seconds = Double(each.components.seconds) + Double(each.components.attoseconds) / 1e18
        print(pad("Read Without Encryption via pcscd, \(label)", 60) + format(1 / seconds)
              + " exchanges/s  (" + ms(each) + " each; median of 5 × \(iterations))")
        rates.append("\(label) " + format(1 / seconds) + "/s")
        await transport.close()
        await served.stop()
    }

    record("one Read Without Encryption through pcscd + vpcd, by dialect", rates.joined(separator: ", "), model: "virtual card, no timing model")

    // A balance as the library does it: open the reader, select the transit system, read.
    guard let served = ServedCard(port: daemon.port, dialect: .part3, getResponse: false, quickAck: true) else { return }
    // Let pcscd notice the card swap (it samples vpcd every 400 ms) before timing.
    if let warm = try? await PCSCTransport.open(.first, options: .init(cardWait: .seconds(10))) { await warm.close() }
    _ = try? await measureAsync(pad("balance in-process (open, select, read, close)", 60), runs: 15) {
        let transport = try await PCSCTransport.open(.first, options: .init(cardWait: .seconds(10)))
        let session = CardSession(transport: transport)
        let target = try await session.select(0x0003)!
        blackHole(try await session.read(service: 0x008B, blocks: 0..<1, from: target))
        await transport.close()
    }
    // The command itself, process start included.
    let felica = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("felica").path
    if FileManager.default.isExecutableFile(atPath: felica) {
        let whole = try? await measureAsync(pad("`felica balance --device pcsc` (whole process)", 60), runs: 9) {
            let p = Process()
            p.executableURL = URL(fileURLWithPath: felica)
            p.arguments = ["balance", "--device", "pcsc"]
            p.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
            try p.run()
            p.waitUntilExit()
            if p.terminationStatus != 0 { print("felica balance exited \(p.terminationStatus)") }
        }
        let virtual = try? await measureAsync(pad("`felica balance --device virtual:suica` (for comparison)", 60), runs: 9) {
            let p = Process()
            p.executableURL = URL(fileURLWithPath: felica)
            p.arguments = ["balance", "--device", "virtual:suica"]
            p.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
            try p.run()
            p.waitUntilExit()
        }
        if let whole, let virtual {
            record("felica balance `pcsc` through pcscd + vpcd, whole process", fixed(millis(whole), 1) + " ms (`virtual:suica`: " + fixed(millis(virtual), 1) + " ms)", model: "virtual card, no timing model")
        }
    } else {
        print("(build the felica executable to time the command: swift build -c release)")
    }
    await served.stop()
}

/// The virtual card served to vpcd from this process.
private final class ServedCard: Sendable {
    let vpcd: VPCDCard
    let task: Task<VPCDCard.End, any Error>

    init?(port: UInt16, dialect: PCSCDialect, getResponse: Bool, quickAck: Bool) {
        guard let card = try? VirtualCard.named("suica") else { return nil }
        var options = VPCDCard.Options()
        options.port = port
        options.dialect = dialect
        options.getResponse = getResponse
        options.quickAck = quickAck
        let vpcd = VPCDCard(card: card, options: options)
        self.vpcd = vpcd
        task = Task { try await vpcd.serve() }
    }

    func stop() async {
        vpcd.eject()
        _ = try? await task.value
    }
}

/// A private pcscd (mount namespace, its own vpcd port), reached through
/// `/proc/<pid>/root` and `PCSCLITE_CSOCK_NAME`; see Tests/FeliCaPCSCTests/Support.
private final class BenchPCSCD: Sendable {
    let port: UInt16
    private let process: Process

    init() throws {
        port = UInt16.random(in: 20000...59000)
        let conf = FileManager.default.temporaryDirectory.appendingPathComponent("felica-bench-pcscd-\(getpid())")
        try FileManager.default.createDirectory(at: conf, withIntermediateDirectories: true)
        let channel = "0x" + String(port, radix: 16)
        try "FRIENDLYNAME \"Virtual PCD\"\nDEVICENAME /dev/null:\(channel)\nLIBPATH /usr/lib/pcsc/drivers/serial/libifdvpcd.so\nCHANNELID \(channel)\n"
            .write(to: conf.appendingPathComponent("vpcd"), atomically: true, encoding: .utf8)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/unshare")
        p.arguments = (getuid() == 0 ? ["-m"] : ["-r", "-m"]) + ["--", "sh", "-c",
            "mkdir -p /run/pcscd 2>/dev/null; mount -t tmpfs tmpfs /run/pcscd && exec pcscd --foreground -c '\(conf.path)'"]
        p.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
        p.standardError = FileHandle(forWritingAtPath: "/dev/null")
        try p.run()
        process = p
        let socket = "/proc/\(p.processIdentifier)/root/run/pcscd/pcscd.comm"
        for _ in 0..<1000 where access(socket, F_OK) != 0 {
            guard p.isRunning else { break }
            usleep(5_000)
        }
        guard access(socket, F_OK) == 0 else {
            p.terminate()
            throw BenchError("pcscd did not start (needs pcscd, vsmartcard-vpcd and `unshare -m`)")
        }
        setenv("PCSCLITE_CSOCK_NAME", socket, 1)
    }

    func stop() {
        process.terminate()
        process.waitUntilExit()
    }
}

private struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ d: String) { description = d }
}
