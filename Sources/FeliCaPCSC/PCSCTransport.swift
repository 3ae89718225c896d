internal import CPCSCLite
import FeliCa
import FeliCaReaderCodecs
import FeliCaTransportSupport
import Synchronization

/// A FeliCa card in a PC/SC reader, through pcsc-lite: the `pcsc` and `pcsc:<reader>`
/// devices.
///
/// Opening waits for a card with `SCardGetStatusChange` (up to ``Options/cardWait``),
/// connects, checks the ATR says FeliCa, reads the IDm with Get Data and settles the
/// reader's dialect. Every pcsc-lite call runs on the device's own queue.
///
/// The transport outlives the card: once a card has left, the next Polling waits for
/// another one (up to the Polling's timeout), connects to it in the dialect already
/// settled for the reader and forwards the Polling; any other command while no card is
/// connected fails with `FeliCaError.Code.cardGone`. With ``Options/requiresCard``
/// false, opening does not wait for a card at all (`felica watch`).
public final class PCSCTransport: Transport {
    /// How to open the reader.
    public struct Options: Sendable {
        /// Force a dialect; nil = judge from the reader name, then try Part 3 and ACR-style.
        public var dialect: PCSCDialect?
        /// How long to wait for a FeliCa card to appear; zero = it must be there already.
        public var cardWait: Duration = .zero
        /// Connect exclusively, so no other program interleaves APDUs with ours.
        public var exclusive = true
        /// Whether opening fails when no FeliCa card is there within ``cardWait``; false
        /// opens the reader without one, and the first Polling waits for a card.
        public var requiresCard = true
        public init(dialect: PCSCDialect? = nil, cardWait: Duration = .zero, requiresCard: Bool = true) {
            self.dialect = dialect
            self.cardWait = cardWait
            self.requiresCard = requiresCard
        }
    }

    public let name: String
    /// The PC/SC reader's name: the one the current or last card was on; nil while no card
    /// has been connected yet on any of the readers watched.
    public var readerName: String? { state.withLock { $0.reader } }
    /// The connected card's ATR; nil while no card is connected.
    public var atr: ATR? { state.withLock { $0.connection?.atr } }
    /// The IDm Get Data returned for the connected card, nil when the reader does not
    /// support it or no card is connected.
    public var idm: IDm? { state.withLock { $0.connection?.idm } }
    /// The dialect settled for the reader; nil until a card has been connected.
    public var dialect: PCSCDialect? { state.withLock { $0.driver?.dialect } }
    /// What the reader's driver says about the longest APDU it carries
    /// (`dwMaxAPDUDataSize`: 0 = short APDUs only); nil when the driver does not say.
    public var maxAPDUDataSize: UInt64? { state.withLock { $0.maxAPDUDataSize } }
    /// What the reader has refused so far: APDU forms and FeliCa commands.
    public var limits: PCSCDialectDriver.Limits { state.withLock { $0.driver?.limits ?? .init() } }
    /// A round trip through pcscd and USB; the reader enforces the card timeout itself.
    public var linkLatency: Duration { .milliseconds(3) }
    public var longestReply: Int? { state.withLock { $0.driver?.longestReply } }

    private let spec: String?
    private let options: Options
    private let device: OwnedDevice<Link, FeliCaError>
    private var context: PCSCContext { device.connection.context }
    private var state: Link { device.connection }

    /// The context and the card connected now: what the device thread works on, and what
    /// closing releases there.
    private final class Link: Sendable {
        let context: PCSCContext
        private let current: Mutex<State>

        init(context: PCSCContext, state: State) {
            self.context = context
            current = Mutex(state)
        }

        func withLock<T: Sendable>(_ body: (inout State) -> T) -> T { current.withLock { body(&$0) } }

