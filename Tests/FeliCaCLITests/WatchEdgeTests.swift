import FeliCaSimulation
import Foundation
import Testing
import FeliCaCards

/// Whether a run ended by the signal `sig`, as a shell reports it (status 128 + sig): the
/// way every command ends on Ctrl-C (SIGINT) or SIGTERM.
func endedBy(_ p: BackgroundProcess, _ sig: Int32) -> Bool {
    p.process.terminationReason == .uncaughtSignal && p.process.terminationStatus == sig
}

@Suite("watch, and Ctrl-C", .serialized)
struct WatchEdgeTests {
    /// A virtual card never leaves by itself: it is taken away for an interval and tapped
    /// again, so taps come at the interval (it was about 40,000 a second).
    @Test func aVirtualCardIsTappedAtTheInterval() throws {
        let start = Date()
        let counted = try run(["watch", "--json", "--count", "3", "--interval", "0.3", "--device", "virtual:suica"])
        let took = Date().timeIntervalSince(start)
        #expect(counted.status == 0, "\(counted.stderr)")
        #expect(counted.stdout.split(separator: "\n").count == 3)
        #expect(took >= 0.6, "3 taps at 0.3 s took \(took) s")

        let watch = try BackgroundProcess(felica: ["watch", "--json", "--device", "virtual:suica"])
        usleep(1_200_000)
        watch.signal(SIGINT)
        let (r, timedOut) = watch.finish(within: 10)
        #expect(!timedOut)
        let taps = r.stdout.split(separator: "\n").count
        // The default interval is 0.25 s: about 5 taps in 1.2 s.
        #expect((2...8).contains(taps), "\(taps) taps in 1.2 s")
    }

    /// A card left on the reader after its read is said once, on stderr, whether or not
    /// stderr is a terminal; watching goes on until it leaves.
    @Test func aCardLeftOnTheReaderIsReportedOnce() throws {
        let card = try VirtualCard.named("suica")
        try withEmulatedDevice(card: card) { device in
            let watch = try BackgroundProcess(felica: ["watch", "--interval", "0.1", "--device", device])
            #expect(watch.until(20) { watch.stdout.contains("Card 0101120312345678") }, "\(watch.stderr)")
            #expect(watch.until(8) { watch.stderr.contains("still on the reader") }, "\(watch.stderr)")
            usleep(2_000_000)
            card.isPresent = false
            usleep(500_000)
            card.isPresent = true
            #expect(watch.until(20) { watch.stdout.components(separatedBy: "Card 0101120312345678").count == 3 }, "\(watch.stdout)")
            usleep(4_000_000)
            watch.signal(SIGINT)
            let (r, _) = watch.finish(within: 10)
            let said = r.stderr.components(separatedBy: "still on the reader").count - 1
            #expect(said == 2, "once for each of the two taps: \(r.stderr)")
            #expect(endedBy(watch, SIGINT), "status \(r.status)")
        }
    }

    /// Ctrl-C ends every command the same way: by the signal (the shell's status 130;
    /// SIGTERM 143), watch included, after it has closed the reader.
    @Test(arguments: [SIGINT, SIGTERM])
    func everyCommandEndsTheSameWayOnASignal(_ sig: Int32) throws {
        let watch = try BackgroundProcess(felica: ["watch", "--device", "virtual:suica"])
        usleep(700_000)
        watch.signal(sig)
        _ = watch.finish(within: 10)
        #expect(endedBy(watch, sig), "watch: \(watch.process.terminationReason.rawValue) \(watch.process.terminationStatus)")

        let empty = try VirtualCard.named("suica")
        empty.isPresent = false
        try withEmulatedDevice(card: empty) { device in
            let balance = try BackgroundProcess(felica: ["balance", "--wait", "30", "--device", device])
            usleep(1_500_000)
            #expect(balance.isRunning, "\(balance.stderr)")
            balance.signal(sig)
            _ = balance.finish(within: 10)
            #expect(endedBy(balance, sig), "balance: \(balance.process.terminationReason.rawValue) \(balance.process.terminationStatus)")
        }
    }
}
