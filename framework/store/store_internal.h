/* store_internal.h — what the store's files share: the handle, error mapping, statement cache. */
#ifndef T2_STORE_INTERNAL_H
#define T2_STORE_INTERNAL_H

#include <sqlite3.h>
#include "store.h"

/* Hot statements (a metric insert per report) are prepared once per connection; the cache is
 * keyed by the address of the static SQL text, so it needs no names. */
#define T2__STORE_STMT_CACHE 176
/* Trial-update statements, one per field mask that occurs (store_write.c). */
#define T2__STORE_UPDATE_SQLS 48
/* The multi-row inserts of metrics, timings and log segments: 1, 2, 4, 8 and 16 rows
 * (t2__store_insert_recs). */
#define T2__STORE_ROW_SIZES 5
/* Their tables, each a row of the store's rows_sql. */
enum { T2__ROWS_METRICS, T2__ROWS_TIMINGS, T2__ROWS_SEGMENTS, T2__STORE_ROW_KINDS };
/* The most trial rows one insert statement carries (t2__store_insert_trial_rows). */
#define T2__STORE_TRIAL_ROWS 16

struct t2__store {
    sqlite3 *db;
    char *path; /* HOME/t2exp.db */
    char *home;
    int readonly;
    int tx_open;      /* a transaction (batch or explicit) is open on db */
    int explicit_tx;  /* between t2__store_begin and commit/rollback */
    int savepoint;    /* the explicit transaction is a SAVEPOINT inside a batch */
    long pending;     /* writes since the transaction opened */
    double tx_opened; /* monotonic ms */
    double turns_checked; /* monotonic ms of the last look for a waiting writer (writer_turns.c) */
    long flush_rows, flush_ms;
    double (*clock)(void *);
    void *clock_ud;
    int turns_fd;            /* HOME/t2exp.db-turns (writer_turns.c), -1 if none */
    int turns_marked;        /* this process marks itself as waiting for the write lock */
    double turns_wait_start; /* monotonic ms when the current wait began */
    int turns_timeout_ms;    /* how long a writer waits for its turn before SQLITE_BUSY */
    int group;               /* t2__store_group depth: no commit splits the writes inside */
    int out_of_space;        /* a write failed for want of space (t2__store_out_of_space) */
    int (*precommit)(void *); /* t2__store_set_precommit */
    void *precommit_ud;
    struct {
        const char *sql;
        sqlite3_stmt *stmt;
    } cache[T2__STORE_STMT_CACHE];
    struct {
        unsigned mask;
        char *sql; /* owned; the key of its statement in cache */
    } update_sql[T2__STORE_UPDATE_SQLS];
    int nupdate_sql;
    /* [t2__rows_insert's cache][k]: t2__store_insert_recs's insert of 1 << k rows, owned */
    char *rows_sql[T2__STORE_ROW_KINDS][T2__STORE_ROW_SIZES];
    char *trials_sql[T2__STORE_TRIAL_ROWS];   /* [n - 1]: the insert of n trial rows, owned (n > 1) */
    unsigned long tx_gen; /* counts transactions (and savepoint rollbacks): what a cache may trust */
    char *blas_line;      /* the last BLAS line set on a trial, its blas_lines id, and the tx_gen */
    int64_t blas_id;      /* it was looked up in (store_write.c) */
    unsigned long blas_gen;
    int64_t eblas_exp, eblas_id; /* the experiment_blas pair last inserted, and the tx_gen it was */
    unsigned long eblas_gen;     /* inserted in (store_write.c) */
    struct t2__store_async *async; /* the writer thread while it runs (store_async.c), else NULL */
    struct t2__store_ckpt *ckpt;   /* the checkpoint thread while it runs (store_checkpointer.c) */
};

/* ---- the writer thread (store_async.c) ------------------------------------------------------ */

/* One queued write: the arguments of one call to a hot write function, its strings copied. */
enum {
    T2__REC_CREATE_TRIAL, /* id; i: experiment, ordinal, seed, target; s1 hparams */
    T2__REC_UPDATE_TRIAL, /* id; u, with s1 its error and s2 its log_path */
    T2__REC_TRIAL_BLAS,   /* id; s1 */
    T2__REC_TRIAL_HOSTS,  /* id; s1 */
    T2__REC_TRIAL_PARENT, /* id; i[0] parent; s1 uuid */
    T2__REC_METRIC,       /* id; k kind; i[0] batches; d: epoch, value; s1 name */
    T2__REC_TIMING,       /* id; i[0] batches; d: epoch, then the five timings in t2__store_timing's order */
    T2__REC_SEGMENT,      /* id; i[0] start; s1 path */
    T2__REC_PROGRESS,     /* id experiment; d[0] */
    T2__REC_BEST,         /* id experiment; i[0] trial; d[0] metric */
    T2__REC_SEARCHER,     /* id experiment; i[0] events; s1 state */
    T2__REC_COMMIT,       /* the batch commits here (decided on the controller's thread) */
    T2__REC_ROW,          /* a trial's writes folded into one update (store_fold.c): row */
    T2__REC_FOLDED,       /* done by its trial's folded statement (store_fold.c) */
};

