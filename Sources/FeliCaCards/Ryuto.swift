import FeliCa

/// Ryuto (りゅーと, Niigata Kotsu's buses), in system 0x8B5D. Read as TRETJapanNFCReader
/// reads it (`Sources/FeliCa/Ryuto/`; Docs/cards.md, "Ryuto"): a history of rides and
/// charges with the boarding and alighting times; the balance is the newest record's.
///
///     898F block n   DD DD BT BT/AT AT BS BS AS AS TT CC CC .. .. BB BB
///                    date (as transit IC), boarding and alighting time (packed),
///                    boarding and alighting stop, type (52 ride, 55 charge),
///                    amount (BE, unsigned), balance after (BE)
public enum Ryuto {
    /// The Ryuto system.
    public static let system: SystemCode = 0x8B5D
    /// The history, newest first.
    public static let historyService: ServiceCode = 0x898F
    /// Blocks of history read (TRET reads 20).
    public static let historyBlocks = 20

    /// What ``CardReader`` reads at each depth: the balance is the newest record's.
    public static let layout = PurseLayout(
        profile: .ryuto, placement: .ownSystem([system]), presence: historyService,
        services: [ServiceRead(historyService, .history, balance: 1, history: historyBlocks)]
    ) { b, c in
        purse(system: c.system, history: b[historyService], depth: c.depth)
    }

    /// Name of a type code (byte 9); nil for one TRET does not name.
    public static func typeName(_ t: UInt8) -> String? {
        switch t {
        case 0x52: "bus ride"
        case 0x55: "charge"
        default: nil
        }
    }

    /// One 898F record.
    public struct HistoryRecord: Hashable, Sendable {
        /// Bytes 0-4: the day and the alighting time (the boarding time is ``boarding``).
        public var date: CardDate
        /// Boarding time: hour and minute.
        public var boarding: (hour: Int, minute: Int)
        /// Bytes 5-6 and 7-8 as stored.
        public var boardingStop: UInt16
        public var alightingStop: UInt16
        /// Byte 9.
        public var type: UInt8
        /// Bytes 10-11, BE, yen, unsigned (the type gives the sign).
        public var amount: Int
        /// Bytes 14-15, BE, yen.
        public var balance: Int

        public init(date: CardDate, boarding: (hour: Int, minute: Int), boardingStop: UInt16, alightingStop: UInt16, type: UInt8, amount: Int, balance: Int) {
            self.date = date; self.boarding = boarding; self.boardingStop = boardingStop; self.alightingStop = alightingStop
            self.type = type; self.amount = amount; self.balance = balance
        }

        public static func == (a: HistoryRecord, b: HistoryRecord) -> Bool { a.encode() == b.encode() }
        public func hash(into h: inout Hasher) { h.combine(encode()) }

        /// Nil for an empty slot (all zeros).
        public static func decode(_ raw: [UInt8]) throws(CardDataError) -> HistoryRecord? {
            let b = try Block(raw, "Ryuto history record")
            if b.isZero { return nil }
            let x = b.bytes
            let bh = Int(x[2] >> 2 & 0x1F), bm = Int(x[2] & 0x3) << 4 | Int(x[3] >> 4)
            let ah = Int(x[3] & 0x7) << 2 | Int(x[4] >> 6), am = Int(x[4] & 0x3F)
            guard bh < 24, bm < 60 else {
                throw CardDataError(.invalidDate, "Ryuto history boarding time: \(bh):\(bm) is not a time of day")
            }
            let date = try CardDate(year: 2000 + Int(x[0] >> 1), month: Int(x[0] & 1) << 3 | Int(x[1] >> 5), day: Int(x[1] & 0x1F),
                                    hour: ah, minute: am, "Ryuto history date")
            return HistoryRecord(date: date, boarding: (bh, bm), boardingStop: b.uint16BE(5), alightingStop: b.uint16BE(7),
                                 type: x[9], amount: Int(b.uint16BE(10)), balance: Int(b.uint16BE(14)))
        }

        /// The 16-byte block.
        public func encode() -> [UInt8] {
            var w = BlockWriter()
            let y = date.year - 2000, m = date.month
            let ah = date.time?.hour ?? 0, am = date.time?.minute ?? 0
            w.put(UInt8(y << 1 | m >> 3), at: 0)
            w.put(UInt8((m & 0x7) << 5 | date.day), at: 1)
            w.put(UInt8(boarding.hour << 2 | boarding.minute >> 4), at: 2)
            w.put(UInt8((boarding.minute & 0xF) << 4 | ah >> 2), at: 3)
            w.put(UInt8((ah & 0x3) << 6 | am), at: 4)
            w.put16BE(boardingStop, at: 5)
            w.put16BE(alightingStop, at: 7)
            w.put(type, at: 9)
            w.put16BE(UInt16(clamping: amount), at: 10)
            w.put16BE(UInt16(clamping: balance), at: 14)
            return w.bytes
        }
    }

    /// The history, newest first.
    public static func decodeHistory(_ blocks: [[UInt8]]) -> [HistoryEntry] {
        assembleHistory(historySlots(blocks, HistoryRecord.decode), balance: \.balance) { r, older in
            let (kind, amount): (TransactionKind, Int?) = switch r.type {
            case 0x52: (.transit, -r.amount)
            case 0x55: (.charge, r.amount)
            default: (.other, older.map { r.balance - $0 })
            }
            let stops = "stop \(hexCode(Int(r.boardingStop), digits: 4)) (boarded \(pad2(r.boarding.hour)):\(pad2(r.boarding.minute)))"
                + (r.type == 0x52 ? " → stop \(hexCode(Int(r.alightingStop), digits: 4))" : "")
            // The card numbers no record.
            return Transaction(date: r.date, kind: kind, amount: amount, balance: r.balance, sequence: 0,
                               type: CodeName(Int(r.type), typeName(r.type)), terminal: stops)
        }
    }

    /// Builds the purse from the history blocks read (nil = not read).
    public static func purse(system: SystemCode = Ryuto.system, history: [[UInt8]]?, depth: CardReader.Depth) -> Purse {
        var p = Purse(profile: .ryuto, system: system)
        guard let history else { return p }
        let entries = decodeHistory(history)
        if let newest = entries.first {
            if let t = newest.transaction { p.balance = t.balance } else {
                p.issues.append(ServiceIssue(service: historyService, content: .history, problem: .unreadable("the newest record does not decode")))
            }
        } else {
            p.notes.append("the history is empty, so the balance is not known (Ryuto keeps it only in its records)")
        }
        if depth == .history { p.history = entries }
        return p
    }
}
