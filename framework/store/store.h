/* store.h — the experiment store: one SQLite database per t2exp home (internal API).
 *
 * Who uses it: the controller is the only writer (experiments, trials, metrics, checkpoints,
 * searcher snapshots); the CLI opens read-only connections for `list`, `describe`, `trials`,
 * `metrics`, `checkpoints` while experiments run. Nothing here is part of the public trial header.
 *
 * Concurrency and durability: the database runs in WAL mode, so any number of readers see the last
 * committed state while one writer appends; busy_timeout (5 s) absorbs the short moments when a
 * reader needs a lock (a WAL checkpoint); writers (two controllers on one home) take fair turns at
 * the write lock instead (writer_turns.c), so experiments run side by side on one home. Every write
 * happens inside a transaction, so a writer killed at any instant leaves the database as it was at
 * its last commit: the store always holds a prefix of the writer's sequence of writes.
 * synchronous=NORMAL: a commit survives a killed process; a power loss may drop the last commits
 * but never corrupts the file.
 *
 * Batching: writes are not committed one by one. The first write opens a transaction (the
 * "batch"); later writes join it; t2__store_flush() commits it once it holds flush_rows writes or
 * is flush_ms old (or always, with force), and t2__store_commit()/t2__store_close() commit it too.
 * Until then readers do not see the writes. The controller calls add_metric per report, flush(0)
 * from its event loop, and flush(1) after state changes a user should see at once.
 *
 * Times are Unix seconds (double, UTC) from the store's clock (t2__store_set_clock for tests).
 * Doubles that may be absent use NAN for "none" (SQLite stores NaN as NULL anyway). Returned
 * strings are malloc'ed and belong to the caller's row, freed by the row's free function.
 * Every function returns 0 or a negative T2_E… code with t2_errmsg() naming the store and the
 * SQLite message. A handle is used by one thread at a time (SQLite is opened without its own
 * mutex); a process that forks opens its own handle after the fork. The one exception is the
 * writer thread below, which takes the handle over for the hot writes and hands it back before
 * any other call runs. */
#ifndef T2_STORE_H
#define T2_STORE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef struct t2__store t2__store;

/* ---- location ---------------------------------------------------------------------------- */

/* The t2exp home directory: `override` (the CLI's --home) if non-empty, else $T2EXP_HOME, else
 * $XDG_DATA_HOME/t2exp (only if absolute, per the XDG spec), else $HOME/.local/share/t2exp.
 * A relative choice is made absolute against the working directory (the store records paths
 * under it). Writes it to buf (NUL-terminated); does not create it. T2_EINVAL if it does not
 * fit, T2_ENOTFOUND if nothing (not even $HOME) says where. */
int t2__store_home(const char *override, char *buf, size_t len);

/* HOME/experiments/<id>, or HOME/experiments/<id>/<sub> when sub is non-NULL (e.g. "checkpoints",
 * "trials/3.log"). Only builds the path; t2__mkdirs (common/internal.h) creates directories. */
int t2__store_experiment_dir(const char *home, int64_t experiment_id, const char *sub, char *buf,
                             size_t len);


/* ---- open / close / schema --------------------------------------------------------------- */

/* The schema version this code writes (PRAGMA user_version). */
#define T2__STORE_SCHEMA_VERSION 15

/* Opens HOME/t2exp.db. Read-write: creates HOME (mkdir -p) and the database, sets WAL mode, and
 * applies the pending forward migrations in one transaction. Read-only: the database must exist
 * (T2_ENOTFOUND otherwise, saying nothing has been recorded in HOME yet); an older schema is
 * migrated first through a short read-write connection when the file is writable. A database with
 * a newer schema than this code knows is refused with T2_EUNSUPPORTED; a file that is not a t2exp
 * store with T2_EFORMAT. */
int t2__store_open(const char *home, int readonly, t2__store **out);
/* Read-write, but only a store that exists (T2_ENOTFOUND as a read-only open says it otherwise):
 * for the commands that name an experiment and write (kill EXP.N, resume, activate, delete, model
 * register/delete), which made an empty store in a mistyped --home and then said "no experiment"
 * with exit 2 (probe_M). */
int t2__store_open_existing(const char *home, t2__store **out);

/* Commits a pending batch and closes. A t2__store_begin without commit is rolled back (its work
 * only; the batch before it is kept) and reported as T2_ESTATE, but the store is closed anyway.
 * Accepts NULL. */
int t2__store_close(t2__store *st);

const char *t2__store_path(const t2__store *st); /* the database file, for messages */
/* The store's random id (32 lower-case hex digits, drawn when the store was made or upgraded
 * to schema 2): checkpoint directories on a shared checkpoint_storage path are named by it. */
