/// A date, with or without a time of day, as a card stores it, in the card's own time zone
/// (Japan time, UTC+09:00, unless the profile says otherwise: Jakarta cards keep UTC+07:00),
/// never converted. Built only through the validating initialiser, so an
/// impossible value (month 13, 31 April, hour 24) never reaches the output.
public struct CardDate: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// Full year (2026).
    public let year: Int
    /// 1-12.
    public let month: Int
    /// 1-31, valid for the month.
    public let day: Int
    /// Time of day when the card stores one (seconds 0 when it stores minutes only).
    public let time: (hour: Int, minute: Int, second: Int)?
    /// What the card stored: the day only, a time to the minute, or to the second.
    public let precision: Precision
    /// The card's time zone as minutes east of UTC (540, Japan time, unless the profile says
    /// otherwise).
    public let utcOffsetMinutes: Int

    /// Japan time, the zone of every Japanese card.
    public static let japan = 540
    /// Western Indonesia time (Jakarta), UTC+07:00.
    public static let jakarta = 420

    /// How finely a card records a moment.
    public enum Precision: Int, Hashable, Sendable, Comparable {
        /// The day only (transit IC history).
        case day
        /// Hours and minutes (gate log, nanaco, WAON).
        case minute
        /// Hours, minutes and seconds (Edy, University Co-op).
        case second

        public static func < (a: Precision, b: Precision) -> Bool { a.rawValue < b.rawValue }
    }

    /// Validates every field; `what` names the field in the error.
    public init(year: Int, month: Int, day: Int, hour: Int? = nil, minute: Int? = nil, second: Int? = nil,
                utcOffsetMinutes: Int = CardDate.japan, _ what: String = "date") throws(CardDataError) {
        guard (1...12).contains(month) else {
            throw CardDataError(.invalidDate, "\(what): month \(month) is outside 1-12")
        }
        let last = CardDate.daysIn(month: month, year: year)
        guard (1...last).contains(day) else {
            throw CardDataError(.invalidDate, "\(what): day \(day) is outside 1-\(last) for \(year)-\(pad2(month))")
        }
        if let hour {
            guard (0...23).contains(hour) else { throw CardDataError(.invalidDate, "\(what): hour \(hour) is outside 0-23") }
            let m = minute ?? 0, s = second ?? 0
            guard (0...59).contains(m) else { throw CardDataError(.invalidDate, "\(what): minute \(m) is outside 0-59") }
            guard (0...59).contains(s) else { throw CardDataError(.invalidDate, "\(what): second \(s) is outside 0-59") }
            time = (hour, m, s)
            precision = second == nil ? .minute : .second
        } else {
            time = nil
            precision = .day
        }
        self.year = year
        self.month = month
        self.day = day
        self.utcOffsetMinutes = utcOffsetMinutes
    }

    /// The day `days` after 2000-01-01 (Edy's epoch), optionally with seconds since midnight.
    public init(daysSince2000 days: Int, secondsOfDay: Int? = nil, utcOffsetMinutes: Int = CardDate.japan, _ what: String = "date") throws(CardDataError) {
        guard days >= 0 else { throw CardDataError(.invalidDate, "\(what): \(days) days is before 2000-01-01") }
        let (y, m, d) = CardDate.civil(fromDaysSince2000: days)
        if let s = secondsOfDay {
            guard (0..<86_400).contains(s) else {
                throw CardDataError(.invalidDate, "\(what): \(s) seconds since midnight is beyond one day")
            }
            try self.init(year: y, month: m, day: d, hour: s / 3600, minute: s / 60 % 60, second: s % 60, utcOffsetMinutes: utcOffsetMinutes, what)
        } else {
            try self.init(year: y, month: m, day: d, utcOffsetMinutes: utcOffsetMinutes, what)
        }
    }

    /// The local time `seconds` after 2000-01-01 00:00 local time, in the zone `utcOffsetMinutes`.
    public init(localSecondsSince2000 seconds: Int, utcOffsetMinutes: Int, _ what: String = "date") throws(CardDataError) {
        guard seconds >= 0 else { throw CardDataError(.invalidDate, "\(what): \(seconds) seconds is before 2000-01-01") }
        try self.init(daysSince2000: seconds / 86_400, secondsOfDay: seconds % 86_400, utcOffsetMinutes: utcOffsetMinutes, what)
    }

    /// `YYYY-MM-DD`, or `YYYY-MM-DDTHH:MM:SS+09:00` when the card stores a time (the offset
    /// is the card's zone).
    public var iso: String {
        let date = "\(pad4(year))-\(pad2(month))-\(pad2(day))"
        guard let t = time else { return date }
        let off = abs(utcOffsetMinutes)
        return date + "T\(pad2(t.hour)):\(pad2(t.minute)):\(pad2(t.second))\(utcOffsetMinutes < 0 ? "-" : "+")\(pad2(off / 60)):\(pad2(off % 60))"
    }

    /// `YYYY-MM-DD HH:MM[:SS]` for tables (seconds only when `seconds`).
    public func display(seconds: Bool) -> String {
        display(upTo: seconds ? .second : .minute)
    }

    /// `YYYY-MM-DD`, then the time the card stored, to `finest` at most:
    /// `YYYY-MM-DD HH:MM` or `YYYY-MM-DD HH:MM:SS`.
    public func display(upTo finest: Precision) -> String {
        timeOfDay(upTo: finest).map { isoDate + " " + $0 } ?? isoDate
    }

    /// `YYYY-MM-DD`.
    public var isoDate: String { "\(pad4(year))-\(pad2(month))-\(pad2(day))" }

    /// `HH:MM` or `HH:MM:SS`: the time the card stored, to `finest` at most; nil when the
    /// card stored none (or `finest` is `.day`).
    public func timeOfDay(upTo finest: Precision = .second) -> String? {
        let shown = min(finest, precision)
        guard let t = time, shown > .day else { return nil }
        return "\(pad2(t.hour)):\(pad2(t.minute))" + (shown == .second ? ":\(pad2(t.second))" : "")
    }

    public var description: String { iso }

    /// Days since 2000-01-01 (for ordering and for Edy's encoder).
    public var daysSince2000: Int { CardDate.days(year: year, month: month, day: day) }
    /// Seconds since midnight (0 without a time).
    public var secondsOfDay: Int { time.map { $0.hour * 3600 + $0.minute * 60 + $0.second } ?? 0 }

    public static func == (a: CardDate, b: CardDate) -> Bool { a.iso == b.iso }
    public func hash(into h: inout Hasher) { h.combine(iso) }
    public static func < (a: CardDate, b: CardDate) -> Bool {
        (a.daysSince2000, a.secondsOfDay) < (b.daysSince2000, b.secondsOfDay)
    }

    static func isLeap(_ y: Int) -> Bool { (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 }

    /// Days in `month` (1-12) of `year`, leap years counted.
    public static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: isLeap(year) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days from 2000-01-01 to the given date (proleptic Gregorian).
    static func days(year: Int, month: Int, day: Int) -> Int {
        var n = 0
        if year >= 2000 {
            for y in 2000..<year { n += isLeap(y) ? 366 : 365 }
        } else {
            for y in year..<2000 { n -= isLeap(y) ? 366 : 365 }
        }
        for m in 1..<month { n += daysIn(month: m, year: year) }
        return n + day - 1
    }

    static func civil(fromDaysSince2000 days: Int) -> (Int, Int, Int) {
        var y = 2000, rest = days
        while rest >= (isLeap(y) ? 366 : 365) { rest -= isLeap(y) ? 366 : 365; y += 1 }
        var m = 1
        while rest >= daysIn(month: m, year: y) { rest -= daysIn(month: m, year: y); m += 1 }
        return (y, m, rest + 1)
    }
}

func pad2(_ v: Int) -> String { v < 10 ? "0\(v)" : "\(v)" }
func pad4(_ v: Int) -> String {
    var s = String(v)
    while s.count < 4 { s = "0" + s }
    return s
}
