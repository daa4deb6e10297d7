/* store_pipeline.c — writes and reads of pipeline runs and stage runs (store_pipeline.h). */
#define _POSIX_C_SOURCE 200809L /* struct stat's st_mtim */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "store_internal.h"
#include "store_pipeline.h"
#include "t2exp/error.h"

#define TEXT(s, i, v) sqlite3_bind_text((s), (i), (v), -1, SQLITE_STATIC)

static int bind_rc(t2__store *st, int rc) { return rc == SQLITE_OK ? 0 : t2__store_err(st, rc, "bind"); }

/* Runs one write and commits it with whatever the batch holds. */
static int write_now(t2__store *st, sqlite3_stmt *s, const char *what, int want_one, int64_t id)
{
    int rc = t2__store_exec_stmt(st, s, what);
    if (!rc && want_one && sqlite3_changes(st->db) != 1)
        rc = t2_seterr(T2_ENOTFOUND, "store %s: %s: no such row %" PRId64, st->path, what, id);
    if (!rc) rc = t2__store_write_done(st);
    if (!rc) rc = t2__store_flush(st, 1);
    return rc;
}

static const char SQL_RUN_CREATE[] =
    "INSERT INTO pipeline_runs (name, flow_path, flow_hash, started_at) VALUES (?1, ?2, ?3, ?4)";

int t2__store_pipeline_run_create(t2__store *st, const char *name, const char *flow_path, const char *flow_hash,
                                  int64_t *id)
{
    if (!st || !name || !flow_path || !flow_hash || !id)
        return t2_seterr(T2_EINVAL, "store: pipeline_run_create: NULL argument");
    int rc;
    sqlite3_stmt *s;
    if ((rc = t2__store_write_begin(st)) || (rc = t2__store_stmt(st, SQL_RUN_CREATE, &s))) return rc;
    int b = TEXT(s, 1, name);
    b = b ? b : TEXT(s, 2, flow_path);
    b = b ? b : TEXT(s, 3, flow_hash);
    b = b ? b : sqlite3_bind_double(s, 4, t2__store_now(st));
    if ((rc = bind_rc(st, b))) return rc;
    if ((rc = t2__store_exec_stmt(st, s, "create pipeline run"))) return rc;
    *id = sqlite3_last_insert_rowid(st->db);
    if (!(rc = t2__store_write_done(st))) rc = t2__store_flush(st, 1);
    return rc;
}

static const char SQL_RUN_END[] = "UPDATE pipeline_runs SET state = ?2, ended_at = ?3, error = ?4 WHERE id = ?1";

int t2__store_pipeline_run_end(t2__store *st, int64_t id, const char *state, const char *error)
{
    if (!st || !state) return t2_seterr(T2_EINVAL, "store: pipeline_run_end: NULL argument");
    int rc;
    sqlite3_stmt *s;
    if ((rc = t2__store_write_begin(st)) || (rc = t2__store_stmt(st, SQL_RUN_END, &s))) return rc;
    int b = sqlite3_bind_int64(s, 1, id);
    b = b ? b : TEXT(s, 2, state);
    b = b ? b : sqlite3_bind_double(s, 3, t2__store_now(st));
    b = b ? b : TEXT(s, 4, error);
    if ((rc = bind_rc(st, b))) return rc;
    return write_now(st, s, "end pipeline run", 1, id);
}

static const char SQL_STAGE_ADD[] =
    "INSERT INTO stage_runs (run_id, stage, state, started_at, ended_at, log_path, input_hash, def_hash,"
    " refs_hash, inputs, result, error)"
    " VALUES (?1, ?2, ?3, ?4, CASE WHEN ?3 = 'RUNNING' THEN NULL ELSE ?4 END, ?5, ?6, ?7, ?8, ?9, ?10, ?11)";

