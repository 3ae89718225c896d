import Dispatch
import FeliCa
import FeliCaCards
import FeliCaSimulation
import FuzzSupport
import Synchronization

/// The whole read path against a hostile card: `felica history` (CardReader) and
/// `felica dump` (CardImage.read) over a transport whose replies are the wallet's own,
/// edited by the fuzzer one exchange at a time — bytes flipped, cut, extended or replaced,
/// LEN or status flags forged, silence, transmission errors, the card gone. Whatever the
/// card says, the read ends with a report or a typed error, within a bounded number of
/// exchanges, and a dump cut short is marked partial.
final class HostileTransport: Transport {
    let name = "fuzz:hostile"
    var linkLatency: Duration { .zero }
    private let card: VirtualCard
    /// The edit script, consumed from the front; empty = the card's genuine replies.
    private let edits: Mutex<ArraySlice<UInt8>>
    let exchanges = Atomic<Int>(0)
    /// Whether any reply was changed (as opposed to lost: garbling, the card gone, silence
    /// to a command that must be answered), after which a successful read may
    /// legitimately differ from the genuine one.
    let contentEdited = Atomic<Bool>(false)

    init(card: VirtualCard, edits: ArraySlice<UInt8>) {
        self.card = card
        self.edits = Mutex(edits)
    }

    var editsLeft: Int { edits.withLock { $0.count } }

    func exchange(_ packet: [UInt8], timeout: Duration) async throws(FeliCaError) -> [UInt8] {
        exchanges.add(1, ordering: .relaxed)
        let genuine = card.respond(to: packet)
        let outcome: Result<[UInt8]?, FeliCaError> = edits.withLock { script in
            func next() -> UInt8 { script.popFirst() ?? 0 }
            guard let op = script.popFirst() else { return .success(genuine) }
            var reply = genuine ?? []
            // Silence to a Polling, a Request System Code, a Search Service Code or a Request
            // Block Information is an answer of sorts ("not this system", "no such command":
            // old cards lack the last three, or stop answering Search Service Code part-way,
            // and a dump then probes a list of codes, sweeps the services with Request
            // Service, or reads each service to its end), so it counts as a changed reply;
            // elsewhere silence is a loss.
            let meaningfulSilence = packet.count > 1 && CommandCode(rawValue: packet[1]).map(answeredBySilence.contains) == true
            if ![0, 6, 7, 8].contains(op % 10) || (op % 10 == 6 && meaningfulSilence) {
                self.contentEdited.store(true, ordering: .relaxed)
            }
            switch op % 10 {
            case 0:
                return .success(genuine)
            case 1:  // flip one byte
                let at = Int(next()), mask = next()
                if !reply.isEmpty { reply[at % reply.count] ^= mask == 0 ? 1 : mask }
            case 2:  // cut
                reply = Array(reply.prefix(Int(next())))
            case 3:  // extend
                let n = Int(next() % 48)
                for _ in 0..<n { reply.append(next()) }
            case 4:  // forge LEN
                if !reply.isEmpty { reply[0] = next() }
            case 5:  // replace outright
                let n = Int(next())
                reply = (0..<n).map { _ in next() }
            case 6:
                return .failure(FeliCaError(.timeout, "fuzz: silence"))
            case 7:
                return .failure(FeliCaError(.transmission, "fuzz: garbled"))
            case 8:
                return .failure(FeliCaError(.cardGone, "fuzz: card gone"))
            default:  // forge status flags (bytes 10 and 11 of status-bearing responses)
                let sf1 = next(), sf2 = next()
                if reply.count > 11 { reply[10] = sf1; reply[11] = sf2 }
            }
            return .success(reply)
        }
        guard let reply = try outcome.get() else { throw FeliCaError(.timeout, "fuzz: the card stays silent") }
        return reply
    }

    func close() async {}
}

/// Commands a card may leave unanswered because it lacks them (see `exchange`).
let answeredBySilence: Set<CommandCode> = [.polling, .requestSystemCode, .searchServiceCode, .requestBlockInformation]

let card = try! VirtualCard.named("wallet")

/// What an honest read of the wallet gives.
nonisolated(unsafe) var genuineReport: CardReport?
nonisolated(unsafe) var genuineImage: CardImage?

/// Runs an async body to completion from libFuzzer's synchronous callback.
func blocking(_ body: @escaping @Sendable () async -> Void) {
    let done = DispatchSemaphore(value: 0)
    Task {
        await body()
        done.signal()
    }
    done.wait()
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = fuzzBytes(data, size)
    blocking {
        if genuineReport == nil {
            let honest = CardSession(transport: HostileTransport(card: card, edits: []))
            genuineReport = try! await CardReader(depth: .history).read(honest)
            genuineImage = try! await CardImage.read(using: honest)
        }
        let transport = HostileTransport(card: card, edits: bytes[...])
        let session = CardSession(transport: transport)
        // Lost replies alone (no bytes changed) never make a different report: the read
        // either recovers all of it or fails. Nothing is silently left out.
        do throws(FeliCaError) {
            let report = try await CardReader(depth: .history).read(session)
            if !transport.contentEdited.load(ordering: .relaxed) {
                precondition(report == genuineReport, "replies were lost, not changed, yet the report differs: \(report.purses.map(\.profile)) \(report.notes)")
            }
        } catch {
            precondition(!error.reason.isEmpty, "an error without a reason")
        }
        let (image, error) = await CardImage.readAllowingPartial(using: session)
        if error != nil, let image {
            precondition(image.extra["partial"] != nil, "a dump cut short is not marked partial")
        }
        if error == nil, !transport.contentEdited.load(ordering: .relaxed) {
            precondition(image == genuineImage, "replies were lost, not changed, yet the dump differs")
        }
        // Every exchange consumed at most one edit; past the script the card is genuine,
        // so the work is bounded by the script, two honest reads of the wallet, and a
        // Request Service sweep per system for a card that stopped answering Search Service
        // Code (the dump's fallback: each candidate code at most once, even one at a time).
        let used = transport.exchanges.load(ordering: .relaxed)
        let sweeps = (genuineImage?.systems.count ?? 0) * CardImage.sweepCandidates.count
        precondition(used <= bytes.count + 400 + sweeps, "\(used) exchanges for a \(bytes.count)-byte script")
    }
    return 0
}

@_cdecl("FuzzSession_main")
func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv, fuzzOne)
}
