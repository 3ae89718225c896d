import FeliCa

/// OKICA (Okinawa: the Yui Rail monorail and the island's buses), in system 0x8FC1. Read as
/// TRETJapanNFCReader reads it (`Sources/FeliCa/Okica/`; Docs/cards.md, "OKICA"): the
/// history is kept like a transit IC card's, and the card keeps no balance block, so the
/// balance is the newest record's.
///
///     028F block n   U0 U1 U2 U3 DD DD EL ES XL XS BB BB .. QQ QQ ..
///                    usage code, date (as transit IC), entry and exit line/station,
///                    balance after (LE), sequence number (BE)
public enum OKICA {
    /// The OKICA system.
    public static let system: SystemCode = 0x8FC1
    /// The history, newest first (20 blocks).
    public static let historyService: ServiceCode = 0x028F
    /// The gate entry/exit log (3 blocks; not decoded: no public layout).
    public static let gateLogService: ServiceCode = 0x050F
    /// The pending SF entry (2 blocks; not decoded: no public layout).
    public static let pendingEntryService: ServiceCode = 0x060B
    /// Blocks of history the card keeps.
    public static let historyBlocks = 20

    /// What ``CardReader`` reads at each depth. The balance needs the newest record (and the
    /// one before it gives that record's amount), so a balance reading reads two blocks.
    public static let layout = PurseLayout(
        profile: .okica, placement: .ownSystem([system]), presence: historyService,
        services: [ServiceRead(historyService, .history, balance: 2, history: historyBlocks)]
    ) { b, c in
        purse(system: c.system, history: b[historyService], depth: c.depth)
    }

    /// The line code of the Yui Rail stations in records (byte 6 or 8).
    public static let yuiRailLine: UInt8 = 0xDC
    /// The line code of bus operators in records.
    public static let busLine: UInt8 = 0x0B

    /// Yui Rail stations by station byte, from Naha Airport (0x01) north, every second code.
    static let yuiRailStations: [UInt8: String] = [
        0x01: "Naha Airport", 0x05: "Akamine", 0x07: "Oroku", 0x09: "Onoyama Koen", 0x0B: "Tsubogawa",
        0x0D: "Asahibashi", 0x0F: "Kencho-mae", 0x11: "Miebashi", 0x13: "Makishi", 0x15: "Asato",
        0x17: "Omoromachi", 0x19: "Furujima", 0x1B: "Shiritsu Byoin-mae", 0x1D: "Gibo", 0x1F: "Shuri",
        0x21: "Ishimine", 0x23: "Kyozuka", 0x25: "Urasoe-Maeda", 0x27: "Tedako-Uranishi",
    ]
    /// Bus operators by station byte under line 0x0B.
    static let busOperators: [UInt8: String] = [0x01: "Naha Bus", 0x02: "Ryukyu Bus", 0x03: "Okinawa Bus", 0x04: "Toyo Bus"]

    /// A place in a record: a Yui Rail station or a bus operator by name, else the codes.
    public static func place(line: UInt8, station: UInt8) -> String {
        switch line {
        case yuiRailLine: yuiRailStations[station].map { "Yui Rail \($0)" } ?? "Yui Rail station \(hexCode(Int(station)))"
        case busLine: busOperators[station] ?? "bus operator \(hexCode(Int(station)))"
        default: "line \(hexCode(Int(line))) station \(hexCode(Int(station)))"
        }
    }

    /// The usage codes TRETJapanNFCReader names, with what each means. TRET compares bytes
    /// 0, 1 and 3 (its expression drops byte 2), so byte 2 is left out here too.
    static func usage(_ b0: UInt8, _ b1: UInt8, _ b3: UInt8) -> (name: String, kind: TransactionKind)? {
        switch (b0, b1, b3) {
        case (0x16, 0x01, 0x02): ("Yui Rail ride", .transit)
        case (0x08, 0x02, 0x00): ("Yui Rail charge", .charge)
        case (0x08, 0x48, 0x00): ("points to balance", .points)
        case (0x05, 0x1F, 0x00): ("bus charge", .charge)
        case (0x05, 0x0F, 0x0F): ("bus ride", .transit)
        case (0x08, 0x07, 0x00): ("new card issued", .other)
        case (0x1F, 0x1F, 0x00): ("charge machine", .charge)
        default: nil
        }
    }

