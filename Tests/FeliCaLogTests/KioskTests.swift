import FeliCa
import FeliCaCards
@testable import FeliCaLog
import Foundation
import Testing

/// Bytes of a file, 0 when it is not there.
func fileSize(_ path: String) -> Int {
    var st = stat()
    return stat(path, &st) == 0 ? Int(st.st_size) : 0
}

/// A desk where 40 cards are tapped 20,000 times: each tap is a reading of the card's last
/// 20 records, and about one tap in eight brings a new record. The WAL stays within a few
/// MB (statements are reset before COMMIT, so SQLite's automatic checkpoint runs), a tap
/// that brings nothing writes nothing (no readings row, not a byte of the files), and the
/// database grows with the records it keeps.
@Test func twentyThousandTapsKeepTheDatabaseSmall() throws {
    let path = temporaryDatabase()
    let store = try HistoryStore(path: path)
    let cards = (0..<40).map { "01011203" + String(0x1000_0000 + $0 * 7919, radix: 16).suffix(8) }
    var newest = [Int](repeating: 19, count: cards.count)
    var x: UInt32 = 0x2545_F491
    var writes = 0, added = 0, largestWAL = 0
    func tap(_ c: Int, new: Bool) throws {
        if new { newest[c] += 1 }
        let r = try store.save(reading(card: cards[c], Array(newest[c] - 19...newest[c])))
        if r.added > 0 { writes += 1 }
        added += r.added
    }
    for i in 0..<20_000 {
        x ^= x << 13; x ^= x >> 17; x ^= x << 5
        try tap(Int(x % 40), new: (x >> 8) % 8 == 0)
        if i % 50 == 0 { largestWAL = max(largestWAL, fileSize(path + "-wal")) }
    }
    #expect(writes > 2_000 && writes < 3_500, "\(writes) taps brought records")
    #expect(try store.count() == added)
    #expect(added == 40 * 20 + writes - 40, "every card's first tap adds 20, each later writing tap one")
    // Without the checkpoint, each writing save would add its pages to the WAL: tens of MB here.
    #expect(largestWAL > 0 && largestWAL <= HistoryStore.walSizeLimit + (1 << 20), "largest WAL: \(largestWAL) bytes")
    #expect(try store.db.integer("SELECT count(*) FROM readings") == writes, "one readings row per tap that brought something")
    // The database's own size (its pages, wherever they are now): records and their index,
    // the readings rows, nothing per tap.
    let bytes = try #require(try store.db.integer("PRAGMA page_count")) * (try #require(try store.db.integer("PRAGMA page_size")))
    #expect(bytes / added < 300, "\(bytes) bytes for \(added) records and \(writes) readings")

    // 2,000 more taps that bring nothing: not a byte written.
    let before = (fileSize(path), fileSize(path + "-wal"), try store.db.integer("PRAGMA data_version"))
    for i in 0..<2_000 { try tap(i % 40, new: false) }
    let dataVersion = try store.db.integer("PRAGMA data_version")
    #expect((fileSize(path), fileSize(path + "-wal"), dataVersion) == before)
    #expect(try store.count() == added)
    #expect(try store.integrityCheck() == "ok")
}

/// A save that brings nothing does not wait for another process's write lock.
@Test func aTapThatBringsNothingDoesNotWaitForTheLock() throws {
    let path = temporaryDatabase()
    _ = try HistoryStore(path: path).save(reading(Array(1...20)))
    let holder = try HistoryStore(path: path)
    try holder.db.exec("BEGIN IMMEDIATE")
    defer { try? holder.db.exec("ROLLBACK") }
    let store = try HistoryStore(path: path, busyTimeoutMilliseconds: 200)
    #expect(try store.save(reading(Array(1...20))).alreadyKept == 20)
    do {
        _ = try store.save(reading(Array(1...21)))
        Issue.record("saved a new record while another connection held the write lock")
    } catch {
        #expect(error.code == .busy)
        #expect(error.reason == "the history database \(path) stayed locked by another process for 200 ms while saving a reading of card 0101120312345678")
    }
}

