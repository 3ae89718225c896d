#if canImport(Glibc)
import Glibc
#endif

/// The history database: every record of every card read, kept across readings (SQLite,
/// WAL mode, one transaction per reading).
///
/// Records are keyed by card, purse and sequence number, unwrapped past the 16-bit (Edy:
/// 24-bit) wrap so that a number reused after 65,536 records is a new record; a purse
/// whose records carry no usable sequence is keyed by content. Saving the same reading
/// twice adds nothing. When the oldest record of a reading is more than one past the
/// newest kept one, the records in between rolled off the card between the two readings:
/// the save reports that gap and keeps it in the database.
///
/// Not Sendable: a store belongs to the task that opened it. Two processes may save at
/// once; the second waits for the first (busy timeout) and then lands.
public final class HistoryStore {
    /// The schema this code writes. Older files are migrated on open; newer ones refused.
    public static let schemaVersion = 2

    let db: SQLiteConnection
    /// The file.
    public var path: String { db.path }

    /// Called with the number (from 1) of each statement of a save before it runs; tests
    /// use it to stop the process at every point of a save.
    public var beforeSaveStatement: ((Int) -> Void)?

    /// Opens (creating it and its directory when missing) and migrates the database.
    /// `upTo` stops migrations at an older version (tests of migrations only).
    public init(path: String, busyTimeoutMilliseconds: Int32 = 15_000, upTo version: Int = HistoryStore.schemaVersion) throws(HistoryError) {
        try Self.makeParentDirectory(of: path)
        db = try SQLiteConnection(path: path, busyTimeout: busyTimeoutMilliseconds)
        // WAL: readers never block the saver, and a save is one append to the log that
        // either reaches its commit record or is ignored on the next open.
        let mode = try db.text("PRAGMA journal_mode=WAL")
        guard mode?.lowercased() == "wal" else {
            throw HistoryError(.sqlite, "history database \(path): could not switch to WAL mode (journal mode is \(mode ?? "unknown"))")
        }
        try db.exec("PRAGMA synchronous=FULL; PRAGMA foreign_keys=ON")
        try migrate(upTo: version)
    }

    /// The default file: `$XDG_DATA_HOME/felica/history.sqlite3`, else
    /// `~/.local/share/felica/history.sqlite3`.
    public static func defaultPath(environment: [String: String]) -> String? {
        if let data = environment["XDG_DATA_HOME"], data.hasPrefix("/") { return data + "/felica/history.sqlite3" }
        guard let home = environment["HOME"], !home.isEmpty else { return nil }
        return home + "/.local/share/felica/history.sqlite3"
    }

    static func makeParentDirectory(of path: String) throws(HistoryError) {
        guard let slash = path.lastIndex(of: "/") else { return }
        var prefix = path.hasPrefix("/") ? "" : "."
        for part in path[..<slash].split(separator: "/") {
            prefix += "/" + part
            if mkdir(prefix, 0o700) != 0 && errno != EEXIST {
                let why = String(cString: strerror(errno))
                throw HistoryError(.cannotOpen, "cannot create the directory \(prefix) for the history database: \(why)")
            }
        }
    }

    // MARK: - Schema

    /// Each step takes the schema from version i to i + 1.
    static let migrations: [String] = [
        // 1: cards' records and the readings that brought them.
        """
        CREATE TABLE readings(
            id INTEGER PRIMARY KEY,
            card TEXT NOT NULL,
            read_at TEXT NOT NULL,
            device TEXT,
            records INTEGER NOT NULL,
            added INTEGER NOT NULL);
        CREATE TABLE records(
            card TEXT NOT NULL,
            purse TEXT NOT NULL,
            key TEXT NOT NULL,
            ordinal INTEGER,
            sequence INTEGER,
            date TEXT NOT NULL,
            time TEXT,
            type TEXT NOT NULL,
            detail TEXT NOT NULL,
            origin TEXT,
            destination TEXT,
            amount INTEGER,
            balance INTEGER NOT NULL,
            fingerprint TEXT NOT NULL,
            reading INTEGER NOT NULL REFERENCES readings(id),
            PRIMARY KEY(card, purse, key)) WITHOUT ROWID;
        CREATE INDEX records_by_date ON records(date, time);
        """,
        // 2: gaps between readings are kept, not only reported.
        """
        CREATE TABLE gaps(
            id INTEGER PRIMARY KEY,
            reading INTEGER NOT NULL REFERENCES readings(id),
            card TEXT NOT NULL,
            purse TEXT NOT NULL,
            after_sequence INTEGER NOT NULL,
            before_sequence INTEGER NOT NULL,
            missing INTEGER NOT NULL);
        ALTER TABLE readings ADD COLUMN gaps INTEGER NOT NULL DEFAULT 0;
        """,
    ]

