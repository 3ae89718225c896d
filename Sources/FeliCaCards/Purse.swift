import FeliCa

/// A card layout the library decodes.
public enum PurseProfile: String, Hashable, Sendable, CaseIterable {
    case transitIC = "transit-ic"
    case edy, nanaco, waon
    case octopus
    case shenzhenTong = "shenzhen-tong"
    case univCoop = "univ-coop"
    case okica, ryuto, kmt, mrtj
    case fcf


    /// How a person calls it.
    public var displayName: String {
        switch self {
        case .transitIC: "Transit IC"
        case .edy: "Edy"
        case .nanaco: "nanaco"
        case .waon: "WAON"
        case .octopus: "Octopus"
        case .shenzhenTong: "Shenzhen Tong"
        case .univCoop: "Univ. Co-op"
        case .okica: "OKICA"
        case .ryuto: "Ryuto"
        case .kmt: "KMT"
        case .mrtj: "MRT Jakarta"
        case .fcf: "FCF ID"
        }
    }

    /// The currency its balance is kept in.
    public var currency: Currency {
        switch self {
        case .octopus: .hkd
        case .shenzhenTong: .cny
        case .kmt, .mrtj: .idr
        default: .jpy
        }
    }

    /// Whether the card keeps a transaction history readable without a key.
    public var hasHistory: Bool { ![.octopus, .shenzhenTong, .mrtj, .fcf].contains(self) }

    /// Whether the card keeps a balance (an ID card keeps only a number).
    public var hasBalance: Bool { self != .fcf }

    /// The finest its history's times are shown and kept (the table, the CSV, the history
    /// database), each record's own ``CardDate/precision`` permitting: Edy to the second,
    /// the others to the minute (a transit record keeps the day only, a sale its minute).
    /// University Co-op records store seconds too but are shown and kept to the minute, as
    /// databases already hold them.
    public var recordTime: CardDate.Precision {
        switch self {
        case .edy, .kmt: .second
        case .octopus, .shenzhenTong, .okica, .mrtj, .fcf: .day
        case .transitIC, .nanaco, .waon, .univCoop, .ryuto: .minute
        }
    }

    /// The time zone its dates are in, as minutes east of UTC: Jakarta for KMT and MRT
    /// Jakarta, Japan time for the others (``CardDate/utcOffsetMinutes``).
    public var utcOffsetMinutes: Int { self == .kmt || self == .mrtj ? CardDate.jakarta : CardDate.japan }

    /// Whether its history's times are shown and kept to the second.
    public var keepsSeconds: Bool { recordTime == .second }

    /// Sequence numbers of its records wrap at this value: transit and nanaco/WAON cards
    /// count in 16 bits (a transit record has 24 bits for it, whose top byte stays 0), Edy
    /// and KMT in 24.
    public var sequenceModulus: Int { self == .edy || self == .kmt ? 1 << 24 : 1 << 16 }
}

/// A currency as ISO 4217 names it; every money field is a count of its minor unit (yen for
/// JPY, cents for HKD, fen for CNY).
public struct Currency: Hashable, Sendable {
    /// ISO 4217 code (`JPY`).
    public var code: String
    /// Digits of the minor unit (0 for JPY, 2 for HKD and CNY).
    public var minorDigits: Int
    /// The sign printed before an amount (`¥`, `HK$`, `CN¥`).
    public var symbol: String

    /// Japanese yen (no minor unit).
    public static let jpy = Currency(code: "JPY", minorDigits: 0, symbol: "¥")
    /// Hong Kong dollar, counted in cents.
    public static let hkd = Currency(code: "HKD", minorDigits: 2, symbol: "HK$")
    /// Chinese yuan, counted in fen.
    public static let cny = Currency(code: "CNY", minorDigits: 2, symbol: "CN¥")
    /// Indonesian rupiah, counted in whole rupiah as the cards keep it.
    public static let idr = Currency(code: "IDR", minorDigits: 0, symbol: "Rp")

    /// `¥1,234`, `HK$50.00`, `-HK$14.40`; `signed` puts `+` before a gain.
    public func format(_ minor: Int, signed: Bool = false) -> String {
        let sign = minor < 0 ? "-" : (signed && minor > 0 ? "+" : "")
        var scale = 1
        for _ in 0..<minorDigits { scale *= 10 }
        let whole = abs(minor) / scale, fraction = abs(minor) % scale
        var digits = String(whole)
        var i = digits.count - 3
        while i > 0 { digits.insert(",", at: digits.index(digits.startIndex, offsetBy: i)); i -= 3 }
        if minorDigits > 0 {
            let f = String(fraction)
            digits += "." + String(repeating: "0", count: minorDigits - f.count) + f
        }
        return sign + symbol + digits
    }
}

/// What a transaction did, in the terms of the JSON contract (`type`).
public enum TransactionKind: String, Hashable, Sendable {
    case transit, purchase, charge, refund, transfer, points, other
}