typedef struct {
    int kind, k;
    int64_t id, i[4];
    double d[6];
    double now;       /* the store clock when it was queued */
    size_t o1, o2;    /* where s1 and s2 are in the queue's text (SIZE_MAX: NULL) */
    const char *s1, *s2; /* set from o1, o2 when the writer takes it */
    t2__trial_update u;
    size_t row;       /* a CREATE's or ROW's row in the batch's folded rows, plus one (store_fold.c) */
} t2__store_rec;

/* Columns a folded update assigns beyond the T2__TU_* ones (store_fold.c), and how two of them
 * keep their old value: started_at = coalesce(started_at, value), best_validation = the better
 * of the old and value. */
enum {
    T2__FOLD_BLAS = 1 << 11,
    T2__FOLD_HOSTS = 1 << 12,
    T2__FOLD_PARENT = 1 << 13,
    T2__FOLD_STARTED_COALESCE = 1 << 14,
    T2__FOLD_BEST_OF_OLD = 1 << 15,
};

/* A trial's row as a batch's writes leave it: the values of a row it created (one insert), or
 * the columns `set` of one it did not (one update). */
typedef struct {
    int64_t id, experiment_id, ordinal, seed, target; /* target 0: NULL */
    int state, restarts;
    int64_t batches, parent_id; /* parent_id 0: NULL */
    double best, latest, created_at, started_at, ended_at; /* NAN: NULL */
    const char *hparams, *error, *log_path, *blas, *hosts, *parent_checkpoint; /* NULL: NULL */
    int created;  /* the batch made the row (experiment_id, ordinal, seed, hparams, created_at set) */
    unsigned set; /* T2__TU_* (not VALIDATION) and T2__FOLD_* */
    int closed;   /* a write could not be folded: the row's later writes run as statements */
} t2__fold_row;

typedef struct {
    t2__fold_row *v;
    size_t n, cap;
    struct {
        int64_t id;
        size_t row; /* plus one */
        unsigned gen;
    } *slots; /* trial id -> row, open addressing; a slot is taken when its gen is the segment's */
    size_t scap;
    unsigned gen;
} t2__fold_rows;

/* Answers an experiment's smaller_is_better in *out; nonzero if it cannot. */
typedef int (*t2__store_smaller_fn)(void *ud, int64_t experiment_id, int *out);

/* Folds each trial's row writes in v[0..n) (a writer batch, its strings set) between two commit
 * records into the first of them: a CREATE keeps its kind, another becomes T2__REC_ROW, both get
 * `row`; the writes folded into them become T2__REC_FOLDED. Rows live in *rows (grown as needed). */
int t2__store_fold(t2__store_rec *v, size_t n, t2__fold_rows *rows, t2__store_smaller_fn smaller, void *ud);
void t2__fold_rows_free(t2__fold_rows *rows);
/* Inserts row (id 0: SQLite picks one) into the open batch and answers its id; its BLAS line
 * joins blas_lines and experiment_blas as set_trial_blas would. */
int t2__store_insert_trial_row(t2__store *st, const t2__fold_row *row, int64_t *id);
/* Inserts n rows (each with its id and ordinal given, ordinal >= 0, one experiment's) as one
 * statement per T2__STORE_TRIAL_ROWS: a trial's insert costs a statement's overhead once a
 * statement, not once a row. */
int t2__store_insert_trial_rows(t2__store *st, const t2__fold_row *const *rows, size_t n);
/* A multi-row insert of the records of one kind (rec, a T2__REC_*): head "INSERT INTO t (columns)
 * VALUES", then rows of `per` parameters, then tail; bind binds record r's row from parameter
 * o + 1 on (an sqlite3_bind_* code); its statements are the store's rows_sql[cache] (a T2__ROWS_*). */
