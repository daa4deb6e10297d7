/* migrate.c — the schema and its forward migrations, keyed by PRAGMA user_version.
 *
 * MIGRATIONS[i] takes a database from version i to i+1. Changing the schema means appending one
 * entry (never editing a shipped one: stores in the field already ran it) and bumping
 * T2__STORE_SCHEMA_VERSION. All pending steps and the new user_version commit in one transaction,
 * so an interrupted upgrade leaves the old version intact. */
#include <stdio.h>
#include "store_internal.h"
#include "t2exp/error.h"

/* 't2ex' in ASCII: marks the file as a t2exp store, so we never migrate someone else's database. */
#define T2__STORE_APPLICATION_ID 0x74326578

static const char SCHEMA_V1[] =
    /* Trial counts live on the experiment row (triggers below) so `t2exp list` reads one small
     * table however many trials exist. Ids are AUTOINCREMENT: they name directories under
     * HOME/experiments and must never be reused after a delete. */
    "CREATE TABLE experiments ("
    " id INTEGER PRIMARY KEY AUTOINCREMENT,"
    " name TEXT NOT NULL,"
    " description TEXT,"
    " labels TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(labels)),"
    " config_yaml TEXT NOT NULL,"
    " searcher_name TEXT NOT NULL,"
    " metric TEXT NOT NULL,"
    " smaller_is_better INTEGER NOT NULL CHECK (smaller_is_better IN (0, 1)),"
    " state TEXT NOT NULL DEFAULT 'ACTIVE'"
    "  CHECK (state IN ('ACTIVE','PAUSED','COMPLETED','ERRORED','CANCELED')),"
    " progress REAL NOT NULL DEFAULT 0 CHECK (progress >= 0 AND progress <= 1),"
    " trial_object TEXT NOT NULL,"
    " seed INTEGER NOT NULL,"
    " created_at REAL NOT NULL,"
    " started_at REAL,"
    " ended_at REAL,"
    " best_trial_id INTEGER REFERENCES trials(id) ON DELETE SET NULL,"
    " best_metric REAL,"
    " error TEXT,"
    " num_trials INTEGER NOT NULL DEFAULT 0"
    ");"
    /* hparams is checked JSON: listings embed it with json(), which fails on bad text. */
    "CREATE TABLE trials ("
    " id INTEGER PRIMARY KEY AUTOINCREMENT,"
    " experiment_id INTEGER NOT NULL REFERENCES experiments(id) ON DELETE CASCADE,"
    " ordinal INTEGER NOT NULL,"
    " hparams TEXT NOT NULL CHECK (json_valid(hparams)),"
    " seed INTEGER NOT NULL,"
    " state TEXT NOT NULL DEFAULT 'QUEUED'"
    "  CHECK (state IN ('QUEUED','RUNNING','PAUSED','COMPLETED','ERRORED','CANCELED')),"
    " restarts INTEGER NOT NULL DEFAULT 0,"
    " batches_trained INTEGER NOT NULL DEFAULT 0,"
    " target_length_batches INTEGER,"
    " best_validation REAL,"
    " latest_validation REAL,"
    " error TEXT,"
    " log_path TEXT,"
    " created_at REAL NOT NULL,"
    " started_at REAL,"
    " ended_at REAL,"
    " UNIQUE (experiment_id, ordinal)" /* also the "trials of an experiment" index */
    ");"
    /* describe ranks trials by the metric: this index yields them in order, either direction. */
    "CREATE INDEX trials_by_metric ON trials (experiment_id, best_validation);"
    "CREATE TRIGGER trials_count AFTER INSERT ON trials BEGIN"
    " UPDATE experiments SET num_trials = num_trials + 1 WHERE id = NEW.experiment_id; END;"
    "CREATE TRIGGER trials_uncount AFTER DELETE ON trials BEGIN"
    " UPDATE experiments SET num_trials = num_trials - 1 WHERE id = OLD.experiment_id; END;"
    /* The key is the dedup rule: one value per (trial, kind, step, name), so a resumed trial can
     * never duplicate a step. WITHOUT ROWID makes that key the table itself: one B-tree per
     * insert instead of table + unique index, and `metrics TRIAL` reads it in key order. value is
     * NULL for NaN (SQLite has no NaN). */
    "CREATE TABLE metrics ("
    " trial_id INTEGER NOT NULL REFERENCES trials(id) ON DELETE CASCADE,"
    " kind TEXT NOT NULL CHECK (kind IN ('training','validation')),"
    " batches INTEGER NOT NULL,"
    " epoch REAL,"
    " name TEXT NOT NULL,"
    " value REAL,"
    " time REAL NOT NULL,"
    " PRIMARY KEY (trial_id, kind, batches, name)"
    ") WITHOUT ROWID;"
    "CREATE TABLE checkpoints ("
    " uuid TEXT PRIMARY KEY,"
    " trial_id INTEGER NOT NULL REFERENCES trials(id) ON DELETE CASCADE,"
    " experiment_id INTEGER NOT NULL REFERENCES experiments(id) ON DELETE CASCADE,"
    " batches INTEGER NOT NULL,"
    " epoch REAL,"
    " metric REAL,"
    " size_bytes INTEGER NOT NULL DEFAULT 0,"
    " path TEXT NOT NULL,"
    " created_at REAL NOT NULL,"
    " state TEXT NOT NULL DEFAULT 'ACTIVE' CHECK (state IN ('ACTIVE','DELETED'))"
    ");"
    "CREATE INDEX checkpoints_by_trial ON checkpoints (trial_id, batches);"
    "CREATE INDEX checkpoints_by_experiment ON checkpoints (experiment_id);"
    /* No json_valid CHECK here: an ASHA snapshot can be large and is saved after every event;
     * the searcher validates it when it loads it. */
    "CREATE TABLE searcher_state ("
    " experiment_id INTEGER PRIMARY KEY REFERENCES experiments(id) ON DELETE CASCADE,"
    " events INTEGER NOT NULL,"
    " state TEXT NOT NULL,"
    " updated_at REAL NOT NULL"
    ");";

