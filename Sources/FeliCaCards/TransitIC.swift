import FeliCa

/// The transit IC layout ("Cybernetics" format) shared by Suica, PASMO, ICOCA and the
/// other interoperable cards, also used under IruCa, PASPY and SAPICA's own system codes.
/// Layouts and code tables: Docs/card-layouts.md, "Transit IC".
public enum TransitIC {
    /// System codes that carry this layout.
    public static let systemCodes: [SystemCode] = [0x0003, 0x80DE, 0x8592, 0x865E]
    /// Card attributes: type, region, balance, transaction counter (1 block).
    public static let attributeService: ServiceCode = 0x008B
    /// Transaction history, cyclic, newest in block 0 (20 blocks).
    public static let historyService: ServiceCode = 0x090F
    /// Gate entry/exit log (3 blocks).
    public static let gateLogService: ServiceCode = 0x108F
    /// Pending "entered, not yet exited" record (2 blocks).
    public static let pendingEntryService: ServiceCode = 0x10CB
    /// Blocks of history read.
    public static let historyBlocks = 20
    /// Blocks of the gate log.
    public static let gateLogBlocks = 3
    /// Blocks of the pending entry.
    public static let pendingEntryBlocks = 2

    /// What ``CardReader`` reads at each depth, and how it decodes. At balance depth the
    /// newest history record comes along for the cross-check with 0x008B.
    public static let layout = PurseLayout(
        profile: .transitIC, placement: .ownSystem(systemCodes), presence: attributeService,
        services: [
            ServiceRead(attributeService, .balance, balance: 1, history: 1),
            ServiceRead(historyService, .history, balance: 1, history: historyBlocks),
            ServiceRead(gateLogService, .gateLog, balance: 0, history: gateLogBlocks, optional: true),
            ServiceRead(pendingEntryService, .pendingEntry, balance: 0, history: pendingEntryBlocks, optional: true),
        ]
    ) { b, c in
        purse(system: c.system, attributes: b.first(attributeService), history: b[historyService], gateLog: b[gateLogService],
              pendingEntry: b[pendingEntryService], includeHistory: c.depth == .history, stations: c.stations)
    }

    // MARK: - Code tables

    /// Console (terminal) types.
    public static func consoleName(_ code: UInt8) -> String? {
        switch code {
        case 0x03: "fare adjustment machine"
        case 0x05: "bus"
        case 0x07: "ticket vending machine"
        case 0x08: "ticket machine"
        case 0x09: "charging machine"
        case 0x12: "ticket vending machine (ticket issued)"
        case 0x16: "ticket gate"
        case 0x17: "simple ticket gate"
        case 0x18: "window terminal"
        case 0x1A: "gate terminal"
        case 0x1B: "mobile phone"
        case 0x1C: "connection adjustment machine"
        case 0x1D: "transfer gate"
        case 0x1F: "bus charging machine"
        case 0x46: "VIEW ALTTE"
        case 0x48: "point exchange"
        case 0xC7: "shop terminal"
        case 0xC8: "vending machine"
        default: nil
        }
    }

    /// Process types, after masking bit 7 (paid partly in cash).
    public static func processName(_ code: UInt8) -> String? {
        switch code {
        case 0x01: "fare"
        case 0x02: "charge"
        case 0x03: "ticket purchase"
        case 0x04: "fare adjustment"
        case 0x05: "adjustment at exit"
        case 0x06: "window exit"
        case 0x07: "new issue"
        case 0x08: "deduction at window"
        case 0x0D: "bus (PiTaPa)"
        case 0x0F: "bus (IruCa)"
        case 0x11: "reissue"
        case 0x13: "payment (bus)"
        case 0x14, 0x15: "auto-charge"
        case 0x1F: "bus charge"
        case 0x23, 0x24, 0x25: "ticket purchase (bus/tram)"
        case 0x46: "product sale"
        case 0x48: "point exchange"
        case 0x49: "product sale charge"
        case 0x4A, 0x4B: "product sale cancel"
        default: nil
        }
    }

    /// The JSON `type` of a process: rides are `transit`, charges `charge`, and so on.
    public static func kind(ofProcess code: UInt8) -> TransactionKind {
        switch code {
        case 0x01, 0x04, 0x05, 0x06, 0x0D, 0x0F, 0x13: .transit
        case 0x02, 0x14, 0x15, 0x1F, 0x49: .charge
        case 0x03, 0x23, 0x24, 0x25, 0x46: .purchase
        case 0x4A, 0x4B: .refund
        case 0x48: .points
        case 0x11: .transfer
        default: .other
        }
    }

