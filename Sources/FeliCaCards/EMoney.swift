import FeliCa

/// Card numbers printed as groups of four uppercase hex digits.
func groupedHex(_ bytes: ArraySlice<UInt8>, separator: String) -> String {
    let hex = Hex.encode(bytes, uppercase: true)
    var groups: [Substring] = []
    var i = hex.startIndex
    while i < hex.endIndex {
        let j = hex.index(i, offsetBy: 4, limitedBy: hex.endIndex) ?? hex.endIndex
        groups.append(hex[i..<j])
        i = j
    }
    return groups.joined(separator: separator)
}

/// Each non-empty history block decoded (`decode` returns nil for an empty slot), with its
/// slot number and raw bytes, a failure kept as such.
func historySlots<R>(_ blocks: [[UInt8]], _ decode: ([UInt8]) throws(CardDataError) -> R?) -> [(slot: Int, raw: [UInt8], result: Result<R, CardDataError>)] {
    var slots: [(slot: Int, raw: [UInt8], result: Result<R, CardDataError>)] = []
    for (i, b) in blocks.enumerated() {
        do throws(CardDataError) {
            if let r = try decode(b) { slots.append((i, b, .success(r))) }
        } catch { slots.append((i, b, .failure(error))) }
    }
    return slots
}

/// Turns decoded slots into history entries, newest first. Records whose type gives no
/// sign (unknown codes) take their amount from the balance difference with the next
/// older record when that one decoded, else nil.
func assembleHistory<R>(_ slots: [(slot: Int, raw: [UInt8], result: Result<R, CardDataError>)],
                        balance: (R) -> Int, transaction: (R, _ olderBalance: Int?) -> Transaction) -> [HistoryEntry] {
    var out: [HistoryEntry] = []
    for (k, s) in slots.enumerated() {
        switch s.result {
        case .failure(let e):
            out.append(.malformed(slot: s.slot, error: e, raw: s.raw))
        case .success(let r):
            var older: Int? = nil
            if k + 1 < slots.count, case .success(let o) = slots[k + 1].result { older = balance(o) }
            out.append(.transaction(transaction(r, older)))
        }
    }
    return out
}

/// A purse whose balance block failed to decode keeps the error as an issue.
func balanceIssue(_ service: ServiceCode, _ e: CardDataError) -> ServiceIssue {
    ServiceIssue(service: service, content: .balance, problem: .unreadable(e.reason))
}

// MARK: - Edy

/// Rakuten Edy in the common area (0xFE00).
public enum Edy {
    /// Service holding the card number (block 0).
    public static let numberService: ServiceCode = 0x110B
    /// Service holding the balance (block 0).
    public static let balanceService: ServiceCode = 0x1317
    /// Service holding the transaction history.
    public static let historyService: ServiceCode = 0x170F
    /// Blocks of history read.
    public static let historyBlocks = 6

    /// What ``CardReader`` reads at each depth, and how it decodes.
    public static let layout = PurseLayout(
        profile: .edy, placement: .commonArea, presence: balanceService,
        services: [
            ServiceRead(numberService, .number, balance: 1, history: 1),
            ServiceRead(balanceService, .balance, balance: 1, history: 1),
            ServiceRead(historyService, .history, balance: 0, history: historyBlocks),
        ]
    ) { b, c in
        purse(system: c.system, number: b.first(numberService), balance: b.first(balanceService), history: b[historyService])
    }

    /// Name of a history type code; nil for a code not in the table.
    public static func typeName(_ t: UInt8) -> String? {
        switch t {
        case 0x20: "payment"
        case 0x02: "charge"
        case 0x04: "gift"
        default: nil
        }
    }

    /// Payment spends; charge and gift (Edy received as a gift, e.g. exchanged points) add.
    static func sign(_ t: UInt8) -> (TransactionKind, Int)? {
        switch t {
        case 0x20: (.purchase, -1)
        case 0x02: (.charge, 1)
        case 0x04: (.charge, 1)
        default: nil
        }
    }