int t2__store_id(t2__store *st, char out[33]);
const char *t2__store_home_of(const t2__store *st);
/* The descriptors this process has open on the store's files (the database, its write-ahead log,
 * shared memory, journal, turns file), in a malloc'ed *fds of *n (NULL, 0: none, or no /proc to
 * tell): a forked trial must not keep them (store_fds.c). */
int t2__store_fds(const t2__store *st, int **fds, int *n);

/* The clock used for every timestamp the store writes and for "now" in queries (durations of
 * running experiments). NULL restores the wall clock. Tests pin it for exact output. */
void t2__store_set_clock(t2__store *st, double (*now)(void *ud), void *ud);
double t2__store_now(const t2__store *st);

/* Brackets writes that must reach the disk together or not at all, without committing more often
 * than the batch would: while a group is open (on = 1; nestable; on = 0 closes one) neither a full
 * batch nor t2__store_flush commits, so the next commit comes after the group and holds all of it.
 * The controller groups the searcher's operations (new trials) with the snapshot that follows
 * them: a commit between the two left trials that the saved searcher did not know, and resume
 * then ran only those. */
void t2__store_group(t2__store *st, int on);

/* 1 when a write failed for want of space (disk full, a file-size limit, a quota) since the
 * last t2__store_reclaim: the caller should stop writing and pause, not fail, the experiment. */
int t2__store_out_of_space(const t2__store *st);

/* After running out of space: drops the failed batch (SQLite already rolled it back), then
 * checkpoints the write-ahead log into the database and truncates it, which frees the log's
 * space for the few writes that record a pause. Committed rows are never touched. */
int t2__store_reclaim(t2__store *st);

/* How long a lock wait may last before SQLITE_BUSY becomes T2_EIO: default 5000 ms for a
 * read-only handle, 60000 ms for a writer (writers take fair turns: writer_turns.c). */
int t2__store_set_busy_timeout(t2__store *st, int ms);

/* The controller's hot writes (create/update trial, metrics, log segments, BLAS line, hosts,
 * parent, the experiment's progress and best, the searcher snapshot) on a writer thread
 * (store_async.c): each is queued and returns at once; commits are still decided by flush and the
 * row count on the caller's thread; any other call waits for the queue first. A queued write that
 * fails is reported by the next call. start: T2_OK, or an error and the store goes on writing on
 * the caller's thread. stop (close stops it too): runs what is queued and returns the first error
 * met since it was last reported. Only one thread may call the store meanwhile, as always. */
int t2__store_async_start(t2__store *st);
int t2__store_async_stop(t2__store *st);

/* ---- transactions and batching (writer only) ---------------------------------------------- */

/* Flush policy: commit the batch once it holds `rows` writes (checked by every write) or is `ms`
 * milliseconds old (checked by t2__store_flush). Defaults: 10000 rows, 200 ms (a commit rewrites
 * every page the batch touched: at 1000 rows a search of one-batch trials committed every 60 trials). */
void t2__store_set_flush_policy(t2__store *st, long rows, long ms);

/* An explicit transaction for writes that must land together (a trial's state with the searcher
 * snapshot). Not nestable (T2_ESTATE). If a batch is pending, begin joins it through a SAVEPOINT,
 * so rollback undoes only the explicit part. commit commits everything (the batch too). */
int t2__store_begin(t2__store *st);
int t2__store_commit(t2__store *st);
int t2__store_rollback(t2__store *st);

/* fn(ud) runs before every commit (its writes join the transaction; a failure fails the commit):
 * for a caller's state that only has to match the committed rows, written once per commit
 * instead of once per change. NULL: none. */
void t2__store_set_precommit(t2__store *st, int (*fn)(void *ud), void *ud);

/* Commits the pending batch if it is due under the flush policy, or whenever force is non-zero.
 * Does nothing inside begin/commit or when nothing is pending. */
int t2__store_flush(t2__store *st, int force);

/* Writes not yet committed (0 when none). */
long t2__store_pending(const t2__store *st);

/* ---- states ----------------------------------------------------------------------------- */

typedef enum {
    T2__EXP_ACTIVE,
    T2__EXP_PAUSED,
    T2__EXP_COMPLETED,
    T2__EXP_ERRORED,
    T2__EXP_CANCELED,
} t2__exp_state;

typedef enum {
    T2__TRIAL_QUEUED,
    T2__TRIAL_RUNNING,
    T2__TRIAL_PAUSED,
    T2__TRIAL_COMPLETED,
    T2__TRIAL_ERRORED,
    T2__TRIAL_CANCELED,
} t2__trial_state;

typedef enum { T2__METRIC_TRAINING, T2__METRIC_VALIDATION } t2__metric_kind;

