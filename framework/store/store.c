/* store.c — opening and closing the store, errors, the statement cache, transactions and the
 * write batch. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "internal.h"
#include "store_internal.h"
#include "t2exp/error.h"

#define BUSY_TIMEOUT_MS 5000
/* A writer waits longer: other controllers take turns with it (writer_turns.c), and a migration or
 * a big delete elsewhere may hold the lock for seconds. */
#define WRITER_TIMEOUT_MS 60000

/* ---- errors ---------------------------------------------------------------------------- */

static int map_code(int rc)
{
    switch (rc & 0xff) {
    case SQLITE_NOMEM: return T2_ENOMEM;
    case SQLITE_CONSTRAINT:
    case SQLITE_MISMATCH:
    case SQLITE_RANGE:
    case SQLITE_TOOBIG: return T2_EINVAL;
    case SQLITE_NOTADB:
    case SQLITE_CORRUPT: return T2_EFORMAT;
    case SQLITE_CANTOPEN: return T2_ENOTFOUND;
    default: return T2_EIO;
    }
}

/* A write that failed for want of space: SQLITE_FULL (ENOSPC), or a failed write, fsync or
 * file growth. SQLite reports a file-size limit (EFBIG) or a quota (EDQUOT) as a plain write error
 * and does not keep the errno reliably, so every failed write counts: pausing is the safe answer
 * to all of them, since nothing committed is lost and resume continues. */
static int is_out_of_space(int sqlite_rc)
{
    switch (sqlite_rc) {
    case SQLITE_IOERR_WRITE:
    case SQLITE_IOERR_FSYNC:
    case SQLITE_IOERR_TRUNCATE:
    case SQLITE_IOERR_SHMSIZE:
        return 1;
    default:
        return (sqlite_rc & 0xff) == SQLITE_FULL;
    }
}

int t2__store_out_of_space(const t2__store *st) { return st && st->out_of_space; }

int t2__store_reclaim(t2__store *st)
{
    if (!st || st->readonly) return t2_seterr(T2_EINVAL, "store: reclaim needs a writable store");
    t2__store_async_wait(st); /* its error is the one being reclaimed from */
    t2__store_async_tx_ended(st);
    if (st->tx_open && !sqlite3_get_autocommit(st->db)) sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
    st->tx_open = st->explicit_tx = st->savepoint = 0;
    st->pending = 0;
    st->out_of_space = 0;
    /* Everything committed moves into the database file and the log starts again from nothing. */
    int rc = sqlite3_exec(st->db, "PRAGMA wal_checkpoint(TRUNCATE)", NULL, NULL, NULL);
    return rc == SQLITE_OK ? 0 : t2__store_err(st, rc, "checkpoint the write-ahead log");
}

int t2__store_err(t2__store *st, int sqlite_rc, const char *what)
{
    const char *msg = st->db ? sqlite3_errmsg(st->db) : sqlite3_errstr(sqlite_rc);
    if (is_out_of_space(sqlite_rc)) st->out_of_space = 1;
    /* Some failures (disk full, I/O error, out of memory) make SQLite roll the whole transaction
     * back by itself; our batch bookkeeping must follow, and the caller must hear that earlier
     * uncommitted writes are gone, not just this one. */
    if (st->tx_open && st->db && sqlite3_get_autocommit(st->db)) {
        t2__store_async_tx_ended(st);
        long lost = st->pending;
        st->tx_open = st->explicit_tx = st->savepoint = 0;
        st->pending = 0;
        return t2_seterr(map_code(sqlite_rc),
                         "store %s: %s: %s (transaction rolled back: %ld uncommitted writes lost)",
                         st->path, what, msg, lost);
    }
    return t2_seterr(map_code(sqlite_rc), "store %s: %s: %s", st->path, what, msg);
}

/* ---- small helpers --------------------------------------------------------------------- */