/* Version 2: the store's own identity and an experiment's launch facts as data.
 * - store_info.store_id: 32 random hex digits drawn once, when the store is made (or upgraded).
 *   Checkpoint directories under a shared checkpoint_storage path are named by it, so two homes
 *   pointing at the same path never share (or sweep) each other's directories.
 * - experiments.overrides: the command line's --config values as a JSON array of strings,
 *   written by create and read back exactly by resume (v1 kept them as YAML comment lines, which
 *   a value with a newline broke; such experiments still resume from those lines).
 * - experiments.checkpoint_dir: where the experiment's checkpoints go, decided once at create,
 *   so a resume with other overrides or a moved default never loses them. NULL for v1
 *   experiments, which keep their old, unnamespaced directory. */
static const char SCHEMA_V2[] =
    "CREATE TABLE store_info ("
    " id INTEGER PRIMARY KEY CHECK (id = 1),"
    " store_id TEXT NOT NULL CHECK (length(store_id) = 32)"
    ");"
    "INSERT INTO store_info (id, store_id) VALUES (1, lower(hex(randomblob(16))));"
    "ALTER TABLE experiments ADD COLUMN overrides TEXT"
    " CHECK (overrides IS NULL OR json_valid(overrides));"
    "ALTER TABLE experiments ADD COLUMN checkpoint_dir TEXT;";

/* Version 3: which process runs an experiment, so pause/kill/follow/delete can tell a live
 * controller from a record left by one that died. controller_pid is set by create and resume
 * while they run and cleared when they end; controller_token is that process's start time
 * (/proc/PID/stat field 22) and the boot id, so a recycled pid never passes for the controller
 * (liveness.c). Both NULL: no controller. */
static const char SCHEMA_V3[] =
    "ALTER TABLE experiments ADD COLUMN controller_pid INTEGER;"
    "ALTER TABLE experiments ADD COLUMN controller_token TEXT;";

/* Version 4: pipelines (framework/pipeline). A pipeline run is one `t2exp pipeline run` of a
 * flow file; its stage runs say what each stage did (ran, was up to date, was blocked by a failed
 * dependency). The cache compares a stage's hashes with its last successful stage run of the same
 * flow name, across runs, hence the index by stage. experiment_id links an experiment stage to
 * its experiment (no foreign key: deleting the experiment keeps the pipeline's history); a later
 * run resumes an unfinished one through it. */