/* Upper-case names as stored ("ACTIVE"); NULL for an unknown value. parse: T2_EINVAL if unknown. */
const char *t2__exp_state_name(int state);
const char *t2__trial_state_name(int state);

/* `t2exp kill EXP.N`'s mark (trial_kill.c, cli/lifecycle.c): its trial's row is CANCELED with an
 * error that starts with T2__KILLED_BY_USER, and stays so: resume runs again the trials a
 * `t2exp kill EXP` canceled (their error is NULL or an earlier failure's), never these. */
#define T2__KILLED_BY_USER "killed by the user"
static inline int t2__trial_killed_by_user(int state, const char *error)
{
    return state == T2__TRIAL_CANCELED && error && !strncmp(error, T2__KILLED_BY_USER, sizeof T2__KILLED_BY_USER - 1);
}
/* The ids of experiment experiment_id's trials killed by the user (the mark above), ascending, into a
 * malloc'd array (NULL when *n is 0). */
int t2__store_killed_trials(t2__store *st, int64_t experiment_id, int64_t **ids, size_t *n);

/* searcher.pruner's marks: a trial it stopped is COMPLETED with an error (why it ended) that starts
 * with T2__PRUNED_AT ("pruned at batch 40: ..."); resume tells it from one that completed its
 * work, which alone is a reference for other trials. */
#define T2__PRUNED_AT "pruned at batch "
static inline int t2__trial_pruned(int state, const char *error)
{
    return state == T2__TRIAL_COMPLETED && error && !strncmp(error, T2__PRUNED_AT, sizeof T2__PRUNED_AT - 1);
}
/* A trial that called its hyperparameters unusable (T2_EHPARAM) is ERRORED with an error that
 * starts with T2__INVALID_HPARAMS ("invalid hyperparameters: build_model: ..."): the flag lives
 * nowhere else, and a resume that tells the searcher a missed end needs it (controller/reports.c
 * writes it, experiment_resume.c reads it). */
#define T2__INVALID_HPARAMS "invalid hyperparameters: "
typedef struct t2__metric_point {
    int64_t trial_id, batches;
    double value; /* NAN: NaN */
    double epoch; /* batches / batches per epoch; NAN when unknown */
} t2__metric_point;
/* Every validation of metric by experiment experiment_id's trials, ordered by trial id then
 * batches, into a malloc'd array (NULL when *n is 0). */
int t2__store_validation_series(t2__store *st, int64_t experiment_id, const char *metric, t2__metric_point **out,
                                size_t *n);
/* The error text of trial EXP.N killed by the user. */
static inline void t2__trial_killed_reason(int64_t exp_id, int64_t ordinal, char *why, size_t n)
{
    snprintf(why, n, T2__KILLED_BY_USER " (t2exp kill %lld.%lld)", (long long)exp_id, (long long)ordinal);
}
const char *t2__metric_kind_name(int kind); /* "training" / "validation" */
int t2__exp_state_parse(const char *name, int *out);
int t2__trial_state_parse(const char *name, int *out);

/* ---- writes (the controller) --------------------------------------------------------------- */

typedef struct {
    const char *name;          /* required */
    const char *description;   /* may be NULL */
    const char *labels_json;   /* a JSON array; NULL means [] */
    const char *config_yaml;   /* the full config as given; required */
    const char *searcher_name; /* required */
    const char *metric;        /* the searcher metric; required */
    int smaller_is_better;
    const char *trial_object;  /* path of the trial .so; required */
    int64_t seed;
    const char *overrides_json; /* the --config values, a JSON array of strings; NULL: none */
} t2__experiment_new;

/* Records a new ACTIVE experiment (created_at = started_at = now) and returns its id. */
int t2__store_create_experiment(t2__store *st, const t2__experiment_new *e, int64_t *id);

/* ACTIVE clears ended_at (a resumed experiment is running again); PAUSED and the final states set
 * ended_at = now, so durations cover the time the experiment actually ran until it stopped. */
int t2__store_set_experiment_state(t2__store *st, int64_t id, int state);
int t2__store_set_experiment_progress(t2__store *st, int64_t id, double progress); /* 0..1 */
int t2__store_set_experiment_best(t2__store *st, int64_t id, int64_t trial_id, double metric);
int t2__store_set_experiment_error(t2__store *st, int64_t id, const char *error); /* NULL clears */
/* Where the experiment's checkpoints go, set once by create (resume reads it back). */
int t2__store_set_experiment_checkpoint_dir(t2__store *st, int64_t id, const char *dir);
/* Replaces the experiment's --config values (a JSON array of strings, as create stored them): a
 * resume stores its own after the earlier ones, so that the next resume applies them all again. */
