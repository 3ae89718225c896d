import FeliCa

extension CardImage {
    /// What a Request Service sweep found, and what it cost.
    public struct Sweep: Sendable {
        /// Every service the card holds, with its key version, in code order.
        public var services: [(code: ServiceCode, keyVersion: UInt16)]
        /// Request Service exchanges answered and refused.
        public var exchanges: Int
        /// Nodes per exchange the sweep settled on (32 unless the card refused batches).
        public var batch: Int
        /// Candidate codes the card refused even one at a time (left out of ``services``).
        public var refused: [ServiceCode]
    }

    /// The service attributes swept: the 16 service kinds (random, cyclic, the four purse
    /// kinds; each with and without a key). Areas are not swept: Request Service tells an
    /// area's presence but not where it ends.
    public static let sweepAttributes: ClosedRange<UInt16> = 0x08...0x17

    /// Every candidate service code: each of the 1,024 service numbers with each attribute
    /// of ``sweepAttributes`` (16,384 codes, 512 exchanges of 32).
    public static var sweepCandidates: [ServiceCode] {
        (0..<UInt16(1024)).flatMap { n in sweepAttributes.map { ServiceCode(rawValue: n << 6 | $0) } }
    }

    /// Finds the services of `target`'s system with Request Service over every candidate
    /// code, for a card that does not answer Search Service Code (or answers it only in
    /// part). Batches start at the command's limit (32 nodes); a batch the card leaves
    /// unanswered is sent again in halves, and the smaller size is kept for the rest, since
    /// such a card has a lower limit of its own. Nil when the card answers no Request
    /// Service at all; a card that left is an error. `progress` hears about every 32nd
    /// exchange.
    public static func sweepServices(_ session: CardSession, _ target: Target,
                                     progress: (@Sendable (String) -> Void)? = nil) async throws(FeliCaError) -> Sweep? {
        let candidates = sweepCandidates
        var batch = RequestServiceCommand.maximumNodes
        var sweep = Sweep(services: [], exchanges: 0, batch: batch, refused: [])
        var answered = false
        var i = 0
        while i < candidates.count {
            let chunk = Array(candidates[i..<min(i + batch, candidates.count)])
            sweep.exchanges += 1
            do throws(FeliCaError) {
                let r = try await session.send(try RequestServiceCommand(idm: target.idm, nodes: chunk), to: target)
                guard r.keyVersions.count == chunk.count else {
                    throw FeliCaError(.invalidField, "Request Service response: \(r.keyVersions.count) key versions for \(chunk.count) nodes")
                }
                answered = true
                for (c, kv) in zip(chunk, r.keyVersions) { if let kv { sweep.services.append((c, kv)) } }
                i += chunk.count
                if sweep.exchanges % 32 == 0 {
                    progress?("system \(target.systemCode.map(\.description) ?? "?"): Request Service sweep \(i)/\(candidates.count) codes, \(sweep.services.count) services found")
                }
            } catch where error.code == .timeout || error.code == .refused || error.code == .unsupported || error.code == .status {
                guard try await session.select(target.systemCode ?? .wildcard) != nil else {
                    throw FeliCaError(.cardGone, "the card left the reader during the Request Service sweep (\(error.reason))")
                }
                if batch > 1 {
                    batch = max(1, batch / 2)
                    sweep.batch = batch
                } else if !answered {
                    return nil
                } else {
                    // One code the card will not answer even alone: leave it out and go on.
                    sweep.refused.append(chunk[0])
                    i += 1
                }
            }
        }
        return sweep
    }
}
