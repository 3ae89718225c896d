import FeliCa
import FeliCaDevices
import FeliCaCLI
import FeliCaEmulators
import FeliCaPN532
import FeliCaSimulation

#if canImport(Glibc)
import Glibc
import FeliCaCards
#endif

/// Through real libnfc and the PN532 emulator on a pty: `felica balance` as a user runs
/// it, single exchanges, and the cost of a Polling no card answers (a system code the card
/// lacks) — with the emulator's rf timing (115200-baud UART, air time, PMm times, the
/// chip's Polling retries) and without (the software's own overhead).
func libnfcBenchmarks() async {
    guard section("libnfc") else { return }
    setenv("LIBNFC_AUTO_SCAN", "false", 1)
    setenv("LIBNFC_LOG_LEVEL", "0", 1)
    for timing in [true, false] {
        let label = timing ? "rf timing" : "no timing"
        guard let card = try? VirtualCard.named("suica"),
              let server = try? PN532Server(card: card, options: .init(timing: timing)) else {
            print("cannot start the PN532 emulator: skipped")
            return
        }
        server.start()
        defer { server.stop() }
        let device = "libnfc:" + server.connectionString

        let balance = await measureAsync("felica balance via libnfc+PN532, \(label)", runs: timing ? 7 : 9) {
            let status = await withStdoutSilenced { await FeliCaCommandLine.felica(["balance", "--device", device]) }
            precondition(status == 0, "felica balance failed (\(status))")
        }
        let nativeBalance = await measureAsync("felica balance via pn532:PTY, \(label)", runs: timing ? 7 : 9) {
            let status = await withStdoutSilenced { await FeliCaCommandLine.felica(["balance", "--device", "pn532:" + server.path]) }
            precondition(status == 0, "felica balance failed (\(status))")
        }
        record("felica balance through the PN532 emulator, in-process (device open included): `libnfc:pn532_uart:` / `pn532:`",
               fixed(millis(balance), 1) + " / " + fixed(millis(nativeBalance), 1) + " ms", model: timing ? CardModel.typical : CardModel.untimed)

        await measureAsync("  open + close of the libnfc device, \(label)", runs: timing ? 7 : 9) {
            let t = try! await Device.open(DeviceSpec(.libnfc(connstring: server.connectionString))).transport
            await t.close()
        }

        // The same chip driven without libnfc (pn532:PTY): no flush sleep, no libnfc set-up.
        await measureAsync("  open + close of the native PN532 transport, \(label)", runs: timing ? 7 : 9) {
            let t = try! await PN532SerialTransport.open(path: server.path)
            await t.close()
        }
        await measureAsync("  open + detect + read 1 block of 090F + close, libnfc, \(label)", runs: 7) {
            try! await openReadClose(try! await Device.open(DeviceSpec(.libnfc(connstring: server.connectionString))).transport)
        }
        await measureAsync("  open + detect + read 1 block of 090F + close, native, \(label)", runs: 7) {
            try! await openReadClose(try! await PN532SerialTransport.open(path: server.path))
        }

        // One host on the line at a time: each transport is opened after the last closed.
        let opens: [(String, () async throws -> any Transport)] = [
            ("libnfc", { try await Device.open(DeviceSpec(.libnfc(connstring: server.connectionString))).transport }),
            ("native", { try await PN532SerialTransport.open(path: server.path) }),
        ]
        for (via, open) in opens {
            guard let t = try? await open() else {
                print("cannot open the PN532 emulator (\(via)): skipped")
                return
            }
            await exchangeFigures(t, label: "\(via), \(label)")
            await t.close()
        }
    }
    let virtualCard = try! VirtualCard.named("suica")
    await measureAsync("felica balance via virtual:suica?timing=212 (no reader)", runs: 7) {
        let status = await withStdoutSilenced { await FeliCaCommandLine.felica(["balance", "--device", "virtual:suica?timing=212"]) }
        precondition(status == 0)
    }
    blackHole(virtualCard)
}

/// Opens, detects the card, reads its newest history block and closes: what `felica
/// balance` does with a reader, without the process around it.
private func openReadClose(_ t: any Transport) async throws {
    let session = CardSession(transport: t)
    let target = try await session.detect()
    _ = try await session.read(service: 0x090F, blocks: 0..<1, from: target)
    await t.close()
}

/// Single exchanges through one transport, and the cost of Pollings no card answers.
private func exchangeFigures(_ transport: any Transport, label: String) async {
    let session = CardSession(transport: transport)
    guard let target = try? await session.detect() else {
        print("no card through \(transport.name): skipped")
        return
    }
    await measureAsync("  Polling 0003 (card answers), \(label)", runs: 15) {
        _ = try! await session.poll(systemCode: .transit)
    }
    // What a transit card no longer pays: Request System Code (the chip timeout is
    // already set here, so this is the exchange alone).
    await measureAsync("  Request System Code, \(label)", runs: 15) {
        _ = try! await session.systemCodes(of: target)
    }
    await measureAsync("  read 1 block of 008B, \(label)", runs: 15) {
        _ = try! await session.read(service: 0x008B, blocks: 0..<1, from: target)
    }
    await measureAsync("  read 10 blocks of 090F, \(label)", runs: 15) {
        _ = try! await session.read(service: 0x090F, blocks: 0..<10, from: target)
    }
    // The ordering work's figure: what one system code the card lacks costs.
    let failing = await measureAsync("  failing Polling (system 1234, card lacks it), \(label)", runs: 15) {
        let r = try! await session.poll(systemCode: SystemCode(0x1234))
        precondition(r == nil)
    }
    if label.hasSuffix("rf timing") {
        record("failing Polling (a system the card lacks: what each extra code costs), PN532 emulator, \(transport is PN532SerialTransport ? "`pn532:`" : "`libnfc:`")",
               fixed(millis(failing), 1) + " ms per code", model: CardModel.slots)
    }
    let codes = (0..<20).map { SystemCode(UInt16(0x1000 + $0)) }
    await measureAsync("  20 failing Pollings in a row, \(label)", runs: 3) {
        for code in codes { _ = try! await session.poll(systemCode: code) }
    }
}

/// Runs `body` with file descriptor 1 pointed at /dev/null.
func withStdoutSilenced<T>(_ body: () async -> T) async -> T {
    let saved = dup(1)
    let null = open("/dev/null", O_WRONLY)
    dup2(null, 1)
    close(null)
    let result = await body()
    dup2(saved, 1)
    close(saved)
    return result
}