int t2__store_set_experiment_overrides(t2__store *st, int64_t id, const char *overrides_json);
/* Records the experiment's part count P (1..64). */
int t2__store_set_experiment_parts(t2__store *st, int64_t id, int parts);

/* ---- liveness (liveness.c): which process runs an experiment ------------------------------- */

/* This process's identity for the liveness record: "<start time>@<boot id>" from
 * /proc/PID/stat field 22 and /proc/sys/kernel/random/boot_id. T2_ENOTFOUND when there is no
 * such process (or only its zombie). */
int t2__proc_token(long pid, char *buf, size_t len);
/* set = 1: records the calling process (pid and token) as the experiment's controller; set = 0
 * clears the record. Committed at once. */
int t2__store_set_controller(t2__store *st, int64_t id, int set);
/* 1 with *pid when the recorded controller is alive with the recorded token; 0 when none is
 * recorded, it died, or its pid now belongs to another process (never signal *pid then: it is 0).
 * T2_ENOTFOUND for an unknown experiment. */
int t2__store_controller(t2__store *st, int64_t id, long *pid);
/* Deletes the experiment's rows (trials, metrics, checkpoints, searcher state cascade) and
 * commits. T2_ENOTFOUND for an unknown experiment. Files are the caller's business. */
int t2__store_delete_experiment(t2__store *st, int64_t id);

/* Records a QUEUED trial. `ordinal` is its number within the experiment (the searcher's request
 * number; the CLI's "7.3" is experiment 7, ordinal 3); a negative ordinal means the next one
 * free. hparams_json must be valid JSON (T2_EINVAL otherwise). target_length_batches <= 0: none. */
int t2__store_create_trial(t2__store *st, int64_t experiment_id, int64_t ordinal,
                           const char *hparams_json, int64_t seed, int64_t target_length_batches,
                           int64_t *id);

/* Fields of t2__trial_update that are written: only those whose bit is in `set`. */
enum {
    T2__TU_STATE = 1 << 0,       /* RUNNING sets started_at (once); final states set ended_at */
    T2__TU_RESTARTS = 1 << 1,
    T2__TU_BATCHES = 1 << 2,     /* batches_trained */
    T2__TU_TARGET = 1 << 3,      /* target_length_batches */
    T2__TU_BEST = 1 << 4,        /* best_validation := best_validation (NAN: none) */
    T2__TU_LATEST = 1 << 5,      /* latest_validation := latest_validation */
    T2__TU_VALIDATION = 1 << 6,  /* latest := validation; best := better of best and validation
                                    under the experiment's smaller_is_better */
    T2__TU_ERROR = 1 << 7,       /* error (NULL clears) */
    T2__TU_LOG_PATH = 1 << 8,
    T2__TU_STARTED = 1 << 9,     /* explicit started_at, overriding the automatic one */
    T2__TU_ENDED = 1 << 10,      /* explicit ended_at */
};

typedef struct {
    unsigned set;
    int state;
    int restarts;
    int64_t batches_trained;
    int64_t target_length_batches;
    double best_validation, latest_validation, validation;
    const char *error;
    const char *log_path;
    double started_at, ended_at;
} t2__trial_update;

/* Lineage: the trial starts from checkpoint `uuid` of trial parent_id (pbt's exploit). */
int t2__store_set_trial_parent(t2__store *st, int64_t trial_id, int64_t parent_id, const char *uuid);
/* Records the BLAS line (t2_blas_line) the trial's rank 0 runs on. T2_ENOTFOUND if no such trial. */
int t2__store_set_trial_blas(t2__store *st, int64_t trial_id, const char *blas);
/* Records where the trial runs now: "host:slots[,host:slots...]" on resources.hostfile's pool.
 * T2_ENOTFOUND if no such trial. */
int t2__store_set_trial_hosts(t2__store *st, int64_t trial_id, const char *hosts);
/* One run of a trial: its output starts at byte `start` of the log at path (a long-lived worker's,
 * or the trial's own for a run in its own process or through mpirun) and runs to the next segment
 * of that file or its end. Joins the open batch. */
int t2__store_add_log_segment(t2__store *st, int64_t trial_id, const char *path, int64_t start);

typedef struct {
    char *path;
    int64_t start, end; /* end -1: to the end of the file */
} t2__log_segment;

/* The trial's segments in run order, each with its end resolved, into a malloc'd array (NULL when
 * *n == 0), freed with t2__log_segments_free. Runs of older versions in the trial's own process
 * recorded none: what its log_path holds before its first segment is theirs. */
int t2__store_log_segments(t2__store *st, int64_t trial_id, t2__log_segment **segs, size_t *n);
void t2__log_segments_free(t2__log_segment *segs, size_t n);

