import FeliCa
import FeliCaReaderCodecs
import FeliCaPCSC
import FeliCaEmulators
import FeliCaSimulation
import Foundation
import Testing

/// A real reader and card, only when asked: `FELICA_HARDWARE_PCSC=1` (the first reader
/// holding a FeliCa card, or the one `FELICA_HARDWARE_PCSC_READER` names or starts),
/// optionally `FELICA_HARDWARE_PCSC_DIALECT=<dialect>`. It uses the system pcscd, and the
/// other suites point libpcsclite at private daemons, so run it alone:
/// `FELICA_HARDWARE_PCSC=1 swift test --filter PCSCHardwareTests`.
@Suite("PC/SC hardware", .enabled(if: ProcessInfo.processInfo.environment["FELICA_HARDWARE_PCSC"] != nil))
struct PCSCHardwareTests {
    @Test("a real card reads completely, twice the same")
    func readRealCard() async throws {
        let env = ProcessInfo.processInfo.environment
        let reader = env["FELICA_HARDWARE_PCSC_READER"].map(PCSCReaderSelector.named) ?? .first
        let dialect = env["FELICA_HARDWARE_PCSC_DIALECT"].flatMap(PCSCDialect.init(name:))
        var images: [String] = []
        for _ in 0..<2 {
            let transport = try await PCSCTransport.open(reader, options: .init(dialect: dialect, cardWait: .seconds(30)))
            print("reader '\(transport.readerName ?? "-")', dialect \(transport.dialect.map { "\($0)" } ?? "-"), ATR \(transport.atr.map { "\($0)" } ?? "-"), IDm \(transport.idm.map(\.hex) ?? "-")")
            #expect(transport.atr?.isFeliCa == true)
            let image = try await CardImage.read(using: CardSession(transport: transport))
            await transport.close()
            images.append(image.jsonText())
        }
        #expect(images[0] == images[1])
    }
}
