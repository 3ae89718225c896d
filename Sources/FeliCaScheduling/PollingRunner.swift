import FeliCa

/// Where and when a polling sequence found the card.
public struct Detection: Hashable, Sendable {
    /// Time from the start of the sequence until the card's answer was in.
    public var time: Duration
    /// Index of the answered code in the polled list.
    public var position: Int
    /// The system the card answered with: the one an app would land in.
    public var system: SystemCode
    public var idm: IDm
    public var pmm: PMm
}

/// The result of one polling sequence.
public struct PollingOutcome: Hashable, Sendable {
    /// The detection, or nil when no listed code was answered in time.
    public var detection: Detection?
    /// Polls sent.
    public var polls: Int
    /// Time when the sequence ended (detection, list exhausted or session over).
    public var elapsed: Duration
    /// Whether the session limit ended the sequence before the list did.
    public var endedBySessionLimit: Bool
}

/// Wildcard Polling followed by Request System Code: every system in two exchanges.
public struct SystemListing: Hashable, Sendable {
    /// Time from the start until the system list was in.
    public var time: Duration
    /// The card's systems in the card's order.
    public var systems: [SystemCode]
    /// The system the wildcard Polling answered with.
    public var first: SystemCode?
    /// Exchanges it took.
    public var exchanges: Int
}

/// Polls system codes one after another until the card answers, the way Core NFC walks
/// an app's list: the one runner behind timing models (a ``ModelTransport`` on a
/// ``SimulatedClock``) and real readers (any `Transport` on `ContinuousClock`).
public struct PollingRunner: Sendable {
    /// The reader session's lifetime (nil = unlimited).
    public var sessionLimit: Duration?
    /// Longest one poll can take: a poll starts only when this much session time is left.
    public var pollWindow: Duration
    /// Time slots per Polling.
    public var timeSlot: TimeSlot

    public init(sessionLimit: Duration? = nil, pollWindow: Duration, timeSlot: TimeSlot = .one) {
        self.sessionLimit = sessionLimit
        self.pollWindow = pollWindow
        self.timeSlot = timeSlot
    }

    /// A runner with the model's session limit and poll window.
    public init(model: any TimingModel) {
        self.init(sessionLimit: model.sessionLimit, pollWindow: model.pollWindow)
    }

    /// A runner for a real transport: the wait the card session allows one Polling.
    public init(transport: any Transport, sessionLimit: Duration? = nil, timeSlot: TimeSlot = .one) {
        let options = CardSession.Options()
        let window = AirTiming.pollingWindow(slots: timeSlot.slots) + AirTiming.airTime(packetLength: 20)
            + options.timeoutFloor + transport.linkLatency
        self.init(sessionLimit: sessionLimit, pollWindow: window, timeSlot: timeSlot)
    }

    /// Polls `codes` in order on `transport`, timing with `clock`.
    public func run<C: Clock>(codes: [SystemCode], on transport: any Transport, clock: C) async throws(FeliCaError) -> PollingOutcome
    where C.Duration == Duration {
        let session = CardSession(transport: transport)
        let start = clock.now
        for (position, code) in codes.enumerated() {
            if let limit = sessionLimit, start.duration(to: clock.now) + pollWindow > limit {
                return PollingOutcome(detection: nil, polls: position, elapsed: start.duration(to: clock.now), endedBySessionLimit: true)
            }
            if let reply = try await session.poll(systemCode: code, requestCode: .systemCode, timeSlot: timeSlot) {
                let time = start.duration(to: clock.now)
                let detection = Detection(time: time, position: position, system: reply.systemCode ?? code, idm: reply.idm, pmm: reply.pmm)
                return PollingOutcome(detection: detection, polls: position + 1, elapsed: time, endedBySessionLimit: false)
            }
        }
        return PollingOutcome(detection: nil, polls: codes.count, elapsed: start.duration(to: clock.now), endedBySessionLimit: false)
    }

    /// Wildcard Polling, then Request System Code to the system that answered.
    /// Throws `.noCard` when nothing answers the wildcard, and the transport's
    /// `.unsupported` when the reader cannot make one of the two exchanges.
    public func listSystems<C: Clock>(on transport: any Transport, clock: C) async throws(FeliCaError) -> SystemListing
    where C.Duration == Duration {
        let session = CardSession(transport: transport)
        let start = clock.now
        guard let reply = try await session.poll(systemCode: .wildcard, requestCode: .systemCode, timeSlot: timeSlot) else {
            throw FeliCaError(.noCard, "no card answered wildcard Polling on \(transport.name)")
        }
        let command = RequestSystemCodeCommand(idm: reply.idm).encode()
        // The PMm time counts from the end of the command to the reply; both packets'
        // air time comes on top (a reply listing 16 systems is 43 bytes).
        let wait = max(reply.pmm.maximumResponseTime(for: .fixed), CardSession.Options().timeoutFloor)
            + AirTiming.airTime(packetLength: command.count) + AirTiming.airTime(packetLength: 43) + transport.linkLatency
        let answer = try await session.exchange(command, timeout: wait)
        let systems = try RequestSystemCodeResponse.decode(answer[...], expecting: reply.idm).systemCodes
        return SystemListing(time: start.duration(to: clock.now), systems: systems, first: reply.systemCode, exchanges: 2)
    }
}
