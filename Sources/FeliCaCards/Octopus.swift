import FeliCa

#if canImport(Glibc)
import Glibc
#endif

/// Octopus (Hong Kong) and Shenzhen Tong on FeliCa: one balance block each, readable
/// without a key, in systems of their own; a dual card carries both.
///
/// Block 0 bytes 0-3 hold an unsigned big-endian count of tenths (HK$0.10, CNY 0.10) with
/// an offset added, so a card can go below zero: balance = (raw − offset) × 0.10. The card
/// does not say which offset it uses. Octopus moved from 350 to 500 on 2017-10-01 (when
/// its overdraft limit rose from HK$35 to HK$50), so the offset follows the date of the
/// reading; Shenzhen Tong's is 350. Source: metrodroid `transit/octopus/OctopusData.kt`.
public enum Octopus {
    /// The Octopus system.
    public static let octopusSystem: SystemCode = 0x8008
    /// The Shenzhen Tong system.
    public static let shenzhenTongSystem: SystemCode = 0x8005
    /// Octopus balance service (block 0).
    public static let octopusBalanceService: ServiceCode = 0x0117
    /// Shenzhen Tong balance service (block 0).
    public static let shenzhenTongBalanceService: ServiceCode = 0x0118
    /// The first day Octopus readings use offset 500.
    public static let newOffsetFrom = try! CardDate(year: 2017, month: 10, day: 1)

    /// What ``CardReader`` reads for Octopus, and how it decodes.
    public static let octopusLayout = PurseLayout(
        profile: .octopus, placement: .ownSystem([octopusSystem]), presence: octopusBalanceService,
        services: [ServiceRead(octopusBalanceService, .balance, balance: 1, history: 1)]
    ) { b, c in
        purse(.octopus, system: c.system, block: b.first(octopusBalanceService), readOn: c.readingDate)
    }

    /// What ``CardReader`` reads for Shenzhen Tong, and how it decodes.
    public static let shenzhenTongLayout = PurseLayout(
        profile: .shenzhenTong, placement: .ownSystem([shenzhenTongSystem]), presence: shenzhenTongBalanceService,
        services: [ServiceRead(shenzhenTongBalanceService, .balance, balance: 1, history: 1)]
    ) { b, c in
        purse(.shenzhenTong, system: c.system, block: b.first(shenzhenTongBalanceService), readOn: c.readingDate)
    }

    /// The offset a reading on `date` uses, and the rule that chose it.
    public static func offset(_ profile: PurseProfile, readOn date: ReadingDate) -> BalanceRule {
        switch profile {
        case .octopus:
            date.day < newOffsetFrom
                ? BalanceRule(offset: 350, readOn: date, why: "Octopus readings before 2017-10-01 use offset 350")
                : BalanceRule(offset: 500, readOn: date, why: "Octopus readings from 2017-10-01 on use offset 500")
        default:
            BalanceRule(offset: 350, readOn: date, why: "Shenzhen Tong uses offset 350")
        }
    }

    /// Block 0 of a balance service holding `tenths` (HK$0.10 or CNY 0.10) with `offset`.
    public static func encodeBalance(tenths: Int, offset: Int) -> [UInt8] {
        var w = BlockWriter()
        w.put32BE(UInt32(clamping: tenths + offset), at: 0)
        return w.bytes
    }

    /// The purse from the balance block (nil = not read).
    public static func purse(_ profile: PurseProfile, system: SystemCode, block: [UInt8]?, readOn date: ReadingDate) -> Purse {
        var p = Purse(profile: profile, system: system)
        guard let block else { return p }
        let service = profile == .octopus ? octopusBalanceService : shenzhenTongBalanceService
        do throws(CardDataError) {
            let raw = Int(try Block(block, "\(profile.displayName) balance (\(service))").uint32BE(0))
            let rule = offset(profile, readOn: date)
            p.balance = (raw - rule.offset) * 10
            p.rule = rule
        } catch {
            p.issues.append(balanceIssue(service, error))
        }
        return p
    }
}

/// The day a card was read, and where that day came from: a balance whose encoding changed
/// over time (Octopus) is decoded by it.
public struct ReadingDate: Hashable, Sendable {
    /// Where the date came from.
    public enum Source: String, Hashable, Sendable {
        /// The card was read now.
        case today
        /// The dump says when it was made (Metrodroid's scan time).
        case scanDate = "scan-date"
    }
    /// The day.
    public var day: CardDate
    /// Where it came from.
    public var source: Source

    /// A reading on `day`, known from `source`.
    public init(day: CardDate, source: Source) {
        self.day = day; self.source = source
    }

    /// Today (UTC), from the system clock.
    public static func today() -> ReadingDate {
        var t = time(nil)
        var parts = tm()
        gmtime_r(&t, &parts)
        let day = (try? CardDate(year: Int(parts.tm_year) + 1900, month: Int(parts.tm_mon) + 1, day: Int(parts.tm_mday)))
            ?? (try! CardDate(year: 2000, month: 1, day: 1))
        return ReadingDate(day: day, source: .today)
    }
}

/// How a balance was worked out when the card's encoding leaves a choice: the offset taken
/// off the stored value and why.
public struct BalanceRule: Hashable, Sendable, CustomStringConvertible {
    /// Subtracted from the stored count.
    public var offset: Int
    /// The reading's date that chose it.
    public var readOn: ReadingDate
    /// The rule in words.
    public var why: String

    /// `offset 500: Octopus readings from 2017-10-01 on use offset 500 (read 2026-12-01, today)`.
    public var description: String {
        "offset \(offset): \(why) (read \(readOn.day.iso), \(readOn.source == .today ? "today" : "the dump's scan date"))"
    }
}