int t2__store_stage_run_add(t2__store *st, int64_t run_id, const char *stage, const char *state,
                            const t2__stage_run_hashes *h, const char *log_path, const char *result_json,
                            const char *error, int64_t *id)
{
    if (!st || !stage || !state) return t2_seterr(T2_EINVAL, "store: stage_run_add: NULL argument");
    static const t2__stage_run_hashes none = {0};
    if (!h) h = &none;
    int rc;
    sqlite3_stmt *s;
    if ((rc = t2__store_write_begin(st)) || (rc = t2__store_stmt(st, SQL_STAGE_ADD, &s))) return rc;
    int b = sqlite3_bind_int64(s, 1, run_id);
    b = b ? b : TEXT(s, 2, stage);
    b = b ? b : TEXT(s, 3, state);
    b = b ? b : sqlite3_bind_double(s, 4, t2__store_now(st));
    b = b ? b : TEXT(s, 5, log_path);
    b = b ? b : TEXT(s, 6, h->input_hash);
    b = b ? b : TEXT(s, 7, h->def_hash);
    b = b ? b : TEXT(s, 8, h->refs_hash);
    b = b ? b : TEXT(s, 9, h->inputs_json);
    b = b ? b : TEXT(s, 10, result_json);
    b = b ? b : TEXT(s, 11, error);
    if ((rc = bind_rc(st, b))) return rc;
    if ((rc = t2__store_exec_stmt(st, s, "add stage run"))) return rc;
    if (id) *id = sqlite3_last_insert_rowid(st->db);
    if (!(rc = t2__store_write_done(st))) rc = t2__store_flush(st, 1);
    return rc;
}

static const char SQL_STAGE_EXP[] = "UPDATE stage_runs SET experiment_id = ?2 WHERE id = ?1";

int t2__store_stage_run_set_experiment(t2__store *st, int64_t id, int64_t experiment_id)
{
    if (!st) return t2_seterr(T2_EINVAL, "store: stage_run_set_experiment: NULL store");
    int rc;
    sqlite3_stmt *s;
    if ((rc = t2__store_write_begin(st)) || (rc = t2__store_stmt(st, SQL_STAGE_EXP, &s))) return rc;
    int b = sqlite3_bind_int64(s, 1, id);
    b = b ? b : sqlite3_bind_int64(s, 2, experiment_id);
    if ((rc = bind_rc(st, b))) return rc;
    return write_now(st, s, "set stage run experiment", 1, id);
}

static const char SQL_STAGE_END[] =
    "UPDATE stage_runs SET state = ?2, ended_at = ?3, exit_code = ?4, result = coalesce(?5, result),"
    " error = ?6 WHERE id = ?1";

int t2__store_stage_run_end(t2__store *st, int64_t id, const char *state, int exit_code, const char *result_json,
                            const char *error)
{
    if (!st || !state) return t2_seterr(T2_EINVAL, "store: stage_run_end: NULL argument");
    int rc;
    sqlite3_stmt *s;
    if ((rc = t2__store_write_begin(st)) || (rc = t2__store_stmt(st, SQL_STAGE_END, &s))) return rc;
    int b = sqlite3_bind_int64(s, 1, id);
    b = b ? b : TEXT(s, 2, state);
    b = b ? b : sqlite3_bind_double(s, 3, t2__store_now(st));
    b = b ? b : exit_code == INT32_MIN ? sqlite3_bind_null(s, 4) : sqlite3_bind_int(s, 4, exit_code);
    b = b ? b : TEXT(s, 5, result_json);
    b = b ? b : TEXT(s, 6, error);
    if ((rc = bind_rc(st, b))) return rc;
    return write_now(st, s, "end stage run", 1, id);
}

#define STAGE_COLS                                                                                   \
    "s.id, s.run_id, s.stage, s.state, s.started_at, s.ended_at, s.exit_code, s.log_path, s.input_hash," \
    " s.def_hash, s.refs_hash, s.inputs, s.experiment_id, s.result, s.error"

/* The stage index yields this stage's runs newest first; the join filters by flow name. */
static const char SQL_LAST_ANY[] =
    "SELECT " STAGE_COLS " FROM stage_runs s JOIN pipeline_runs p ON p.id = s.run_id"
    " WHERE s.stage = ?2 AND p.name = ?1 ORDER BY s.id DESC LIMIT 1";
