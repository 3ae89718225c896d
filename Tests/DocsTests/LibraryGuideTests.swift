import FeliCa
import FeliCaCards
import FeliCaSimulation
import FeliCaNDEF
import FeliCaLibNFC
import FeliCaPCSC
import FeliCaTrace
import TestSupport
import FeliCaEmulators
import Foundation
import Testing

// The code of Docs/library.md, compiled and run. Blocks of the guide appear here verbatim
// (SnippetSyncTests checks that); the lines around them set up and check the results.

// MARK: - Write a profile

/// A campus card: the member number in service 0x1A8B block 0 (ASCII), the meal credit in
/// service 0x1A97 block 0 (yen, little-endian, bytes 0-3). Both readable without a key.
struct CampusCard {
    static let system: SystemCode = 0xFE00
    static let memberService: ServiceCode = 0x1A8B
    static let creditService: ServiceCode = 0x1A97

    var memberNumber: String
    var credit: Int

    static func read(_ session: CardSession) async throws(FeliCaError) -> CampusCard {
        guard let card = try await session.select(system) else {
            throw FeliCaError(.noCard, "no card with the common area (FE00) answered")
        }
        let blocks = try await session.read([BlockRequest(service: memberService, blocks: 0..<1),
                                             BlockRequest(service: creditService, blocks: 0..<1)], from: card)
        let number = blocks[0][0].prefix { $0 != 0 }
        let credit = blocks[1][0][0..<4].reversed().reduce(0) { $0 << 8 | Int($1) }
        return CampusCard(memberNumber: String(decoding: number, as: UTF8.self), credit: credit)
    }
}

/// A campus card image: what `felica dump --json` would write from a real one.
func campusCardImage() -> CardImage {
    let member = Array("S1234567".utf8) + Array(repeating: 0, count: 8)
    let credit: [UInt8] = [0xE8, 0x03, 0x00, 0x00] + Array(repeating: 0, count: 12)  // 1000 yen
    return CardImage(systems: [
        CardImage.System(code: 0xFE00, services: [
            CardImage.Service(code: 0x1A8B, blocks: [member]),
            CardImage.Service(code: 0x1A97, blocks: [credit]),
        ]),
    ])
}

/// The trace of `CampusCard.read` recorded from the campus card, kept with the tests.
let tracePath = packageRoot.appendingPathComponent("Tests/DocsTests/Traces/campus.jsonl").path

@Suite struct LibraryGuideTests {
    // MARK: Read a balance in ten lines

    @Test func aBalanceInTenLines() async throws {
        let transport = VirtualTransport(card: try VirtualCard.named("suica"), name: "virtual:suica")
        let session = CardSession(transport: transport)
        let report = try await CardReader(depth: .balance).read(session)
        for purse in report.purses {
            print(purse.profile.displayName, purse.balance.map { "¥\($0)" } ?? "unreadable")
        }
        await transport.close()

        #expect(report.purses.map(\.profile) == [.transitIC])
        #expect(report.purses.first?.balance == 1234)
    }

    // Exit tests came with Swift 6.2: Debian's Swift 6.0 builds the suite without this one.
    #if compiler(>=6.2)
    /// No reader is plugged in where the tests run: opening one says so with `.noReader`
    /// (or, when a stand-in is up, opens it; either way the call is real). Each runs in a
    /// child process (an exit test): libpcsclite and libnfc keep per-process state (the
    /// daemon's socket path, the libnfc context) that must not leak into other suites.
    @Test func aRealReaderIsOneLineAway() async {
        await #expect(processExitsWith: .success) {
            do {
                let reader = try await LibNFCTransport.open()          // the first libnfc reader
                await reader.close()
            } catch {
                guard isUnavailable(error) else { fatalError("\(error)") }
            }
        }
        await #expect(processExitsWith: .success) {
            do {
                // The system's pcscd, as for a user's program, not the private one a PC/SC
                // test of this process may run (the child inherits the variable naming it).
                unsetenv("PCSCLITE_CSOCK_NAME")
                let reader = try await PCSCTransport.open(.first)      // the first PC/SC reader
                await reader.close()
            } catch {
                guard isUnavailable(error) else { fatalError("\(error)") }
            }
        }
    }
    #endif

    // MARK: Write a profile

    @Test func aProfileReadsItsCardFromAVirtualCard() async throws {
        let image = campusCardImage()
        let card = VirtualCard(image: image)
        let session = CardSession(transport: VirtualTransport(card: card, name: "virtual:campus"))
        let campus = try await CampusCard.read(session)
        #expect(campus.memberNumber == "S1234567")
        #expect(campus.credit == 1000)
        #expect(await session.exchangeCount == 2, "one Polling, one batched read")
    }

    @Test func aProfileSaysWhenTheCardIsNotItsKind() async throws {
        let session = CardSession(transport: VirtualTransport(card: try VirtualCard.named("suica"), name: "virtual:suica"))
        await #expect(throws: FeliCaError.self) { try await CampusCard.read(session) }
    }

    // MARK: Test your code against a trace

    @Test func recordingTheProfileGivesTheKeptTrace() async throws {
        let tracePath = FileManager.default.temporaryDirectory.appendingPathComponent("campus-\(UUID().uuidString).jsonl").path
        defer { try? FileManager.default.removeItem(atPath: tracePath) }
        let transport = VirtualTransport(card: VirtualCard(image: campusCardImage()), name: "virtual:campus")
        let recorder = try TraceRecorder(wrapping: transport, path: tracePath)
        let recorded = try await CampusCard.read(CardSession(transport: recorder))
        await recorder.close()

        #expect(recorded.credit == 1000)
        // UPDATE_TRACES=1 re-records the kept trace (after a deliberate change to the profile).
        if ProcessInfo.processInfo.environment["UPDATE_TRACES"] == "1" {
            try? FileManager.default.removeItem(atPath: LibraryGuide.keptTrace)
            try FileManager.default.copyItem(atPath: tracePath, toPath: LibraryGuide.keptTrace)
        }
        let fresh = try Trace.load(path: tracePath)
        let kept = try Trace.load(path: LibraryGuide.keptTrace)
        #expect(fresh.exchanges.map(\.tx) == kept.exchanges.map(\.tx))
        #expect(fresh.exchanges.map(\.rx) == kept.exchanges.map(\.rx))
    }

    @Test func campusCardFromItsTrace() async throws {
        let replay = try TraceReplay.load(tracePath)
        let campus = try await CampusCard.read(CardSession(transport: replay))
        #expect(campus.memberNumber == "S1234567")
        #expect(campus.credit == 1000)
        try replay.assertFullyConsumed()
    }

    /// A profile that changed what it sends fails against the old trace, naming the exchange.
    @Test func aChangedProfileFailsAgainstTheTrace() async throws {
        let replay = try TraceReplay.load(tracePath)
        let session = CardSession(transport: replay)
        let card = try #require(try await session.select(CampusCard.system))
        await #expect(throws: FeliCaError.self) {
            _ = try await session.read([BlockRequest(service: CampusCard.creditService, blocks: 0..<1)], from: card)
        }
    }
}

