import FeliCa

/// KMT (Kartu Multi Trip, the Jakarta commuter line's card) in system 0x90B7, and the MRT
/// Jakarta card in system 0x9373. Read as Metrodroid reads them (`transit/kmt/`,
/// `transit/mrtj/`; Docs/cards.md, "KMT and MRT Jakarta"): rupiah, Jakarta time (UTC+07:00).
///
///     KMT 300B block 0   card number, ASCII
///     KMT 1017 block 0   BB BB BB BB LL LL LL LL .. .. .. .. .. CC CC CC
///     MRTJ 10D7 block 0  balance (LE), last amount (LE), transaction counter (BE)
///     KMT 200F block n   TT TT TT TT AA AA AA AA GG GG .. .. PP QQ QQ QQ
///                        time (BE seconds from 2000), amount (BE), gate, process type,
///                        sequence number (BE)
public enum KMT {
    /// The KMT system.
    public static let system: SystemCode = 0x90B7
    /// Block 0: the card number in ASCII.
    public static let numberService: ServiceCode = 0x300B
    /// Block 0: balance, last amount, transaction counter.
    public static let balanceService: ServiceCode = 0x1017
    /// The trips.
    public static let historyService: ServiceCode = 0x200F
    /// Blocks of history asked for. Metrodroid reads what the card has and no source says
    /// how many; the reader stops at the card's last block when it has fewer.
    public static let historyBlocks = 16

    /// The MRT Jakarta system.
    public static let mrtjSystem: SystemCode = 0x9373
    /// MRT Jakarta block 0: balance, last amount, transaction counter, as KMT's.
    public static let mrtjBalanceService: ServiceCode = 0x10D7

    /// What ``CardReader`` reads for KMT.
    public static let layout = PurseLayout(
        profile: .kmt, placement: .ownSystem([system]), presence: balanceService,
        services: [
            ServiceRead(numberService, .number, balance: 1, history: 1),
            ServiceRead(balanceService, .balance, balance: 1, history: 1),
            ServiceRead(historyService, .history, balance: 0, history: historyBlocks),
        ]
    ) { b, c in
        purse(system: c.system, number: b.first(numberService), balance: b.first(balanceService), history: b[historyService])
    }

    /// What ``CardReader`` reads for MRT Jakarta: its balance block (Metrodroid decodes
    /// nothing else; what 0x100B holds is not known).
    public static let mrtjLayout = PurseLayout(
        profile: .mrtj, placement: .ownSystem([mrtjSystem]), presence: mrtjBalanceService,
        services: [ServiceRead(mrtjBalanceService, .balance, balance: 1, history: 1)]
    ) { b, c in
        var p = Purse(profile: .mrtj, system: c.system)
        if let block = b.first(mrtjBalanceService) { decodeBalance(block, service: mrtjBalanceService, into: &p) }
        return p
    }

    /// The transaction counter and the last amount, kept beside the balance.
    public struct BalanceBlock: Hashable, Sendable {
        public var balance: Int
        public var lastAmount: Int
        public var counter: Int

        public init(balance: Int, lastAmount: Int, counter: Int) {
            self.balance = balance; self.lastAmount = lastAmount; self.counter = counter
        }

        public static func decode(_ raw: [UInt8], _ what: String) throws(CardDataError) -> BalanceBlock {
            let b = try Block(raw, what)
            return BalanceBlock(balance: Int(b.uint32LE(0)), lastAmount: Int(b.uint32LE(4)), counter: Int(b.uint24BE(13)))
        }

        public func encode() -> [UInt8] {
            var w = BlockWriter()
            w.put32LE(UInt32(clamping: balance), at: 0)
            w.put32LE(UInt32(clamping: lastAmount), at: 4)
            w.put24BE(UInt32(clamping: counter), at: 13)
            return w.bytes
        }
    }

    static func decodeBalance(_ block: [UInt8], service: ServiceCode, into p: inout Purse) {
        do throws(CardDataError) {
            let b = try BalanceBlock.decode(block, "\(p.profile.displayName) balance (\(service))")
            p.balance = b.balance
        } catch {
            p.issues.append(balanceIssue(service, error))
        }
    }

    /// Name of a process type (record byte 12); nil for one Metrodroid does not name.
    public static func processName(_ t: UInt8) -> String? {
        switch t {
        case 0: "top-up at a ticket machine"
        case 1: "train ride"
        case 2: "top-up at a point of sale"
        default: nil
        }
    }

    /// Seconds from 2000-01-01 00:00 UTC in a record, as Jakarta local seconds since
    /// 2000-01-01 00:00. Metrodroid reads times before 2019-01-01 00:00 Jakarta as counted
    /// from six hours earlier (its own guess at when the card's epoch moved).
    public static func localSeconds(_ stored: UInt32) -> Int {
        let s = Int(stored)
        let transition = CardDate.days(year: 2019, month: 1, day: 1) * 86_400 - 7 * 3600
        return s >= transition ? s + 7 * 3600 : s + 3600
    }