static const char SCHEMA_V4[] =
    "CREATE TABLE pipeline_runs ("
    " id INTEGER PRIMARY KEY AUTOINCREMENT,"
    " name TEXT NOT NULL,"
    " flow_path TEXT NOT NULL,"
    " flow_hash TEXT NOT NULL,"
    " state TEXT NOT NULL DEFAULT 'RUNNING'"
    "  CHECK (state IN ('RUNNING','SUCCEEDED','FAILED','INTERRUPTED')),"
    " started_at REAL NOT NULL,"
    " ended_at REAL,"
    " error TEXT"
    ");"
    "CREATE INDEX pipeline_runs_by_name ON pipeline_runs (name, id);"
    "CREATE TABLE stage_runs ("
    " id INTEGER PRIMARY KEY AUTOINCREMENT,"
    " run_id INTEGER NOT NULL REFERENCES pipeline_runs(id) ON DELETE CASCADE,"
    " stage TEXT NOT NULL,"
    " state TEXT NOT NULL"
    "  CHECK (state IN ('RUNNING','SUCCEEDED','FAILED','SKIPPED','BLOCKED','CANCELED','INTERRUPTED')),"
    " started_at REAL,"
    " ended_at REAL,"
    " exit_code INTEGER,"
    " log_path TEXT,"
    " input_hash TEXT,"
    " def_hash TEXT,"
    " refs_hash TEXT,"
    " inputs TEXT CHECK (inputs IS NULL OR json_valid(inputs)),"
    " experiment_id INTEGER,"
    " result TEXT CHECK (result IS NULL OR json_valid(result)),"
    " error TEXT,"
    " UNIQUE (run_id, stage)"
    ");"
    "CREATE INDEX stage_runs_by_stage ON stage_runs (stage, id);";

/* Version 5: the BLAS kernels each trial ran on ("BLAS: OpenBLAS 0.3.21, core SkylakeX (...)"),
 * as its rank 0 reported them: the same config on another core gives other floats. */
static const char SCHEMA_V5[] = "ALTER TABLE trials ADD COLUMN blas TEXT;";

/* Version 6: where each trial runs ("host:slots" per host, comma-separated, in rank order), set
 * when it starts on resources.hostfile's pool; NULL for a trial that ran on the controller's
 * machine without a hostfile. */
static const char SCHEMA_V6[] = "ALTER TABLE trials ADD COLUMN hosts TEXT;";

/* Version 7: an index for the distinct BLAS cores of an experiment's trials, which describe shows.
 * Without it that question read every trial row: 0.4 s of a 100,000-trial describe. */
static const char SCHEMA_V7[] = "CREATE INDEX trials_by_blas ON trials (experiment_id, blas);";

/* Version 8: lineage (pbt). parent_trial_id is the trial whose checkpoint a trial started from
 * (an exploited pbt member's top-quantile parent; NULL for a trial that started fresh);
 * parent_checkpoint is that checkpoint's uuid (no foreign keys: parent and child are rows of the
 * same experiment, deleted together), so a resume starts a child that never ran from
 * exactly that state, whatever the parent checkpointed since. */
static const char SCHEMA_V8[] =
    "ALTER TABLE trials ADD COLUMN parent_trial_id INTEGER;"
    "ALTER TABLE trials ADD COLUMN parent_checkpoint TEXT;";

/* Version 9: experiments.parts, the part count P its single-slot trials split their batches into
 * (performance.md#threads), decided at create and kept: a resume on other cores, or with another
 * resources.max_slots, keeps the numbers. NULL: made before schema 9 (the plan's P applies). */
static const char SCHEMA_V9[] = "ALTER TABLE experiments ADD COLUMN parts INTEGER;";

/* Version 10: where a trial's output is when it ran in a long-lived worker
 * (resources.isolation: worker): from byte `start` of that worker's log, one row per run of the
 * trial, in order (a restart adds one). A run ends where the next segment of the same file
 * starts, or at the end of the file: a worker runs one trial at a time and writes nothing
 * between them. A file per trial cost the worker a file creation per trial, half of a short
 * trial's time. */
static const char SCHEMA_V10[] =
    "CREATE TABLE trial_log_segments ("
    " id INTEGER PRIMARY KEY AUTOINCREMENT,"
    " trial_id INTEGER NOT NULL REFERENCES trials(id) ON DELETE CASCADE,"
    " path TEXT NOT NULL,"
    " start INTEGER NOT NULL CHECK (start >= 0)"
    ");"
    "CREATE INDEX trial_log_segments_by_trial ON trial_log_segments (trial_id, id);";