/// A statement left holding a row keeps a read transaction open past COMMIT, and SQLite's
/// automatic checkpoint cannot take the WAL back: `row` resets its statement at once, so
/// a statement kept for the next save (as the merge keeps its look-ups) holds nothing.
@Test func aStatementKeptAfterItsRowHoldsNoReadTransaction() throws {
    let path = temporaryDatabase()
    let store = try HistoryStore(path: path)
    _ = try store.save(reading(Array(1...20)))
    let look = try store.db.prepare("SELECT count(*) FROM records WHERE card = ?1")
    let write = try store.db.prepare("INSERT INTO readings(card, read_at, records, added) VALUES(?1, 'x', 0, 0)")
    var largestWAL = 0
    for i in 0..<3_000 {
        #expect(try look.row([.text("0101120312345678")]) { $0.int(0) } == 20)
        try store.db.exec("BEGIN IMMEDIATE")
        try write.run([.text(String(repeating: "c", count: 2_000) + "\(i)")])
        try store.db.exec("COMMIT")
        largestWAL = max(largestWAL, fileSize(path + "-wal"))
    }
    #expect(largestWAL <= HistoryStore.walSizeLimit + (1 << 20), "largest WAL: \(largestWAL) bytes")
}

// MARK: - Only our own files, private

/// Makes an SQLite file with Python's sqlite3 module (another program, as far as felica
/// can tell), running `sql` in it.
func makeForeignDatabase(_ path: String, _ sql: String) throws {
    try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
    let p = Process()
    p.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
    p.arguments = ["-c", "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.executescript(sys.argv[2]); c.close()", path, sql]
    try p.run()
    p.waitUntilExit()
    try #require(p.terminationStatus == 0)
}

/// The store at `path`, opened to save or to read.
func openStore(_ path: String, readOnly: Bool) throws(HistoryError) -> HistoryStore {
    readOnly ? try HistoryStore(readingAt: path) : try HistoryStore(path: path)
}

/// The files in the database's directory, with their bytes.
func directoryContents(_ path: String) throws -> [String: Data] {
    let dir = (path as NSString).deletingLastPathComponent
    var out: [String: Data] = [:]
    for name in try FileManager.default.contentsOfDirectory(atPath: dir) {
        out[name] = try Data(contentsOf: URL(fileURLWithPath: dir + "/" + name))
    }
    return out
}

@Test(arguments: [
    ("a browser's history in WAL mode", "PRAGMA journal_mode=WAL; PRAGMA user_version=74; CREATE TABLE moz_places(id INTEGER PRIMARY KEY, url TEXT); INSERT INTO moz_places(url) VALUES('https://example.org/');", "table moz_places; schema version 74"),
    ("a rollback-journal file of notes", "CREATE TABLE notes(body TEXT); INSERT INTO notes VALUES('x');", "table notes"),
    ("a table named as ours among others", "CREATE TABLE readings(meter TEXT); CREATE TABLE meters(id);", "tables meters, readings"),
    ("ours by name, another program's id", "PRAGMA application_id=1234; CREATE TABLE records(card TEXT);", "application id 1234; table records"),
    ("our tables, no schema version", "CREATE TABLE records(card TEXT); CREATE TABLE readings(id);", "tables readings, records"),
])
func anotherProgramsDatabaseIsRefusedUntouched(_ what: String, _ sql: String, _ named: String) throws {
    let path = temporaryDatabase()
    try makeForeignDatabase(path, sql)
    let before = try directoryContents(path)
    for readOnly in [false, true] {
        do {
            _ = try openStore(path, readOnly: readOnly)
            Issue.record("\(what): opened")
        } catch {
            #expect(error.code == .notOurs, "\(what): \(error)")
            #expect(error.reason == "\(path) is an SQLite database of another program (\(named)), not a felica history; felica leaves it as it is")
        }
        #expect(try directoryContents(path) == before, "\(what): a byte or a file changed")
    }
}

