@testable import FeliCaCLI
import FeliCa
import FeliCaEmulators
import FeliCaSimulation
import Foundation
import Synchronization
import Testing
import FeliCaCards

@Suite("Waiting for a card", .serialized)
struct CardWaitTests {
    @Test("--wait gives a libnfc reader time to get a card, as PC/SC has")
    func libnfcWaits() throws {
        let card = try VirtualCard.named("suica")
        card.isPresent = false
        try withEmulatedDevice(card: card) { device in
            let poll = try BackgroundProcess(felica: ["poll", "--device", device, "--wait", "20"])
            usleep(700_000)
            #expect(poll.isRunning, "poll gave up before the card came: \(poll.stderr)")
            card.isPresent = true
            let (run, timedOut) = poll.finish(within: 30); let (out, status) = (run.stdout, run.status)
            #expect(!timedOut)
            #expect(status == 0, "\(poll.stderr)")
            #expect(out.contains("IDm"))
        }
    }

    @Test("--wait 0: no card is an immediate no-card error (exit 69)")
    func libnfcWaitZero() throws {
        let card = try VirtualCard.named("suica")
        card.isPresent = false
        try withEmulatedDevice(card: card) { device in
            let r = try run(["poll", "--device", device, "--wait", "0"], environment: ["LIBNFC_LOG_LEVEL": "0"])
            #expect(r.status == 69, "\(r.stderr)")
            #expect(r.stderr.contains("no card answered Polling"), "\(r.stderr)")
        }
    }

    @Test("a card that lacks the system polled for is not waited for")
    func lackingSystemIsNotWaitedFor() throws {
        let card = try VirtualCard.named("suica")
        try withEmulatedDevice(card: card) { device in
            let clock = ContinuousClock()
            let start = clock.now
            let r = try run(["poll", "--device", device, "--system-code", "1234", "--wait", "600"], environment: ["LIBNFC_LOG_LEVEL": "0"])
            #expect(r.status == 1, "\(r.stderr)")
            #expect(r.stderr.contains("has no system 1234"), "\(r.stderr)")
            // Generous: the point is that it did not wait out the 600 s.
            #expect(clock.now - start < .seconds(300))
        }
    }

    @Test("--wait is refused for a value that is no number of seconds")
    func badWait() throws {
        let r = try run(["poll", "--device", "virtual:suica", "--wait", "soon"])
        #expect(r.status == 64)
        #expect(r.stderr.contains("option '--wait'"), "\(r.stderr)")
    }
}

@Suite("felica watch", .serialized)
struct WatchCountTests {
    @Test("a virtual card is tapped once per read, so --count ends, and it says so")
    func virtualCardCountEnds() throws {
        let watch = try BackgroundProcess(felica: ["watch", "--count", "3", "--device", "virtual:suica"])
        let (run, timedOut) = watch.finish(within: 60); let (out, status) = (run.stdout, run.status)
        #expect(!timedOut, "watch --count 3 on a virtual card did not end")
        #expect(status == 0, "\(watch.stderr)")
        #expect(out.components(separatedBy: "Card ").count - 1 == 3, "\(out)")
        #expect(watch.stderr.contains("virtual:suica is a virtual card: each read counts as a tap"), "\(watch.stderr)")
    }

    @Test("a tap that fails is said once and not counted; watching goes on")
    func failedTapIsNotCounted() throws {
        let card = try VirtualCard.named("wallet")
        // The card leaves after a few packets of its first read.
        card.removeAfter(exchanges: 4)
        try withEmulatedDevice(card: card) { device in
            let watch = try BackgroundProcess(felica: ["watch", "--count", "1", "--device", device])
            let failed = watch.until(30) { watch.stderr.contains("not read") }
            #expect(failed, "\(watch.stderr)")
            usleep(300_000)
            #expect(watch.isRunning, "watch ended after a failed tap: \(watch.stderr)")
            card.isPresent = true
            let (run, timedOut) = watch.finish(within: 30); let (out, status) = (run.stdout, run.status)
            #expect(!timedOut)
            #expect(status == 0, "\(watch.stderr)")
            #expect(out.contains("Card "), "\(out)")
            let message = watch.stderr.components(separatedBy: "\n").filter { $0.contains("not read") }
            #expect(message.count == 1, "\(watch.stderr)")
            #expect(message.first?.contains("still watching") == true)
            #expect(!watch.stderr.contains("run the command again"), "\(watch.stderr)")
        }
    }
}