/// A code from a card with its name when the code is known; unknown codes keep their number.
public struct CodeName: Hashable, Sendable, CustomStringConvertible {
    /// The code as stored.
    public var code: Int
    /// Its name, nil when the table does not know it.
    public var name: String?
    public init(_ code: Int, _ name: String?) { self.code = code; self.name = name }
    /// `ticket gate`, or `unknown 0x42` for a code not in the table.
    public var description: String { name ?? "unknown \(hexCode(code))" }
}

/// A station as the card identifies it, with its names when a table knows it.
public struct StationRef: Hashable, Sendable, CustomStringConvertible {
    /// Region (0 JR and Kanto private lines, 1 Chubu, 2 Kansai, 3 other); nil when the
    /// record does not say.
    public var area: Int?
    /// Line code (0-255).
    public var line: Int
    /// Station code on that line (0-255).
    public var station: Int
    /// Station name from the station table, when it has the station.
    public var name: String?
    /// Line name from the station table.
    public var lineName: String?
    /// Operating company from the station table.
    public var company: String?

    public init(area: Int?, line: Int, station: Int, name: String? = nil, lineName: String? = nil, company: String? = nil) {
        self.area = area; self.line = line; self.station = station
        self.name = name; self.lineName = lineName; self.company = company
    }

    /// `0/37/24` (area/line/station in decimal, as the CSV keys; `?` for an unknown area).
    public var code: String { "\(area.map(String.init) ?? "?")/\(line)/\(station)" }

    /// The name when the table knows the station, else ``code``.
    public var description: String { name ?? code }
}

/// Transit-specific fields of one history record.
public struct TransitDetails: Hashable, Sendable {
    /// Terminal type (byte 0).
    public var console: CodeName
    /// Process type (byte 1, bit 7 masked).
    public var process: CodeName
    /// Bit 7 of the process byte: paid partly in cash.
    public var paidPartlyInCash: Bool
    /// Byte 2 as stored.
    public var paymentType: Int
    /// Byte 3 as stored.
    public var entryExitType: Int
    /// Rail records: where the ride started / ended (or where a machine stood).
    public var entry: StationRef?
    /// Rail records: where the ride ended.
    public var exit: StationRef?
    /// Bus records: operator/line code and stop code.
    public var bus: (operatorLine: Int, stop: Int)?
    /// Byte 15 as stored (entry area bits 7-6, exit area bits 5-4).
    public var region: UInt8

    public static func == (a: TransitDetails, b: TransitDetails) -> Bool {
        a.console == b.console && a.process == b.process && a.paidPartlyInCash == b.paidPartlyInCash
            && a.paymentType == b.paymentType && a.entryExitType == b.entryExitType && a.entry == b.entry
            && a.exit == b.exit && a.bus?.operatorLine == b.bus?.operatorLine && a.bus?.stop == b.bus?.stop && a.region == b.region
    }
    public func hash(into h: inout Hasher) { h.combine(console); h.combine(process); h.combine(entry); h.combine(exit) }
}

/// One decoded transaction.
public struct Transaction: Hashable, Sendable {
    /// When, in Japan time, with the precision the card keeps.
    public var date: CardDate
    /// What it did, in the JSON contract's terms.
    public var kind: TransactionKind
    /// Signed change of the balance in yen; nil when the card does not tell.
    public var amount: Int?
    /// Balance after the transaction.
    public var balance: Int
    /// The card's sequence number for the record.
    public var sequence: Int
    /// The profile's own type code (transit: the process type).
    public var type: CodeName
    /// Transit records: console, process, stations.
    public var transit: TransitDetails?
    /// Terminal identifier where the card stores one (WAON).
    public var terminal: String?

    public init(date: CardDate, kind: TransactionKind, amount: Int?, balance: Int, sequence: Int, type: CodeName,
                transit: TransitDetails? = nil, terminal: String? = nil) {
        self.date = date; self.kind = kind; self.amount = amount; self.balance = balance
        self.sequence = sequence; self.type = type; self.transit = transit; self.terminal = terminal
    }
}

/// One history slot that held data: a transaction, or a record that failed to decode
/// (kept, with its raw bytes, so nothing is silently dropped).
public enum HistoryEntry: Hashable, Sendable {
    case transaction(Transaction)
    /// `slot` is the record's position in the service (0 = block 0).
    case malformed(slot: Int, error: CardDataError, raw: [UInt8])

    /// The transaction, nil for a malformed record.
    public var transaction: Transaction? {
        if case .transaction(let t) = self { t } else { nil }
    }
}

/// A service a profile wanted but could not read, and why.
public struct ServiceIssue: Error, Hashable, Sendable, CustomStringConvertible {
    /// Why the service could not be read.
    public enum Problem: Hashable, Sendable {
        /// The card holds the service only behind a key (key version when known).
        case needsKey(keyVersion: UInt16?)
        /// The card does not hold it.
        case absent
        /// Reading it failed (status flags or a malformed block).
        case unreadable(String)
    }
    /// The readable-without-key service code the profile wanted.
    public var service: ServiceCode
    /// What the service holds.
    public var content: ServiceContent
    /// What went wrong.
    public var problem: Problem

    public init(service: ServiceCode, content: ServiceContent, problem: Problem) {
        self.service = service; self.content = content; self.problem = problem
    }