    /// One 200F record.
    public struct HistoryRecord: Hashable, Sendable {
        /// Bytes 0-3 as stored: seconds from 2000 (see ``localSeconds(_:)``).
        public var time: UInt32
        /// Bytes 4-7, BE, rupiah, unsigned (the process type gives the sign).
        public var amount: Int
        /// Bytes 8-9, BE: the gate or machine.
        public var gate: UInt16
        /// Byte 12.
        public var process: UInt8
        /// Bytes 13-15, BE.
        public var sequence: Int

        public init(time: UInt32, amount: Int, gate: UInt16, process: UInt8, sequence: Int) {
            self.time = time; self.amount = amount; self.gate = gate; self.process = process; self.sequence = sequence
        }

        /// The record's date, Jakarta time.
        public func date() throws(CardDataError) -> CardDate {
            try CardDate(localSecondsSince2000: KMT.localSeconds(time), utcOffsetMinutes: CardDate.jakarta, "KMT history time")
        }

        /// Nil for an empty slot (Metrodroid's test: byte 0 and the gate both zero count as empty).
        public static func decode(_ raw: [UInt8]) throws(CardDataError) -> HistoryRecord? {
            let b = try Block(raw, "KMT history record")
            if b.bytes[0] == 0 || b.uint16BE(8) == 0 { return nil }
            return HistoryRecord(time: b.uint32BE(0), amount: Int(b.uint32BE(4)), gate: b.uint16BE(8), process: b.bytes[12], sequence: Int(b.uint24BE(13)))
        }

        public func encode() -> [UInt8] {
            var w = BlockWriter()
            w.put32BE(time, at: 0)
            w.put32BE(UInt32(clamping: amount), at: 4)
            w.put16BE(gate, at: 8)
            w.put(process, at: 12)
            w.put24BE(UInt32(clamping: sequence), at: 13)
            return w.bytes
        }
    }

    /// The trips, newest first (by sequence number). The card keeps no balance in a record:
    /// each record's balance is worked back from `balance` (the purse's) through the newer
    /// records' amounts, so it holds only while the records run without a gap.
    public static func decodeHistory(_ blocks: [[UInt8]], balance: Int?) -> [HistoryEntry] {
        var decoded: [(seq: Int, entry: HistoryEntry)] = []
        var running = balance
        let slots = historySlots(blocks, HistoryRecord.decode)
        var records: [(slot: Int, raw: [UInt8], record: HistoryRecord)] = []
        for s in slots {
            switch s.result {
            case .success(let r): records.append((s.slot, s.raw, r))
            case .failure(let e): decoded.append((-1, .malformed(slot: s.slot, error: e, raw: s.raw)))
            }
        }
        for (slot, raw, r) in records.sorted(by: { $0.record.sequence > $1.record.sequence }) {
            let (kind, amount): (TransactionKind, Int?) = switch r.process {
            case 1: (.transit, -r.amount)
            case 0, 2: (.charge, r.amount)
            default: (.other, nil)
            }
            do throws(CardDataError) {
                let date = try r.date()
                let after = running ?? 0
                decoded.append((r.sequence, .transaction(Transaction(
                    date: date, kind: kind, amount: amount, balance: after, sequence: r.sequence,
                    type: CodeName(Int(r.process), processName(r.process)), terminal: "gate \(hexCode(Int(r.gate), digits: 4))"))))
                running = amount.flatMap { a in running.map { $0 - a } }
            } catch {
                decoded.append((-1, .malformed(slot: slot, error: error, raw: raw)))
            }
        }
        return decoded.map(\.entry)
    }

    /// Builds the KMT purse from the blocks read (nil = not read).
    public static func purse(system: SystemCode = KMT.system, number: [UInt8]?, balance: [UInt8]?, history: [[UInt8]]?) -> Purse {
        var p = Purse(profile: .kmt, system: system)
        if let number {
            // Metrodroid shows the block as ASCII when every byte is printable, else as hex.
            let printable = number.allSatisfy { (0x20...0x7F).contains($0) || $0 == 0x0A || $0 == 0x0D }
            p.number = printable ? String(decoding: number, as: UTF8.self) : Hex.encode(number, uppercase: true)
        }
        if let balance { decodeBalance(balance, service: balanceService, into: &p) }
        if let history {
            p.history = decodeHistory(history, balance: p.balance)
            if p.balance == nil, p.history?.contains(where: { $0.transaction != nil }) == true {
                p.notes.append("the balance could not be read, so the records' balances, which KMT works back from it, are unknown (shown as 0)")
            }
        }
        return p
    }
}