/* A worker's record of its runs' starts (log_runs.c): LOG + T2__LOG_RUNS_SUFFIX. append: one run
 * of trial_id starts at byte `start` of the worker's log; 0 or -1 (errno). next: the first start
 * recorded for log_path past `start`, or -1 (none, or no record). */
#define T2__LOG_RUNS_SUFFIX ".runs"
int t2__log_runs_append(int fd, int64_t trial_id, int64_t start);
/* Before a worker's first run in the log open as log_fd: a record whose log is empty or shorter
 * than its last start was another file's, and is emptied. 0, or -1 (errno). */
int t2__log_runs_begin(const char *log_path, int log_fd);
/* Calls fn for every record beside log_path, in run order, with the start of the run after it (-1
 * for the last), reading the record file a block at a time; none when there is no record file.
 * fn's nonzero return stops the walk and is returned; else 0, or -1 (errno). */
typedef struct {
    int64_t trial_id, start;
} t2__log_run;
typedef int (*t2__log_run_fn)(void *ctx, const t2__log_run *run, int64_t next_start);
int t2__log_runs_each(const char *log_path, t2__log_run_fn fn, void *ctx);
int64_t t2__log_runs_next(const char *log_path, int64_t start);

/* A run's output that no trial in the store owns (lost_runs.c): a killed controller's lost trials'
 * runs, from the worker logs' run records and the trials' own log files. trial_id is the id the
 * run had (it may name another trial now); order and key sort the listing. */
typedef struct {
    t2__log_segment seg;
    int64_t trial_id;
    int order;
    int64_t key;
} t2__lost_run;

/* Experiment experiment_id's lost runs, worker logs first (in run order), then trial logs, into a
 * malloc'd array (NULL when *n == 0). T2_ENOTFOUND: no such experiment. */
int t2__store_lost_runs(t2__store *st, int64_t experiment_id, t2__lost_run **runs, size_t *n);
void t2__lost_runs_free(t2__lost_run *runs, size_t n);

/* A trial's output as one stream (trial_log.c): what its own log file holds before any segment
 * (runs that recorded none), then its runs' segments, in order. */
typedef struct {
    int64_t trial_id;
    t2__log_segment *pieces;
    size_t n;
} t2__trial_log;

/* T2_ENOTFOUND if there is no such trial. Free with t2__trial_log_free. */
int t2__trial_log_open(t2__store *st, int64_t trial_id, t2__trial_log *out);
/* Up to cap bytes of the stream from offset into buf; *got 0: at its end. size (NULL: not wanted)
 * gets the stream's bytes now, from the same opening of each piece as the read. T2_EIO (message
 * names the file) when a piece cannot be read: missing, not a regular file, or a symbolic link. */
int t2__trial_log_read(const t2__trial_log *l, int64_t offset, void *buf, size_t cap, size_t *got, int64_t *size);
/* Writes the stream from *at to its end as it is now to out, advancing *at past what was written;
 * last (NULL: not wanted) gets the last byte written (unchanged when none). T2_EIO when a piece
 * cannot be read or out cannot be written; T2_ENOMEM. */
int t2__trial_log_copy(const t2__trial_log *l, int64_t *at, FILE *out, char *last);
void t2__trial_log_free(t2__trial_log *l);

/* A number that changes whenever another connection commits to the store (SQLite's
 * PRAGMA data_version on this connection): what a reader polls to learn that there is news. */
int t2__store_data_version(t2__store *st, int64_t *version);

/* T2_ENOTFOUND if there is no such trial. */
int t2__store_update_trial(t2__store *st, int64_t trial_id, const t2__trial_update *u);

/* Buffers one metric row into the batch (a cached prepared INSERT inside the open transaction).
 * Dedup: INSERT OR IGNORE on the key (trial, kind, batches, name): the first value recorded for a
 * step wins, so a trial resumed from a checkpoint that reports the steps after it again — with
 * bit-identical values when resume is exact — never duplicates or rewrites them. epoch NAN: none;
 * value NaN is stored as NULL. */
int t2__store_add_metric(t2__store *st, int64_t trial_id, int kind, int64_t batches, double epoch,
                         const char *name, double value);

/* The runner's own measurements of one training report's window, which read back as the metrics
 * t2exp.batches_per_s, t2exp.samples_per_s, t2exp.data_s, t2exp.compute_s and t2exp.comm_s. */
typedef struct {
    double batches_per_s, samples_per_s, data_s, compute_s, comm_s; /* NaN: NULL */
} t2__store_timing;

/* Buffers a report's timings as one row of report_timings (schema 14; the listings show it as those
 * five training metrics at the step). Dedup as add_metric: the first row recorded for a step wins. */