double t2__store_mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static double wall_clock(void *ud)
{
    (void)ud;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void t2__store_set_clock(t2__store *st, double (*now)(void *ud), void *ud)
{
    if (!st) return;
    st->clock = now ? now : wall_clock;
    st->clock_ud = now ? ud : NULL;
}

double t2__store_now(const t2__store *st)
{
    return t2__store_rec_clock ? *t2__store_rec_clock : st->clock(st->clock_ud);
}

const char *t2__store_path(const t2__store *st) { return st ? st->path : ""; }
const char *t2__store_home_of(const t2__store *st) { return st ? st->home : ""; }

int t2__store_id(t2__store *st, char out[33])
{
    if (!st || !out) return t2_seterr(T2_EINVAL, "store: store_id: NULL argument");
    out[0] = '\0';
    sqlite3_stmt *s = NULL;
    int rc = t2__store_prepare(st, "SELECT store_id FROM store_info WHERE id = 1", &s);
    if (rc) return rc;
    int src = sqlite3_step(s);
    const unsigned char *t = src == SQLITE_ROW ? sqlite3_column_text(s, 0) : NULL;
    if (t && strlen((const char *)t) == 32) memcpy(out, t, 33);
    else if (src == SQLITE_ROW || src == SQLITE_DONE)
        rc = t2_seterr(T2_EFORMAT, "store %s: store_info holds no store id", st->path);
    else rc = t2__store_err(st, src, "read store id");
    sqlite3_finalize(s);
    return rc;
}

int t2__store_set_busy_timeout(t2__store *st, int ms)
{
    if (!st || ms < 0) return t2_seterr(T2_EINVAL, "store: busy timeout needs a store and ms >= 0");
    int rc = t2__store_async_wait(st);
    if (rc) return rc;
    if (!st->readonly) {
        st->turns_timeout_ms = ms; /* writers wait through writer_turns.c's handler */
        return 0;
    }
    rc = sqlite3_busy_timeout(st->db, ms);
    return rc == SQLITE_OK ? 0 : t2__store_err(st, rc, "busy_timeout");
}

void t2__store_set_flush_policy(t2__store *st, long rows, long ms)
{
    if (!st) return;
    st->flush_rows = rows > 0 ? rows : 1;
    st->flush_ms = ms >= 0 ? ms : 0;
}

long t2__store_pending(const t2__store *st) { return st && st->tx_open ? st->pending : 0; }

char *t2__store_col_text(sqlite3_stmt *s, int col, int *rc)
{
    const unsigned char *t = sqlite3_column_text(s, col);
    if (!t) return NULL;
    size_t n = (size_t)sqlite3_column_bytes(s, col);
    char *p = malloc(n + 1);
    if (!p) {
        *rc = t2_seterr(T2_ENOMEM, "store: out of memory reading a row");
        return NULL;
    }
    memcpy(p, t, n + 1);
    return p;
}

double t2__store_col_real(sqlite3_stmt *s, int col)
{
    return sqlite3_column_type(s, col) == SQLITE_NULL ? NAN : sqlite3_column_double(s, col);
}

int t2__store_bind_real(sqlite3_stmt *s, int idx, double v)
{
    return isnan(v) ? sqlite3_bind_null(s, idx) : sqlite3_bind_double(s, idx, v);
}

/* ---- statements ------------------------------------------------------------------------ */

int t2__store_prepare(t2__store *st, const char *sql, sqlite3_stmt **out)
{
    *out = NULL;
    int rc = t2__store_async_wait(st);
    if (rc) return rc;
    rc = sqlite3_prepare_v2(st->db, sql, -1, out, NULL);
    if (rc != SQLITE_OK) {
        sqlite3_finalize(*out);
        *out = NULL;
        return t2__store_err(st, rc, "prepare");
    }
    return 0;
}

int t2__store_stmt(t2__store *st, const char *sql, sqlite3_stmt **out)
{
    int i, rc = t2__store_async_wait(st);
    if (rc) return rc;
    for (i = 0; i < T2__STORE_STMT_CACHE && st->cache[i].sql; i++) {
        if (st->cache[i].sql == sql) {
            sqlite3_reset(st->cache[i].stmt);
            sqlite3_clear_bindings(st->cache[i].stmt);
            *out = st->cache[i].stmt;
            return 0;
        }
    }
    if (i == T2__STORE_STMT_CACHE)
        return t2_seterr(T2_ESTATE, "store: statement cache full (raise T2__STORE_STMT_CACHE)");
    rc = sqlite3_prepare_v3(st->db, sql, -1, SQLITE_PREPARE_PERSISTENT, out, NULL);
    if (rc != SQLITE_OK) {
        sqlite3_finalize(*out);
        *out = NULL;
        return t2__store_err(st, rc, "prepare");
    }
    st->cache[i].sql = sql;
    st->cache[i].stmt = *out;
    return 0;
}

int t2__store_exec_stmt(t2__store *st, sqlite3_stmt *stmt, const char *what)
{
    int rc = sqlite3_step(stmt);
    int ret = rc == SQLITE_DONE || rc == SQLITE_ROW ? 0 : t2__store_err(st, rc, what);
    sqlite3_reset(stmt);
    return ret;
}

static int exec(t2__store *st, const char *sql, const char *what)
{
    int rc = t2__store_async_wait(st);
    if (rc) return rc;
    rc = sqlite3_exec(st->db, sql, NULL, NULL, NULL);
    return rc == SQLITE_OK ? 0 : t2__store_err(st, rc, what);
}

/* ---- transactions ---------------------------------------------------------------------- */

/* IMMEDIATE takes the write lock now, under busy_timeout; a deferred transaction that upgrades
 * later can fail with SQLITE_BUSY at once, without waiting, when another writer got there first. */
static int open_tx(t2__store *st)
{
    t2__turns_yield(st); /* another controller waiting takes its turn first */
    int rc = exec(st, "BEGIN IMMEDIATE", "begin transaction");
    t2__turns_got_lock(st);
    if (rc) return rc;
    st->tx_open = 1;
    st->tx_gen++;
    st->pending = 0;
    st->tx_opened = t2__store_mono_ms();
    return 0;
}

int t2__store_run_precommit(t2__store *st)
{
    if (!st->precommit) return 0;
    /* Its writes join this transaction; none of them may commit it half way. */
    int (*fn)(void *) = st->precommit;
    st->precommit = NULL;
    st->group++;
    int rc = fn(st->precommit_ud);
    st->group--;
    st->precommit = fn;
    return rc;
}

static int commit_tx(t2__store *st)
{
    int rc = t2__store_run_precommit(st);
    if (rc) return rc;
    t2__store_async_tx_ended(st);
    rc = t2__store_commit_batch(st); /* waits for the hook's queued writes first */
    if (!rc) st->explicit_tx = st->savepoint = 0;
    return rc;
}

/* The writer thread's commit too, so only the writer's own fields: explicit_tx is the
 * controller thread's (no commit record is queued inside begin/commit). */
int t2__store_commit_batch(t2__store *st)
{
    if (!st->tx_open) return 0;
    int rc = exec(st, "COMMIT", "commit");
    if (rc) return rc;
    st->tx_open = 0;
    st->pending = 0;
    return 0;
}

void t2__store_set_precommit(t2__store *st, int (*fn)(void *ud), void *ud)
{
    if (!st) return;
    st->precommit = fn;
    st->precommit_ud = ud;
}

void t2__store_group(t2__store *st, int on)
{
    if (st) st->group += on ? 1 : (st->group > 0 ? -1 : 0);
}

int t2__store_write_begin(t2__store *st)
{
    if (st->readonly) return t2_seterr(T2_ESTATE, "store %s: opened read-only", st->path);
    int rc = t2__store_async_wait(st);
    if (rc) return rc;
    return st->tx_open ? 0 : open_tx(st);
}

int t2__store_write_done(t2__store *st)
{
    st->pending++;
    /* With a writer thread the controller's thread decides every commit (store_async.c); a write
     * it makes itself (a checkpoint row) counts there as a queued one does. */
    if (st->async) {
        t2__store_async_count(st);
        return 0;
    }
    if (!st->explicit_tx && !st->group && st->pending >= st->flush_rows) return commit_tx(st);
    return 0;
}

int t2__store_begin(t2__store *st)
{
    if (!st) return t2_seterr(T2_EINVAL, "store: begin on NULL");
    if (st->readonly) return t2_seterr(T2_ESTATE, "store %s: opened read-only", st->path);
    if (st->explicit_tx)
        return t2_seterr(T2_ESTATE, "store %s: begin inside begin (not nestable)", st->path);
    int rc = t2__store_async_wait(st);
    if (rc) return rc;
    if (st->tx_open) {
        if ((rc = exec(st, "SAVEPOINT t2__explicit", "begin (savepoint)"))) return rc;
        st->savepoint = 1;
    } else if ((rc = open_tx(st))) {
        return rc;
    }
    st->explicit_tx = 1;
    return 0;
}

int t2__store_commit(t2__store *st)
{
    if (!st) return t2_seterr(T2_EINVAL, "store: commit on NULL");
    if (!st->explicit_tx)
        return t2_seterr(T2_ESTATE, "store %s: commit without begin", st->path);
    int rc;
    if (st->savepoint) {
        if ((rc = exec(st, "RELEASE t2__explicit", "commit (release savepoint)"))) return rc;
        st->savepoint = 0;
    }
    st->explicit_tx = 0;
    return commit_tx(st);
}

int t2__store_rollback(t2__store *st)
{
    if (!st) return t2_seterr(T2_EINVAL, "store: rollback on NULL");
    if (!st->explicit_tx)
        return t2_seterr(T2_ESTATE, "store %s: rollback without begin", st->path);
    int rc = t2__store_async_wait(st);
    if (rc) return rc;
    t2__store_async_tx_ended(st);
    if (st->savepoint) {
        /* The batch before begin stays; pending keeps counting the undone writes, which only
         * makes the next flush come a little early. */
        rc = exec(st, "ROLLBACK TO t2__explicit; RELEASE t2__explicit", "rollback to savepoint");
        st->explicit_tx = st->savepoint = 0;
        st->tx_gen++; /* what the undone writes added is gone */
        return rc;
    }
    rc = exec(st, "ROLLBACK", "rollback");
    st->tx_open = st->explicit_tx = 0;
    st->pending = 0;
    return rc;
}

int t2__store_flush(t2__store *st, int force)
{
    if (!st) return t2_seterr(T2_EINVAL, "store: flush on NULL");
    if (t2__store_queues(st)) {
        if (!force) return t2__store_async_flush(st);
        int rc = t2__store_async_wait(st);
        if (rc) return rc;
    }
    if (!st->tx_open || st->explicit_tx || st->group) return 0;
    return force || t2__store_commit_due(st, st->pending, st->tx_opened) ? commit_tx(st) : 0;
}

int t2__store_commit_due(t2__store *st, long pending, double opened_ms)
{
    double now = t2__store_mono_ms();
    if (pending >= st->flush_rows || now - opened_ms >= (double)st->flush_ms) return 1;
    /* A waiting writer polls every millisecond; looking for one at every event (a system call each)
     * was a tenth of the controller's system calls in a search of short trials. */
    if (now - st->turns_checked < 1.0) return 0;
    st->turns_checked = now;
    return t2__turns_others_waiting(st);
}

/* ---- open / close ---------------------------------------------------------------------- */

/* SQLite keeps memory statistics by default, under a global mutex taken by every allocation and
 * free: about 4% of the store writer's instructions (callgrind; it allocates some 26 times a
 * trial). We read no statistic, so they are off. It must precede SQLite's initialization (once a
 * process; if something in the process initialized SQLite first, the call is refused and the
 * statistics stay, which is only slower). */
static void sqlite_setup(void) { (void)sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0); }