        /// Ends the dialect's session with the card still connected, disconnects it and
        /// releases the context: on the device thread, not whenever the last reference
        /// happens to drop (a release racing libpcsclite's own teardown at process exit
        /// crashed `felica`: SIGSEGV in libpcsclite, about 1 run in 400).
        func shutDown() {
            let (card, driver) = withLock { s -> (PCSCCard?, PCSCDialectDriver?) in
                defer { s.connection = nil }
                return (s.connection?.card, s.driver)
            }
            if let card {
                driver?.end(PCSCTransport.transmitter(card))
                card.disconnect()
            }
            context.release()
        }
    }

    private struct State: Sendable {
        /// The card connected now; nil between cards.
        var connection: Connected?
        /// The reader cards are taken from once one has been connected.
        var reader: String?
        /// The dialect, settled with the first card and kept for the next ones.
        var driver: PCSCDialectDriver?
        var maxAPDUDataSize: UInt64?
    }

    /// A connected card and what was learned when connecting.
    private struct Connected: Sendable {
        var card: PCSCCard
        var driver: PCSCDialectDriver
        var atr: ATR
        var idm: IDm?
    }

    private init(name: String, spec: String?, options: Options, thread: DeviceThread, context: PCSCContext, connection: Connection?) throws(FeliCaError) {
        self.name = name
        self.spec = spec
        self.options = options
        var s = State()
        if let c = connection {
            s.connection = Connected(card: c.card, driver: c.driver, atr: try ATR(c.reader.atr), idm: c.idm)
            s.reader = c.reader.name
            s.driver = c.driver
            s.maxAPDUDataSize = c.maxAPDUDataSize
        }
        let refusals = OwnedDevice<Link, FeliCaError>.Refusals(
            closed: FeliCaError(.readerGone, "\(name): the reader was closed"), cancelled: FeliCaError(.cancelled, "\(name): cancelled"))
        // Closing waits behind an exchange still running, but not long for a stuck one.
        device = OwnedDevice(thread: thread, connection: Link(context: context, state: s), refusals: refusals,
                             closeLimit: .seconds(2)) { $0.shutDown() }
    }

    /// Opens the reader `reader` selects, waiting for a FeliCa card as `options` say;
    /// ``name`` reports `name` when given (the device string the user typed), else `pcsc` or
    /// `pcsc:<reader>`. Cancelling the task while it waits for a card ends the wait
    /// (SCardCancel).
    public static func open(_ reader: PCSCReaderSelector = .first, options: Options = Options(), name: String? = nil) async throws(FeliCaError) -> PCSCTransport {
        let spec: String?
        switch reader {
        case .first: spec = nil
        case .named(let n): spec = n
        }
        let queue = DeviceThread(name: "felica.pcsc")
        let context = try await queue.run { () throws(FeliCaError) in try PCSCContext.establish() }
        let clock = ContinuousClock()
        // Without a card required, a card already there is taken, and none is waited for.
        let deadline = clock.now + (options.requiresCard ? options.cardWait : .zero)
        let outcome: Result<Connection?, FeliCaError> = await withTaskCancellationHandler {
            do throws(FeliCaError) {
                return .success(try await queue.run { () throws(FeliCaError) -> Connection? in
                    do throws(FeliCaError) {
                        return try connectToCard(context, spec: spec, until: deadline, options: options, strict: options.requiresCard)
                    } catch where !options.requiresCard && [.noCard, .cardGone, .transmission].contains(error.code) {
                        return nil
                    }
                })
            } catch {
                return .failure(error)
            }
        } onCancel: {
            context.cancel()
        }
        do throws(FeliCaError) {
            return try PCSCTransport(name: name ?? spec.map { "pcsc:" + $0 } ?? "pcsc", spec: spec, options: options,
                                     thread: queue, context: context, connection: try outcome.get())
        } catch {
            await queue.run {
                if case .success(let c?) = outcome { c.card.disconnect() }
                context.release()
            }
            queue.stop()
            throw error
        }
    }