int t2__store_add_timing(t2__store *st, int64_t trial_id, int64_t batches, double epoch, const t2__store_timing *t);

typedef struct {
    const char *uuid;  /* required, unique */
    int64_t trial_id;  /* the experiment comes from the trial */
    int64_t batches;
    double epoch;      /* NAN: none */
    double metric;     /* the searcher metric at this checkpoint, NAN: none */
    int64_t size_bytes;
    const char *path;  /* required */
} t2__checkpoint_new;

int t2__store_add_checkpoint(t2__store *st, const t2__checkpoint_new *c);
/* After garbage collection removed the file; T2_ENOTFOUND for an unknown uuid. */
int t2__store_mark_checkpoint_deleted(t2__store *st, const char *uuid);

/* The searcher's snapshot after `events` events (replaces the previous one). */
int t2__store_save_searcher_state(t2__store *st, int64_t experiment_id, int64_t events,
                                  const char *state_json);
/* *state_json is malloc'ed (free()); T2_ENOTFOUND if none was saved. events may be NULL. */
int t2__store_load_searcher_state(t2__store *st, int64_t experiment_id, int64_t *events,
                                  char **state_json);

/* ---- reads for resume and for the controller ---------------------------------------------- */

typedef struct {
    int64_t id;
    char *name, *description, *labels_json, *config_yaml, *searcher_name, *metric;
    int smaller_is_better;
    int state;
    double progress;
    char *trial_object;
    int64_t seed;
    double created_at, started_at, ended_at; /* NAN: none */
    int64_t best_trial_id;                   /* 0: none */
    double best_metric;                      /* NAN: none */
    char *error;
    int64_t num_trials;
    char *overrides_json; /* JSON array of --config strings; NULL: made before schema 2 (their
                             overrides are comment lines at the end of config_yaml) */
    char *checkpoint_dir; /* NULL: made before schema 2 (the old layout applies) */
    int parts;            /* the part count P recorded at create; 0: none (before schema 9) */
} t2__experiment_row;

/* T2_ENOTFOUND if there is no experiment `id`. Free with t2__experiment_row_free (zeroes it). */
int t2__store_get_experiment(t2__store *st, int64_t id, t2__experiment_row *out);
void t2__experiment_row_free(t2__experiment_row *r);

typedef struct {
    int64_t id, experiment_id, ordinal;
    char *hparams_json;
    int64_t seed;
    int state;
    int restarts;
    int64_t batches_trained, target_length_batches; /* target 0: none */
    double best_validation, latest_validation;      /* NAN: none */
    char *error, *log_path;
    double created_at, started_at, ended_at;        /* NAN: none */
    int64_t parent_trial_id;                        /* 0: none (the trial started fresh) */
    char *parent_checkpoint;                        /* uuid it started from; NULL: none */
    char *hosts;                                    /* where it ran (controller/host_history.h); NULL: none */
} t2__trial_row;

/* Every trial of an experiment ordered by ordinal; *rows is one malloc'ed array (NULL when
 * *n == 0) freed with t2__trial_rows_free. */
int t2__store_list_trials(t2__store *st, int64_t experiment_id, t2__trial_row **rows, size_t *n);
int t2__store_get_trial(t2__store *st, int64_t trial_id, t2__trial_row *out);
void t2__trial_row_free(t2__trial_row *r);
void t2__trial_rows_free(t2__trial_row *rows, size_t n);

/* Every experiment's id, ascending, into a malloc'd array (*ids NULL when none). */
int t2__store_experiment_ids(t2__store *st, int64_t **ids, size_t *n);

/* Trial id of "experiment.ordinal"; T2_ENOTFOUND if absent. */
int t2__store_trial_id(t2__store *st, int64_t experiment_id, int64_t ordinal, int64_t *trial_id);

typedef struct {
    char *uuid;
    int64_t trial_id, experiment_id, batches;
    double epoch, metric; /* NAN: none */
    int64_t size_bytes;
    char *path;
    double created_at;
    int deleted;
} t2__checkpoint_row;

/* The ACTIVE checkpoint of the trial with the most batches (latest created among equals);
 * T2_ENOTFOUND if the trial has none. */
int t2__store_latest_checkpoint(t2__store *st, int64_t trial_id, t2__checkpoint_row *out);
/* The steps at which the trial's training metrics were reported, ascending (*steps malloc'ed,
 * NULL when none). A restarted trial closes its reporting windows there again (runner.h). */
int t2__store_report_steps(t2__store *st, int64_t trial_id, int64_t **steps, size_t *n);
/* The ACTIVE checkpoint with this uuid; T2_ENOTFOUND if there is none. */
int t2__store_checkpoint_by_uuid(t2__store *st, const char *uuid, t2__checkpoint_row *out);
/* The best ACTIVE checkpoint of an experiment (trial_id 0) or of one of its trials: by the
 * metric recorded with it (the searcher metric, in the experiment's smaller_is_better direction),
 * the latest one when none has a metric. T2_ENOTFOUND if there is none. */