static int db_connect(t2__store *st, int readonly)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, sqlite_setup);
    int flags = readonly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
    /* NOMUTEX: a handle is used by one thread at a time; SQLite's own locking would be waste. */
    int rc = sqlite3_open_v2(st->path, &st->db, flags | SQLITE_OPEN_NOMUTEX, NULL);
    if (rc != SQLITE_OK) {
        if (!st->db) return t2_seterr(T2_ENOMEM, "store %s: out of memory opening", st->path);
        return t2__store_err(st, rc, "open");
    }
    sqlite3_extended_result_codes(st->db, 1);
    if ((rc = sqlite3_create_function(st->db, "t2_real", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS, NULL,
                                      t2__store_sql_real, NULL, NULL)) != SQLITE_OK)
        return t2__store_err(st, rc, "register t2_real");
    /* Not deterministic: whether a process runs changes from one statement to the next. */
    if ((rc = sqlite3_create_function(st->db, "t2_controller_alive", 2, SQLITE_UTF8 | SQLITE_DIRECTONLY, NULL,
                                      t2__store_sql_controller_alive, NULL, NULL)) != SQLITE_OK)
        return t2__store_err(st, rc, "register t2_controller_alive");
    if ((rc = sqlite3_busy_timeout(st->db, BUSY_TIMEOUT_MS)) != SQLITE_OK)
        return t2__store_err(st, rc, "busy_timeout");
    if (readonly) return 0;
    /* Writers wait for each other in fair turns instead (replaces the busy timeout). */
    if ((rc = t2__turns_open(st))) return rc;
    /* journal_mode is the first statement that reads the file, so a file that is not a database
     * fails here with SQLite's "file is not a database". WAL persists in the file; readers never
     * need to set it. On a filesystem without shared memory SQLite keeps the old journal mode: the
     * store still works, readers just wait for the writer's commits. */
    if ((rc = exec(st, "PRAGMA journal_mode = WAL", "set WAL mode"))) return rc;
    /* NORMAL is safe in WAL mode (never corrupts, a crash of the process loses nothing
     * committed) and saves an fsync per commit. */
    if ((rc = exec(st, "PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON",
                   "set pragmas")))
        return rc;
    return 0;
}