    /// One 028F record.
    public struct HistoryRecord: Hashable, Sendable {
        /// Bytes 0-3 as stored.
        public var usage: [UInt8]
        /// Bytes 4-5: packed as on transit IC cards.
        public var date: CardDate
        /// Bytes 6-7, 8-9: line and station of entry and exit.
        public var entry: (line: UInt8, station: UInt8)
        public var exit: (line: UInt8, station: UInt8)
        /// Bytes 10-11, LE, yen.
        public var balance: Int
        /// Bytes 13-14, BE.
        public var sequence: Int

        public init(usage: [UInt8], date: CardDate, entry: (line: UInt8, station: UInt8), exit: (line: UInt8, station: UInt8), balance: Int, sequence: Int) {
            self.usage = usage; self.date = date; self.entry = entry; self.exit = exit; self.balance = balance; self.sequence = sequence
        }

        public static func == (a: HistoryRecord, b: HistoryRecord) -> Bool { a.encode() == b.encode() }
        public func hash(into h: inout Hasher) { h.combine(encode()) }

        /// Nil for an empty slot (date 0).
        public static func decode(_ raw: [UInt8]) throws(CardDataError) -> HistoryRecord? {
            let b = try Block(raw, "OKICA history record")
            let packed = b.uint16BE(4)
            if packed == 0 { return nil }
            let date = try CardDate(year: 2000 + Int(packed >> 9), month: Int(packed >> 5 & 0xF), day: Int(packed & 0x1F), "OKICA history date")
            return HistoryRecord(usage: Array(b.bytes[0..<4]), date: date, entry: (b.bytes[6], b.bytes[7]), exit: (b.bytes[8], b.bytes[9]),
                                 balance: Int(b.uint16LE(10)), sequence: Int(b.uint16BE(13)))
        }

        /// The 16-byte block.
        public func encode() -> [UInt8] {
            var w = BlockWriter()
            for i in 0..<4 { w.put(usage[i], at: i) }
            w.put16BE(UInt16((date.year - 2000) << 9 | date.month << 5 | date.day), at: 4)
            w.put(entry.line, at: 6); w.put(entry.station, at: 7)
            w.put(exit.line, at: 8); w.put(exit.station, at: 9)
            w.put16LE(UInt16(clamping: balance), at: 10)
            w.put16BE(UInt16(clamping: sequence), at: 13)
            return w.bytes
        }
    }

    /// The history, newest first; the amount of each record is its balance minus the next
    /// older record's (the card stores none), unknown for the oldest.
    public static func decodeHistory(_ blocks: [[UInt8]]) -> [HistoryEntry] {
        assembleHistory(historySlots(blocks, HistoryRecord.decode), balance: \.balance) { r, older in
            let u = usage(r.usage[0], r.usage[1], r.usage[3])
            let code = Int(r.usage[0]) << 24 | Int(r.usage[1]) << 16 | Int(r.usage[2]) << 8 | Int(r.usage[3])
            let places = "\(place(line: r.entry.line, station: r.entry.station))"
                + (r.exit == (0, 0) ? "" : " → \(place(line: r.exit.line, station: r.exit.station))")
            return Transaction(date: r.date, kind: u?.kind ?? .other, amount: older.map { r.balance - $0 }, balance: r.balance,
                               sequence: r.sequence, type: CodeName(code, u?.name), terminal: places)
        }
    }

    /// Builds the purse from the history blocks read (nil = not read).
    public static func purse(system: SystemCode = OKICA.system, history: [[UInt8]]?, depth: CardReader.Depth) -> Purse {
        var p = Purse(profile: .okica, system: system)
        guard let history else { return p }
        let entries = decodeHistory(history)
        if let newest = entries.first {
            if let t = newest.transaction { p.balance = t.balance } else {
                p.issues.append(ServiceIssue(service: historyService, content: .history, problem: .unreadable("the newest record does not decode")))
            }
        }
        if entries.isEmpty { p.notes.append("the history is empty, so the balance is not known (OKICA keeps it only in its records)") }
        if depth == .history { p.history = entries }
        return p
    }
}