int t2__store_best_checkpoint(t2__store *st, int64_t experiment_id, int64_t trial_id,
                              t2__checkpoint_row *out);

/* ---- addressing (store_resolve.c): what the CLI and configs accept ------------------------- */

/* A trial: "EXP.N" (experiment EXP's trial with ordinal N, from 0) or a plain trial id. Checks
 * that the trial exists: T2_ENOTFOUND naming the reference, T2_EINVAL for text that is neither. */
int t2__store_resolve_trial(t2__store *st, const char *ref, int64_t *trial_id);

/* A checkpoint, the same way everywhere (export, evaluate, --from-checkpoint,
 * searcher.source_checkpoint): an existing file's path (used as it is, st may be NULL), else
 * "EXP" or "EXP.N" (that experiment's or trial's best checkpoint, t2__store_best_checkpoint), else
 * the uuid of an active checkpoint. For a path only out->path is set. T2_ENOTFOUND names the
 * reference and the forms tried. Free out with t2__checkpoint_row_free. */
int t2__store_resolve_checkpoint(t2__store *st, const char *ref, t2__checkpoint_row *out);

/* The trial that wrote checkpoint uuid in this store, whatever the checkpoint's state (a copy made
 * before garbage collection still came from here); T2_ENOTFOUND if this store never wrote it. */
int t2__store_checkpoint_owner(t2__store *st, const char *uuid, int64_t *trial_id);

/* Every checkpoint of an experiment (trial_id 0) or of one trial, deleted ones included, ordered
 * by trial then batches — what garbage collection needs. Free with t2__checkpoint_rows_free. */
int t2__store_list_checkpoints(t2__store *st, int64_t experiment_id, int64_t trial_id,
                               t2__checkpoint_row **rows, size_t *n);
void t2__checkpoint_row_free(t2__checkpoint_row *r);
void t2__checkpoint_rows_free(t2__checkpoint_row *rows, size_t n);

/* ---- raw SQL (tests, maintenance) ---------------------------------------------------------- */

/* Runs SQL text (one or more statements, results discarded), outside the batch bookkeeping:
 * meant for tests and one-off maintenance such as "PRAGMA integrity_check", not for the writer's
 * normal path. */
int t2__store_exec_sql(t2__store *st, const char *sql);
/* The first column of the first row of a query: as an integer, or as text into buf (truncated
 * to len). T2_ENOTFOUND if the query returns no row. */
int t2__store_query_int(t2__store *st, const char *sql, int64_t *out);
int t2__store_query_text(t2__store *st, const char *sql, char *buf, size_t len);

/* ---- CLI listings --------------------------------------------------------------------------- */

/* Makes n bytes of user text safe to print on a terminal, in place: control characters (C0,
 * DEL, and C1 in UTF-8) become spaces, so a name, a label or a trial's message can neither move
 * the cursor nor start an escape sequence, and stays on one line. The listings' cells, create's
 * and resume's summaries and the progress lines all go through it. */
void t2__store_printable(char *s, size_t n);

/* Writes v as one CSV field (RFC 4180): quoted, quotes doubled, when it holds a comma, a quote or
 * a line break; NULL writes nothing (an empty field). */
void t2__store_csv_field(FILE *out, const char *v);

typedef enum { T2__FMT_TABLE, T2__FMT_JSON, T2__FMT_CSV } t2__store_format;

/* How the table format shows a column (JSON and CSV always get the raw value). */
typedef enum {
    T2__COL_AUTO,     /* as SQLite renders it; reals with %.6g in tables */
    T2__COL_JSON,     /* text holding JSON: embedded as JSON (not a string) in --json */
    T2__COL_PERCENT,  /* a 0..1 fraction shown as "42.0%" */
    T2__COL_DURATION, /* seconds shown as "1h02m03s" */
} t2__col_kind;

typedef struct {
    const char *name;
    t2__col_kind kind;
} t2__store_colspec; /* arrays end with {NULL, 0} */

typedef struct {
    const char *name; /* ":exp" */
    enum { T2__P_INT, T2__P_REAL, T2__P_TEXT } type;
    int64_t i;
    double d;
    const char *s;
} t2__store_param;

/* Runs `sql` (one SELECT; named parameters bound from params, plus ":now" from the store clock
 * when the query uses it) and prints the result to out:
 *   table — aligned columns for humans, header and a rule, numbers right-aligned;
 *   json  — one array of objects, one per row, built by SQLite (json_group_array/json_object);
 *   csv   — RFC 4180: a header record, fields with comma, quote, CR or LF quoted, quotes doubled,
 *           NULL as an empty field; records end with LF (not CRLF) as Unix tools expect.
 * cols (may be NULL) marks columns that are not T2__COL_AUTO. */