typedef struct {
    int rec, cache;
    const char *head, *tail;
    int per;
    int (*bind)(sqlite3_stmt *s, int o, const t2__store_rec *r);
    const char *what;
} t2__rows_insert;
extern const t2__rows_insert t2__metric_rows, t2__timing_rows, t2__segment_rows;
/* Inserts the rows of records v[0..n) (queued ones, their strings set) with ins, in statements of
 * 16, 8, 4, 2 and 1 rows made once (rows_sql[ins->cache][k]: 1 << k rows): a statement's own cost
 * (most of a one-row insert's) once per many rows, and five statements per table at most. */
int t2__store_insert_recs(t2__store *st, const t2__rows_insert *ins, const t2__store_rec *const *v, size_t n);
/* Assigns the columns row->set of trial row->id in one statement (ENOTFOUND: no such trial). */
int t2__store_update_trial_row(t2__store *st, const t2__fold_row *row);

/* The store this thread writes for as its writer thread, or NULL. */
extern _Thread_local t2__store *t2__store_writer_of;
/* While a queued record runs: the time it was queued, which t2__store_now returns. */
extern _Thread_local const double *t2__store_rec_clock;

/* Whether a hot write on this thread is queued rather than run: a writer thread runs and this
 * is not it. */
static inline int t2__store_queues(const t2__store *st) { return st->async && t2__store_writer_of != st; }
/* Queues r with copies of s1 and s2 (either may be NULL), and commits in turn when the batch is
 * full (the precommit hook, then a commit record). */
int t2__store_async_put(t2__store *st, const t2__store_rec *r, const char *s1, const char *s2);
/* On the controller's thread: waits until every queued write ran, then returns the error one of
 * them met (once), else 0. A no-op without a writer thread or on it. */
int t2__store_async_wait(t2__store *st);
/* flush(0) while the writer runs: wakes it and decides whether the batch commits now. */
int t2__store_async_flush(t2__store *st);
/* The next trial id of this batch for create_trial (read once per batch, see store_async.c). */
int t2__store_async_trial_id(t2__store *st, int64_t *id);
/* Counts a write the controller's thread made itself towards the batch's commit (no-op on the
 * writer thread, whose records were counted when queued). */
void t2__store_async_count(t2__store *st);
/* The controller's thread ended the transaction itself (commit, rollback): ids read for it are void. */
void t2__store_async_tx_ended(t2__store *st);
/* Whether a batch of `pending` writes, opened at opened_ms (monotonic), commits now: it is full
 * (flush_rows), old (flush_ms), or another writer waits for the lock (looked for once a ms). */
int t2__store_commit_due(t2__store *st, long pending, double opened_ms);
/* Runs the precommit hook (t2__store_set_precommit) with commits held off while it writes. */
int t2__store_run_precommit(t2__store *st);
/* On the writer: commits the batch as it is, without the precommit hook (that ran when the
 * commit record was queued). */
int t2__store_commit_batch(t2__store *st);

/* SQL for a unix-epoch column c as ISO 8601 UTC text ("2026-11-27T16:28:23Z"), as every listing
 * shows times. */
#define T2__SQL_ISO(c) "strftime('%Y-%m-%dT%H:%M:%SZ', " c ", 'unixepoch')"
/* How long a row (with started_at, ended_at, state) ran: until it stopped, or until :now while its
 * state is running_state. */
#define T2__SQL_RUN_SECONDS(running_state) \
    "coalesce(ended_at, CASE WHEN state = '" running_state "' THEN :now END) - started_at"

/* t2_seterr with "store PATH: what: sqlite message"; maps SQLite codes to T2_E… (NOMEM, CONSTRAINT
 * -> EINVAL, NOTADB/CORRUPT -> EFORMAT, the rest EIO). Notices when SQLite rolled the whole
 * transaction back on its own (disk full, I/O error) and forgets the batch, saying so. */
int t2__store_err(t2__store *st, int sqlite_rc, const char *what);

/* The cached prepared statement for static SQL text `sql` (reset, bindings cleared). */
int t2__store_stmt(t2__store *st, const char *sql, sqlite3_stmt **out);
/* A fresh statement the caller finalizes (for queries run once). */
int t2__store_prepare(t2__store *st, const char *sql, sqlite3_stmt **out);

/* Opens the batch transaction if none is open (writer only; T2_ESTATE on a read-only store). */
int t2__store_write_begin(t2__store *st);
/* Counts one write and commits the batch when it reached flush_rows (outside begin/commit). */
int t2__store_write_done(t2__store *st);

/* The log's checkpoints on a thread of their own while the writer thread runs
 * (store_checkpointer.c). start: not on the writer thread, before it starts; stop: after it ended. */