    public var description: String {
        switch problem {
        case .needsKey(let kv):
            "\(content) (service \(service)) needs a key" + (kv.map { " (key version \(Hex.encode([UInt8($0 >> 8), UInt8($0 & 0xFF)])))" } ?? "") + ": not readable without authentication"
        case .absent: "\(content) (service \(service)) is not on the card"
        case .unreadable(let why): "\(content) (service \(service)) could not be read: \(why)"
        }
    }
}

/// A gate passage from the transit gate log (0x108F).
public struct GateEvent: Hashable, Sendable {
    /// Entry (bit 7 of byte 0) or exit.
    public var isEntry: Bool
    /// Byte 0 as stored (0xA0 entry, 0x20 exit, 0xC0/0x40 commuter pass).
    public var kindCode: Int
    /// Where (the record does not store the area).
    public var station: StationRef
    /// Gate identifier, bytes 4-5.
    public var gate: Int
    /// Date and time (BCD hours and minutes).
    public var date: CardDate
    /// Fare charged at an exit, yen.
    public var fare: Int
}

/// The transit card's last "entered but not yet exited" record (0x10CB).
public struct PendingEntry: Hashable, Sendable {
    /// The entry station (area not stored).
    public var station: StationRef
    /// When the card entered.
    public var date: CardDate
}

/// Card-level transit facts beyond balance and history.
public struct TransitInfo: Hashable, Sendable {
    /// 0x008B byte 8, high nibble.
    public var cardType: Int
    /// 0x008B byte 8, low nibble: region of the last payment.
    public var region: Int
    /// 0x008B bytes 14-15.
    public var transactionCounter: Int
    /// Gate log, newest first; nil when not read.
    public var gateLog: [GateLogEntry]?
    /// nil when not read or when nothing is pending.
    public var pendingEntry: PendingEntry?
}

/// One gate-log slot: an event or a block that failed to decode.
public enum GateLogEntry: Hashable, Sendable {
    case event(GateEvent)
    case malformed(slot: Int, error: CardDataError, raw: [UInt8])
}

/// One purse found on a card, decoded.
public struct Purse: Hashable, Sendable {
    /// Which layout it is.
    public var profile: PurseProfile
    /// The system it was read from.
    public var system: SystemCode
    /// The brand of a transit IC card (`PASMO`), when its areas tell it
    /// (``TransitIssuer``); nil when not asked, or when they do not tell one brand.
    public var issuer: String?
    /// nil when the balance could not be read (see ``issues``).
    public var balance: Int?
    /// Card number as printed by the issuer's convention, when the card stores one.
    public var number: String?
    /// Loyalty points, when the card stores them.
    public var points: Int?
    /// Newest first; nil when history was not asked for or not readable.
    public var history: [HistoryEntry]?
    /// Transit purses: card type, gate log, pending entry.
    public var transit: TransitInfo?
    /// How the balance was worked out, where the card's encoding leaves a choice (Octopus).
    public var rule: BalanceRule?
    /// Services the profile wanted but could not read.
    public var issues: [ServiceIssue] = []
    /// Findings worth telling: a failed cross-check, an unusual field.
    public var notes: [String] = []

    public init(profile: PurseProfile, system: SystemCode) {
        self.profile = profile
        self.system = system
    }

    /// How a person calls it: the brand when known (`PASMO`), else the layout (`Transit IC`).
    public var displayName: String { issuer ?? profile.displayName }

    /// Decoded transactions only, newest first.
    public var transactions: [Transaction] { history?.compactMap(\.transaction) ?? [] }

    /// The issues of its history service (needs a key, absent, unreadable).
    public var historyIssues: [ServiceIssue] { issues.filter { $0.content == .history } }
}

extension Transaction {
    /// What happened, in words: console and process for transit (`ticket gate, fare`),
    /// the type name otherwise, with the terminal where the card stores one.
    public var summary: String {
        if let x = transit { return x.summary }
        return type.description + (terminal.map { $0.isEmpty ? "" : " at \($0)" } ?? "")
    }

    /// ``summary`` and where: `ticket gate, fare: A → B`, a bus record's operator and stop.
    /// The DETAILS column of the history table.
    public var details: String {
        guard let x = transit else { return summary }
        if let stop = x.busStop { return summary + ": " + stop }
        switch (x.entry, x.exit) {
        case (let a?, let b?): return summary + ": \(a) → \(b)"
        case (let a?, nil): return summary + ": \(a)"
        case (nil, let b?): return summary + ": → \(b)"
        case (nil, nil): return summary
        }
    }
}

extension TransitDetails {
    /// The console and the process in words: `ticket gate, fare (partly cash)`.
    public var summary: String { "\(console), \(process)" + (paidPartlyInCash ? " (partly cash)" : "") }

    /// A bus record's operator/line and stop: `operator/line 0x0A2B stop 0x0103`.
    public var busStop: String? {
        bus.map { "operator/line \(hexCode($0.operatorLine, digits: 4)) stop \(hexCode($0.stop, digits: 4))" }
    }
}
