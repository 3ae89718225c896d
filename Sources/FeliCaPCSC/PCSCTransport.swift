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
public final class PCSCTransport: Transport {
    /// How to open the reader.
    public struct Options: Sendable {
        /// Force a dialect; nil = judge from the reader name, then try Part 3 and ACR-style.
        public var dialect: PCSCDialect?
        /// How long to wait for a FeliCa card to appear; zero = it must be there already.
        public var cardWait: Duration = .zero
        /// Connect exclusively, so no other program interleaves APDUs with ours.
        public var exclusive = true
        public init(dialect: PCSCDialect? = nil, cardWait: Duration = .zero) {
            self.dialect = dialect
            self.cardWait = cardWait
        }
    }

    public let name: String
    /// The PC/SC reader's name.
    public let readerName: String
    /// The card's ATR.
    public let atr: ATR
    /// The IDm Get Data returned, nil when the reader does not support it.
    public let idm: IDm?
    /// The dialect in use.
    public var dialect: PCSCDialect { driver.dialect }
    /// What the reader's driver says about the longest APDU it carries
    /// (`dwMaxAPDUDataSize`: 0 = short APDUs only); nil when the driver does not say.
    public let maxAPDUDataSize: UInt64?
    /// What the reader has refused so far: APDU forms and FeliCa commands.
    public var limits: PCSCDialectDriver.Limits { driver.limits }
    /// A round trip through pcscd and USB; the reader enforces the card timeout itself.
    public var linkLatency: Duration { .milliseconds(3) }
    public var longestReply: Int? { driver.longestReply }

    private let driver: PCSCDialectDriver
    private let queue: DeviceThread
    private let context: PCSCContext
    private let state: Mutex<State>

    private struct State {
        var card: PCSCCard?
        /// Set when a call never came back; every later exchange fails with it.
        var broken: FeliCaError?
    }

    private init(name: String, readerName: String, atr: ATR, idm: IDm?, driver: PCSCDialectDriver, maxAPDUDataSize: UInt64?,
                 queue: DeviceThread, context: PCSCContext, card: PCSCCard) {
        self.name = name
        self.readerName = readerName
        self.atr = atr
        self.idm = idm
        self.driver = driver
        self.maxAPDUDataSize = maxAPDUDataSize
        self.queue = queue
        self.context = context
        self.state = Mutex(State(card: card))
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
        let deadline = clock.now + options.cardWait
        let outcome: Result<Connection, FeliCaError> = await withTaskCancellationHandler {
            do throws(FeliCaError) {
                return .success(try await queue.run { () throws(FeliCaError) in
                    try connectToCard(context, spec: spec, until: deadline, options: options)
                })
            } catch {
                return .failure(error)
            }
        } onCancel: {
            context.cancel()
        }
        if case .failure = outcome {
            await queue.run { context.release() }
            queue.stop()
        }
        let c = try outcome.get()
        let atr = try ATR(c.reader.atr)
        return PCSCTransport(name: name ?? spec.map { "pcsc:" + $0 } ?? "pcsc", readerName: c.reader.name, atr: atr, idm: c.idm, driver: c.driver,
                             maxAPDUDataSize: c.maxAPDUDataSize, queue: queue, context: context, card: c.card)
    }

    public func exchange(_ packet: [UInt8], timeout: Duration) async throws(FeliCaError) -> [UInt8] {
        let (card, broken) = state.withLock { ($0.card, $0.broken) }
        if let broken { throw broken }
        guard let card else { throw FeliCaError(.readerGone, "\(name): the reader was closed") }
        let driver = self.driver
        let reader = readerName
        // The reader enforces `timeout`; the host only guards against a call that never returns.
        let stuck = FeliCaError(.readerGone, "PC/SC reader '\(reader)' did not answer within \(seconds(timeout + .seconds(3))): unplug and replug it, or restart pcscd")
        do throws(FeliCaError) {
            return try await queue.run(limit: timeout + .seconds(3), onExpiry: stuck) { () throws(FeliCaError) -> [UInt8] in
                do throws(FeliCaError) {
                    return try driver.exchange(packet, timeout: timeout, Self.transmitter(card))
                } catch {
                    throw Self.explain(error, dialect: driver.dialect, reader: reader, context: card.context)
                }
            }
        } catch {
            if error.reason == stuck.reason { state.withLock { $0.broken = stuck } }
            throw error
        }
    }