    /// The schema version of the file (`PRAGMA user_version`).
    public func version() throws(HistoryError) -> Int { try db.integer("PRAGMA user_version") ?? 0 }

    private func migrate(upTo target: Int) throws(HistoryError) {
        if try version() >= target {
            if try version() > Self.schemaVersion { throw newer(try version()) }
            return
        }
        try db.exec("BEGIN IMMEDIATE")
        do throws(HistoryError) {
            // Checked again under the write lock: another process may have migrated meanwhile.
            let current = try version()
            if current > Self.schemaVersion { throw newer(current) }
            if current < target {
                for step in current..<target { try db.exec(Self.migrations[step]) }
                try db.exec("PRAGMA user_version=\(target)")
            }
            try db.exec("COMMIT")
        } catch {
            try? db.exec("ROLLBACK")
            throw error
        }
    }

    private func newer(_ v: Int) -> HistoryError {
        HistoryError(.newerSchema, "the history database \(path) has schema version \(v), written by a newer felica (this one knows up to \(Self.schemaVersion)); use that version, or another --db file")
    }

    /// `PRAGMA integrity_check`: "ok", or what is wrong.
    public func integrityCheck() throws(HistoryError) -> String {
        try db.text("PRAGMA integrity_check") ?? "no answer"
    }

    // MARK: - Saving

    /// Records that rolled off the card between two readings.
    public struct Gap: Hashable, Sendable, CustomStringConvertible {
        /// The card's IDm, hex.
        public var card: String
        /// The purse (`transit-ic`, ...).
        public var purse: String
        /// The newest sequence number kept before this reading.
        public var afterSequence: Int
        /// The oldest sequence number of this reading.
        public var beforeSequence: Int
        /// How many records are missing in between.
        public var missing: Int
        /// The day of the record at ``afterSequence``, when it is kept (filled when gaps are read back).
        public var afterDate: String? = nil
        /// The day of the record at ``beforeSequence``, when it is kept.
        public var beforeDate: String? = nil

        public var description: String {
            "\(purse): \(missing) record\(missing == 1 ? "" : "s") between sequence \(afterSequence) and \(beforeSequence) rolled off the card before this reading and are not in the history"
        }
    }

    /// What a save did.
    public struct SaveResult: Hashable, Sendable {
        /// Records in the reading.
        public var read = 0
        /// New records kept.
        public var added = 0
        /// Records already kept (the same content under the same key).
        public var alreadyKept = 0
        /// Records whose key was kept with other content: the kept one stays, each is named here.
        public var conflicts: [String] = []
        /// Records that did not decode (not kept).
        public var malformed = 0
        /// Records that rolled off the card since the last reading.
        public var gaps: [Gap] = []
    }