    /// Consoles whose records carry a sale time in bytes 6-7 instead of stations.
    static func isSale(console: UInt8) -> Bool { console == 0xC7 || console == 0xC8 }
    /// Consoles whose records carry a bus operator/line and stop instead of stations.
    static func isBus(console: UInt8) -> Bool { console == 0x05 }

    // MARK: - Dates

    /// `year-2000 (7 bits) | month (4) | day (5)`, big-endian; 0 = empty.
    static func date(_ v: UInt16, _ what: String) throws(CardDataError) -> CardDate {
        try CardDate(year: 2000 + Int(v >> 9), month: Int(v >> 5 & 0xF), day: Int(v & 0x1F), what)
    }

    static func packDate(_ d: CardDate) -> UInt16 {
        UInt16((d.year - 2000) & 0x7F) << 9 | UInt16(d.month & 0xF) << 5 | UInt16(d.day & 0x1F)
    }

    /// Two BCD bytes `HH MM`.
    static func bcdTime(_ hh: UInt8, _ mm: UInt8, _ what: String) throws(CardDataError) -> (Int, Int) {
        for b in [hh, mm] where b >> 4 > 9 || b & 0xF > 9 {
            throw CardDataError(.invalidField, "\(what): \(hexCode(Int(b))) is not a BCD number")
        }
        return (Int(hh >> 4) * 10 + Int(hh & 0xF), Int(mm >> 4) * 10 + Int(mm & 0xF))
    }

    static func bcd(_ v: Int) -> UInt8 { UInt8((v / 10) << 4 | v % 10) }

    // MARK: - 0x008B attributes

    /// Block 0 of 0x008B.
    ///
    /// Byte 8 is read as two nibbles, card type (high) and region (low). One project reads
    /// bit flags there instead. We follow the nibble reading because the independent
    /// decoders other than that one agree on it, and because nothing else depends on it:
    /// balance and counter sit in other bytes, and both nibbles are kept as numbers, so a
    /// flag reading can still be derived from the output.
    public struct Attributes: Hashable, Sendable {
        /// Byte 8, high nibble.
        public var cardType: Int
        /// Byte 8, low nibble: region of the last payment.
        public var region: Int
        /// Bytes 11-12, little-endian, yen.
        public var balance: Int
        /// Bytes 14-15, big-endian.
        public var transactionCounter: Int

        public init(cardType: Int, region: Int, balance: Int, transactionCounter: Int) {
            self.cardType = cardType; self.region = region; self.balance = balance; self.transactionCounter = transactionCounter
        }

        public init(block bytes: [UInt8]) throws(CardDataError) {
            let b = try Block(bytes, "attributes (0x008B)")
            cardType = Int(b[8] >> 4)
            region = Int(b[8] & 0xF)
            balance = Int(b.uint16LE(11))
            transactionCounter = Int(b.uint16BE(14))
        }

        /// The block(s) this record is stored as (the inverse of decode).
        public func encode() -> [UInt8] {
            var w = BlockWriter()
            w.put(UInt8(cardType & 0xF) << 4 | UInt8(region & 0xF), at: 8)
            w.put16LE(UInt16(clamping: balance), at: 11)
            w.put16BE(UInt16(clamping: transactionCounter), at: 14)
            return w.bytes
        }
    }

    // MARK: - 0x090F history record

    /// One 0x090F record as stored.
    public struct HistoryRecord: Hashable, Sendable {
        /// Bytes 6-9, which mean different things by console type.
        public enum Route: Hashable, Sendable {
            /// Rail and most machines: entry line/station (6-7), exit line/station (8-9).
            case rail(entryLine: UInt8, entryStation: UInt8, exitLine: UInt8, exitStation: UInt8)
            /// Bus (console 0x05): operator/line (6-7) and stop (8-9), big-endian.
            case bus(operatorLine: UInt16, stop: UInt16)
            /// Product sale (console 0xC7/0xC8): sale time (6-7); bytes 8-9 kept as stored.
            case sale(hour: Int, minute: Int, bytes8to9: UInt16)
        }