/* Version 11: each distinct BLAS line once (blas_lines), a trial pointing at its line (blas_id),
 * and the lines each experiment's trials ran on (experiment_blas, kept by a trigger, for describe).
 * The line (about 190 bytes, the same for nearly every trial of a machine) was in every trial's row
 * and again in the trials_by_blas index. Measured in place (performance.md): the line once but
 * still indexed per trial, +3..+11% trials/s; without the per-trial index, +12% more, the
 * controller 109-112 -> 94-95 us a trial, a 10,000-trial store 12.3 -> 7.9 MB. trials.blas stays,
 * NULL, for readers of older versions' SQL. */
static const char SCHEMA_V11[] =
    "CREATE TABLE blas_lines ("
    " id INTEGER PRIMARY KEY,"
    " line TEXT NOT NULL UNIQUE"
    ");"
    "CREATE TABLE experiment_blas ("
    " experiment_id INTEGER NOT NULL REFERENCES experiments(id) ON DELETE CASCADE,"
    " blas_id INTEGER NOT NULL REFERENCES blas_lines(id),"
    " PRIMARY KEY (experiment_id, blas_id)"
    ") WITHOUT ROWID;"
    "ALTER TABLE trials ADD COLUMN blas_id INTEGER REFERENCES blas_lines(id);"
    "CREATE TRIGGER trials_blas AFTER UPDATE OF blas_id ON trials WHEN NEW.blas_id IS NOT NULL BEGIN"
    " INSERT OR IGNORE INTO experiment_blas (experiment_id, blas_id) VALUES (NEW.experiment_id, NEW.blas_id); END;"
    "INSERT OR IGNORE INTO blas_lines (line) SELECT DISTINCT blas FROM trials WHERE blas IS NOT NULL;"
    "UPDATE trials SET blas_id = (SELECT id FROM blas_lines WHERE line = trials.blas), blas = NULL"
    " WHERE blas IS NOT NULL;"
    "DROP INDEX trials_by_blas;";

/* Version 12: experiments.num_trials is counted by the inserts (store_write.c's count_trials, once
 * a statement), not by a trigger once a row: measured on a copy of a store, 20,000 trial inserts
 * cost 10.0-10.6 us a row with it and 6.3-7.3 without; a statement of 8 rows 4.5-6.8 and
 * 3.1-3.8. The delete trigger stays (deletes are rare). */
static const char SCHEMA_V12[] = "DROP TRIGGER IF EXISTS trials_count;";

/* Version 13: trials.state's CHECK as a chain of equalities rather than an IN list. SQLite codes
 * `x IN (list)` of more than two constants as an ephemeral B-tree built afresh by every statement
 * that checks it: each insert and each update that sets a trial's state paid a table creation and
 * page zeroing, 37% of the store writer's instructions a trial (callgrind, a 4,000-trial search).
 * The two constraints accept the same values (state is NOT NULL). A CHECK cannot be altered in
 * place, and rebuilding the table needs foreign keys off outside a transaction, so the stored
 * CREATE text is rewritten: SQLite documents that for a CHECK the existing rows keep satisfying
 * (https://sqlite.org/lang_altertable.html, "making other kinds of table schema changes").
 * t2__store_migrate then bumps schema_version so that other connections reparse it, and reloads
 * its own schema. A store whose text differs (made by hand) keeps its CHECK, as correct and slower. */
static const char SCHEMA_V13[] =
    "PRAGMA writable_schema = ON;"
    "UPDATE sqlite_master SET sql = replace(sql,"
    " 'CHECK (state IN (''QUEUED'',''RUNNING'',''PAUSED'',''COMPLETED'',''ERRORED'',''CANCELED''))',"
    " 'CHECK (state = ''QUEUED'' OR state = ''RUNNING'' OR state = ''PAUSED'' OR state = ''COMPLETED''"
    " OR state = ''ERRORED'' OR state = ''CANCELED'')')"
    " WHERE type = 'table' AND name = 'trials';"
    "PRAGMA writable_schema = OFF;";