    /// One 0x170F record (all big-endian).
    public struct HistoryRecord: Hashable, Sendable {
        /// Byte 0: 0x20 payment, 0x02 charge, 0x04 gift.
        public var type: UInt8
        /// Bytes 1-3.
        public var sequence: Int
        /// Second precision: 15 bits of days since 2000-01-01, 17 bits of seconds.
        public var date: CardDate
        /// Bytes 8-11, unsigned.
        public var amount: Int
        /// Bytes 12-15: balance after.
        public var balance: Int

        public init(type: UInt8, sequence: Int, date: CardDate, amount: Int, balance: Int) {
            self.type = type; self.sequence = sequence; self.date = date; self.amount = amount; self.balance = balance
        }

        /// nil for an empty slot (type and time both zero).
        public static func decode(_ bytes: [UInt8]) throws(CardDataError) -> HistoryRecord? {
            let b = try Block(bytes, "Edy history record (0x170F)")
            let t = b.uint32BE(4)
            if b[0] == 0 && t == 0 { return nil }
            let date = try CardDate(daysSince2000: Int(t >> 17), secondsOfDay: Int(t & 0x1FFFF), "Edy history date")
            return HistoryRecord(type: b[0], sequence: Int(b.uint24BE(1)), date: date, amount: Int(b.uint32BE(8)), balance: Int(b.uint32BE(12)))
        }

        /// The block(s) this record is stored as (the inverse of decode).
        public func encode() -> [UInt8] {
            var w = BlockWriter()
            w.put(type, at: 0)
            w.put24BE(UInt32(clamping: sequence), at: 1)
            w.put32BE(UInt32(date.daysSince2000 & 0x7FFF) << 17 | UInt32(date.secondsOfDay), at: 4)
            w.put32BE(UInt32(clamping: amount), at: 8)
            w.put32BE(UInt32(clamping: balance), at: 12)
            return w.bytes
        }
    }

    /// Block 0 of 0x110B with the 8-byte Edy number at bytes 2-9.
    public static func encodeNumber(_ number: [UInt8]) -> [UInt8] {
        var w = BlockWriter()
        for (i, b) in number.prefix(8).enumerated() { w.put(b, at: 2 + i) }
        return w.bytes
    }

    /// Block 0 of 0x1317: balance, 4 bytes little-endian.
    public static func encodeBalance(_ yen: Int) -> [UInt8] {
        var w = BlockWriter()
        w.put32LE(UInt32(clamping: yen), at: 0)
        return w.bytes
    }

    /// Decodes history blocks, newest first: empty slots skipped, bad records kept as malformed entries.
    public static func decodeHistory(_ blocks: [[UInt8]]) -> [HistoryEntry] {
        return assembleHistory(historySlots(blocks, HistoryRecord.decode), balance: \.balance) { r, older in
            let (kind, amount): (TransactionKind, Int?) =
                if let (k, s) = sign(r.type) { (k, s * r.amount) } else { (.other, older.map { r.balance - $0 }) }
            return Transaction(date: r.date, kind: kind, amount: amount, balance: r.balance, sequence: r.sequence,
                               type: CodeName(Int(r.type), typeName(r.type)))
        }
    }

    /// Builds the purse from the blocks read (nil = not read); bad blocks become issues.
    public static func purse(system: SystemCode = .common, number: [UInt8]?, balance: [UInt8]?, history: [[UInt8]]?) -> Purse {
        var p = Purse(profile: .edy, system: system)
        if let number {
            do throws(CardDataError) { p.number = groupedHex(try Block(number, "Edy number (0x110B)").bytes[2..<10], separator: " ") } catch {
                p.issues.append(ServiceIssue(service: numberService, content: .number, problem: .unreadable(error.reason)))
            }
        }
        if let balance {
            do throws(CardDataError) { p.balance = Int(try Block(balance, "Edy balance (0x1317)").uint32LE(0)) } catch {
                p.issues.append(balanceIssue(balanceService, error))
            }
        }
        if let history {
            p.history = decodeHistory(history)
            crossCheck(&p)
        }
        return p
    }
}