    /// Merges a reading in one transaction: all of it lands, or (on any error, or a process
    /// killed mid-way) none of it.
    public func save(_ reading: Reading) throws(HistoryError) -> SaveResult {
        var statement = 0
        func step() {
            statement += 1
            beforeSaveStatement?(statement)
        }
        step()
        try db.exec("BEGIN IMMEDIATE")
        do throws(HistoryError) {
            step()
            let insertReading = try db.prepare("INSERT INTO readings(card, read_at, device, records, added) VALUES(?1, ?2, ?3, 0, 0) RETURNING id")
            try insertReading.bind([.text(reading.card), .text(reading.readAt), reading.device.map { .text($0) }])
            guard try insertReading.step(), let readingID = insertReading.int(0) else {
                throw HistoryError(.sqlite, "history database \(path): the new reading got no id")
            }
            _ = try insertReading.step()
            var result = SaveResult()
            let find = try db.prepare("SELECT fingerprint FROM records WHERE card = ?1 AND purse = ?2 AND key = ?3")
            let balanceAt = try db.prepare("SELECT balance FROM records WHERE card = ?1 AND purse = ?2 AND ordinal = ?3")
            let newest = try db.prepare("SELECT max(ordinal) FROM records WHERE card = ?1 AND purse = ?2")
            let insert = try db.prepare("""
                INSERT INTO records(card, purse, key, ordinal, sequence, date, time, type, detail, origin, destination,
                                    amount, balance, fingerprint, reading)
                VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)
                """)
            let insertGap = try db.prepare("""
                INSERT INTO gaps(reading, card, purse, after_sequence, before_sequence, missing) VALUES(?1, ?2, ?3, ?4, ?5, ?6)
                """)
            for purse in reading.purses {
                result.read += purse.records.count
                result.malformed += purse.malformed
                let profile = purse.profile.rawValue
                var ordinals: [Int?] = Array(repeating: nil, count: purse.records.count)
                if purse.numbered, !purse.records.isEmpty {
                    try newest.bind([.text(reading.card), .text(profile)])
                    _ = try newest.step()
                    let kept = newest.int(0)
                    ordinals = Self.unwrap(purse.records.map { $0.sequence ?? 0 }, modulus: Reading.sequenceModulus(purse.profile), after: kept)
                    if let kept, let oldest = ordinals.last!, oldest > kept + 1 {
                        let modulus = Reading.sequenceModulus(purse.profile)
                        let gap = Gap(card: reading.card, purse: profile, afterSequence: kept % modulus,
                                      beforeSequence: purse.records.last!.sequence ?? 0, missing: oldest - kept - 1)
                        step()
                        try insertGap.run([.int(readingID), .text(reading.card), .text(profile), .int(gap.afterSequence),
                                           .int(gap.beforeSequence), .int(gap.missing)])
                        result.gaps.append(gap)
                    }
                }
                // Oldest first, so an amount the card could not give comes from the kept record before it.
                for i in purse.records.indices.reversed() {
                    var r = purse.records[i]
                    let ordinal = ordinals[i]
                    let key = ordinal.map { "s\($0)" } ?? "c" + r.fingerprint
                    step()
                    try find.bind([.text(reading.card), .text(profile), .text(key)])
                    if try find.step() {
                        if find.text(0) == r.fingerprint {
                            result.alreadyKept += 1
                        } else {
                            result.conflicts.append("\(profile) sequence \(r.sequence.map(String.init) ?? "-") of \(r.date): the kept record differs from the one read; the kept one stays")
                        }
                        continue
                    }
                    if r.amount == nil, let ordinal {
                        step()
                        try balanceAt.bind([.text(reading.card), .text(profile), .int(ordinal - 1)])
                        if try balanceAt.step(), let before = balanceAt.int(0) { r.amount = r.balance - before }
                    }
                    step()
                    try insert.run([
                        .text(reading.card), .text(profile), .text(key), ordinal.map { .int($0) }, r.sequence.map { .int($0) },
                        .text(r.date), r.time.map { .text($0) }, .text(r.type), .text(r.detail), r.from.map { .text($0) },
                        r.to.map { .text($0) }, r.amount.map { .int($0) }, .int(r.balance), .text(r.fingerprint), .int(readingID),
                    ])
                    result.added += 1
                }
            }
            step()
            try db.prepare("UPDATE readings SET records = ?1, added = ?2, gaps = ?3 WHERE id = ?4")
                .run([.int(result.read), .int(result.added), .int(result.gaps.count), .int(readingID)])
            step()
            try db.exec("COMMIT")
            return result
        } catch {
            try? db.exec("ROLLBACK")
            throw error
        }
    }

    /// Unwrapped ordinals for sequence numbers read newest first: consecutive records
    /// differ by their distance modulo `modulus`, and the oldest lands within half a wrap
    /// of `after`, the newest ordinal kept (or on its own number when nothing is kept).
    static func unwrap(_ sequences: [Int], modulus: Int, after kept: Int?) -> [Int?] {
        guard let oldestSequence = sequences.last else { return [] }
        var ordinals = [Int](repeating: 0, count: sequences.count)
        var oldest = oldestSequence % modulus
        if let kept {
            // The ordinal ≡ oldest (mod modulus) nearest to kept.
            let base = kept - kept % modulus + oldest
            let candidates = [base - modulus, base, base + modulus]
            oldest = candidates.min { abs($0 - kept) < abs($1 - kept) }!
        }
        ordinals[sequences.count - 1] = oldest
        var i = sequences.count - 2
        while i >= 0 {
            let step = ((sequences[i] - sequences[i + 1]) % modulus + modulus) % modulus
            ordinals[i] = ordinals[i + 1] + step
            i -= 1
        }
        return ordinals
    }

    // MARK: - Reading back