int t2__store_ckpt_start(t2__store *st);
void t2__store_ckpt_stop(t2__store *st);

/* Runs a statement that returns no rows; SQLITE_DONE -> 0. Resets it. */
int t2__store_exec_stmt(t2__store *st, sqlite3_stmt *stmt, const char *what);

/* Column helpers: NULL text -> NULL, NULL real -> NAN; strdup failure -> T2_ENOMEM via *rc. */
char *t2__store_col_text(sqlite3_stmt *s, int col, int *rc);
double t2__store_col_real(sqlite3_stmt *s, int col);
/* Binds NAN as NULL (SQLite would do so too, but this says it). */
int t2__store_bind_real(sqlite3_stmt *s, int idx, double v);

double t2__store_mono_ms(void);

/* Fair turns between writers (writer_turns.c). open: the side file and the busy handler that
 * marks this process as waiting while SQLite's write lock is taken elsewhere; close: drops both.
 * others_waiting: another writer is marked. got_lock: this one's wait is over. yield: while
 * another writer is marked, leaves the lock free for it (up to 50 ms). */
int t2__turns_open(t2__store *st);
void t2__turns_close(t2__store *st);
int t2__turns_others_waiting(t2__store *st);
void t2__turns_got_lock(t2__store *st);
void t2__turns_yield(t2__store *st);

/* Schema migrations (migrate.c): brings an open read-write connection to
 * T2__STORE_SCHEMA_VERSION, or refuses a newer or foreign database. */
int t2__store_migrate(t2__store *st);
/* user_version of the open database. */
int t2__store_schema_version(t2__store *st, int *version);
/* user_version, after refusing a foreign database (T2_EFORMAT) or a newer schema
 * (T2_EUNSUPPORTED); no writes, so read-only connections use it too. */
int t2__store_check_schema(t2__store *st, int *version);

/* ---- printing helpers (store_print.c), shared with the listings in store_query.c ---------- */

/* A growable string; `oom` sticks once an append failed, so callers check once at the end. */
typedef struct {
    char *p;
    size_t n, cap;
    int oom;
} t2__sbuf;

void t2__sbuf_put(t2__sbuf *b, const char *s, size_t n);
void t2__sbuf_puts(t2__sbuf *b, const char *s);
void t2__sbuf_printf(t2__sbuf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
void t2__sbuf_free(t2__sbuf *b);

/* Binds each named parameter the statement uses (others are skipped, so one list can serve
 * several statements) and ":now" from the store clock. */
int t2__store_bind_params(t2__store *st, sqlite3_stmt *s, const t2__store_param *params,
                          size_t nparams);

/* "SELECT json_object('col', "col", ...) FROM (base)" built from base's result columns, or with
 * json_group_array around the object when array is set. *out is malloc'ed. */
int t2__store_json_sql(t2__store *st, const char *base, const t2__store_colspec *cols, int array,
                       char **out);

t2__col_kind t2__store_col_kind(const t2__store_colspec *cols, const char *name);
/* Appends column col of the current row as a table shows it. */
void t2__store_cell(t2__sbuf *b, sqlite3_stmt *s, int col, t2__col_kind kind);
/* The SQL function t2_real(x) (store_print.c): a real as its shortest round-trip text. */
void t2__store_sql_real(sqlite3_context *ctx, int argc, sqlite3_value **argv);
/* The SQL function t2_controller_alive(pid, token) (liveness.c): 1 when that process runs with
 * that token, as t2__store_controller decides. */
void t2__store_sql_controller_alive(sqlite3_context *ctx, int argc, sqlite3_value **argv);

/* Print the remaining rows of a prepared, bound statement. */
int t2__store_print_table_stmt(t2__store *st, sqlite3_stmt *s, const t2__store_colspec *cols,
                               FILE *out);
int t2__store_print_csv_stmt(t2__store *st, sqlite3_stmt *s, FILE *out);
/* The listings' queries (store_query.c), by name, ending with {NULL, NULL}: test_store_big checks
 * the plan of each on a 100,000-trial store, so that a query that stops using its index fails a
 * test rather than a user. */
typedef struct {
    const char *name, *sql;
} t2__store_named_sql;
extern const t2__store_named_sql t2__store_queries[];

/* Runs a statement returning one text value (a JSON document) and prints it with a newline. */
int t2__store_print_json_stmt(t2__store *st, sqlite3_stmt *s, FILE *out);

/* T2_EIO if writing to out failed. */
int t2__store_check_output(t2__store *st, FILE *out);

#endif