static const char SQL_LAST_RAN[] =
    "SELECT " STAGE_COLS " FROM stage_runs s JOIN pipeline_runs p ON p.id = s.run_id"
    " WHERE s.stage = ?2 AND p.name = ?1 AND s.state NOT IN ('SKIPPED','BLOCKED','CANCELED')"
    " ORDER BY s.id DESC LIMIT 1";
static const char SQL_LAST_OK[] =
    "SELECT " STAGE_COLS " FROM stage_runs s JOIN pipeline_runs p ON p.id = s.run_id"
    " WHERE s.stage = ?2 AND p.name = ?1 AND s.state IN ('SUCCEEDED','SKIPPED') ORDER BY s.id DESC LIMIT 1";

void t2__stage_run_row_free(t2__stage_run_row *r)
{
    if (!r) return;
    free(r->stage);
    free(r->state);
    free(r->log_path);
    free(r->input_hash);
    free(r->def_hash);
    free(r->refs_hash);
    free(r->inputs_json);
    free(r->result_json);
    free(r->error);
    memset(r, 0, sizeof *r);
}

int t2__store_last_stage_run(t2__store *st, const char *flow_name, const char *stage, int successful,
                             t2__stage_run_row *out)
{
    if (!st || !flow_name || !stage || !out) return t2_seterr(T2_EINVAL, "store: last_stage_run: NULL argument");
    memset(out, 0, sizeof *out);
    sqlite3_stmt *s;
    int rc = t2__store_stmt(st, successful == 1 ? SQL_LAST_OK : successful == 2 ? SQL_LAST_RAN : SQL_LAST_ANY, &s);
    if (rc) return rc;
    int b = TEXT(s, 1, flow_name);
    b = b ? b : TEXT(s, 2, stage);
    if ((rc = bind_rc(st, b))) return rc;
    int src = sqlite3_step(s);
    if (src == SQLITE_DONE) {
        sqlite3_reset(s);
        return t2_seterr(T2_ENOTFOUND, "store: no run of stage %s of pipeline %s", stage, flow_name);
    }
    if (src != SQLITE_ROW) {
        rc = t2__store_err(st, src, "last stage run");
        sqlite3_reset(s);
        return rc;
    }
    out->id = sqlite3_column_int64(s, 0);
    out->run_id = sqlite3_column_int64(s, 1);
    out->stage = t2__store_col_text(s, 2, &rc);
    out->state = t2__store_col_text(s, 3, &rc);
    out->started_at = t2__store_col_real(s, 4);
    out->ended_at = t2__store_col_real(s, 5);
    out->has_exit_code = sqlite3_column_type(s, 6) != SQLITE_NULL;
    out->exit_code = sqlite3_column_int(s, 6);
    out->log_path = t2__store_col_text(s, 7, &rc);
    out->input_hash = t2__store_col_text(s, 8, &rc);
    out->def_hash = t2__store_col_text(s, 9, &rc);
    out->refs_hash = t2__store_col_text(s, 10, &rc);
    out->inputs_json = t2__store_col_text(s, 11, &rc);
    out->experiment_id = sqlite3_column_type(s, 12) == SQLITE_NULL ? 0 : sqlite3_column_int64(s, 12);
    out->result_json = t2__store_col_text(s, 13, &rc);
    out->error = t2__store_col_text(s, 14, &rc);
    sqlite3_reset(s);
    if (rc) t2__stage_run_row_free(out);
    return rc;
}

/* A run that ended without recording its end (killed) ends at its last recorded activity, not when
 * the next run noticed it: each stage it left RUNNING at its log's last write (its start if the log
 * is gone), the run at the latest start or end of its stages (probe_J: a run killed at 8.6 s was
 * recorded as lasting 16 s, until the next run began). */
static const char SQL_STALE_STAGE_LIST[] =
    "SELECT id, log_path, started_at FROM stage_runs"
    " WHERE state = 'RUNNING' AND run_id IN (SELECT id FROM pipeline_runs WHERE name = ?1 AND state = 'RUNNING')";
