import FeliCa

/// WAON in the common area (0xFE00).
public enum WAON {
    /// Service holding the card number (block 0).
    public static let numberService: ServiceCode = 0x684F
    /// Service holding the balance (block 0).
    public static let balanceService: ServiceCode = 0x6817
    /// Service holding the points.
    public static let pointsService: ServiceCode = 0x684B
    /// Service holding the transaction history.
    public static let historyService: ServiceCode = 0x680B
    /// Three records of two blocks. The service exposes 9 blocks; the records are the
    /// pairs 0-1, 2-3, 4-5, so only those are read.
    public static let historyBlocks = 6

    /// What ``CardReader`` reads at each depth, and how it decodes.
    public static let layout = PurseLayout(
        profile: .waon, placement: .commonArea, presence: balanceService,
        services: [
            ServiceRead(numberService, .number, balance: 1, history: 1),
            ServiceRead(balanceService, .balance, balance: 1, history: 1),
            ServiceRead(pointsService, .points, balance: 1, history: 1),
            ServiceRead(historyService, .history, balance: 0, history: historyBlocks),
        ]
    ) { b, c in
        purse(system: c.system, number: b.first(numberService), balance: b.first(balanceService), points: b.first(pointsService),
              history: b[historyService])
    }

    /// Name of a history type code; nil for a code not in the table.
    public static func typeName(_ t: UInt8) -> String? {
        switch t {
        case 0x04: "purchase"
        case 0x0C, 0x10: "charge"
        case 0x08: "return"
        case 0x18: "point download"
        case 0x1C, 0x20, 0x30: "auto-charge"
        case 0x28: "refund"
        case 0x3C: "move to new card"
        case 0x7C: "point exchange"
        default: nil
        }
    }

    /// The JSON `type` of a history type code.
    public static func kind(_ t: UInt8) -> TransactionKind {
        switch t {
        case 0x04: .purchase
        case 0x0C, 0x10, 0x1C, 0x20, 0x30: .charge
        case 0x08, 0x28: .refund
        case 0x18, 0x7C: .points
        case 0x3C: .transfer
        default: .other
        }
    }

    /// One history record: blocks A (terminal, sequence) and B (type, bit-packed date,
    /// balance, debit, credit).
    public struct HistoryRecord: Hashable, Sendable {
        /// 13 ASCII characters, trailing spaces and NULs removed.
        public var terminal: String
        /// Block A bytes 13-14; wraps at 0x10000.
        public var sequence: Int
        /// Block B byte 1.
        public var type: UInt8
        /// Minute precision, years 2005-2036.
        public var date: CardDate
        /// 18 bits: balance after.
        public var balance: Int
        /// 18 bits: money spent.
        public var debit: Int
        /// 17 bits: money added.
        public var credit: Int

        public init(terminal: String, sequence: Int, type: UInt8, date: CardDate, balance: Int, debit: Int, credit: Int) {
            self.terminal = terminal; self.sequence = sequence; self.type = type; self.date = date
            self.balance = balance; self.debit = debit; self.credit = credit
        }

        /// nil for an empty slot (block B all zero).
        public static func decode(a: [UInt8], b: [UInt8]) throws(CardDataError) -> HistoryRecord? {
            let ba = try Block(a, "WAON history block A (0x680B)")
            let bb = try Block(b, "WAON history block B (0x680B)")
            if bb.isZero { return nil }
            var terminal = ""
            for c in ba.bytes[0..<13] {
                guard c == 0 || (0x20...0x7E).contains(c) else {
                    throw CardDataError(.invalidField, "WAON history terminal code: byte \(hexCode(Int(c))) is not printable ASCII")
                }
                if c != 0 { terminal.unicodeScalars.append(Unicode.Scalar(c)) }
            }
            while terminal.hasSuffix(" ") { terminal.removeLast() }
            let x = bb.uint32BE(2)
            let date = try CardDate(year: 2005 + Int(x >> 27), month: Int(x >> 23 & 0xF), day: Int(x >> 18 & 0x1F),
                                    hour: Int(x >> 13 & 0x1F), minute: Int(x >> 7 & 0x3F), "WAON history date")
            return HistoryRecord(terminal: terminal, sequence: Int(ba.uint16BE(13)), type: bb[1], date: date,
                                 balance: Int(bb.uint24BE(5) >> 5 & 0x3FFFF),
                                 debit: Int(bb.uint24BE(7) >> 3 & 0x3FFFF),
                                 credit: Int(bb.uint24BE(9) >> 2 & 0x1FFFF))
        }

