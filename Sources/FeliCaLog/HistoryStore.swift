import FeliCa
import FeliCaCards
import FeliCaFiles

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

    /// `PRAGMA application_id` of a felica history ("FeLi"), set when felica creates or
    /// migrates a file, so that another program's SQLite file is never taken for one.
    public static let applicationID = 0x4665_4C69

    /// The tables felica makes (files from before the application id are known by them).
    static let ourTables: Set<String> = ["readings", "records", "gaps"]

    let db: SQLiteConnection
    /// The file.
    public var path: String { db.path }
    /// True when opened with ``init(readingAt:busyTimeoutMilliseconds:)``: nothing is written.
    public let isReadOnly: Bool

    /// Called with the number (from 1) of each statement of a save before it runs; tests
    /// use it to stop the process at every point of a save.
    public var beforeSaveStatement: ((Int) -> Void)?

    /// Opens (creating it and its directory when missing) and migrates the database.
    /// `upTo` stops migrations at an older version (tests of migrations only).
    ///
    /// A new file and directory are the owner's only (0600, 0700) whatever the umask; an
    /// existing file keeps its mode, and SQLite gives its `-wal` and `-shm` the same. An
    /// existing file is looked at read-only first: one that is not a felica history (see
    /// ``applicationID``) or was written by a newer felica is refused before a byte of it
    /// changes.
    public init(path: String, busyTimeoutMilliseconds: Int32 = 15_000, upTo version: Int = HistoryStore.schemaVersion) throws(HistoryError) {
        try SQLiteConnection.load()
        if try !Self.createFile(path) {
            _ = try Self.inspect(path, busyTimeoutMilliseconds: busyTimeoutMilliseconds)
        }
        db = try SQLiteConnection(path: path, access: .readWrite, busyTimeout: busyTimeoutMilliseconds)
        isReadOnly = false
        // WAL: readers never block the saver, and a save is one append to the log that
        // either reaches its commit record or is ignored on the next open.
        let mode = try db.text("PRAGMA journal_mode=WAL")
        guard mode?.lowercased() == "wal" else {
            throw HistoryError(.sqlite, "history database \(path): could not switch to WAL mode (journal mode is \(mode ?? "unknown"))")
        }
        // A WAL that grew past a few MB (a large save, a long export holding a snapshot) is
        // cut back to this size once checkpointed.
        try db.exec("PRAGMA synchronous=FULL; PRAGMA foreign_keys=ON; PRAGMA journal_size_limit=\(Self.walSizeLimit)")
        try migrate(upTo: version)
        db.activity = "using it"
    }

    /// Opens an existing database to read it: nothing is created, written, migrated or
    /// switched to WAL. A path with no database, or an empty one, is an error that says so.
    public init(readingAt path: String, busyTimeoutMilliseconds: Int32 = 15_000) throws(HistoryError) {
        var st = stat()
        let missing = HistoryError(.noDatabase, "there is no history database at \(path): nothing was saved there")
        guard stat(path, &st) == 0 else {
            if errno == ENOENT || errno == ENOTDIR { throw missing }
            throw HistoryError(.cannotOpen, "cannot open the history database \(path): \(String(cString: strerror(errno)))")
        }
        guard st.st_size > 0, let found = try Self.inspect(path, busyTimeoutMilliseconds: busyTimeoutMilliseconds), found.version > 0 else {
            throw missing
        }
        db = try SQLiteConnection(path: path, access: .readOnly, busyTimeout: busyTimeoutMilliseconds)
        isReadOnly = true
        db.activity = "reading it"
    }

    /// The largest the WAL file is left after a checkpoint (`PRAGMA journal_size_limit`).
    static let walSizeLimit = 4 << 20

    /// The default file: `$XDG_DATA_HOME/felica/history.sqlite3`, else
    /// `~/.local/share/felica/history.sqlite3`.
    public static func defaultPath(environment: [String: String]) -> String? {
        if let data = environment["XDG_DATA_HOME"], data.hasPrefix("/") { return data + "/felica/history.sqlite3" }
        guard let home = environment["HOME"], !home.isEmpty else { return nil }
        return home + "/.local/share/felica/history.sqlite3"
    }

    /// Creates the file (0600) and its missing directories (0700); false when it was there.
    static func createFile(_ path: String) throws(HistoryError) -> Bool {
        if let slash = path.lastIndex(of: "/"), slash != path.startIndex,
           let failed = SystemCalls.makePrivateDirectories(String(path[..<slash])) {
            throw HistoryError(.cannotOpen, "cannot create the directory \(failed.path) for the history database: \(String(cString: strerror(failed.errno)))")
        }
        let fd = SystemCalls.openPrivate(path, truncate: false, exclusive: true)
        if fd >= 0 {
            close(fd)
            return true
        }
        guard errno == EEXIST else {
            throw HistoryError(.cannotOpen, "cannot create the history database \(path): \(String(cString: strerror(errno)))")
        }
        return false
    }

    /// What an existing file holds, as far as telling ours from others goes.
    struct Contents {
        var applicationID: Int
        var version: Int
        var tables: [String]
    }

    /// Looks at an existing file without changing it, and refuses what is not a felica
    /// history of a schema this code knows. nil for an empty file (a new database).
    ///
    /// A WAL-mode file with no `-wal` beside it is read as immutable, so that even the
    /// companions a read-only connection would create are not made; with a `-wal`, a
    /// read-only connection reads it too.
    static func inspect(_ path: String, busyTimeoutMilliseconds: Int32) throws(HistoryError) -> Contents? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            throw HistoryError(.cannotOpen, "cannot open the history database \(path): \(String(cString: strerror(errno)))")
        }
        var st = stat()
        fstat(fd, &st)
        var header = [UInt8](repeating: 0, count: 100)
        let n = header.withUnsafeMutableBytes { read(fd, $0.baseAddress, 100) }
        close(fd)
        guard (st.st_mode & S_IFMT) == S_IFREG else {
            throw HistoryError(.notADatabase, "\(path) is not a history database (not a regular file)")
        }
        if n == 0 { return nil }
        guard n == 100, header.starts(with: Array("SQLite format 3\u{0}".utf8)) else {
            throw HistoryError(.notADatabase, "\(path) is not a history database (not an SQLite file); felica leaves it as it is")
        }
        let wal = header[18] == 2 && access(path + "-wal", F_OK) == 0
        let look = try SQLiteConnection(path: path, access: header[18] == 2 && !wal ? .immutable : .readOnly,
                                        busyTimeout: busyTimeoutMilliseconds)
        look.activity = "looking at what it holds"
        let contents = Contents(
            applicationID: try look.integer("PRAGMA application_id") ?? 0, version: try look.integer("PRAGMA user_version") ?? 0,
            tables: try look.texts("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name"))
        try check(contents, path: path)
        return contents
    }

    /// Refuses another program's file and a newer felica's.
    static func check(_ c: Contents, path: String) throws(HistoryError) {
        let ours = c.applicationID == applicationID
            || (c.applicationID == 0 && c.tables.isEmpty && c.version == 0)
            || (c.applicationID == 0 && c.tables.contains("records") && Set(c.tables).isSubset(of: ourTables) && c.version >= 1)
        guard ours else {
            var what: [String] = []
            if c.applicationID != 0 { what.append("application id \(c.applicationID)") }
            if !c.tables.isEmpty {
                what.append("table\(c.tables.count == 1 ? "" : "s") " + c.tables.prefix(4).joined(separator: ", ") + (c.tables.count > 4 ? ", …" : ""))
            }
            if c.version != 0 { what.append("schema version \(c.version)") }
            throw HistoryError(.notOurs, "\(path) is an SQLite database of another program (\(what.joined(separator: "; "))), not a felica history; felica leaves it as it is")
        }
        if c.version > schemaVersion { throw newer(c.version, path: path) }
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
    /// Whether a reading was ever saved: a database that holds none (just made, its first
    /// save failed) holds nothing of the user's.
    public func holdsReadings() throws(HistoryError) -> Bool {
        guard try version() > 0 else { return false }
        return try db.integer("SELECT EXISTS(SELECT 1 FROM readings)") ?? 0 != 0
    }

    public func version() throws(HistoryError) -> Int { try db.integer("PRAGMA user_version") ?? 0 }

    /// The file's `PRAGMA application_id`.
    func applicationID() throws(HistoryError) -> Int { try db.integer("PRAGMA application_id") ?? 0 }

    /// Brings the schema to `target` and, at the current schema, marks the file as ours.
    private func migrate(upTo target: Int) throws(HistoryError) {
        db.activity = "bringing its schema up to date"
        let stamp = target == Self.schemaVersion
        let found = try version()
        let marked = try applicationID() == Self.applicationID
        if found >= target && (marked || !stamp) {
            if found > Self.schemaVersion { throw Self.newer(found, path: path) }
            return
        }
        try db.exec("BEGIN IMMEDIATE")
        do throws(HistoryError) {
            // Checked again under the write lock: another process may have migrated meanwhile.
            let current = try version()
            if current > Self.schemaVersion { throw Self.newer(current, path: path) }
            if current < target {
                for step in current..<target { try db.exec(Self.migrations[step]) }
                try db.exec("PRAGMA user_version=\(target)")
            }
            if stamp { try db.exec("PRAGMA application_id=\(Self.applicationID)") }
            try db.exec("COMMIT")
        } catch {
            try? db.exec("ROLLBACK")
            throw error
        }
    }

    private static func newer(_ v: Int, path: String) -> HistoryError {
        HistoryError(.newerSchema, "the history database \(path) has schema version \(v), written by a newer felica (this one knows up to \(Self.schemaVersion)); use that version")
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
    ///
    /// A reading that brings nothing new (no record, no gap) writes nothing: it is looked
    /// at first in a read transaction, which never waits for another process's write lock,
    /// so the database grows with records, not with taps. Only a reading with something to
    /// keep takes the write lock, and is merged again under it.
    public func save(_ reading: Reading) throws(HistoryError) -> SaveResult {
        guard !isReadOnly else {
            throw HistoryError(.cannotOpen, "the history database \(path) was opened read-only; nothing can be saved through it")
        }
        db.activity = "saving a reading of card \(reading.card)"
        defer { db.activity = "using it" }
        try db.exec("BEGIN")
        let look: SaveResult
        do throws(HistoryError) {
            look = try merge(reading, writing: false) {}
            try db.exec("COMMIT")
        } catch {
            try? db.exec("ROLLBACK")
            throw error
        }
        if look.added == 0 && look.gaps.isEmpty { return look }

        var statement = 0
        func step() {
            statement += 1
            beforeSaveStatement?(statement)
        }
        step()
        try db.exec("BEGIN IMMEDIATE")
        do throws(HistoryError) {
            let result = try merge(reading, writing: true, step: step)
            step()
            try db.exec("COMMIT")
            return result
        } catch {
            try? db.exec("ROLLBACK")
            throw error
        }
    }

    /// The merge of one reading inside the caller's transaction. With `writing` false it
    /// only counts what a save would add (the readings row, records and gaps are not
    /// written); `step` runs before each statement that writes or decides a write.
    private func merge(_ reading: Reading, writing: Bool, step: () -> Void) throws(HistoryError) -> SaveResult {
        var result = SaveResult()
        // The readings row is written with the first record or gap it brings, so a merge
        // that finds everything kept (another process saved the same card first) writes nothing.
        var readingID: Int?
        func reading_id() throws(HistoryError) -> Int {
            if let readingID { return readingID }
            step()
            let insertReading = try db.prepare("INSERT INTO readings(card, read_at, device, records, added) VALUES(?1, ?2, ?3, 0, 0) RETURNING id")
            guard let id = try insertReading.row([.text(reading.card), .text(reading.readAt), reading.device.map { .text($0) }], { $0.int(0) }) ?? nil else {
                throw HistoryError(.sqlite, "history database \(path): \(db.activity): the new reading got no id")
            }
            readingID = id
            return id
        }
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
                let kept = try newest.row([.text(reading.card), .text(profile)]) { $0.int(0) } ?? nil
                ordinals = Self.unwrap(purse.records.map { $0.sequence ?? 0 }, modulus: purse.profile.sequenceModulus, after: kept)
                if let kept, let oldest = ordinals.last!, oldest > kept + 1 {
                    let modulus = purse.profile.sequenceModulus
                    let gap = Gap(card: reading.card, purse: profile, afterSequence: kept % modulus,
                                  beforeSequence: purse.records.last!.sequence ?? 0, missing: oldest - kept - 1)
                    if writing {
                        let id = try reading_id()
                        step()
                        try insertGap.run([.int(id), .text(reading.card), .text(profile), .int(gap.afterSequence),
                                           .int(gap.beforeSequence), .int(gap.missing)])
                    }
                    result.gaps.append(gap)
                }
            }
            // Oldest first, so an amount the card could not give comes from the kept record before it.
            for i in purse.records.indices.reversed() {
                var r = purse.records[i]
                let ordinal = ordinals[i]
                let key = ordinal.map { "s\($0)" } ?? "c" + r.fingerprint
                step()
                if let kept = try find.row([.text(reading.card), .text(profile), .text(key)], { $0.text(0) }) {
                    if kept == r.fingerprint {
                        result.alreadyKept += 1
                    } else {
                        result.conflicts.append("\(profile) sequence \(r.sequence.map(String.init) ?? "-") of \(r.dayText): the kept record differs from the one read; the kept one stays")
                    }
                    continue
                }
                result.added += 1
                guard writing else { continue }
                if r.amount == nil, let ordinal {
                    step()
                    if let before = try balanceAt.row([.text(reading.card), .text(profile), .int(ordinal - 1)], { $0.int(0) }) ?? nil {
                        r.amount = r.balance - before
                    }
                }
                let id = try reading_id()
                step()
                try insert.run([
                    .text(reading.card), .text(profile), .text(key), ordinal.map { .int($0) }, r.sequence.map { .int($0) },
                    .text(r.dayText), r.timeText.map { .text($0) }, .text(r.kind.rawValue), .text(r.detail), r.from.map { .text($0) },
                    r.to.map { .text($0) }, r.amount.map { .int($0) }, .int(r.balance), .text(r.fingerprint), .int(id),
                ])
            }
        }
        if let readingID {
            step()
            try db.prepare("UPDATE readings SET records = ?1, added = ?2, gaps = ?3 WHERE id = ?4")
                .run([.int(result.read), .int(result.added), .int(result.gaps.count), .int(readingID)])
        }
        return result
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
        /// The card; nil for every card.
        public var card: IDm?
        /// The purse; nil for every purse.
        public var purse: PurseProfile?
        /// First day, inclusive (its time of day, if any, is not looked at).
        public var from: CardDate?
        /// Last day, inclusive (its time of day, if any, is not looked at).
        public var to: CardDate?
        /// Newest first (else oldest first).
        public var newestFirst: Bool

        /// Every record, oldest first, unless narrowed.
        public init(card: IDm? = nil, purse: PurseProfile? = nil, from: CardDate? = nil, to: CardDate? = nil, newestFirst: Bool = false) {
            self.card = card; self.purse = purse; self.from = from; self.to = to; self.newestFirst = newestFirst
        }

        /// The query's values as the database holds them: card, first day, last day, purse.
        var boundValues: [SQLValue?] {
            [card.map { .text($0.hex.lowercased()) }, from.map { .text($0.isoDate) }, to.map { .text($0.isoDate) },
             purse.map { .text($0.rawValue) }]
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
        try s.bind(query.boundValues)
        defer { s.reset() }
        while try s.step() {
            try body(try keptRecord(s))
        }
    }

    /// The typed record of a `records` row: text becomes types here, and a row no version of
    /// this program wrote is an error naming it (the file was changed by hand or by another
    /// program).
    private func keptRecord(_ s: SQLiteConnection.Statement) throws(HistoryError) -> KeptRecord {
        let cardText = s.text(0) ?? "", purseText = s.text(1) ?? "", day = s.text(3) ?? "", time = s.text(4), kindText = s.text(5) ?? ""
        let row = "a record of card \(cardText) \(purseText) on \(day)"
        guard let card = try? IDm(hex: cardText) else { throw HistoryError(.notOurs, "\(path): \(row) names no card (\"\(cardText)\" is not 16 hex digits)") }
        guard let purse = PurseProfile(rawValue: purseText) else { throw HistoryError(.notOurs, "\(path): \(row) has a purse this version does not know") }
        guard let date = CardDate(keptDay: day, time: time, utcOffsetMinutes: purse.utcOffsetMinutes) else {
            throw HistoryError(.notOurs, "\(path): \(row) has a day or time that is not one (\"\(day)\" \"\(time ?? "")\")")
        }
        guard let kind = TransactionKind(rawValue: kindText) else { throw HistoryError(.notOurs, "\(path): \(row) has a type this version does not know (\"\(kindText)\")") }
        return KeptRecord(card: card, purse: purse, sequence: s.int(2), date: date, kind: kind, detail: s.text(6) ?? "",
                          from: s.text(7), to: s.text(8), amount: s.int(9), balance: s.int(10) ?? 0)
    }

    /// The records the query selects, as an array.
    public func records(_ query: Query) throws -> [KeptRecord] {
        var out: [KeptRecord] = []
        try forEach(query) { out.append($0) }
        return out
    }

    /// Gaps recorded for the query's card (every card when nil), oldest first.
    public func gaps(card: IDm? = nil) throws(HistoryError) -> [Gap] {
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
        // A version-1 file opened read-only (not migrated) has no gaps table.
        guard try version() >= 2 else { return [] }
        let s = try db.prepare("""
            SELECT g.card, g.purse, g.after_sequence, g.before_sequence, g.missing,
                (SELECT date FROM records r WHERE r.card = g.card AND r.purse = g.purse AND r.sequence = g.after_sequence
                    AND r.reading <> g.reading ORDER BY r.ordinal DESC LIMIT 1),
                (SELECT date FROM records r WHERE r.card = g.card AND r.purse = g.purse AND r.sequence = g.before_sequence
                    AND r.reading = g.reading ORDER BY r.ordinal LIMIT 1)
            FROM gaps g WHERE (?1 IS NULL OR g.card = ?1) AND (?2 IS NULL OR g.purse = ?2) ORDER BY g.id
            """)
        try s.bind(Array(query.boundValues.prefix(1)) + [query.boundValues[3]])
        defer { s.reset() }
        var out: [Gap] = []
        while try s.step() {
            let g = Gap(card: s.text(0) ?? "", purse: s.text(1) ?? "", afterSequence: s.int(2) ?? 0,
                        beforeSequence: s.int(3) ?? 0, missing: s.int(4) ?? 0, afterDate: s.text(5), beforeDate: s.text(6))
            if let to = query.to?.isoDate, let after = g.afterDate, after > to { continue }
            if let from = query.from?.isoDate, let before = g.beforeDate, before < from { continue }
            out.append(g)
        }
        return out
    }

    /// Records kept, over every card.
    public func count() throws(HistoryError) -> Int { try db.integer("SELECT count(*) FROM records") ?? 0 }
}