/// Notes a purse whose balance block and newest history record disagree.
func crossCheck(_ p: inout Purse) {
    if let newest = p.history?.first?.transaction, let balance = p.balance, newest.balance != balance {
        p.notes.append("balance mismatch: the balance block says ¥\(balance), the newest history record (sequence \(newest.sequence)) says ¥\(newest.balance)")
    }
}

// MARK: - nanaco

/// nanaco in the common area (0xFE00).
public enum Nanaco {
    /// Service holding the card number (block 0).
    public static let numberService: ServiceCode = 0x558B
    /// Service holding the balance (block 0).
    public static let balanceService: ServiceCode = 0x5597
    /// Service holding the points.
    public static let pointsService: ServiceCode = 0x560B
    /// Service holding the transaction history.
    public static let historyService: ServiceCode = 0x564F
    /// Blocks of the points service.
    public static let pointsBlocks = 2
    /// Blocks of history read.
    public static let historyBlocks = 5

    /// What ``CardReader`` reads at each depth, and how it decodes.
    public static let layout = PurseLayout(
        profile: .nanaco, placement: .commonArea, presence: balanceService,
        services: [
            ServiceRead(numberService, .number, balance: 1, history: 1),
            ServiceRead(balanceService, .balance, balance: 1, history: 1),
            ServiceRead(pointsService, .points, balance: pointsBlocks, history: pointsBlocks),
            ServiceRead(historyService, .history, balance: 0, history: historyBlocks),
        ]
    ) { b, c in
        purse(system: c.system, number: b.first(numberService), balance: b.first(balanceService), points: b[pointsService],
              history: b[historyService])
    }

    /// Name of a history type code; nil for a code not in the table.
    public static func typeName(_ t: UInt8) -> String? {
        switch t {
        case 0x47: "payment"
        case 0x6F, 0x70: "charge"
        case 0x35: "transfer from old card"
        case 0x83: "point exchange"
        default: nil
        }
    }

    static func sign(_ t: UInt8) -> (TransactionKind, Int)? {
        switch t {
        case 0x47: (.purchase, -1)
        case 0x6F, 0x70: (.charge, 1)
        case 0x35: (.transfer, 1)
        case 0x83: (.points, 1)
        default: nil
        }
    }

    /// One 0x564F record (all big-endian).
    public struct HistoryRecord: Hashable, Sendable {
        /// Byte 0: 0x47 payment, 0x6F/0x70 charge, 0x35 transfer, 0x83 point exchange.
        public var type: UInt8
        /// Bytes 1-4, unsigned.
        public var amount: Int
        /// Bytes 5-8: balance after.
        public var balance: Int
        /// Minute precision.
        public var date: CardDate
        /// Bytes 13-14.
        public var sequence: Int

        public init(type: UInt8, amount: Int, balance: Int, date: CardDate, sequence: Int) {
            self.type = type; self.amount = amount; self.balance = balance; self.date = date; self.sequence = sequence
        }

        /// nil for an empty (all-zero) slot.
        public static func decode(_ bytes: [UInt8]) throws(CardDataError) -> HistoryRecord? {
            let b = try Block(bytes, "nanaco history record (0x564F)")
            if b.isZero { return nil }
            let v = b.uint32BE(9)
            let date = try CardDate(year: 2000 + Int(v >> 21), month: Int(v >> 17 & 0xF), day: Int(v >> 12 & 0x1F),
                                    hour: Int(v >> 6 & 0x3F), minute: Int(v & 0x3F), "nanaco history date")
            return HistoryRecord(type: b[0], amount: Int(b.uint32BE(1)), balance: Int(b.uint32BE(5)), date: date, sequence: Int(b.uint16BE(13)))
        }