        /// Byte 0: terminal type.
        public var console: UInt8
        /// Process byte as stored (bit 7 = paid partly in cash).
        public var process: UInt8
        /// Byte 2.
        public var payment: UInt8
        /// Byte 3.
        public var entryExit: UInt8
        /// Date only; sale records add their time in ``route``.
        public var date: CardDate
        /// Bytes 6-9 by console type.
        public var route: Route
        /// Bytes 10-11, little-endian: balance after.
        public var balance: Int
        /// Bytes 12-14, big-endian.
        public var sequence: Int
        /// Byte 15: entry area bits 7-6, exit area bits 5-4, low nibble as stored.
        public var region: UInt8

        public init(console: UInt8, process: UInt8, payment: UInt8 = 0, entryExit: UInt8 = 0, date: CardDate, route: Route,
                    balance: Int, sequence: Int, region: UInt8 = 0) {
            self.console = console; self.process = process; self.payment = payment; self.entryExit = entryExit
            self.date = date; self.route = route; self.balance = balance; self.sequence = sequence; self.region = region
        }

        /// Area of the entry station (byte 15 bits 7-6).
        public var entryArea: Int { Int(region >> 6) }
        /// Area of the exit station (byte 15 bits 5-4).
        public var exitArea: Int { Int(region >> 4 & 0x3) }

        /// Decodes one block; nil for an empty slot (date 0).
        public static func decode(_ bytes: [UInt8]) throws(CardDataError) -> HistoryRecord? {
            let b = try Block(bytes, "history record (0x090F)")
            let rawDate = b.uint16BE(4)
            if rawDate == 0 { return nil }
            let date = try TransitIC.date(rawDate, "history record date")
            let route: Route
            if isSale(console: b[0]) {
                let t = b.uint16BE(6)
                let hour = Int(t >> 11), minute = Int(t >> 5 & 0x3F)
                _ = try CardDate(year: date.year, month: date.month, day: date.day, hour: hour, minute: minute, "sale time")
                route = .sale(hour: hour, minute: minute, bytes8to9: b.uint16BE(8))
            } else if isBus(console: b[0]) {
                route = .bus(operatorLine: b.uint16BE(6), stop: b.uint16BE(8))
            } else {
                route = .rail(entryLine: b[6], entryStation: b[7], exitLine: b[8], exitStation: b[9])
            }
            return HistoryRecord(console: b[0], process: b[1], payment: b[2], entryExit: b[3], date: date, route: route,
                                 balance: Int(b.uint16LE(10)), sequence: Int(b.uint24BE(12)), region: b[15])
        }

        /// The block(s) this record is stored as (the inverse of decode).
        public func encode() -> [UInt8] {
            var w = BlockWriter()
            w.put(console, at: 0); w.put(process, at: 1); w.put(payment, at: 2); w.put(entryExit, at: 3)
            w.put16BE(TransitIC.packDate(date), at: 4)
            switch route {
            case .rail(let el, let es, let xl, let xs):
                w.put(el, at: 6); w.put(es, at: 7); w.put(xl, at: 8); w.put(xs, at: 9)
            case .bus(let line, let stop):
                w.put16BE(line, at: 6); w.put16BE(stop, at: 8)
            case .sale(let h, let m, let rest):
                w.put16BE(UInt16(h & 0x1F) << 11 | UInt16(m & 0x3F) << 5, at: 6); w.put16BE(rest, at: 8)
            }
            w.put16LE(UInt16(clamping: balance), at: 10)
            w.put24BE(UInt32(clamping: sequence), at: 12)
            w.put(region, at: 15)
            return w.bytes
        }

        /// The transaction this record describes; `amount` comes from the caller (the
        /// card stores none).
        func transaction(amount: Int?, stations: StationTable?) -> Transaction {
            let processCode = process & 0x7F
            var details = TransitDetails(
                console: CodeName(Int(console), consoleName(console)),
                process: CodeName(Int(processCode), processName(processCode)),
                paidPartlyInCash: process & 0x80 != 0, paymentType: Int(payment), entryExitType: Int(entryExit),
                entry: nil, exit: nil, bus: nil, region: region)
            var when = date
            switch route {
            case .rail(let el, let es, let xl, let xs):
                if el != 0 || es != 0 { details.entry = StationRef(area: entryArea, line: Int(el), station: Int(es), table: stations) }
                if xl != 0 || xs != 0 { details.exit = StationRef(area: exitArea, line: Int(xl), station: Int(xs), table: stations) }
            case .bus(let line, let stop):
                details.bus = (Int(line), Int(stop))
            case .sale(let h, let m, _):
                // Validated in decode; a record built in code with a bad time keeps the date.
                when = (try? CardDate(year: date.year, month: date.month, day: date.day, hour: h, minute: m)) ?? date
            }
            return Transaction(date: when, kind: kind(ofProcess: processCode), amount: amount, balance: balance,
                               sequence: sequence, type: details.process, transit: details)
        }
    }