static void disconnect(t2__store *st)
{
    for (int i = 0; i < T2__STORE_STMT_CACHE; i++) {
        sqlite3_finalize(st->cache[i].stmt);
        st->cache[i].stmt = NULL;
        st->cache[i].sql = NULL;
    }
    /* close_v2 cannot fail on busy statements; every statement is finalized above anyway. */
    sqlite3_close_v2(st->db);
    st->db = NULL;
    t2__turns_close(st);
}

static char *dupstr(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = malloc(n);
    if (p) memcpy(p, s, n);
    return p;
}

static void store_free(t2__store *st)
{
    if (!st) return;
    disconnect(st);
    for (int i = 0; i < st->nupdate_sql; i++) free(st->update_sql[i].sql);
    for (int k = 0; k < T2__STORE_ROW_KINDS; k++)
        for (int i = 0; i < T2__STORE_ROW_SIZES; i++) free(st->rows_sql[k][i]);
    for (int i = 0; i < T2__STORE_TRIAL_ROWS; i++) free(st->trials_sql[i]);
    free(st->blas_line);
    free(st->path);
    free(st->home);
    free(st);
}

/* A new database file is made 0600 before SQLite opens it: SQLite gives the -wal and -shm files
 * the database's own mode, so the whole store stays private (an existing file keeps its mode). */