/* Version 14: the runner's five timings of a training report (t2exp.batches_per_s, samples_per_s,
 * data_s, compute_s, comm_s) as one row of report_timings, not five rows of metrics. They were five
 * of a one-batch trial's seven metric rows, and the store's writer thread is the serial part of a
 * search on many cores: without them the writer ran 95.5k instructions a trial instead of 134.8k
 * (callgrind, a 3,000-trial random search); as one row, 107.2k. `metrics` keeps what the trial
 * itself reported; `t2exp metrics` and the dashboard read both, in the order they always had
 * (store_query.c). kind is there for that order: with it, the key walks a trial's timings in
 * metrics' key order. Only complete groups of five move (a trial could report such names itself). */
#define TIMING_NAMES "('t2exp.batches_per_s', 't2exp.samples_per_s', 't2exp.data_s', 't2exp.compute_s', 't2exp.comm_s')"
static const char SCHEMA_V14[] =
    "CREATE TABLE report_timings ("
    " trial_id INTEGER NOT NULL REFERENCES trials(id) ON DELETE CASCADE,"
    " kind TEXT NOT NULL CHECK (kind IN ('training','validation')),"
    " batches INTEGER NOT NULL,"
    " epoch REAL,"
    " time REAL NOT NULL,"
    " batches_per_s REAL, samples_per_s REAL, data_s REAL, compute_s REAL, comm_s REAL,"
    " PRIMARY KEY (trial_id, kind, batches)"
    ") WITHOUT ROWID;"
    "INSERT INTO report_timings SELECT trial_id, kind, batches, max(epoch), max(time),"
    " max(CASE name WHEN 't2exp.batches_per_s' THEN value END),"
    " max(CASE name WHEN 't2exp.samples_per_s' THEN value END),"
    " max(CASE name WHEN 't2exp.data_s' THEN value END),"
    " max(CASE name WHEN 't2exp.compute_s' THEN value END),"
    " max(CASE name WHEN 't2exp.comm_s' THEN value END)"
    " FROM metrics WHERE kind = 'training' AND name IN " TIMING_NAMES
    " GROUP BY trial_id, kind, batches HAVING count(*) = 5;"
    "DELETE FROM metrics WHERE kind = 'training' AND name IN " TIMING_NAMES
    " AND (trial_id, kind, batches) IN (SELECT trial_id, kind, batches FROM report_timings);";
#undef TIMING_NAMES

/* Version 15: the model registry (store_models.c, `t2exp model`): named models, each a list of
 * versions that name a checkpoint. A registered checkpoint is never garbage-collected, and its
 * experiment cannot be deleted while it is registered (the foreign key, and delete's own check). */
static const char SCHEMA_V15[] =
    "CREATE TABLE models ("
    " id INTEGER PRIMARY KEY AUTOINCREMENT,"
    " name TEXT NOT NULL UNIQUE,"
    " description TEXT,"
    " created_at REAL NOT NULL"
    ");"
    "CREATE TABLE model_versions ("
    " model_id INTEGER NOT NULL REFERENCES models(id) ON DELETE CASCADE,"
    " version INTEGER NOT NULL,"
    " checkpoint_uuid TEXT NOT NULL REFERENCES checkpoints(uuid),"
    " created_at REAL NOT NULL,"
    " PRIMARY KEY (model_id, version)"
    ") WITHOUT ROWID;"
    "CREATE INDEX model_versions_by_checkpoint ON model_versions (checkpoint_uuid);";

static const char *const MIGRATIONS[] = {
    SCHEMA_V1, /* 0 -> 1 */
    SCHEMA_V2, /* 1 -> 2 */
    SCHEMA_V3, /* 2 -> 3 */
    SCHEMA_V4, /* 3 -> 4 */
    SCHEMA_V5, /* 4 -> 5 */
    SCHEMA_V6, /* 5 -> 6 */
    SCHEMA_V7, /* 6 -> 7 */
    SCHEMA_V8, /* 7 -> 8 */
    SCHEMA_V9, /* 8 -> 9 */
    SCHEMA_V10, /* 9 -> 10 */
    SCHEMA_V11, /* 10 -> 11 */
    SCHEMA_V12, /* 11 -> 12 */
    SCHEMA_V13, /* 12 -> 13 */
    SCHEMA_V14, /* 13 -> 14 */
    SCHEMA_V15, /* 14 -> 15 */
};