    public func exchange(_ packet: [UInt8], timeout: Duration) async throws(FeliCaError) -> [UInt8] {
        let isPolling = PollingCommand.isPolling(packet)
        let reader = state.withLock { $0.reader } ?? spec ?? "any"
        // The reader enforces `timeout`; the host only guards against a call that never
        // returns. A Polling may first wait `timeout` for a card and settle its dialect.
        let limit = timeout + .seconds(3) + (isPolling ? timeout + .seconds(2) : .zero)
        let stuck = FeliCaError(.readerGone, "PC/SC reader '\(reader)' did not answer within \(seconds(limit)): unplug and replug it, or restart pcscd")
        return try await device.run(limit: limit, stuck: stuck) { (_) throws(FeliCaError) -> [UInt8] in
            try self.exchangeOnQueue(packet, timeout: timeout, isPolling: isPolling)
        }
    }

    /// One exchange, on the device queue: with the card connected, or — for a Polling —
    /// with the card that arrives within `timeout`.
    private func exchangeOnQueue(_ packet: [UInt8], timeout: Duration, isPolling: Bool) throws(FeliCaError) -> [UInt8] {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        var current = state.withLock { $0.connection }
        var left = false
        while true {
            guard let c = current else {
                guard isPolling else {
                    throw FeliCaError(.cardGone, "no card is on \(watched) now: the card left; place it on the reader again")
                }
                guard clock.now < deadline || !left, let arrived = try connectNext(until: deadline) else {
                    throw FeliCaError(.timeout, "no FeliCa card on \(watched) within \(seconds(timeout))\(left ? " (the last one left)" : "")")
                }
                current = arrived
                continue
            }
            do throws(FeliCaError) {
                return try c.driver.exchange(packet, timeout: timeout, Self.transmitter(c.card))
            } catch {
                let explained = Self.explain(error, dialect: c.driver.dialect, reader: c.card.reader, context: context)
                guard explained.code == .cardGone else { throw explained }
                drop(c.card)
                // A Polling that found the last card gone looks for the next one.
                guard isPolling else { throw explained }
                current = nil
                left = true
            }
        }
    }

    /// The readers looked at for the next card, for messages.
    private var watched: String {
        state.withLock { $0.reader }.map { "PC/SC reader '\($0)'" } ?? spec.map { "PC/SC reader '\($0)'" } ?? "any PC/SC reader"
    }

    /// Waits until `deadline` for a FeliCa card on the reader (on any reader before the
    /// first card), connects to it in the reader's dialect (settled now for the first
    /// card) and makes it the current card; nil when none came. On the device queue.
    private func connectNext(until deadline: ContinuousClock.Instant) throws(FeliCaError) -> Connected? {
        let (reader, known) = state.withLock { ($0.reader, $0.driver) }
        let c: Connection
        do throws(FeliCaError) {
            c = try Self.connectToCard(context, spec: reader ?? spec, until: deadline, options: options, strict: false, settled: known)
        } catch where [.noCard, .cardGone, .transmission].contains(error.code) {
            return nil
        } catch where error.code == .noReader {
            // The reader was there when the transport opened: no longer listed, it was
            // unplugged (or pcscd let go of it).
            throw FeliCaError(.readerGone, "the PC/SC reader went away: \(error.reason)")
        }
        let atr: ATR
        do throws(FeliCaError) {
            atr = try ATR(c.reader.atr)
        } catch {
            c.card.disconnect()
            throw error
        }
        let connected = Connected(card: c.card, driver: c.driver, atr: atr, idm: c.idm)
        state.withLock { s in
            s.connection = connected
            s.reader = c.reader.name
            s.driver = c.driver
            if s.maxAPDUDataSize == nil { s.maxAPDUDataSize = c.maxAPDUDataSize }
        }
        return connected
    }

    /// Forgets `card` (it left the reader) and disconnects it. On the device queue.
    private func drop(_ card: PCSCCard) {
        state.withLock { s in
            if s.connection?.card === card { s.connection = nil }
        }
        card.disconnect()
    }

    public func close() async {
        await device.close()
    }

