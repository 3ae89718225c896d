#include "csqlite.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

/// Each pointer typed from SQLite's own declaration of the function.
static struct {
    __typeof__(&sqlite3_open_v2) open_v2;
    __typeof__(&sqlite3_close) close;
    __typeof__(&sqlite3_errmsg) errmsg;
    __typeof__(&sqlite3_extended_result_codes) extended_result_codes;
    __typeof__(&sqlite3_busy_timeout) busy_timeout;
    __typeof__(&sqlite3_system_errno) system_errno;
    __typeof__(&sqlite3_exec) exec;
    __typeof__(&sqlite3_prepare_v2) prepare_v2;
    __typeof__(&sqlite3_finalize) finalize;
    __typeof__(&sqlite3_reset) reset;
    __typeof__(&sqlite3_clear_bindings) clear_bindings;
    __typeof__(&sqlite3_bind_null) bind_null;
    __typeof__(&sqlite3_bind_int64) bind_int64;
    __typeof__(&sqlite3_bind_text) bind_text;
    __typeof__(&sqlite3_step) step;
    __typeof__(&sqlite3_column_type) column_type;
    __typeof__(&sqlite3_column_int64) column_int64;
    __typeof__(&sqlite3_column_text) column_text;
} sqlite;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static char failure[512];

static void load(void) {
    const char *name = getenv("FELICA_TEST_LIBSQLITE");
    if (name == NULL || *name == 0) name = FELICA_LIBSQLITE;
    void *library = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        const char *why = dlerror();
        snprintf(failure, sizeof failure, "%s", why ? why : name);
        return;
    }
#define FIND(field, symbol) \
    if ((*(void **)&sqlite.field = dlsym(library, symbol)) == NULL) { \
        snprintf(failure, sizeof failure, "%s has no function %s", name, symbol); \
        return; \
    }
    FIND(open_v2, "sqlite3_open_v2")
    FIND(close, "sqlite3_close")
    FIND(errmsg, "sqlite3_errmsg")
    FIND(extended_result_codes, "sqlite3_extended_result_codes")
    FIND(busy_timeout, "sqlite3_busy_timeout")
    FIND(system_errno, "sqlite3_system_errno")
    FIND(exec, "sqlite3_exec")
    FIND(prepare_v2, "sqlite3_prepare_v2")
    FIND(finalize, "sqlite3_finalize")
    FIND(reset, "sqlite3_reset")
    FIND(clear_bindings, "sqlite3_clear_bindings")
    FIND(bind_null, "sqlite3_bind_null")
    FIND(bind_int64, "sqlite3_bind_int64")
    FIND(bind_text, "sqlite3_bind_text")
    FIND(step, "sqlite3_step")
    FIND(column_type, "sqlite3_column_type")
    FIND(column_int64, "sqlite3_column_int64")
    FIND(column_text, "sqlite3_column_text")
#undef FIND
}

int felica_sqlite_load(char *message, size_t size) {
    pthread_once(&once, load);
    if (failure[0] == 0) return 0;
    if (size > 0) snprintf(message, size, "%s", failure);
    return -1;
}

int felica_sqlite3_open_v2(const char *path, sqlite3 **db, int flags, const char *vfs) {
    return sqlite.open_v2(path, db, flags, vfs);
}
int felica_sqlite3_close(sqlite3 *db) { return sqlite.close(db); }
const char *felica_sqlite3_errmsg(sqlite3 *db) { return sqlite.errmsg(db); }
int felica_sqlite3_extended_result_codes(sqlite3 *db, int on) { return sqlite.extended_result_codes(db, on); }
int felica_sqlite3_busy_timeout(sqlite3 *db, int milliseconds) { return sqlite.busy_timeout(db, milliseconds); }
int felica_sqlite3_system_errno(sqlite3 *db) { return sqlite.system_errno(db); }
int felica_sqlite3_exec(sqlite3 *db, const char *sql) { return sqlite.exec(db, sql, NULL, NULL, NULL); }
int felica_sqlite3_prepare_v2(sqlite3 *db, const char *sql, int length, sqlite3_stmt **stmt, const char **tail) {
    return sqlite.prepare_v2(db, sql, length, stmt, tail);
}
int felica_sqlite3_finalize(sqlite3_stmt *stmt) { return sqlite.finalize(stmt); }
int felica_sqlite3_reset(sqlite3_stmt *stmt) { return sqlite.reset(stmt); }
int felica_sqlite3_clear_bindings(sqlite3_stmt *stmt) { return sqlite.clear_bindings(stmt); }
int felica_sqlite3_bind_null(sqlite3_stmt *stmt, int index) { return sqlite.bind_null(stmt, index); }
int felica_sqlite3_bind_int64(sqlite3_stmt *stmt, int index, sqlite3_int64 value) {
    return sqlite.bind_int64(stmt, index, value);
}
int felica_sqlite3_bind_text_transient(sqlite3_stmt *stmt, int index, const char *text) {
    return sqlite.bind_text(stmt, index, text, -1, SQLITE_TRANSIENT);
}
int felica_sqlite3_step(sqlite3_stmt *stmt) { return sqlite.step(stmt); }
int felica_sqlite3_column_type(sqlite3_stmt *stmt, int column) { return sqlite.column_type(stmt, column); }
sqlite3_int64 felica_sqlite3_column_int64(sqlite3_stmt *stmt, int column) { return sqlite.column_int64(stmt, column); }
const unsigned char *felica_sqlite3_column_text(sqlite3_stmt *stmt, int column) { return sqlite.column_text(stmt, column); }