_Static_assert(sizeof MIGRATIONS / sizeof MIGRATIONS[0] == T2__STORE_SCHEMA_VERSION,
               "one migration per schema version");

static int pragma_int(t2__store *st, const char *sql, int *out)
{
    sqlite3_stmt *s = NULL;
    int rc = sqlite3_prepare_v2(st->db, sql, -1, &s, NULL);
    if (rc != SQLITE_OK) return t2__store_err(st, rc, sql);
    rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) {
        *out = sqlite3_column_int(s, 0);
        rc = SQLITE_OK;
    }
    int ret = rc == SQLITE_OK ? 0 : t2__store_err(st, rc, sql);
    sqlite3_finalize(s);
    return ret;
}

int t2__store_schema_version(t2__store *st, int *version)
{
    return pragma_int(st, "PRAGMA user_version", version);
}

static int exec(t2__store *st, const char *sql, const char *what)
{
    int rc = sqlite3_exec(st->db, sql, NULL, NULL, NULL);
    return rc == SQLITE_OK ? 0 : t2__store_err(st, rc, what);
}

/* Our files carry our application_id from their first migration on; a file without it is only
 * acceptable while empty (a fresh database). Anything else is someone else's SQLite file given as
 * --home, which we must neither migrate nor report as "newer". */
static int check_foreign(t2__store *st, int version)
{
    int app = 0, tables = 0, rc;
    if ((rc = pragma_int(st, "PRAGMA application_id", &app))) return rc;
    if (app == T2__STORE_APPLICATION_ID) return 0;
    if (app != 0)
        return t2_seterr(T2_EFORMAT, "store %s: an SQLite database of another application "
                         "(application_id %d), not a t2exp store", st->path, app);
    if ((rc = pragma_int(st, "SELECT count(*) FROM sqlite_master", &tables))) return rc;
    if (version != 0 || tables > 0)
        return t2_seterr(T2_EFORMAT, "store %s: an SQLite database without the t2exp "
                         "application id (%d schema objects, user_version %d); not a t2exp store",
                         st->path, tables, version);
    return 0;
}

static int newer(t2__store *st, int version)
{
    return t2_seterr(T2_EUNSUPPORTED, "store %s: schema version %d is newer than this t2exp "
                     "knows (%d); it was written by a newer t2exp, use that one",
                     st->path, version, T2__STORE_SCHEMA_VERSION);
}

int t2__store_check_schema(t2__store *st, int *version)
{
    int rc;
    if ((rc = t2__store_schema_version(st, version))) return rc;
    if ((rc = check_foreign(st, *version))) return rc;
    if (*version > T2__STORE_SCHEMA_VERSION) return newer(st, *version);
    return 0;
}

int t2__store_migrate(t2__store *st)
{
    int version = 0, rc;
    if ((rc = t2__store_check_schema(st, &version))) return rc;
    if (version == T2__STORE_SCHEMA_VERSION) return 0;

    /* IMMEDIATE: take the write lock first, then look again — another process may have migrated
     * between our read and the lock. */
    if ((rc = exec(st, "BEGIN IMMEDIATE", "begin migration"))) return rc;
    if ((rc = t2__store_check_schema(st, &version))) goto fail;
    for (int v = version; v < T2__STORE_SCHEMA_VERSION; v++) {
        char what[64];
        snprintf(what, sizeof what, "migration to schema version %d", v + 1);
        if ((rc = exec(st, MIGRATIONS[v], what))) goto fail;
    }
    /* A migration may have rewritten sqlite_master's text (SCHEMA_V13): a new schema cookie makes
     * every other connection reparse the schema; RESET, after the commit, makes this one reparse. */
    int cookie = 0;
    if ((rc = pragma_int(st, "PRAGMA schema_version", &cookie))) goto fail;
    char sql[160];
    snprintf(sql, sizeof sql, "PRAGMA application_id = %d; PRAGMA user_version = %d; PRAGMA schema_version = %d",
             T2__STORE_APPLICATION_ID, T2__STORE_SCHEMA_VERSION, cookie + 1);
    if ((rc = exec(st, sql, "set schema version"))) goto fail;
    if ((rc = exec(st, "COMMIT", "commit migration"))) goto fail;
    return exec(st, "PRAGMA writable_schema = RESET", "reload the schema");
fail:
    if (!sqlite3_get_autocommit(st->db)) sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
    return rc;
}