    // MARK: - 0x108F gate log

    /// One 0x108F block.
    public struct GateRecord: Hashable, Sendable {
        /// Byte 0: bit 7 set = entry.
        public var kind: UInt8
        /// Byte 2.
        public var line: UInt8
        /// Byte 3.
        public var station: UInt8
        /// Bytes 4-5.
        public var gate: UInt16
        /// Bytes 6-7 date, 8-9 BCD time.
        public var date: CardDate
        /// Bytes 10-11, little-endian.
        public var fare: Int

        public init(kind: UInt8, line: UInt8, station: UInt8, gate: UInt16, date: CardDate, fare: Int) {
            self.kind = kind; self.line = line; self.station = station; self.gate = gate; self.date = date; self.fare = fare
        }

        /// nil for an empty slot (date 0).
        public static func decode(_ bytes: [UInt8]) throws(CardDataError) -> GateRecord? {
            let b = try Block(bytes, "gate log record (0x108F)")
            let rawDate = b.uint16BE(6)
            if rawDate == 0 { return nil }
            let day = try TransitIC.date(rawDate, "gate log date")
            let (h, m) = try bcdTime(b[8], b[9], "gate log time")
            let date = try CardDate(year: day.year, month: day.month, day: day.day, hour: h, minute: m, "gate log time")
            return GateRecord(kind: b[0], line: b[2], station: b[3], gate: b.uint16BE(4), date: date, fare: Int(b.uint16LE(10)))
        }

        /// The block(s) this record is stored as (the inverse of decode).
        public func encode() -> [UInt8] {
            var w = BlockWriter()
            w.put(kind, at: 0); w.put(line, at: 2); w.put(station, at: 3); w.put16BE(gate, at: 4)
            w.put16BE(TransitIC.packDate(date), at: 6)
            w.put(bcd(date.time?.hour ?? 0), at: 8); w.put(bcd(date.time?.minute ?? 0), at: 9)
            w.put16LE(UInt16(clamping: fare), at: 10)
            return w.bytes
        }
    }

    // MARK: - 0x10CB pending entry

    /// Decodes the two 0x10CB blocks; nil when nothing is pending (date 0).
    public static func decodePendingEntry(_ blocks: [[UInt8]], stations: StationTable?) throws(CardDataError) -> PendingEntry? {
        guard blocks.count == 2 else {
            throw CardDataError(.blockLength, "pending entry (0x10CB): \(blocks.count) blocks, expected 2")
        }
        let b0 = try Block(blocks[0], "pending entry (0x10CB) block 0")
        let b1 = try Block(blocks[1], "pending entry (0x10CB) block 1")
        let rawDate = b1.uint16BE(0)
        if rawDate == 0 { return nil }
        let day = try date(rawDate, "pending entry date")
        let (h, m) = try bcdTime(b1[2], b1[3], "pending entry time")
        let when = try CardDate(year: day.year, month: day.month, day: day.day, hour: h, minute: m, "pending entry time")
        return PendingEntry(station: StationRef(area: nil, line: Int(b0[0]), station: Int(b0[1]), table: stations), date: when)
    }

    /// Encodes a pending entry into the two 0x10CB blocks (all zero for none).
    public static func encodePendingEntry(line: UInt8, station: UInt8, date: CardDate?) -> [[UInt8]] {
        guard let date else { return [[UInt8](repeating: 0, count: 16), [UInt8](repeating: 0, count: 16)] }
        var b0 = BlockWriter(), b1 = BlockWriter()
        b0.put(line, at: 0); b0.put(station, at: 1)
        b1.put16BE(packDate(date), at: 0)
        b1.put(bcd(date.time?.hour ?? 0), at: 2); b1.put(bcd(date.time?.minute ?? 0), at: 3)
        b1.put(line, at: 4); b1.put(station, at: 5)
        return [b0.bytes, b1.bytes]
    }

    // MARK: - Whole purse