/// No reader or no card, as opposed to a failure.
func isUnavailable(_ error: any Error) -> Bool {
    (error as? FeliCaError)?.isUnavailable == true
}

enum LibraryGuide {
    static let keptTrace = tracePath
}

/// "Open any reader by its string": the example program, which imports library products
/// only, run as a user would run it.
@Suite("The library example program", .serialized)
struct LibraryExampleTests {
    @Test func readsABalanceFromAVirtualCard() throws {
        let r = try runFelica(["balance", "virtual:suica"], executable: "LibraryExample")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout == "Transit IC ¥1234\n")
    }

    @Test func iteratesOverThreeTapsOfAVirtualCard() throws {
        let r = try runFelica(["taps", "virtual:suica", "3"], executable: "LibraryExample")
        #expect(r.status == 0, "\(r.stderr)")
        let lines = r.stdout.split(separator: "\n")
        #expect(lines.count == 3)
        #expect(Set(lines).count == 1 && lines.first?.hasSuffix(": 1234") == true, "\(r.stdout)")
    }

    /// A program using only the library names a Suica's stations without asking for a
    /// table: `CardReader` takes the bundled one unless told otherwise.
    @Test func namesTheStationsOfASuicaHistoryWithoutAsking() throws {
        let r = try runFelica(["history", "virtual:suica"], executable: "LibraryExample")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.hasPrefix("Suica\n"), "\(r.stdout)")
        #expect(r.stdout.contains("ticket gate, fare: 新宿 → 渋谷\n"), "\(r.stdout)")
        #expect(r.stdout.contains("charging machine, charge: 新宿\n"), "\(r.stdout)")
    }

    /// The guide's loop that rides through reader loss, over taps of a virtual card (the
    /// loss itself is exercised on the emulated readers by the `Taps` and watch tests).
    @Test func ridesOverTwoTapsOfAVirtualCard() throws {
        let r = try runFelica(["ride", "virtual:suica", "2"], executable: "LibraryExample")
        #expect(r.status == 0, "\(r.stderr)")
        let lines = r.stdout.split(separator: "\n")
        #expect(lines.count == 2 && lines.allSatisfy { $0.hasSuffix(": 1234") }, "\(r.stdout)")
    }

    /// Through the real libnfc against the PN532 emulator, whose card comes and goes.
    @Test func iteratesOverTapsThroughLibnfc() throws {
        let card = try VirtualCard.named("wallet")
        try withEmulatedDevice(card: card, options: .init(taps: .init(present: 12, absent: 4))) { device in
            let r = try runFelica(["taps", device, "3"], executable: "LibraryExample", environment: ["LIBNFC_LOG_LEVEL": "0"])
            #expect(r.status == 0, "\(r.stderr)")
            #expect(r.stdout.split(separator: "\n").count == 3, "\(r.stdout)")
        }
    }

    @Test func aBadDeviceStringIsNamed() throws {
        let r = try runFelica(["balance", "virtual:suca"], executable: "LibraryExample")
        #expect(r.status == 1)
        #expect(r.stderr.contains("did you mean virtual:suica") || r.stderr.contains("Did you mean virtual:suica"), "\(r.stderr)")
    }

    // MARK: Write a URI to a tag

    @Test func writeAURI() async throws {
        let card = VirtualCard(image: SampleCards.liteS)
        let session = CardSession(transport: VirtualTransport(card: card, name: "virtual:lite-s"))
        let message = NDEFRecord.encodeMessage([NDEFRecord(wellKnown: "U", payload: NDEFURI.payload("https://example.org/menu"))])
        let result = try await NDEFTag.write(message, using: session)
        print("wrote \(message.count) bytes in \(result.writeCommands) Write commands")
        // Attribute block twice, and the 21-byte message in two blocks, one per command (Nbw 1).
        #expect(result.writeCommands == 4)
        let tag = try await NDEFTag.read(using: session)
        #expect(tag.records.count == 1)
        let content = try NDEFContent(tag.records[0])
        let expected = try NDEFURI(payload: NDEFURI.payload("https://example.org/menu"))
        #expect(content == .uri(expected))
        #expect(tag.attributes.writeFlag == 0 && tag.attributes.length == message.count)
    }
}