static int create_private(t2__store *st)
{
    int fd = open(st->path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0)
        return errno == EEXIST ? 0 : t2_seterr(T2_EIO, "store %s: cannot create: %s", st->path,
                                               strerror(errno));
    if (close(fd) != 0) return t2_seterr(T2_EIO, "store %s: %s", st->path, strerror(errno));
    return 0;
}

/* T2_ENOTFOUND, saying nothing has been recorded in home yet, when its store file is not there. */
static int must_exist(const char *path, const char *home)
{
    struct stat sb;
    if (stat(path, &sb) == 0) return T2_OK;
    return errno == ENOENT ? t2_seterr(T2_ENOTFOUND, "store %s: does not exist (no experiment has been recorded in %s yet)",
                                       path, home)
                           : t2_seterr(T2_EIO, "store %s: %s", path, strerror(errno));
}

int t2__store_open_existing(const char *home, t2__store **out)
{
    if (!home || !out) return t2_seterr(T2_EINVAL, "store: open: NULL argument");
    char path[PATH_MAX];
    int n = snprintf(path, sizeof path, "%s/t2exp.db", home);
    if (n < 0 || (size_t)n >= sizeof path) return t2_seterr(T2_EINVAL, "store: home path too long: %s", home);
    int rc = must_exist(path, home);
    return rc ? rc : t2__store_open(home, 0, out);
}