        /// The block(s) this record is stored as (the inverse of decode).
        public func encode() -> [UInt8] {
            var w = BlockWriter()
            w.put(type, at: 0)
            w.put32BE(UInt32(clamping: amount), at: 1)
            w.put32BE(UInt32(clamping: balance), at: 5)
            let t = date.time ?? (0, 0, 0)
            // Masked to the field widths: a year outside 2000-4047 wraps rather than traps.
            let v = UInt32((date.year - 2000) & 0x7FF) << 21 | UInt32(date.month) << 17 | UInt32(date.day) << 12
                | UInt32(t.hour) << 6 | UInt32(t.minute)
            w.put32BE(v, at: 9)
            w.put16BE(UInt16(clamping: sequence), at: 13)
            return w.bytes
        }
    }

    /// Points, from the two 0x560B blocks.
    ///
    /// Disputed layout. We read block 1 as two 3-byte big-endian counters at bytes 0-2
    /// and 5-7 and add them. Why: nanaco points are granted per fiscal year and stay valid
    /// for two (published terms), so a card must keep two buckets; the one independent
    /// decoder we found that documents its reading of this service uses exactly these two
    /// fields of the last block. A single-counter reading cannot hold two years' points.
    public static func points(_ blocks: [[UInt8]]) throws(CardDataError) -> Int {
        guard blocks.count == pointsBlocks else {
            throw CardDataError(.blockLength, "nanaco points (0x560B): \(blocks.count) blocks, expected 2")
        }
        let b = try Block(blocks[1], "nanaco points (0x560B) block 1")
        return Int(b.uint24BE(0)) + Int(b.uint24BE(5))
    }

    /// Encodes points as this year's and last year's buckets.
    public static func encodePoints(thisYear: Int, lastYear: Int) -> [[UInt8]] {
        var w = BlockWriter()
        w.put24BE(UInt32(clamping: thisYear), at: 0)
        w.put24BE(UInt32(clamping: lastYear), at: 5)
        return [[UInt8](repeating: 0, count: 16), w.bytes]
    }

    /// Block 0 of the number service.
    public static func encodeNumber(_ number: [UInt8]) -> [UInt8] {
        var w = BlockWriter()
        for (i, b) in number.prefix(8).enumerated() { w.put(b, at: i) }
        return w.bytes
    }

    /// Block 0 of the balance service.
    public static func encodeBalance(_ yen: Int) -> [UInt8] {
        var w = BlockWriter()
        w.put32LE(UInt32(clamping: yen), at: 0)
        return w.bytes
    }

    /// Decodes history blocks, newest first: empty slots skipped, bad records kept as malformed entries.
    public static func decodeHistory(_ blocks: [[UInt8]]) -> [HistoryEntry] {
        return assembleHistory(historySlots(blocks, HistoryRecord.decode), balance: \.balance) { r, older in
            let (kind, amount): (TransactionKind, Int?) =
                if let (k, s) = sign(r.type) { (k, s * r.amount) } else { (.other, older.map { r.balance - $0 }) }
            return Transaction(date: r.date, kind: kind, amount: amount, balance: r.balance, sequence: r.sequence,
                               type: CodeName(Int(r.type), typeName(r.type)))
        }
    }

    /// Builds the purse from the blocks read (nil = not read); bad blocks become issues.
    public static func purse(system: SystemCode = .common, number: [UInt8]?, balance: [UInt8]?, points pointBlocks: [[UInt8]]?, history: [[UInt8]]?) -> Purse {
        var p = Purse(profile: .nanaco, system: system)
        if let number {
            do throws(CardDataError) { p.number = groupedHex(try Block(number, "nanaco number (0x558B)").bytes[0..<8], separator: "-") } catch {
                p.issues.append(ServiceIssue(service: numberService, content: .number, problem: .unreadable(error.reason)))
            }
        }
        if let balance {
            do throws(CardDataError) { p.balance = Int(try Block(balance, "nanaco balance (0x5597)").uint32LE(0)) } catch {
                p.issues.append(balanceIssue(balanceService, error))
            }
        }
        if let pointBlocks {
            do throws(CardDataError) { p.points = try points(pointBlocks) } catch {
                p.issues.append(ServiceIssue(service: pointsService, content: .points, problem: .unreadable(error.reason)))
            }
        }
        if let history {
            p.history = decodeHistory(history)
            crossCheck(&p)
        }
        return p
    }
}