    /// Get Data for the IDm (`FF CA 00 00 00`) and the PMm (`FF CA 01 00 00`): what the
    /// reader found when it detected the card, for readers that refuse to forward Polling.
    /// Throws `FeliCaError.Code.cardGone` when the card connected has left.
    public func readerReportedIdentity() async throws(FeliCaError) -> (idm: IDm, pmm: PMm)? {
        let reader = state.withLock { $0.reader } ?? spec ?? "any"
        let stuck = FeliCaError(.readerGone, "PC/SC reader '\(reader)' did not answer Get Data")
        return try await device.run(limit: .seconds(5), stuck: stuck) { (link) throws(FeliCaError) -> (idm: IDm, pmm: PMm)? in
            guard let current = link.withLock({ $0.connection }) else {
                throw FeliCaError(.cardGone, "no card is on \(self.watched) now: the card left; place it on the reader again")
            }
            let card = current.card, driver = current.driver
            let transmit = Self.transmitter(card)
            do throws(FeliCaError) {
                // A reader without Get Data answers with an error status; a card that left
                // makes the transmit itself fail.
                let uid = try transmit(PCSCStorageAPDU.getUID)
                guard let idm = try? PCSCStorageAPDU.idm(fromGetUID: uid) else { return nil }
                let data = try transmit(PCSCStorageAPDU.getPMm)
                guard let pmm = try? PCSCStorageAPDU.pmm(fromGetData: data) else { return nil }
                return (idm, pmm)
            } catch {
                let explained = Self.explain(error, dialect: driver.dialect, reader: card.reader, context: self.context)
                guard explained.code == .cardGone else { return nil }
                self.drop(card)
                throw explained
            }
        }
    }

    // MARK: - Opening, on the device queue

    /// A card connected in a settled dialect.
    struct Connection: Sendable {
        var reader: ReaderState
        var card: PCSCCard
        var idm: IDm?
        var driver: PCSCDialectDriver
        var maxAPDUDataSize: UInt64?
    }

    /// Waits for a FeliCa card, connects, reads the IDm and settles the dialect — or, given
    /// the dialect `settled` for the reader with an earlier card, just prepares it
    /// (``PCSCDialectDriver/begin(_:)``). pcscd's view of a reader can be a moment old (a
    /// card just taken away still shows as present), so a card that fails right after
    /// connecting sends us back to waiting for the reader's next state change (at most a
    /// second), until `deadline`. Not `strict`, cards that are not FeliCa are passed over
    /// instead of refused.
    static func connectToCard(_ context: PCSCContext, spec: String?, until deadline: ContinuousClock.Instant, options: Options,
                              strict: Bool = true, settled: PCSCDialectDriver? = nil) throws(FeliCaError) -> Connection {
        let clock = ContinuousClock()
        while true {
            let reader = try waitForCard(context, spec: spec, wait: max(.zero, deadline - clock.now), total: options.cardWait, strict: strict)
            do throws(FeliCaError) {
                let card = try context.connect(reader.name, exclusive: options.exclusive)
                let transmit = Self.transmitter(card)
                let idm = try? PCSCStorageAPDU.idm(fromGetUID: transmit(PCSCStorageAPDU.getUID))
                if let settled {
                    try settled.begin(transmit)
                    return Connection(reader: reader, card: card, idm: idm, driver: settled, maxAPDUDataSize: nil)
                }
                let maxAPDU = maxAPDUDataSize(card)
                let known = PCSCDialectDriver.Limits(refusedForms: maxAPDU == 0 ? [.extended] : [])
                let driver = try settleDialect(reader: reader.name, forced: options.dialect, limits: known, transmit)
                return Connection(reader: reader, card: card, idm: idm, driver: driver, maxAPDUDataSize: maxAPDU)
            } catch where [.cardGone, .noCard, .transmission].contains(error.code) {
                let left = deadline - clock.now
                guard left > .zero else { throw explain(error, dialect: options.dialect, reader: reader.name, context: context) }
                // When pcscd never saw the card go (it samples some readers, vpcd every 400 ms,
                // and a card can be swapped in between), no event comes: retry after a second.
                _ = try context.statusChange([reader.name], known: [reader.eventState], timeout: min(left, .seconds(1)))
            }
        }
    }

