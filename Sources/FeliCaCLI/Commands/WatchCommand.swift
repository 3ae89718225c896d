import FeliCa
import FeliCaCards
import FeliCaLog
import FeliCaDelivery
import FeliCaJSON
import Synchronization
#if canImport(Glibc)
import Glibc
import FeliCaDevices
import FeliCaDiagnosis
#endif

/// `felica watch`: wait for a card, print its purses, wait for it to leave, repeat.
/// Ctrl-C (SIGINT) or SIGTERM ends it as it ends every command, by the signal (the shell's
/// status 130 or 143), once the card being printed is whole and the reader is closed.
struct WatchCommand: CLICommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            name: "watch",
            abstract: "Wait for cards and print the purses of each; Ctrl-C ends.",
            discussion: """
                With --json each card is one line of JSON: the `felica balance --json` object plus `elapsedMs`, the time \
                from the Polling that found the card to its line (how long the card had to stay in the field). \
                --count counts cards read in full; a tap that fails is reported on stderr and watching goes on. \
                The reader may be empty when watching starts, on every kind of reader: a PC/SC reader is opened without \
                a card and connects to each card as it is placed. \
                A virtual: card never leaves by itself, so each read counts as one tap: it is taken away for an interval and tapped again. \
                A card still on the reader 2 s after its read is said once on stderr; the next card is read once it has left. \
                Ctrl-C ends watching as it ends every command (exit status 130; SIGTERM 143), after closing the reader. \
                With --save, a tap that cannot be saved because another process holds the database past the 15-second \
                wait is reported on stderr and its reading kept, to be saved with the next card read; readings still \
                unsaved when watching ends are named, and the exit status is 1. See \(PackagedFiles.guide("history.md")). \
                A reader that is unplugged or stops answering does not end watching: that is said once on stderr \
                (with --json also as a line {"event":"readerLost","device":...} on stdout), the same reader is opened \
                again every half second until it is back (for a bare usb, the same model first, else the first RC-S380), \
                which is said once too ({"event":"readerBack",...}), and watching goes on; Ctrl-C ends the wait. \
                --exit-on-reader-loss ends watching with the reader's error instead (exit status 1), for scripts. \
                With no reader at all when watching starts, watch says so once and waits for one the same way \
                (--exit-on-reader-loss: exit status 69 at once). See \(PackagedFiles.guide("readers.md")). \
                --post, --mqtt and --exec send each reading on: it is kept on disk in the spool first and delivered in \
                order, tried again with growing pauses while the server or broker is down, and removed once acknowledged \
                (HTTP 2xx, MQTT PUBACK); a watch killed or a machine rebooted loses nothing, the next watch delivers it. \
                Each reading carries an "id", the same on every try, so a receiver can drop a copy it already has. \
                An --exec command gets the reading's JSON on standard input; its standard output goes to stderr; it runs \
                one at a time and never holds up the reading of cards. See \(PackagedFiles.guide("kiosk.md")).
                """,
            options: CommonOptions.readerWithoutWait + [
                countOption.spec,
                intervalOption.spec,
                PurseOutput.allSystems,
                CommonOptions.json,
                saveFlag,
                HistoryOptions.db.spec,
                exitOnReaderLossFlag,
                ignoreRepeatOption.spec,
            ] + DeliveryOptions.specs)
    }

    static let countOption = Option(OptionSpec("count", value: "n", help: "Stop after <n> cards read in full.")) { c throws(UsageError) in
        guard let n = Int(c), n > 0 else { throw UsageError("option '--count': \"\(c)\" is not a positive number") }
        return n
    }
    static let saveFlag = OptionSpec.flag("save", help: "Keep every card's records in the history database (as `felica log add` does).")
    static let exitOnReaderLossFlag = OptionSpec.flag(
        "exit-on-reader-loss", help: "End with the reader's error when it is unplugged or stops answering, instead of waiting for it to come back.")
    static let ignoreRepeatOption = Option(OptionSpec(
        "ignore-repeat", value: "duration", help: "Do not report a card again within this long of its last reading (60, 90s, 5m, 1h); said on stderr with -v.")) { s throws(UsageError) in
        guard let d = parseDuration(s), d > .zero, d <= .seconds(7 * 86400) else {
            throw UsageError("option '--ignore-repeat': \"\(s)\" is not a duration (seconds, or a number with s, m or h, e.g. 60, 90s, 5m; at most a week)")
        }
        return d
    }
    static let intervalOption = Option.seconds(OptionSpec(
        "interval", value: "seconds", help: "Pause between polls for a card and for its leaving (default 0.25; 0 = poll back to back)."), in: 0...60)

    let readerOptions: ReaderOptions
    let count: Int?
    let interval: Duration
    let allSystems: Bool
    let json: Bool
    /// The history database to save each card to (`--save`); nil when not saving.
    let save: Bool
    let db: String?
    /// Where readings go besides standard output (`--post`, `--mqtt`, `--exec`).
    let delivery: DeliveryOptions
    /// `--ignore-repeat`: a card read again within this long is not reported.
    let ignoreRepeat: Duration?
    /// `--exit-on-reader-loss`: no reader at the start ends the command too.
    let exitOnReaderLoss: Bool

    init(_ args: ParsedArguments) throws(UsageError) {
        var readerOptions = try ReaderOptions(args)
        // A PC/SC reader opens with no card on it: each Polling waits for the next card.
        readerOptions.requiresCard = false
        exitOnReaderLoss = args.flag(Self.exitOnReaderLossFlag)
        if !exitOnReaderLoss { readerOptions.reconnectInterval = Self.reconnectInterval }
        self.readerOptions = readerOptions
        count = try args.value(Self.countOption)
        interval = try args.value(Self.intervalOption) ?? Self.defaultInterval
        allSystems = args.flag(PurseOutput.allSystems)
        json = args.flag(CommonOptions.json)
        save = args.flag(Self.saveFlag)
        db = try args.value(HistoryOptions.db)
        if db != nil && !save { throw UsageError("option '--db' needs --save") }
        delivery = try DeliveryOptions(args)
        ignoreRepeat = try args.value(Self.ignoreRepeatOption)
        let delivery = delivery
        try readerOptions.files.adding {
            $0.writes(db, as: "--db")
            $0.reads(delivery.tokenFile, as: "--post-token-file")
            $0.reads(delivery.passwordFile, as: "--mqtt-password-file")
        }.check()
    }

    /// How often to poll for a card, and for its leaving.
    static let defaultInterval: Duration = .milliseconds(250)
    /// How often a lost reader is opened again.
    static let reconnectInterval: Duration = .milliseconds(500)

    func run(_ console: Console) async throws -> Int32 {
        // Opened before the reader, so a database that cannot be opened fails at once.
        let dbPath: String? = save ? try HistoryOptions.open(db).path : nil
        // The handler is in place before anything waits, so no signal is lost.
        Self.catchInterrupts()
        // Delivery starts before the reader opens: what an earlier watch left is sent
        // while this one waits for its reader.
        let sending = delivery.any ? try WatchDelivery(delivery, database: dbPath, console: console) : nil
        guard let opened = try await Self.openWaiting(readerOptions, exitOnLoss: exitOnReaderLoss, console: console) else {
            await sending?.finish()
            Self.endBy(Self.interrupted.load(ordering: .relaxed))
        }
        let (device, session) = opened
        let json = json, limit = count, interval = interval, ignoreRepeat = ignoreRepeat
        let reader = PurseOutput.reader(save ? .history : .balance, allSystems: allSystems, stations: save ? .bundled : nil, issuer: false)
        if device.virtualCard != nil {
            console.diag("\(session.transport.name) is a virtual card: each read counts as a tap, then the card is taken away and tapped again"
                + (limit.map { " (\($0) tap\($0 == 1 ? "" : "s"))" } ?? " until Ctrl-C"))
        }
        let taps = device.taps(session, interval: interval) { event in
            switch event {
            case .waitingForCard: console.progress("waiting for a card on \(session.transport.name) (Ctrl-C ends)")
            case .waitingForRemoval: console.progress("remove the card")
            case .stillOnReader(let idm):
                // Said whether or not stderr is a terminal: it is why no next card is read.
                console.endProgress()
                console.diag("card \(idm) is still on the reader: take it away to read the next card")
            case .readerLost(let device, let error):
                console.endProgress()
                console.diag("reader \(device) is gone (unplugged or not answering)\(console.verbose ? ": \(error.reason)" : ""); waiting for it to come back (Ctrl-C ends)")
                if json { JSONOut.print(.object(["event": .string("readerLost"), "device": .string(device), "reason": .string(error.reason)]), console) }
                if let sending { Task { await sending.readerState(.readerLost, device: device) } }
            case .readerStillAway(let device, let error):
                // Why the wait goes on, with -v: once, and again when the reason changes.
                if console.verbose { console.diag("reader \(device) is not back yet: \(error.reason)") }
            case .readerBack(let device):
                console.diag("reader \(device) is back: watching again")
                if json { JSONOut.print(.object(["event": .string("readerBack"), "device": .string(device)]), console) }
                if let sending { Task { await sending.readerState(.online, device: device) } }
            }
        }
        let task = Task { () async throws -> Void in
            let saver = try dbPath.map { WatchSaver(store: try HistoryOptions.open($0), console: console) }
            // Readings kept through a lock get one more try however the loop ends.
            defer { if saver?.finish() == false { Self.unsaved.store(true, ordering: .relaxed) } }
            try await Self.loop(taps, session: session, reader: reader, saver: saver, json: json, limit: limit,
                                sending: sending, ignoreRepeat: ignoreRepeat, console: console)
        }
        let monitor = Task {
            while Self.interrupted.load(ordering: .relaxed) == 0 {
                if Task.isCancelled { return }
                try? await Task.sleep(for: .milliseconds(50))
            }
            task.cancel()
        }
        defer { monitor.cancel() }
        do {
            try await task.value
        } catch is CancellationError {
        } catch let e as FeliCaError where e.code == .cancelled {
        } catch {
            await session.transport.close()
            await sending?.finish()
            throw error
        }
        console.endProgress()
        await session.transport.close()
        await sending?.finish()
        if Self.unsaved.load(ordering: .relaxed) { return ExitCode.failure }
        let signal = Self.interrupted.load(ordering: .relaxed)
        if signal != 0 { Self.endBy(signal) }
        return ExitCode.ok
    }

    /// Ends the process by `sig` with its default action, as every other command ends on
    /// it: the shell sees a command interrupted (status 128 + sig), not one that finished.
    static func endBy(_ sig: Int32) -> Never {
        Glibc.signal(sig, SIG_DFL)
        // The concurrency pool's threads block signals: unblock it on this one, or raise
        // would leave it pending.
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, sig)
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
        raise(sig)
        exit(128 + sig)
    }

    /// Set when readings kept through a lock were still unsaved as the watch ended: the
    /// exit status is then 1.
    static let unsaved = Atomic<Bool>(false)

    /// The signal (SIGINT, SIGTERM) the handler caught, 0 while none (an atomic store is
    /// async-signal-safe); the monitor task turns it into cancellation of the watch loop.
    static let interrupted = Atomic<Int32>(0)

    /// Installs the handler synchronously with sigaction (a dispatch signal source
    /// registers asynchronously, and a signal in that window would be lost).
    static func catchInterrupts() {
        for sig in [SIGINT, SIGTERM] {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { sig in WatchCommand.interrupted.store(sig, ordering: .relaxed) }
            sigemptyset(&action.sa_mask)
            action.sa_flags = SA_RESTART
            sigaction(sig, &action, nil)
        }
    }

    static func loop(_ taps: Taps, session: CardSession, reader: CardReader, saver: WatchSaver?, json: Bool,
                     limit: Int?, sending: WatchDelivery? = nil, ignoreRepeat: Duration? = nil, console: Console) async throws {
        var read = 0
        /// When each card was last reported (`--ignore-repeat`).
        var reported: [IDm: ContinuousClock.Instant] = [:]
        for try await tap in taps {
            console.endProgress()
            if let window = ignoreRepeat {
                let idm = tap.target.idm
                if let last = reported[idm], tap.polledAt - last < window {
                    if console.verbose {
                        console.diag("card \(idm) read again \(Self.seconds(tap.polledAt - last)) s after its last reading: not reported (--ignore-repeat)")
                    }
                    continue
                }
                // Forget cards whose window has passed: the table stays as small as the window.
                reported = reported.filter { tap.polledAt - $0.value < window }
            }
            if let report = try await readCard(reader, session, tap.target, taps: taps, console) {
                PurseOutput.diagnostics(report, console)
                let elapsed = Self.milliseconds(ContinuousClock.now - tap.polledAt)
                let saved = try saver?.save(report, device: session.transport.name)
                if ignoreRepeat != nil { reported[tap.target.idm] = tap.polledAt }
                var line = PurseOutput.json(report, history: false).objectValue ?? [:]
                line.append("elapsedMs", .number(elapsed))
                if let saved { line.append("saved", HistoryOptions.json(saved)) }
                // The reading's id leads its line too, so the output and what was delivered match up.
                if let sending { line = sending.reading(line, idm: "\(report.idm)", device: session.transport.name) }
                if json {
                    JSONOut.print(.object(line), console)
                } else {
                    console.line("Card \(report.idm)")
                    PurseOutput.balances(report, console)
                    if let saved { console.line("  kept: \(HistoryOptions.summary(saved))") }
                    console.line()
                }
                read += 1
                if let limit, read >= limit { break }
            }
            // Output that cannot be written (a full disk, a closed pipe) ends the watch;
            // the exit code says why.
            if console.outputFailed { break }
        }
    }

    /// Reads the card; nil (after saying once what failed) when it left or stopped
    /// answering in the middle: watching goes on, and the tap does not count.
    /// When the reader is lost during the read and `taps` reconnects, nil without a word:
    /// the loop says the reader left, and reads the card again once the reader is back.
    static func readCard(_ reader: CardReader, _ session: CardSession, _ first: Target, taps: Taps,
                         _ console: Console) async throws(FeliCaError) -> CardReport? {
        do {
            return try await reader.read(session, first: first)
        } catch where error.code == .readerGone && taps.reconnects {
            taps.readerFailed(error)
            return nil
        } catch {
            let what: String
            switch error.code {
            case .cardGone: what = "it left the reader during the read"
            case .timeout: what = "it stopped answering during the read"
            case .transmission: what = "an exchange with it was garbled"
            default: throw error
            }
            console.diag("card \(first.idm) not read: \(what)\(console.verbose ? " (\(error.reason))" : ""); still watching — tap it again and hold it still")
            return nil
        }
    }

    /// Opens the reader; with no reader there yet (and no --exit-on-reader-loss), says so
    /// once and tries again every half second, as after a reader is lost. Nil when a
    /// signal ended the wait.
    static func openWaiting(_ options: ReaderOptions, exitOnLoss: Bool, console: Console) async throws -> (Device, CardSession)? {
        var said = false
        while true {
            do {
                let opened = try await CardContext.open(options, console: console)
                if said { console.diag("reader \(opened.session.transport.name) found: watching") }
                return opened
            } catch let error as FeliCaError where error.isUnavailable && !exitOnLoss && error.code != .noCard {
                if !said {
                    let which = options.device.map { "reader \($0)" } ?? "reader"
                    console.diag("no \(which) yet (\(error.reason)); waiting for one (Ctrl-C ends)")
                    said = true
                }
            }
            for _ in 0..<10 {
                if interrupted.load(ordering: .relaxed) != 0 { return nil }
                try? await Task.sleep(for: reconnectInterval / 10)
            }
        }
    }

    /// `60`, `90s`, `5m`, `1h`, `0.5`: a duration; nil when it is not one.
    static func parseDuration(_ text: String) -> Duration? {
        let units: [Character: Double] = ["s": 1, "m": 60, "h": 3600]
        var number = Substring(text), scale = 1.0
        if let last = text.last, let unit = units[last] {
            number = number.dropLast()
            scale = unit
        }
        guard !number.isEmpty, number.allSatisfy({ $0.isNumber || $0 == "." }), let value = Double(number), value.isFinite else { return nil }
        return .milliseconds(Int64((value * scale * 1000).rounded()))
    }

    /// Seconds, to a tenth.
    static func seconds(_ d: Duration) -> Double {
        (milliseconds(d) / 100).rounded() / 10
    }

    /// Milliseconds, to a tenth.
    static func milliseconds(_ d: Duration) -> Double {
        let (seconds, attoseconds) = d.components
        return ((Double(seconds) * 1000 + Double(attoseconds) / 1e15) * 10).rounded() / 10
    }
}