int t2__store_open(const char *home, int readonly, t2__store **out)
{
    if (!out) return t2_seterr(T2_EINVAL, "store open: no output pointer");
    *out = NULL;
    if (!home || !*home) return t2_seterr(T2_EINVAL, "store open: empty home directory");
    int rc;
    t2__store *st = calloc(1, sizeof *st);
    if (!st) return t2_seterr(T2_ENOMEM, "store open: out of memory");
    st->readonly = readonly != 0;
    st->turns_fd = -1;
    st->turns_timeout_ms = WRITER_TIMEOUT_MS;
    st->flush_rows = 10000;
    st->flush_ms = 200;
    st->clock = wall_clock;
    size_t n = strlen(home);
    st->home = dupstr(home);
    st->path = malloc(n + sizeof "/t2exp.db");
    if (!st->home || !st->path) {
        rc = t2_seterr(T2_ENOMEM, "store open: out of memory");
        goto fail;
    }
    memcpy(st->path, home, n);
    memcpy(st->path + n, "/t2exp.db", sizeof "/t2exp.db");

    if (!readonly) {
        if ((rc = t2__mkdirs(home)) || (rc = create_private(st))) goto fail;
        if ((rc = db_connect(st, 0))) goto fail;
        if ((rc = t2__store_migrate(st))) goto fail;
        *out = st;
        return 0;
    }

    if ((rc = must_exist(st->path, home)) || (rc = db_connect(st, 1))) goto fail;
    int version = 0;
    if ((rc = t2__store_check_schema(st, &version))) goto fail;
    if (version < T2__STORE_SCHEMA_VERSION) {
        /* A store written by an older t2exp: upgrade it once through a short read-write
         * connection rather than make every listing fail until the next `create`. */
        disconnect(st);
        t2__store *rw = NULL;
        if ((rc = t2__store_open(home, 0, &rw))) goto fail;
        if ((rc = t2__store_close(rw))) goto fail;
        if ((rc = db_connect(st, 1))) goto fail;
        if ((rc = t2__store_check_schema(st, &version))) goto fail;
    }
    *out = st;
    return 0;
fail:
    store_free(st);
    return rc;
}

int t2__store_close(t2__store *st)
{
    if (!st) return 0;
    int rc = t2__store_async_stop(st);
    if (st->explicit_tx) {
        char path[512];
        snprintf(path, sizeof path, "%s", st->path);
        int had_batch = st->savepoint;
        t2__store_rollback(st);
        if (had_batch && st->tx_open) commit_tx(st);
        rc = t2_seterr(T2_ESTATE, "store %s: closed inside begin; that transaction was rolled "
                       "back", path);
    } else if (st->tx_open) {
        int rc2 = commit_tx(st);
        if (!rc) rc = rc2;
    }
    store_free(st);
    return rc;
}

