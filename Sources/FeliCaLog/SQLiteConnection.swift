internal import CSQLite

#if canImport(Glibc)
import Glibc
#endif

/// One SQLite connection: every C call goes through ``check(_:)``, which turns a result
/// code into a ``HistoryError`` in one place.
///
/// Messages name the file and what was being done (``activity``), never SQL text: a user
/// gets "saving a reading: database or disk is full", not the statement that failed.
///
/// Not Sendable: a connection belongs to the one task that opened it.
final class SQLiteConnection {
    private var handle: OpaquePointer?
    let path: String
    /// How long a statement waits for another process's lock, in milliseconds.
    let busyTimeout: Int32
    /// What the connection is doing, in words, for error messages ("saving a reading").
    var activity = "opening it"

    /// How a connection opens its file.
    enum Access {
        /// Read and write an existing file (an empty one becomes a database).
        case readWrite
        /// Read only: nothing is written, migrated or switched.
        case readOnly
        /// Read only, and the file is taken to be unchanging: no `-wal` or `-shm` companion
        /// is created. Only for a first look at a file whose WAL is absent.
        case immutable
    }

    /// Opens the database at `path`, which must exist.
    init(path: String, access: Access, busyTimeout milliseconds: Int32) throws(HistoryError) {
        try Self.load()
        self.path = path
        busyTimeout = milliseconds
        var db: OpaquePointer?
        let rc: Int32
        switch access {
        case .readWrite:
            rc = felica_sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nil)
        case .readOnly:
            rc = felica_sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nil)
        case .immutable:
            rc = felica_sqlite3_open_v2(Self.uri(path) + "?mode=ro&immutable=1", &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX, nil)
        }
        guard rc == SQLITE_OK, let db else {
            let message = db.map { String(cString: felica_sqlite3_errmsg($0)) } ?? "out of memory"
            felica_sqlite3_close(db)
            throw HistoryError(.cannotOpen, "cannot open the history database \(path): \(message)")
        }
        handle = db
        felica_sqlite3_extended_result_codes(db, 1)
        felica_sqlite3_busy_timeout(db, milliseconds)
    }

    deinit { felica_sqlite3_close(handle) }

    /// Throws when SQLite could not be loaded: before anything is created for a database.
    static func load() throws(HistoryError) {
        if let unavailable { throw HistoryError(.cannotOpen, unavailable) }
    }

    /// SQLite loaded (`libsqlite3.so.0`), once per process: nil when loaded, else what failed
    /// and the package that brings it. felica does not link SQLite, so that a start that
    /// keeps no history does not pay for binding it.
    private static let unavailable: String? = {
        var message = [CChar](repeating: 0, count: 512)
        guard felica_sqlite_load(&message, message.count) != 0 else { return nil }
        let why = String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return "the history database needs SQLite, which could not be loaded (\(why)); install the libsqlite3-0 package"
    }()

    /// `file:` URI of a path: every byte outside the unreserved set percent-encoded, so a
    /// `?`, `#` or `%` in a file name stays part of the name.
    static func uri(_ path: String) -> String {
        var out = "file:"
        for byte in path.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "/"), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = Array("0123456789ABCDEF".unicodeScalars)
                out += "%"
                out.unicodeScalars.append(hex[Int(byte >> 4)])
                out.unicodeScalars.append(hex[Int(byte & 0xF)])
            }
        }
        return out
    }

    /// Turns a result code into an error naming the file and the ``activity``.
    @discardableResult
    func check(_ rc: Int32) throws(HistoryError) -> Int32 {
        switch rc {
        case SQLITE_OK, SQLITE_ROW, SQLITE_DONE: return rc
        default:
            let message = String(cString: felica_sqlite3_errmsg(handle))
            let primary = rc & 0xFF
            if primary == SQLITE_BUSY || primary == SQLITE_LOCKED {
                let waited = busyTimeout >= 1000 && busyTimeout % 1000 == 0 ? "\(busyTimeout / 1000) s" : "\(busyTimeout) ms"
                throw HistoryError(.busy, "the history database \(path) stayed locked by another process for \(waited) while \(activity)")
            }
            if primary == SQLITE_FULL || (primary == SQLITE_IOERR && felica_sqlite3_system_errno(handle) == ENOSPC) {
                // A disk I/O error whose cause is a full disk (extending the -shm or -wal file).
                throw HistoryError(.sqlite, "no space left on the device holding the history database \(path) while \(activity): free some space and run the command again")
            }
            if primary == SQLITE_NOTADB {
                throw HistoryError(.notADatabase, "\(path) is not a history database (\(message))")
            }
            throw HistoryError(.sqlite, "history database \(path): \(activity): \(message) (SQLite code \(rc))")
        }
    }

    /// Runs SQL that returns no rows (one or more statements).
    func exec(_ sql: String) throws(HistoryError) {
        try check(felica_sqlite3_exec(handle, sql))
    }

    /// Prepares one statement.
    func prepare(_ sql: String) throws(HistoryError) -> Statement {
        var stmt: OpaquePointer?
        try check(felica_sqlite3_prepare_v2(handle, sql, -1, &stmt, nil))
        guard let stmt else { throw HistoryError(.sqlite, "history database \(path): \(activity): an empty statement") }
        return Statement(stmt, connection: self)
    }

    /// One integer from a query such as `PRAGMA user_version`.
    func integer(_ sql: String) throws(HistoryError) -> Int? {
        try prepare(sql).row([]) { $0.int(0) } ?? nil
    }

    /// One text from a query such as `PRAGMA journal_mode`.
    func text(_ sql: String) throws(HistoryError) -> String? {
        try prepare(sql).row([]) { $0.text(0) } ?? nil
    }

    /// The first column of every row of a query.
    func texts(_ sql: String) throws(HistoryError) -> [String] {
        let s = try prepare(sql)
        var out: [String] = []
        while try s.step() { out.append(s.text(0) ?? "") }
        return out
    }

    /// A prepared statement; finalized when released.
    ///
    /// A statement that has given a row and was not reset keeps a read transaction open
    /// after `COMMIT`, and SQLite cannot checkpoint the WAL past it: ``row(_:_:)`` and
    /// ``run(_:)`` reset the statement as soon as they are done with it.
    final class Statement {
        private let stmt: OpaquePointer
        private let connection: SQLiteConnection

        init(_ stmt: OpaquePointer, connection: SQLiteConnection) {
            self.stmt = stmt; self.connection = connection
        }

        deinit { felica_sqlite3_finalize(stmt) }

        /// Binds values to ?1, ?2, ... in order (nil binds NULL).
        func bind(_ values: [SQLValue?]) throws(HistoryError) {
            try connection.check(felica_sqlite3_reset(stmt))
            felica_sqlite3_clear_bindings(stmt)
            for (i, v) in values.enumerated() {
                let index = Int32(i + 1)
                let rc: Int32
                switch v {
                case nil: rc = felica_sqlite3_bind_null(stmt, index)
                case .int(let n)?: rc = felica_sqlite3_bind_int64(stmt, index, Int64(n))
                case .text(let s)?: rc = felica_sqlite3_bind_text_transient(stmt, index, s)
                }
                try connection.check(rc)
            }
        }

        /// Steps once: true when a row is ready, false when done.
        func step() throws(HistoryError) -> Bool {
            try connection.check(felica_sqlite3_step(stmt)) == SQLITE_ROW
        }

        /// Ends the statement's run, releasing what it holds (its read of the database).
        func reset() {
            felica_sqlite3_reset(stmt)
        }

        /// Binds, steps once and reads the first row with `read` (nil when there is none),
        /// then resets.
        func row<T>(_ values: [SQLValue?], _ read: (Statement) -> T) throws(HistoryError) -> T? {
            try bind(values)
            defer { reset() }
            return try step() ? read(self) : nil
        }

        /// Binds and runs a statement that returns no rows, then resets it.
        func run(_ values: [SQLValue?]) throws(HistoryError) {
            try bind(values)
            defer { reset() }
            _ = try step()
        }

        func int(_ column: Int32) -> Int? {
            felica_sqlite3_column_type(stmt, column) == SQLITE_NULL ? nil : Int(felica_sqlite3_column_int64(stmt, column))
        }

        func text(_ column: Int32) -> String? {
            guard let p = felica_sqlite3_column_text(stmt, column) else { return nil }
            return String(cString: p)
        }
    }
}

/// A value bound to a statement.
enum SQLValue {
    case int(Int)
    case text(String)
}
