import FeliCa

/// The University Co-op (大学生協) prepaid purse on Japanese student and member cards, in
/// the common area (0xFE00). Read as TRETJapanNFCReader reads it (Docs/card-layouts.md,
/// "University Co-op"): the balance little-endian, the member number, dates and amounts
/// of the history in BCD, dates in Japan time.
///
///     50D7 block 0   BB BB BB BB ...                   balance, LE
///     50CB block 0   NN NN NN NN NN NN ...             member number, 12 BCD digits
///     50CF block n   YY YY MM DD hh mm ss TT AA AA AA  RR RR RR ...
///                    date and time (BCD), type (5 purchase, 1 charge), amount, balance after (BCD)
public enum UnivCoop {
    /// Service holding the balance (block 0).
    public static let balanceService: ServiceCode = 0x50D7
    /// Service holding the member information (block 0: the member number).
    public static let memberService: ServiceCode = 0x50CB
    /// Service holding the history, newest first.
    public static let historyService: ServiceCode = 0x50CF
    /// Blocks of history read.
    public static let historyBlocks = 10

    /// What ``CardReader`` reads at each depth, and how it decodes.
    public static let layout = PurseLayout(
        profile: .univCoop, placement: .commonArea, presence: balanceService,
        services: [
            ServiceRead(memberService, .memberNumber, balance: 1, history: 1),
            ServiceRead(balanceService, .balance, balance: 1, history: 1),
            ServiceRead(historyService, .history, balance: 0, history: historyBlocks),
        ]
    ) { b, c in
        purse(system: c.system, member: b.first(memberService), balance: b.first(balanceService), history: b[historyService])
    }

    /// Name of a history type code; nil for a code not in the table.
    public static func typeName(_ t: UInt8) -> String? {
        switch t {
        case 0x05: "purchase"
        case 0x01: "charge"
        default: nil
        }
    }

    /// One 50CF record.
    public struct HistoryRecord: Hashable, Sendable {
        /// Bytes 0-6, BCD `YYYYMMDDhhmmss`, Japan time.
        public var date: CardDate
        /// Byte 7: 5 purchase, 1 charge.
        public var type: UInt8
        /// Bytes 8-10, BCD, yen (unsigned: the type gives the sign).
        public var amount: Int
        /// Bytes 11-13, BCD, yen.
        public var balance: Int

        public init(date: CardDate, type: UInt8, amount: Int, balance: Int) {
            self.date = date; self.type = type; self.amount = amount; self.balance = balance
        }

        /// Nil for an empty slot (all zeros).
        public static func decode(_ raw: [UInt8]) throws(CardDataError) -> HistoryRecord? {
            let b = try Block(raw, "University Co-op history record")
            if b.bytes.allSatisfy({ $0 == 0 }) { return nil }
            let d = try bcd(b.bytes[0..<7], "date")
            let date = try CardDate(year: d / 10_000_000_000, month: d / 100_000_000 % 100, day: d / 1_000_000 % 100,
                                    hour: d / 10_000 % 100, minute: d / 100 % 100, second: d % 100, "University Co-op history date")
            return HistoryRecord(date: date, type: b.bytes[7], amount: try bcd(b.bytes[8..<11], "amount"),
                                 balance: try bcd(b.bytes[11..<14], "balance"))
        }

        /// The 16-byte block.
        public func encode() -> [UInt8] {
            let d = date
            let stamp = ((((d.year * 100 + d.month) * 100 + d.day) * 100 + (d.time?.hour ?? 0)) * 100 + (d.time?.minute ?? 0)) * 100
                + (d.time?.second ?? 0)
            return UnivCoop.encodeBCD(stamp, bytes: 7) + [type] + UnivCoop.encodeBCD(amount, bytes: 3)
                + UnivCoop.encodeBCD(balance, bytes: 3) + [0, 0]
        }
    }

    /// The BCD digits of `bytes` as a number; a nibble above 9 is an error naming `what`.
    static func bcd(_ bytes: ArraySlice<UInt8>, _ what: String) throws(CardDataError) -> Int {
        var v = 0
        for b in bytes {
            guard b >> 4 <= 9, b & 0xF <= 9 else {
                throw CardDataError(.invalidField, "University Co-op \(what): \(hexCode(Int(b))) is not a BCD number")
            }
            v = v * 100 + Int(b >> 4) * 10 + Int(b & 0xF)
        }
        return v
    }

    /// `value` as `bytes` BCD bytes, most significant first.
    public static func encodeBCD(_ value: Int, bytes: Int) -> [UInt8] {
        var v = value
        var out = [UInt8](repeating: 0, count: bytes)
        for i in (0..<bytes).reversed() {
            out[i] = UInt8((v / 10 % 10) << 4 | v % 10)
            v /= 100
        }
        return out
    }

    /// Block 0 of 50D7 holding `balance`.
    public static func encodeBalance(_ balance: Int) -> [UInt8] {
        var w = BlockWriter()
        w.put32LE(UInt32(balance), at: 0)
        return w.bytes
    }

    /// Block 0 of 50CB holding a 12-digit member number.
    public static func encodeMember(_ number: String) -> [UInt8] {
        encodeBCD(Int(number) ?? 0, bytes: 6) + [UInt8](repeating: 0, count: 10)
    }

    /// The history slots, newest first; empty slots skipped.
    public static func decodeHistory(_ blocks: [[UInt8]]) -> [HistoryEntry] {
        return assembleHistory(historySlots(blocks, HistoryRecord.decode), balance: \.balance) { r, older in
            let (kind, amount): (TransactionKind, Int?) = switch r.type {
            case 0x05: (.purchase, -r.amount)
            case 0x01: (.charge, r.amount)
            default: (.other, older.map { r.balance - $0 })
            }
            // The card numbers no record: 0 for all, so a history keeps them by content.
            return Transaction(date: r.date, kind: kind, amount: amount, balance: r.balance, sequence: 0,
                               type: CodeName(Int(r.type), typeName(r.type)))
        }
    }

    /// Builds the purse from the blocks read (nil = not read); bad blocks become issues.
    public static func purse(system: SystemCode = .common, member: [UInt8]?, balance: [UInt8]?, history: [[UInt8]]?) -> Purse {
        var p = Purse(profile: .univCoop, system: system)
        if let member {
            do throws(CardDataError) {
                let b = try Block(member, "University Co-op member number (0x50CB)")
                let n = try bcd(b.bytes[0..<6], "member number")
                let digits = String(n)
                p.number = String(repeating: "0", count: 12 - digits.count) + digits
            } catch {
                p.issues.append(ServiceIssue(service: memberService, content: .memberNumber, problem: .unreadable(error.reason)))
            }
        }
        if let balance {
            do throws(CardDataError) { p.balance = Int(try Block(balance, "University Co-op balance (0x50D7)").uint32LE(0)) } catch {
                p.issues.append(balanceIssue(balanceService, error))
            }
        }
        if let history {
            p.history = decodeHistory(history)
            if let newest = p.history?.first?.transaction, let balance = p.balance, newest.balance != balance {
                p.notes.append("balance mismatch: the balance block says ¥\(balance), the newest history record says ¥\(newest.balance)")
            }
        }
        return p
    }
}