    /// Which records to list.
    public struct Query: Sendable {
        /// IDm hex (any case); nil for every card.
        public var card: String?
        /// The purse (`transit-ic`, `edy`, `nanaco`, `waon`); nil for every purse.
        public var purse: String?
        /// First day, `YYYY-MM-DD`, inclusive.
        public var from: String?
        /// Last day, `YYYY-MM-DD`, inclusive.
        public var to: String?
        /// Newest first (else oldest first).
        public var newestFirst: Bool

        /// Every record, oldest first, unless narrowed.
        public init(card: String? = nil, purse: String? = nil, from: String? = nil, to: String? = nil, newestFirst: Bool = false) {
            self.card = card; self.purse = purse; self.from = from; self.to = to; self.newestFirst = newestFirst
        }
    }

    /// Calls `body` with each kept record the query selects, one at a time (a large export
    /// never sits in memory whole): by day, and within a day by card and purse in the card's
    /// own order (its sequence numbers, unwrapped; the time for a purse that numbers none),
    /// since a transit record keeps no time of day. Newest first is exactly the reverse.
    public func forEach(_ query: Query, _ body: (KeptRecord) throws -> Void) throws {
        let order = query.newestFirst ? "DESC" : "ASC"
        let s = try db.prepare("""
            SELECT card, purse, sequence, date, time, type, detail, origin, destination, amount, balance FROM records
            WHERE (?1 IS NULL OR card = ?1) AND (?2 IS NULL OR date >= ?2) AND (?3 IS NULL OR date <= ?3) AND (?4 IS NULL OR purse = ?4)
            ORDER BY date \(order), card \(order), purse \(order), ordinal \(order), coalesce(time, '') \(order)
            """)
        try s.bind([query.card.map { .text($0.lowercased()) }, query.from.map { .text($0) }, query.to.map { .text($0) },
                    query.purse.map { .text($0) }])
        while try s.step() {
            try body(KeptRecord(card: s.text(0) ?? "", purse: s.text(1) ?? "", sequence: s.int(2), date: s.text(3) ?? "",
                                time: s.text(4), type: s.text(5) ?? "", detail: s.text(6) ?? "", from: s.text(7), to: s.text(8),
                                amount: s.int(9), balance: s.int(10) ?? 0))
        }
    }

    /// The records the query selects, as an array.
    public func records(_ query: Query) throws -> [KeptRecord] {
        var out: [KeptRecord] = []
        try forEach(query) { out.append($0) }
        return out
    }

    /// Gaps recorded for the query's card (every card when nil), oldest first.
    public func gaps(card: String? = nil) throws(HistoryError) -> [Gap] {
        try gaps(Query(card: card)).map {
            var g = $0
            g.afterDate = nil
            g.beforeDate = nil
            return g
        }
    }

    /// Gaps of the query's cards and purses whose missing records may fall in its period
    /// (the days of the kept records on either side overlap it), oldest first, with those days.
    public func gaps(_ query: Query) throws(HistoryError) -> [Gap] {
        let s = try db.prepare("""
            SELECT g.card, g.purse, g.after_sequence, g.before_sequence, g.missing,
                (SELECT date FROM records r WHERE r.card = g.card AND r.purse = g.purse AND r.sequence = g.after_sequence
                    AND r.reading <> g.reading ORDER BY r.ordinal DESC LIMIT 1),
                (SELECT date FROM records r WHERE r.card = g.card AND r.purse = g.purse AND r.sequence = g.before_sequence
                    AND r.reading = g.reading ORDER BY r.ordinal LIMIT 1)
            FROM gaps g WHERE (?1 IS NULL OR g.card = ?1) AND (?2 IS NULL OR g.purse = ?2) ORDER BY g.id
            """)
        try s.bind([query.card.map { .text($0.lowercased()) }, query.purse.map { .text($0) }])
        var out: [Gap] = []
        while try s.step() {
            let g = Gap(card: s.text(0) ?? "", purse: s.text(1) ?? "", afterSequence: s.int(2) ?? 0,
                        beforeSequence: s.int(3) ?? 0, missing: s.int(4) ?? 0, afterDate: s.text(5), beforeDate: s.text(6))
            if let to = query.to, let after = g.afterDate, after > to { continue }
            if let from = query.from, let before = g.beforeDate, before < from { continue }
            out.append(g)
        }
        return out
    }

    /// Records kept, over every card.
    public func count() throws(HistoryError) -> Int { try db.integer("SELECT count(*) FROM records") ?? 0 }
}