static const char SQL_STALE_STAGE[] =
    "UPDATE stage_runs SET state = 'INTERRUPTED', ended_at = coalesce(ended_at, ?2),"
    " error = coalesce(error, 'the pipeline run ended without recording this stage (killed?)') WHERE id = ?1";
static const char SQL_STALE_RUNS[] =
    "UPDATE pipeline_runs SET state = 'INTERRUPTED', ended_at = coalesce(ended_at, max(started_at, coalesce("
    " (SELECT max(coalesce(s.ended_at, s.started_at)) FROM stage_runs s WHERE s.run_id = pipeline_runs.id),"
    " started_at))), error = coalesce(error, 'ended without recording its end (killed?)')"
    " WHERE name = ?1 AND state = 'RUNNING'";

/* When the stage started at `started` and logging to `log` last showed a sign of life, never
 * before its start nor after now. */
static double last_activity(const char *log, double started, double now)
{
    struct stat sb;
    double t = started;
    if (log && stat(log, &sb) == 0) t = (double)sb.st_mtim.tv_sec + (double)sb.st_mtim.tv_nsec / 1e9;
    return t < started ? started : t > now ? now : t;
}

typedef struct {
    int64_t id;
    double ended;
} stale_stage;

/* The stages left RUNNING by flow_name's dead runs, with when each last showed activity. */
static int stale_stages(t2__store *st, const char *flow_name, stale_stage **out, size_t *n)
{
    sqlite3_stmt *s;
    int rc = t2__store_stmt(st, SQL_STALE_STAGE_LIST, &s), src;
    size_t cap = 0;
    *out = NULL;
    *n = 0;
    if (rc || (rc = bind_rc(st, TEXT(s, 1, flow_name)))) return rc;
    double now = t2__store_now(st);
    while ((src = sqlite3_step(s)) == SQLITE_ROW) {
        if (*n == cap) {
            stale_stage *g = realloc(*out, (cap = cap ? 2 * cap : 8) * sizeof *g);
            if (!g) {
                rc = t2_seterr(T2_ENOMEM, "store: out of memory");
                break;
            }
            *out = g;
        }
        double started = sqlite3_column_type(s, 2) == SQLITE_NULL ? now : sqlite3_column_double(s, 2);
        (*out)[(*n)++] = (stale_stage){sqlite3_column_int64(s, 0),
                                       last_activity((const char *)sqlite3_column_text(s, 1), started, now)};
    }
    if (!rc && src != SQLITE_DONE) rc = t2__store_err(st, src, "interrupt stale pipeline runs");
    sqlite3_reset(s);
    return rc;
}

int t2__store_pipeline_interrupt_stale(t2__store *st, const char *flow_name, int64_t *n)
{
    if (!st || !flow_name) return t2_seterr(T2_EINVAL, "store: pipeline_interrupt_stale: NULL argument");
    int rc;
    if ((rc = t2__store_begin(st))) return rc;
    stale_stage *stages = NULL;
    size_t nstages = 0;
    rc = stale_stages(st, flow_name, &stages, &nstages);
    for (size_t k = 0; !rc && k < nstages; k++) {
        sqlite3_stmt *s;
        if ((rc = t2__store_stmt(st, SQL_STALE_STAGE, &s))) break;
        int b = sqlite3_bind_int64(s, 1, stages[k].id);
        b = b ? b : sqlite3_bind_double(s, 2, stages[k].ended);
        if (!(rc = bind_rc(st, b))) rc = t2__store_exec_stmt(st, s, "interrupt stale pipeline runs");
    }
    free(stages);
    sqlite3_stmt *s;
    if (!rc && !(rc = t2__store_stmt(st, SQL_STALE_RUNS, &s)) && !(rc = bind_rc(st, TEXT(s, 1, flow_name))) &&
        !(rc = t2__store_exec_stmt(st, s, "interrupt stale pipeline runs")) && n)
        *n = sqlite3_changes(st->db);
    if (rc) {
        t2__store_rollback(st);
        return rc;
    }
    return t2__store_commit(st);
}