int t2__store_print_query(t2__store *st, const char *sql, const t2__store_param *params,
                          size_t nparams, const t2__store_colspec *cols, t2__store_format fmt,
                          FILE *out);

/* The model registry (store_models.c, `t2exp model`). A name is letters, digits, '_', '-', '.'
 * (T2_EINVAL saying so). register: version N+1 of model `name` (made on its first version, with
 * description, which a later one replaces when not NULL) names the ACTIVE checkpoint uuid; its
 * number to *version. checkpoint: version `version` of the model (0: its latest) as the
 * checkpoint's row; T2_ENOTFOUND naming what is missing. delete: the model and its versions (not
 * the checkpoints, which the experiment's next run may collect, or t2exp delete remove). */
int t2__model_name_check(const char *name);
int t2__store_model_register(t2__store *st, const char *name, const char *checkpoint_uuid, const char *description,
                             int64_t *version);
int t2__store_model_checkpoint(t2__store *st, const char *name, int64_t version, t2__checkpoint_row *out);
int t2__store_model_delete(t2__store *st, const char *name);
/* Garbage collection's mark: the ACTIVE checkpoint uuid becomes DELETED unless a model version
 * names it, in one statement (into the batch). 1: marked, its file may go once committed; 0: kept. */
int t2__store_retire_checkpoint(t2__store *st, const char *uuid);
/* `t2exp delete`'s first step: every checkpoint of the experiment DELETED in one transaction with the
 * check that none is registered (1, with "model:NAME:V" to as, and nothing marked); 0: marked. */
int t2__store_retire_experiment_checkpoints(t2__store *st, int64_t experiment_id, char *as, size_t size);
/* `t2exp model list`: name, versions, latest, description, created. `t2exp model describe NAME`: its
 * versions with their checkpoint (uuid, trial, batches, metric, path). */
int t2__store_print_models(t2__store *st, t2__store_format fmt, FILE *out);
int t2__store_print_model(t2__store *st, const char *name, t2__store_format fmt, FILE *out);

/* `t2exp list`: id, name, state, searcher, trials, progress, best_metric, started, duration.
 * Reads only the experiments table (trial counts are kept there by triggers). */
int t2__store_print_experiments(t2__store *st, t2__store_format fmt, FILE *out);

/* `t2exp describe ID`: the experiment (with its config), then its trials ranked by the searcher
 * metric (best first, trials without a validation last) with hparams, best and latest
 * validation, batches, restarts and checkpoint count. trials_limit > 0 shows only the top ones.
 * json: {"experiment": {...}, "trials": [...]}; csv: the ranked trials only (the experiment's own
 * fields are `list --csv`). T2_ENOTFOUND for an unknown id. */
int t2__store_print_experiment(t2__store *st, int64_t id, long trials_limit,
                               t2__store_format fmt, FILE *out);
/* describe EXP.N: one trial (Determined's `det trial describe`): its row as "key  value" lines, its
 * latest validation's metrics and its active checkpoints; JSON {"trial", "latest_validation",
 * "checkpoints"}; CSV the row. T2_ENOTFOUND: no such trial. */
int t2__store_print_trial(t2__store *st, int64_t trial_id, t2__store_format fmt, FILE *out);

/* `t2exp trials ID`: all trials by ordinal. */
int t2__store_print_trials(t2__store *st, int64_t experiment_id, t2__store_format fmt, FILE *out);

/* `t2exp metrics TRIAL`: kind, batches, epoch, name, value, time ordered by kind, batches, name.
 * kind: NULL for both, else "training" or "validation" (T2_EINVAL otherwise). */
int t2__store_print_metrics(t2__store *st, int64_t trial_id, const char *kind,
                            t2__store_format fmt, FILE *out);

/* `t2exp metrics EXP`: all of an experiment's metrics as one table: trial (EXP.N), trial_id,
 * kind, batches, epoch, name, value, time, ordered by trial then as print_metrics. */
int t2__store_print_experiment_metrics(t2__store *st, int64_t experiment_id, const char *kind,
                                       t2__store_format fmt, FILE *out);

/* `t2exp checkpoints ID`: of an experiment (trial_id 0) or of one trial (experiment_id ignored).
 * include_deleted = 0 shows ACTIVE ones only. */
int t2__store_print_checkpoints(t2__store *st, int64_t experiment_id, int64_t trial_id,
                                int include_deleted, t2__store_format fmt, FILE *out);

#endif