    /// Decodes history blocks (newest first) into entries: empty slots skipped, bad
    /// records kept as ``HistoryEntry/malformed(slot:error:raw:)``, and each amount taken
    /// as the balance minus the next older record's (nil for the oldest, or when the older
    /// record is malformed). The one exception is the card's issue: a record of process 07
    /// (new issue) with sequence number 1 is the first the card ever wrote, and a card holds
    /// nothing before it is issued, so its amount is its balance, the charge it was sold with
    /// (FareBot shows the same record as a fare of minus that).
    public static func decodeHistory(_ blocks: [[UInt8]], stations: StationTable? = nil) -> [HistoryEntry] {
        var decoded: [(slot: Int, result: Result<HistoryRecord, CardDataError>)] = []
        for (i, block) in blocks.enumerated() {
            do throws(CardDataError) {
                if let r = try HistoryRecord.decode(block) { decoded.append((i, .success(r))) }
            } catch {
                decoded.append((i, .failure(error)))
            }
        }
        var out: [HistoryEntry] = []
        for (k, d) in decoded.enumerated() {
            switch d.result {
            case .failure(let e):
                out.append(.malformed(slot: d.slot, error: e, raw: blocks[d.slot]))
            case .success(let r):
                var amount: Int? = nil
                if k + 1 < decoded.count, case .success(let older) = decoded[k + 1].result {
                    amount = r.balance - older.balance
                } else if r.process & 0x7F == 0x07 && r.sequence == 1 {
                    amount = r.balance
                }
                out.append(.transaction(r.transaction(amount: amount, stations: stations)))
            }
        }
        return out
    }

    /// Decodes gate-log blocks, newest first, empty slots skipped.
    public static func decodeGateLog(_ blocks: [[UInt8]], stations: StationTable? = nil) -> [GateLogEntry] {
        var out: [GateLogEntry] = []
        for (i, block) in blocks.enumerated() {
            do throws(CardDataError) {
                guard let g = try GateRecord.decode(block) else { continue }
                out.append(.event(GateEvent(isEntry: g.kind & 0x80 != 0, kindCode: Int(g.kind),
                                            station: StationRef(area: nil, line: Int(g.line), station: Int(g.station), table: stations),
                                            gate: Int(g.gate), date: g.date, fare: g.fare)))
            } catch {
                out.append(.malformed(slot: i, error: error, raw: block))
            }
        }
        return out
    }

    /// Builds the purse from whatever services were read (nil = not read).
    public static func purse(system: SystemCode, attributes: [UInt8]?, history: [[UInt8]]?, gateLog: [[UInt8]]? = nil,
                             pendingEntry: [[UInt8]]? = nil, includeHistory: Bool = true, stations: StationTable? = nil) -> Purse {
        var purse = Purse(profile: .transitIC, system: system)
        if let attributes {
            do throws(CardDataError) {
                let a = try Attributes(block: attributes)
                purse.balance = a.balance
                purse.transit = TransitInfo(cardType: a.cardType, region: a.region, transactionCounter: a.transactionCounter)
            } catch {
                purse.issues.append(ServiceIssue(service: attributeService, content: .balance, problem: .unreadable(error.reason)))
            }
        }
        if let history {
            let entries = decodeHistory(history, stations: stations)
            purse.history = includeHistory ? entries : nil
            // The card keeps the balance twice: 0x008B and the newest history record.
            if let newest = entries.first?.transaction, let balance = purse.balance, newest.balance != balance {
                purse.notes.append("balance mismatch: attributes (0x008B) say ¥\(balance), the newest history record (sequence \(newest.sequence)) says ¥\(newest.balance)")
            }
            if purse.balance == nil, let newest = entries.first?.transaction {
                purse.balance = newest.balance
                purse.notes.append("balance taken from the newest history record (0x008B not read)")
            }
        }
        if let gateLog {
            if purse.transit == nil { purse.transit = TransitInfo(cardType: 0, region: 0, transactionCounter: 0) }
            purse.transit?.gateLog = decodeGateLog(gateLog, stations: stations)
        }
        if let pendingEntry {
            do throws(CardDataError) {
                let p = try decodePendingEntry(pendingEntry, stations: stations)
                if purse.transit == nil { purse.transit = TransitInfo(cardType: 0, region: 0, transactionCounter: 0) }
                purse.transit?.pendingEntry = p
            } catch {
                purse.issues.append(ServiceIssue(service: pendingEntryService, content: .pendingEntry, problem: .unreadable(error.reason)))
            }
        }
        return purse
    }
}

extension StationRef {
    init(area: Int?, line: Int, station: Int, table: StationTable?) {
        let info = table?.station(area: area, line: line, station: station)
        self.init(area: area, line: line, station: station, name: info?.name, lineName: info?.line, company: info?.company)
    }
}
