internal import CSQLite

/// One SQLite connection: every C call goes through ``check(_:_:)``, which turns a result
/// code into a ``HistoryError`` in one place.
///
/// Not Sendable: a connection belongs to the one task that opened it.
final class SQLiteConnection {
    private var handle: OpaquePointer?
    let path: String

    /// Opens (creating when missing) the database at `path`.
    init(path: String, busyTimeout milliseconds: Int32) throws(HistoryError) {
        self.path = path
        var db: OpaquePointer?
        let rc = sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nil)
        guard rc == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            sqlite3_close(db)
            throw HistoryError(.cannotOpen, "cannot open the history database \(path): \(message)")
        }
        handle = db
        sqlite3_extended_result_codes(db, 1)
        sqlite3_busy_timeout(db, milliseconds)
    }

    deinit { sqlite3_close(handle) }

    /// Turns a result code into an error naming what was being done.
    @discardableResult
    func check(_ rc: Int32, _ what: @autoclosure () -> String) throws(HistoryError) -> Int32 {
        switch rc {
        case SQLITE_OK, SQLITE_ROW, SQLITE_DONE: return rc
        default:
            let message = String(cString: sqlite3_errmsg(handle))
            let primary = rc & 0xFF
            if primary == SQLITE_BUSY || primary == SQLITE_LOCKED {
                throw HistoryError(.busy, "the history database \(path) stayed locked by another process (\(what()): \(message)); try again")
            }
            if primary == SQLITE_NOTADB {
                throw HistoryError(.notADatabase, "\(path) is not a history database (\(message))")
            }
            throw HistoryError(.sqlite, "history database \(path): \(what()): \(message) (SQLite code \(rc))")
        }
    }

    /// Runs SQL that returns no rows (one or more statements).
    func exec(_ sql: String) throws(HistoryError) {
        try check(sqlite3_exec(handle, sql, nil, nil, nil), sql.prefix(60).description)
    }

    /// Prepares one statement.
    func prepare(_ sql: String) throws(HistoryError) -> Statement {
        var stmt: OpaquePointer?
        try check(sqlite3_prepare_v2(handle, sql, -1, &stmt, nil), "preparing \(sql.prefix(60))")
        guard let stmt else { throw HistoryError(.sqlite, "history database \(path): empty statement") }
        return Statement(stmt, connection: self, sql: sql)
    }

    /// One integer from a query such as `PRAGMA user_version`.
    func integer(_ sql: String) throws(HistoryError) -> Int? {
        let s = try prepare(sql)
        return try s.step() ? s.int(0) : nil
    }

    /// One text from a query such as `PRAGMA journal_mode`.
    func text(_ sql: String) throws(HistoryError) -> String? {
        let s = try prepare(sql)
        return try s.step() ? s.text(0) : nil
    }

    /// A prepared statement; finalized when released.
    final class Statement {
        private let stmt: OpaquePointer
        private let connection: SQLiteConnection
        private let sql: String

        init(_ stmt: OpaquePointer, connection: SQLiteConnection, sql: String) {
            self.stmt = stmt; self.connection = connection; self.sql = sql
        }

        deinit { sqlite3_finalize(stmt) }

        /// Binds values to ?1, ?2, ... in order (nil binds NULL).
        func bind(_ values: [SQLValue?]) throws(HistoryError) {
            try connection.check(sqlite3_reset(stmt), "resetting \(sql.prefix(40))")
            sqlite3_clear_bindings(stmt)
            for (i, v) in values.enumerated() {
                let index = Int32(i + 1)
                let rc: Int32
                switch v {
                case nil: rc = sqlite3_bind_null(stmt, index)
                case .int(let n)?: rc = sqlite3_bind_int64(stmt, index, Int64(n))
                case .text(let s)?: rc = sqlite3_bind_text(stmt, index, s, -1, felica_sqlite_transient())
                }
                try connection.check(rc, "binding parameter \(index) of \(sql.prefix(40))")
            }
        }

        /// Steps once: true when a row is ready, false when done.
        func step() throws(HistoryError) -> Bool {
            try connection.check(sqlite3_step(stmt), sql.prefix(60).description) == SQLITE_ROW
        }

        /// Binds and runs a statement that returns no rows.
        func run(_ values: [SQLValue?]) throws(HistoryError) {
            try bind(values)
            _ = try step()
        }

        func int(_ column: Int32) -> Int? {
            sqlite3_column_type(stmt, column) == SQLITE_NULL ? nil : Int(sqlite3_column_int64(stmt, column))
        }

        func text(_ column: Int32) -> String? {
            guard let p = sqlite3_column_text(stmt, column) else { return nil }
            return String(cString: p)
        }
    }
}

/// A value bound to a statement.
enum SQLValue {
    case int(Int)
    case text(String)
}