    public func close() async {
        guard let card = state.withLock({ s -> PCSCCard? in defer { s.card = nil }; return s.card }) else { return }
        let driver = self.driver
        // Queued behind any exchange still running; a stuck one is not waited for long.
        _ = try? await queue.run(limit: .seconds(2), onExpiry: FeliCaError(.timeout, "close")) { () throws(FeliCaError) in
            driver.end(Self.transmitter(card))
            card.disconnect()
            // Released here, on the device thread, not whenever the last reference happens to
            // drop: a release racing libpcsclite's own teardown at process exit crashed
            // `felica` (SIGSEGV in libpcsclite, about 1 run in 400).
            card.context.release()
        }
    }

    /// Get Data for the IDm (`FF CA 00 00 00`) and the PMm (`FF CA 01 00 00`): what the
    /// reader found when it detected the card, for readers that refuse to forward Polling.
    public func readerReportedIdentity() async throws(FeliCaError) -> (idm: IDm, pmm: PMm)? {
        let card = state.withLock { $0.card }
        guard let card else { throw FeliCaError(.readerGone, "\(name): the reader was closed") }
        return try await queue.run(limit: .seconds(5), onExpiry: FeliCaError(.readerGone, "PC/SC reader '\(readerName)' did not answer Get Data")) { () throws(FeliCaError) -> (idm: IDm, pmm: PMm)? in
            let transmit = Self.transmitter(card)
            guard let idm = try? PCSCStorageAPDU.idm(fromGetUID: transmit(PCSCStorageAPDU.getUID)),
                  let pmm = try? PCSCStorageAPDU.pmm(fromGetData: transmit(PCSCStorageAPDU.getPMm))
            else { return nil }
            return (idm, pmm)
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

    /// Waits for a FeliCa card, connects, reads the IDm and settles the dialect. pcscd's view
    /// of a reader can be a moment old (a card just taken away still shows as present), so a
    /// card that fails right after connecting sends us back to waiting for the reader's
    /// next state change (at most a second), until `deadline`.
    static func connectToCard(_ context: PCSCContext, spec: String?, until deadline: ContinuousClock.Instant, options: Options) throws(FeliCaError) -> Connection {
        let clock = ContinuousClock()
        while true {
            let reader = try waitForCard(context, spec: spec, wait: max(.zero, deadline - clock.now), total: options.cardWait)
            do throws(FeliCaError) {
                let card = try context.connect(reader.name, exclusive: options.exclusive)
                let transmit = Self.transmitter(card)
                let idm = try? PCSCStorageAPDU.idm(fromGetUID: transmit(PCSCStorageAPDU.getUID))
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

    /// A reader holding a FeliCa card, waiting up to `wait` for one to appear.
    static func waitForCard(_ context: PCSCContext, spec: String?, wait: Duration, total: Duration) throws(FeliCaError) -> ReaderState {
        let all = try context.readerNames()
        guard !all.isEmpty else {
            throw FeliCaError(.noReader, "no PC/SC reader is connected: plug in a reader, then check it with `felica devices`")
        }
        let readers: [String]
        if let chosen = try choose(spec, among: all) { readers = [chosen] } else { readers = all }
        let clock = ContinuousClock()
        let deadline = clock.now + wait
        var states = try context.statusChange(readers, known: nil, timeout: nil) ?? []
        while true {
            if let found = states.first(where: \.holdsFeliCa) { return found }
            if spec != nil, let s = states.first, s.isPresent, !s.isMute, !s.holdsFeliCa {
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
                throw FeliCaError(.unsupported, "the FeliCa card on PC/SC reader '\(reader)' did not answer a Polling sent in the \(forced) dialect although the reader reports it present (\(error.reason)): the reader probably does not speak the \(forced) dialect. Pass another --dialect (\(PCSCDialect.names)) or leave it out to detect it")
            } catch where isDialectMismatch(error) {
                throw FeliCaError(.unsupported, "PC/SC reader '\(reader)' does not speak the \(forced) dialect: \(error.reason). Pass another --dialect (\(PCSCDialect.names)) or leave it out to detect it")
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
        throw FeliCaError(.unsupported, "could not reach the FeliCa card on PC/SC reader '\(reader)' in any dialect (\(failures.joined(separator: "; "))). Pass --dialect (\(PCSCDialect.names)) if you know the reader's")
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
            return FeliCaError(error.code, "PC/SC reader '\(reader)' rejected a \(dialect.map { "\($0) " } ?? "")pseudo-APDU: \(error.reason). If the reader speaks another dialect, pass --dialect (\(PCSCDialect.names))")
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