    /// A reader holding a FeliCa card, waiting up to `wait` for one to appear. `strict`, a
    /// card that is not FeliCa on the reader `spec` names is an error rather than no card.
    static func waitForCard(_ context: PCSCContext, spec: String?, wait: Duration, total: Duration, strict: Bool = true) throws(FeliCaError) -> ReaderState {
        let all = try context.readerNames()
        guard !all.isEmpty else {
            throw PCSCError.noReaders("no PC/SC reader is connected: plug in a reader")
        }
        let readers: [String]
        if let chosen = try choose(spec, among: all) { readers = [chosen] } else { readers = all }
        let clock = ContinuousClock()
        let deadline = clock.now + wait
        var states = try context.statusChange(readers, known: nil, timeout: nil) ?? []
        while true {
            if let found = states.first(where: \.holdsFeliCa) { return found }
            if strict, spec != nil, let s = states.first, s.isPresent, !s.isMute, !s.holdsFeliCa {
                let atr = (try? ATR(s.atr)).map(\.description) ?? Hex.encode(s.atr, uppercase: true, separator: " ")
                throw FeliCaError(.unsupported, "the card on PC/SC reader '\(s.name)' is not a FeliCa card (ATR \(atr))")
            }
            let left = deadline - clock.now
            guard left > .zero else { break }
            // At most a second per call: a cancel landing just before the call blocks is
            // then noticed by the next check instead of after the whole wait.
            if let changed = try context.statusChange(readers, known: states.map(\.eventState), timeout: min(left, .seconds(1))) {
                states = changed
            }
        }
        let which = readers.count == 1 ? "PC/SC reader '\(readers[0])'" : "any PC/SC reader (\(readers.map { "'\($0)'" }.joined(separator: ", ")))"
        if states.contains(where: { $0.isPresent && !$0.holdsFeliCa }) && spec == nil {
            throw FeliCaError(.noCard, "no FeliCa card on \(which): the cards present are not FeliCa")
        }
        throw FeliCaError(.noCard, "no FeliCa card on \(which)\(total > .zero ? " after waiting \(seconds(total))" : ""): place a card on the reader")
    }

    /// The reader `spec` names: exact name, else a unique prefix. Nil spec = nil.
    static func choose(_ spec: String?, among all: [String]) throws(FeliCaError) -> String? {
        guard let spec else { return nil }
        if all.contains(spec) { return spec }
        let matches = all.filter { $0.hasPrefix(spec) }
        if matches.count == 1 { return matches[0] }
        let list = all.map { "'\($0)'" }.joined(separator: ", ")
        if matches.isEmpty {
            throw FeliCaError(.noReader, "no PC/SC reader named '\(spec)' (readers: \(list))")
        }
        throw FeliCaError(.badInput, "'\(spec)' matches several PC/SC readers (\(matches.map { "'\($0)'" }.joined(separator: ", "))): give more of the name")
    }

    /// What the reader's driver says about APDU sizes (PC/SC Part 10 `dwMaxAPDUDataSize`,
    /// through the feature list); nil when it says nothing (vpcd, drivers without Part 10).
    static func maxAPDUDataSize(_ card: PCSCCard) -> UInt64? {
        guard let features = try? card.control(UInt(felica_ioctl_get_feature_request())),
              let code = try? Part10.controlCode(of: Part10.getTLVProperties, in: features),
              let list = try? card.control(UInt(code)),
              let properties = try? Part10.properties(list)
        else { return nil }
        return properties[Part10.Property.maxAPDUDataSize]
    }