        /// The block(s) this record is stored as (the inverse of decode).
        public func encode() -> (a: [UInt8], b: [UInt8]) {
            var a = BlockWriter()
            for (i, c) in terminal.utf8.prefix(13).enumerated() { a.put(c, at: i) }
            a.put16BE(UInt16(truncatingIfNeeded: sequence), at: 13)
            var b = BlockWriter()
            b.put(type, at: 1)
            let t = date.time ?? (0, 0, 0)
            // Masked to the field widths: a year outside 2005-2036 wraps rather than traps.
            let x = UInt32((date.year - 2005) & 0x1F) << 27 | UInt32(date.month) << 23 | UInt32(date.day) << 18
                | UInt32(t.hour) << 13 | UInt32(t.minute) << 7
            b.put32BE(x, at: 2)
            b.or24BE(UInt32(balance & 0x3FFFF) << 5, at: 5)
            b.or24BE(UInt32(debit & 0x3FFFF) << 3, at: 7)
            b.or24BE(UInt32(credit & 0x1FFFF) << 2, at: 9)
            return (a.bytes, b.bytes)
        }

        var transaction: Transaction {
            Transaction(date: date, kind: kind(type), amount: credit - debit, balance: balance, sequence: sequence,
                        type: CodeName(Int(type), typeName(type)), terminal: terminal)
        }
    }

    /// How far `seq` is behind `newest` on the 16-bit ring.
    static func age(_ seq: Int, behind newest: Int) -> Int { (newest - seq) & 0xFFFF }

    /// Orders records newest first by sequence number, wrapping at 0x10000: the newest is
    /// the one every other record is less than half the ring behind.
    public static func ringOrder(_ records: [HistoryRecord]) -> [HistoryRecord] {
        guard let newest = records.first(where: { r in records.allSatisfy { age($0.sequence, behind: r.sequence) < 0x8000 } })
                ?? records.max(by: { $0.sequence < $1.sequence }) else { return [] }
        return records.sorted { age($0.sequence, behind: newest.sequence) < age($1.sequence, behind: newest.sequence) }
    }

    /// Decodes the history blocks in A/B pairs; malformed records follow the decoded ones.
    public static func decodeHistory(_ blocks: [[UInt8]]) -> [HistoryEntry] {
        var records: [HistoryRecord] = []
        var bad: [HistoryEntry] = []
        var i = 0
        while i + 1 < blocks.count {
            do throws(CardDataError) {
                if let r = try HistoryRecord.decode(a: blocks[i], b: blocks[i + 1]) { records.append(r) }
            } catch {
                bad.append(.malformed(slot: i / 2, error: error, raw: blocks[i] + blocks[i + 1]))
            }
            i += 2
        }
        return ringOrder(records).map { .transaction($0.transaction) } + bad
    }

    /// Block 0 of the number service.
    public static func encodeNumber(_ number: [UInt8]) -> [UInt8] {
        var w = BlockWriter()
        for (i, b) in number.prefix(8).enumerated() { w.put(b, at: i) }
        return w.bytes
    }

    /// Balance block: bytes 0-1 little-endian (see ``purse(system:number:balance:points:history:)``).
    public static func encodeBalance(_ yen: Int) -> [UInt8] {
        var w = BlockWriter()
        w.put16LE(UInt16(clamping: yen), at: 0)
        return w.bytes
    }

    /// Block(s) of the points service.
    public static func encodePoints(_ points: Int) -> [UInt8] {
        var w = BlockWriter()
        w.put24BE(UInt32(clamping: points), at: 0)
        return w.bytes
    }

    /// Builds the purse.
    ///
    /// Balance width is disputed (bytes 0-1 or 0-3, little-endian). We read bytes 0-1:
    /// WAON caps a balance at ¥50,000 (published terms, cards and mobile alike), which fits
    /// 16 bits, and the history keeps the balance in an 18-bit field, so bytes 2-3 carry
    /// no part of any balance the card can hold. When bytes 2-3 are not zero we say so
    /// and show what the 4-byte reading would give, rather than hide the disagreement.
    public static func purse(system: SystemCode = .common, number: [UInt8]?, balance: [UInt8]?, points pointBlock: [UInt8]?, history: [[UInt8]]?) -> Purse {
        var p = Purse(profile: .waon, system: system)
        if let number {
            do throws(CardDataError) { p.number = groupedHex(try Block(number, "WAON number (0x684F)").bytes[0..<8], separator: " ") } catch {
                p.issues.append(ServiceIssue(service: numberService, content: .number, problem: .unreadable(error.reason)))
            }
        }
        if let balance {
            do throws(CardDataError) {
                let b = try Block(balance, "WAON balance (0x6817)")
                p.balance = Int(b.uint16LE(0))
                if b[2] != 0 || b[3] != 0 {
                    p.notes.append("balance block bytes 2-3 are \(Hex.encode(b.bytes[2..<4])), not zero: read as 4 bytes the balance would be ¥\(b.uint32LE(0))")
                }
            } catch {
                p.issues.append(balanceIssue(balanceService, error))
            }
        }
        if let pointBlock {
            do throws(CardDataError) { p.points = Int(try Block(pointBlock, "WAON points (0x684B)").uint24BE(0)) } catch {
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
