import FeliCa
import FeliCaDevices
import FeliCaCLI
import FeliCaEmulators
import FeliCaSimulation

#if canImport(Glibc)
import Glibc
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

        await measureAsync("felica balance via libnfc+PN532, \(label)", runs: timing ? 7 : 9) {
            let status = await withStdoutSilenced { await FeliCaCommandLine.felica(["balance", "--device", device]) }
            precondition(status == 0, "felica balance failed (\(status))")
        }

        await measureAsync("  open + close of the libnfc device, \(label)", runs: timing ? 7 : 9) {
            let t = try! await Device.open(DeviceSpec(.libnfc(connstring: server.connectionString))).transport
            await t.close()
        }

        guard let transport = try? await Device.open(DeviceSpec(.libnfc(connstring: server.connectionString))).transport else {
            print("cannot open \(device): skipped")
            return
        }
        let session = CardSession(transport: transport)
        guard let target = try? await session.detect() else {
            print("no card through \(device): skipped")
            await transport.close()
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
        await measureAsync("  failing Polling (system 1234, card lacks it), \(label)", runs: 15) {
            let r = try! await session.poll(systemCode: SystemCode(0x1234))
            precondition(r == nil)
        }
        let codes = (0..<20).map { SystemCode(UInt16(0x1000 + $0)) }
        await measureAsync("  20 failing Pollings in a row, \(label)", runs: 3) {
            for code in codes { _ = try! await session.poll(systemCode: code) }
        }
        await transport.close()
    }
    let virtualCard = try! VirtualCard.named("suica")
    await measureAsync("felica balance via virtual:suica?timing=212 (no reader)", runs: 7) {
        let status = await withStdoutSilenced { await FeliCaCommandLine.felica(["balance", "--device", "virtual:suica?timing=212"]) }
        precondition(status == 0)
    }
    blackHole(virtualCard)
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