/* ---- state names ----------------------------------------------------------------------- */

static const char *const EXP_STATES[] = {"ACTIVE", "PAUSED", "COMPLETED", "ERRORED", "CANCELED"};
static const char *const TRIAL_STATES[] = {"QUEUED",    "RUNNING", "PAUSED",
                                           "COMPLETED", "ERRORED", "CANCELED"};
static const char *const KINDS[] = {"training", "validation"};

#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

const char *t2__exp_state_name(int s) { return s >= 0 && s < COUNT(EXP_STATES) ? EXP_STATES[s] : NULL; }
const char *t2__trial_state_name(int s)
{
    return s >= 0 && s < COUNT(TRIAL_STATES) ? TRIAL_STATES[s] : NULL;
}
const char *t2__metric_kind_name(int k) { return k >= 0 && k < COUNT(KINDS) ? KINDS[k] : NULL; }

static int parse(const char *const *names, int n, const char *what, const char *name, int *out)
{
    for (int i = 0; name && i < n; i++) {
        if (strcmp(names[i], name) == 0) {
            *out = i;
            return 0;
        }
    }
    return t2_seterr(T2_EINVAL, "store: unknown %s state '%s'", what, name ? name : "(null)");
}

int t2__exp_state_parse(const char *name, int *out)
{
    return parse(EXP_STATES, COUNT(EXP_STATES), "experiment", name, out);
}

int t2__trial_state_parse(const char *name, int *out)
{
    return parse(TRIAL_STATES, COUNT(TRIAL_STATES), "trial", name, out);
}

/* ---- raw SQL --------------------------------------------------------------------------- */

int t2__store_exec_sql(t2__store *st, const char *sql)
{
    if (!st || !sql) return t2_seterr(T2_EINVAL, "store: exec_sql: NULL argument");
    return exec(st, sql, "exec");
}

static int query_one(t2__store *st, const char *sql, sqlite3_stmt **s)
{
    int rc = t2__store_prepare(st, sql, s);
    if (rc) return rc;
    rc = sqlite3_step(*s);
    if (rc == SQLITE_ROW) return 0;
    if (rc == SQLITE_DONE) return t2_seterr(T2_ENOTFOUND, "store %s: no row from %s", st->path, sql);
    return t2__store_err(st, rc, "query");
}

int t2__store_query_int(t2__store *st, const char *sql, int64_t *out)
{
    if (!st || !sql || !out) return t2_seterr(T2_EINVAL, "store: query_int: NULL argument");
    sqlite3_stmt *s = NULL;
    int rc = query_one(st, sql, &s);
    if (!rc) *out = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    return rc;
}

int t2__store_query_text(t2__store *st, const char *sql, char *buf, size_t len)
{
    if (!st || !sql || !buf || !len) return t2_seterr(T2_EINVAL, "store: query_text: bad argument");
    sqlite3_stmt *s = NULL;
    buf[0] = '\0';
    int rc = query_one(st, sql, &s);
    const char *t = rc ? NULL : (const char *)sqlite3_column_text(s, 0);
    if (t) snprintf(buf, len, "%s", t);
    sqlite3_finalize(s);
    return rc;
}

int t2__store_data_version(t2__store *st, int64_t *version)
{
    sqlite3_stmt *s = NULL;
    int rc = t2__store_async_wait(st);
    if (rc) return rc;
    rc = sqlite3_prepare_v2(st->db, "PRAGMA data_version", -1, &s, NULL);
    if (rc == SQLITE_OK && (rc = sqlite3_step(s)) == SQLITE_ROW) {
        *version = sqlite3_column_int64(s, 0);
        rc = SQLITE_OK;
    }
    sqlite3_finalize(s);
    return rc == SQLITE_OK ? T2_OK : t2__store_err(st, rc, "PRAGMA data_version");
}
