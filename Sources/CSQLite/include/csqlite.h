#ifndef FELICA_CSQLITE_H
#define FELICA_CSQLITE_H
/// SQLite loaded at first use rather than at start: linking it would make every felica start
/// bind its symbols, while only the reading history (`--save`, `--db`, `history`) needs it.
/// The types and constants come from SQLite's own header; the functions from the library
/// `dlopen`ed by `felica_sqlite_load`, which must succeed before any other entry is called.
#include <stddef.h>
#include <stdint.h>
#include <sqlite3.h>

/// The library's file name, as the dynamic loader searches for it.
#define FELICA_LIBSQLITE "libsqlite3.so.0"

/// Loads SQLite and finds its functions, once per process (later calls return the first
/// answer). 0 when loaded; otherwise -1, with what failed (the library or a function, in the
/// loader's words) in `message`. The environment variable FELICA_TEST_LIBSQLITE, when set,
/// names another file to load — for tests of a machine without SQLite.
int felica_sqlite_load(char *message, size_t size);

int felica_sqlite3_open_v2(const char *path, sqlite3 **db, int flags, const char *vfs);
int felica_sqlite3_close(sqlite3 *db);
const char *felica_sqlite3_errmsg(sqlite3 *db);
int felica_sqlite3_extended_result_codes(sqlite3 *db, int on);
int felica_sqlite3_busy_timeout(sqlite3 *db, int milliseconds);
int felica_sqlite3_system_errno(sqlite3 *db);
int felica_sqlite3_exec(sqlite3 *db, const char *sql);
int felica_sqlite3_prepare_v2(sqlite3 *db, const char *sql, int length, sqlite3_stmt **stmt, const char **tail);
int felica_sqlite3_finalize(sqlite3_stmt *stmt);
int felica_sqlite3_reset(sqlite3_stmt *stmt);
int felica_sqlite3_clear_bindings(sqlite3_stmt *stmt);
int felica_sqlite3_bind_null(sqlite3_stmt *stmt, int index);
int felica_sqlite3_bind_int64(sqlite3_stmt *stmt, int index, sqlite3_int64 value);
/// `sqlite3_bind_text` with SQLITE_TRANSIENT (SQLite copies the text), a cast of -1 to a
/// function pointer that Swift cannot import.
int felica_sqlite3_bind_text_transient(sqlite3_stmt *stmt, int index, const char *text);
int felica_sqlite3_step(sqlite3_stmt *stmt);
int felica_sqlite3_column_type(sqlite3_stmt *stmt, int column);
sqlite3_int64 felica_sqlite3_column_int64(sqlite3_stmt *stmt, int column);
const unsigned char *felica_sqlite3_column_text(sqlite3_stmt *stmt, int column);
#endif