/// A newer felica's file in rollback-journal mode: refused before the switch to WAL.
@Test func aNewerSchemaIsRefusedBeforeAnythingIsWritten() throws {
    let path = temporaryDatabase()
    try makeForeignDatabase(path, "PRAGMA application_id=\(HistoryStore.applicationID); PRAGMA user_version=3; CREATE TABLE records(card TEXT);")
    let before = try directoryContents(path)
    for readOnly in [false, true] {
        #expect { try openStore(path, readOnly: readOnly) } throws: { ($0 as? HistoryError)?.code == .newerSchema }
        #expect(try directoryContents(path) == before)
    }
}

/// A history made before the application id (tables and version only) is ours: opened,
/// and marked.
@Test func aHistoryFromBeforeTheApplicationIDIsOpenedAndMarked() throws {
    let path = temporaryDatabase()
    do {
        let old = try HistoryStore(path: path)
        _ = try old.save(reading(Array(1...3)))
        try old.db.exec("PRAGMA application_id=0")
    }
    let store = try HistoryStore(path: path)
    #expect(try store.applicationID() == HistoryStore.applicationID)
    #expect(try store.count() == 3)
}

/// `log show` and `log export` open read-only: a missing file is an error and nothing is
/// created; a history is read without a byte changing; nothing can be saved through it.
@Test func openingToReadCreatesNothing() throws {
    let path = temporaryDatabase()
    let dir = (path as NSString).deletingLastPathComponent
    #expect { try HistoryStore(readingAt: path) } throws: {
        ($0 as? HistoryError)?.code == .noDatabase && ($0 as? HistoryError)?.reason.contains(path) == true
    }
    #expect(!FileManager.default.fileExists(atPath: dir))
    do { _ = try HistoryStore(path: path).save(reading(Array(1...3))) }
    let before = try Data(contentsOf: URL(fileURLWithPath: path))
    let store = try HistoryStore(readingAt: path)
    #expect(try store.records(.init()).count == 3)
    #expect { try store.save(reading(Array(4...5))) } throws: { _ in true }
    #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
}

/// A new database, its companions and its directories are the owner's only; an existing
/// file keeps its mode.
@Test func newFilesArePrivateAndOldOnesKeepTheirMode() throws {
    func mode(_ p: String) -> mode_t {
        var st = stat()
        return stat(p, &st) == 0 ? st.st_mode & 0o777 : 0
    }
    let path = temporaryDatabase()
    let dir = (path as NSString).deletingLastPathComponent
    let store = try HistoryStore(path: path)
    _ = try store.save(reading(Array(1...3)))
    #expect([mode(dir), mode(path), mode(path + "-wal"), mode(path + "-shm")] == [0o700, 0o600, 0o600, 0o600])
    let shared = dir + "/shared.sqlite3"
    do { _ = try HistoryStore(path: shared) }
    chmod(shared, 0o640)
    let again = try HistoryStore(path: shared)
    _ = try again.save(reading(Array(1...3)))
    #expect([mode(shared), mode(shared + "-wal")] == [0o640, 0o640])
}

/// The first look at a WAL-mode file with no -wal goes through a `file:` URI: a name with
/// `?`, `#`, `%` or a space in it is still that file, and left as it is.
@Test func aFileWithURICharactersInItsNameIsLookedAtAsItIs() throws {
    let path = (temporaryDatabase() as NSString).deletingLastPathComponent + "/odd ?name#1 %41.sqlite"
    try makeForeignDatabase(path, "PRAGMA journal_mode=WAL; CREATE TABLE notes(body TEXT);")
    let before = try directoryContents(path)
    #expect { try HistoryStore(path: path) } throws: { ($0 as? HistoryError)?.reason.hasPrefix("\(path) is an SQLite database of another program (table notes)") == true }
    #expect(try directoryContents(path) == before)
    #expect(SQLiteConnection.uri("/a b/c?d#e%f") == "file:/a%20b/c%3Fd%23e%25f")
}