    /// The dialect to use: the forced one (checked), else the name's guess, then the
    /// fallback order, keeping the first in which the card answers a Polling or the reader
    /// refuses it in the dialect's own reply format.
    static func settleDialect(reader: String, forced: PCSCDialect?, limits: PCSCDialectDriver.Limits = .init(), _ transmit: PCSCDialectDriver.Transmit) throws(FeliCaError) -> PCSCDialectDriver {
        if let forced {
            do {
                let driver = PCSCDialectDriver(dialect: forced, limits: limits)
                _ = try driver.probe(transmit)
                return driver
            } catch where error.code == .timeout {
                // The ATR said a FeliCa card is there, so silence points at the dialect.
                throw FeliCaError(.unsupported, "the FeliCa card on PC/SC reader '\(reader)' did not answer a Polling sent in the \(forced) dialect although the reader reports it present (\(error.reason)): the reader probably does not speak the \(forced) dialect; another (\(PCSCDialect.names)) may serve, or none forced, to detect it")
            } catch where isDialectMismatch(error) {
                throw FeliCaError(.unsupported, "PC/SC reader '\(reader)' does not speak the \(forced) dialect: \(error.reason); another (\(PCSCDialect.names)) may serve, or none forced, to detect it")
            }
        }
        let guess = PCSCDialect.guess(readerName: reader)
        let order = (guess.map { [$0] } ?? []) + PCSCDialect.fallbackOrder.filter { $0 != guess }
        var failures: [String] = []
        for dialect in order {
            do {
                let driver = PCSCDialectDriver(dialect: dialect, limits: limits)
                _ = try driver.probe(transmit)
                return driver
            } catch where isDialectMismatch(error) || error.code == .timeout {
                failures.append("\(dialect): \(error.reason)")
            }
        }
        throw FeliCaError(.unsupported, "could not reach the FeliCa card on PC/SC reader '\(reader)' in any dialect (\(failures.joined(separator: "; "))); force the reader's dialect (\(PCSCDialect.names)) if it is known")
    }

    /// Errors that mean the reader did not understand the pseudo-APDU (as opposed to the
    /// daemon, the reader or the card going away).
    static func isDialectMismatch(_ error: FeliCaError) -> Bool {
        [.status, .unexpectedResponse, .truncated, .trailingBytes, .badLength, .invalidField, .unsupported].contains(error.code)
    }

    /// Rewords a failed exchange: a rejected pseudo-APDU names the dialect, and a transmit
    /// failure is checked against the reader state, since a vanished card often shows as a
    /// generic transmission error.
    static func explain(_ error: FeliCaError, dialect: PCSCDialect?, reader: String, context: PCSCContext) -> FeliCaError {
        if error.code == .transmission || error.code == .readerGone {
            if cardLeft(reader, context) {
                return FeliCaError(.cardGone, "the card was removed from reader '\(reader)' during the exchange: hold it still on the reader and try again")
            }
        }
        if error.code == .status || error.code == .unexpectedResponse {
            return FeliCaError(error.code, "PC/SC reader '\(reader)' rejected a \(dialect.map { "\($0) " } ?? "")pseudo-APDU: \(error.reason); the reader may speak another dialect (\(PCSCDialect.names))")
        }
        return error
    }

    /// Whether the card left the reader, given a second to tell: pcscd learns of a removal
    /// from the driver, which for some readers (vpcd) polls only every 400 ms.
    static func cardLeft(_ reader: String, _ context: PCSCContext) -> Bool {
        guard let now = try? context.statusChange([reader], known: nil, timeout: nil)?.first else { return false }
        guard now.isPresent else { return true }
        // Any change of the event count means the card went (and maybe came back).
        let changed = try? context.statusChange([reader], known: [now.eventState], timeout: .seconds(1))
        return changed != nil
    }

    /// APDU in, APDU out, through SCardTransmit.
    static func transmitter(_ card: PCSCCard) -> PCSCDialectDriver.Transmit {
        { (apdu: CommandAPDU) throws(FeliCaError) -> ResponseAPDU in
            try ResponseAPDU.decode(try card.transmit(apdu.encode())[...])
        }
    }
}

/// `3 s`, `0.5 s`: a duration for messages.
func seconds(_ d: Duration) -> String {
    let ms = d.components.seconds * 1000 + d.components.attoseconds / 1_000_000_000_000_000
    return ms % 1000 == 0 ? "\(ms / 1000) s" : "\(Double(ms) / 1000) s"
}
