/* store_read.c — rows back as C structs: what `t2exp resume`, the controller and garbage
 * collection need (the CLI's listings are store_query.c). */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"
#include "store_internal.h"
#include "t2exp/error.h"

static int64_t col_i64_or(sqlite3_stmt *s, int col, int64_t none)
{
    return sqlite3_column_type(s, col) == SQLITE_NULL ? none : sqlite3_column_int64(s, col);
}

/* Steps a cached single-row query: 0 with a row, T2_ENOTFOUND (message by the caller) without. */
static int step_row(t2__store *st, sqlite3_stmt *s, const char *what)
{
    int rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) return 0;
    if (rc == SQLITE_DONE) return T2_ENOTFOUND;
    return t2__store_err(st, rc, what);
}

/* ---- experiments ----------------------------------------------------------------------- */

static const char SQL_GET_EXPERIMENT[] =
    "SELECT id, name, description, labels, config_yaml, searcher_name, metric, smaller_is_better,"
    " state, progress, trial_object, seed, created_at, started_at, ended_at, best_trial_id,"
    " best_metric, error, num_trials, overrides, checkpoint_dir, parts FROM experiments WHERE id = ?1";

void t2__experiment_row_free(t2__experiment_row *r)
{
    if (!r) return;
    free(r->name);
    free(r->description);
    free(r->labels_json);
    free(r->config_yaml);
    free(r->searcher_name);
    free(r->metric);
    free(r->trial_object);
    free(r->error);
    free(r->overrides_json);
    free(r->checkpoint_dir);
    memset(r, 0, sizeof *r);
}

int t2__store_get_experiment(t2__store *st, int64_t id, t2__experiment_row *out)
{
    if (!st || !out) return t2_seterr(T2_EINVAL, "store: get_experiment: NULL argument");
    memset(out, 0, sizeof *out);
    sqlite3_stmt *s;
    int rc = t2__store_stmt(st, SQL_GET_EXPERIMENT, &s);
    if (rc) return rc;
    if ((rc = sqlite3_bind_int64(s, 1, id)) != SQLITE_OK) return t2__store_err(st, rc, "bind");
    rc = step_row(st, s, "get experiment");
    if (rc == T2_ENOTFOUND)
        rc = t2_seterr(T2_ENOTFOUND, "store %s: no experiment %" PRId64, st->path, id);
    if (rc) goto fail;
    out->id = sqlite3_column_int64(s, 0);
    out->name = t2__store_col_text(s, 1, &rc);
    out->description = t2__store_col_text(s, 2, &rc);
    out->labels_json = t2__store_col_text(s, 3, &rc);
    out->config_yaml = t2__store_col_text(s, 4, &rc);
    out->searcher_name = t2__store_col_text(s, 5, &rc);
    out->metric = t2__store_col_text(s, 6, &rc);
    out->smaller_is_better = sqlite3_column_int(s, 7);
    int prc = t2__exp_state_parse((const char *)sqlite3_column_text(s, 8), &out->state);
    out->progress = sqlite3_column_double(s, 9);
    out->trial_object = t2__store_col_text(s, 10, &rc);
    out->seed = sqlite3_column_int64(s, 11);
    out->created_at = t2__store_col_real(s, 12);
    out->started_at = t2__store_col_real(s, 13);
    out->ended_at = t2__store_col_real(s, 14);
    out->best_trial_id = col_i64_or(s, 15, 0);
    out->best_metric = t2__store_col_real(s, 16);
    out->error = t2__store_col_text(s, 17, &rc);
    out->num_trials = sqlite3_column_int64(s, 18);
    out->overrides_json = t2__store_col_text(s, 19, &rc);
    out->checkpoint_dir = t2__store_col_text(s, 20, &rc);
    out->parts = (int)col_i64_or(s, 21, 0);
    if (out->parts < 0 || out->parts > 64) out->parts = 0; /* tampered: the plan's P applies */
    if (!rc && prc) rc = prc; /* the CHECK constraint makes this unreachable short of tampering */
fail:
    sqlite3_reset(s);
    if (rc) t2__experiment_row_free(out);
    return rc;
}

/* ---- trials ---------------------------------------------------------------------------- */

#define TRIAL_COLS                                                                           \
    "id, experiment_id, ordinal, hparams, seed, state, restarts, batches_trained,"           \
    " target_length_batches, best_validation, latest_validation, error, log_path, created_at," \
    " started_at, ended_at, parent_trial_id, parent_checkpoint, hosts"

static const char SQL_LIST_TRIALS[] =
    "SELECT " TRIAL_COLS " FROM trials WHERE experiment_id = ?1 ORDER BY ordinal";
static const char SQL_GET_TRIAL[] = "SELECT " TRIAL_COLS " FROM trials WHERE id = ?1";

void t2__trial_row_free(t2__trial_row *r)
{
    if (!r) return;
    free(r->hparams_json);
    free(r->error);
    free(r->log_path);
    free(r->parent_checkpoint);
    free(r->hosts);
    memset(r, 0, sizeof *r);
}

void t2__trial_rows_free(t2__trial_row *rows, size_t n)
{
    if (!rows) return;
    for (size_t i = 0; i < n; i++) t2__trial_row_free(&rows[i]);
    free(rows);
}

static int read_trial(sqlite3_stmt *s, t2__trial_row *r)
{
    int rc = 0;
    memset(r, 0, sizeof *r);
    r->id = sqlite3_column_int64(s, 0);
    r->experiment_id = sqlite3_column_int64(s, 1);
    r->ordinal = sqlite3_column_int64(s, 2);
    r->hparams_json = t2__store_col_text(s, 3, &rc);
    r->seed = sqlite3_column_int64(s, 4);
    int prc = t2__trial_state_parse((const char *)sqlite3_column_text(s, 5), &r->state);
    r->restarts = sqlite3_column_int(s, 6);
    r->batches_trained = sqlite3_column_int64(s, 7);
    r->target_length_batches = col_i64_or(s, 8, 0);
    r->best_validation = t2__store_col_real(s, 9);
    r->latest_validation = t2__store_col_real(s, 10);
    r->error = t2__store_col_text(s, 11, &rc);
    r->log_path = t2__store_col_text(s, 12, &rc);
    r->created_at = t2__store_col_real(s, 13);
    r->started_at = t2__store_col_real(s, 14);
    r->ended_at = t2__store_col_real(s, 15);
    r->parent_trial_id = col_i64_or(s, 16, 0);
    r->parent_checkpoint = t2__store_col_text(s, 17, &rc);
    r->hosts = t2__store_col_text(s, 18, &rc);
    if (!rc && prc) rc = prc;
    if (rc) t2__trial_row_free(r);
    return rc;
}

int t2__store_get_trial(t2__store *st, int64_t trial_id, t2__trial_row *out)
{
    if (!st || !out) return t2_seterr(T2_EINVAL, "store: get_trial: NULL argument");
    memset(out, 0, sizeof *out);
    sqlite3_stmt *s;
    int rc = t2__store_stmt(st, SQL_GET_TRIAL, &s);
    if (rc) return rc;
    if ((rc = sqlite3_bind_int64(s, 1, trial_id)) != SQLITE_OK) return t2__store_err(st, rc, "bind");
    rc = step_row(st, s, "get trial");
    if (rc == T2_ENOTFOUND)
        rc = t2_seterr(T2_ENOTFOUND, "store %s: no trial %" PRId64, st->path, trial_id);
    if (!rc) rc = read_trial(s, out);
    sqlite3_reset(s);
    return rc;
}

int t2__store_list_trials(t2__store *st, int64_t experiment_id, t2__trial_row **rows, size_t *n)
{
    if (!st || !rows || !n) return t2_seterr(T2_EINVAL, "store: list_trials: NULL argument");
    *rows = NULL;
    *n = 0;
    sqlite3_stmt *s;
    int rc = t2__store_stmt(st, SQL_LIST_TRIALS, &s);
    if (rc) return rc;
    if ((rc = sqlite3_bind_int64(s, 1, experiment_id)) != SQLITE_OK)
        return t2__store_err(st, rc, "bind");
    t2__trial_row *v = NULL;
    size_t cnt = 0, cap = 0;
    int src;
    while ((src = sqlite3_step(s)) == SQLITE_ROW) {
        t2__trial_row *nv = t2__grow_array(v, &cap, cnt, sizeof *v, 64);
        if (!nv) {
            rc = t2_seterr(T2_ENOMEM, "store: out of memory listing trials");
            goto fail;
        }
        v = nv;
        if ((rc = read_trial(s, &v[cnt]))) goto fail;
        cnt++;
    }
    if (src != SQLITE_DONE) {
        rc = t2__store_err(st, src, "list trials");
        goto fail;
    }
    sqlite3_reset(s);
    *rows = v;
    *n = cnt;
    return 0;
fail:
    sqlite3_reset(s);
    t2__trial_rows_free(v, cnt);
    return rc;
}

static const char SQL_TRIAL_ID[] =
    "SELECT id FROM trials WHERE experiment_id = ?1 AND ordinal = ?2";

int t2__store_trial_id(t2__store *st, int64_t experiment_id, int64_t ordinal, int64_t *trial_id)
{
    if (!st || !trial_id) return t2_seterr(T2_EINVAL, "store: trial_id: NULL argument");
    sqlite3_stmt *s;
    int rc = t2__store_stmt(st, SQL_TRIAL_ID, &s);
    if (rc) return rc;
    int b = sqlite3_bind_int64(s, 1, experiment_id);
    b = b ? b : sqlite3_bind_int64(s, 2, ordinal);
    if (b != SQLITE_OK) return t2__store_err(st, b, "bind");
    rc = step_row(st, s, "find trial");
    if (rc == T2_ENOTFOUND)
        rc = t2_seterr(T2_ENOTFOUND, "store %s: no trial %" PRId64 ".%" PRId64, st->path,
                       experiment_id, ordinal);
    if (!rc) *trial_id = sqlite3_column_int64(s, 0);
    sqlite3_reset(s);
    return rc;
}

/* The steps at which a trial's training metrics were reported, ascending: where its reporting
 * windows closed. A trial that trains those steps again (a restart without a checkpoint, or an
 * ASHA promotion of a trial that cannot checkpoint) closes its windows at the same steps, so the
 * values it reports match the first run's. A window's timings (report_timings) mark it too, whether or
 * not the trial reported a metric of its own there. */
static const char SQL_REPORT_STEPS[] =
    "SELECT batches FROM metrics WHERE trial_id = ?1 AND kind = 'training'"
    " UNION SELECT batches FROM report_timings WHERE trial_id = ?1 AND kind = 'training' ORDER BY batches";

/* The first column of every row sql gives for ?1 = key (and ?2 = text, when not NULL), in order. */
static int int64_rows(t2__store *st, const char *sql, int64_t key, const char *text, const char *what, int64_t **out,
                      size_t *n)
{
    if (!st || !out || !n) return t2_seterr(T2_EINVAL, "store: %s: NULL argument", what);
    *out = NULL;
    *n = 0;
    sqlite3_stmt *s;
    int rc = t2__store_stmt(st, sql, &s);
    if (rc) return rc;
    if ((rc = sqlite3_bind_int64(s, 1, key)) != SQLITE_OK ||
        (text && (rc = sqlite3_bind_text(s, 2, text, -1, SQLITE_STATIC)) != SQLITE_OK))
        return t2__store_err(st, rc, "bind");
    size_t cap = 0;
    int64_t *v = NULL;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        int64_t *g = t2__grow_array(v, &cap, *n, sizeof *v, 16);
        if (!g) {
            sqlite3_reset(s);
            free(v);
            *n = 0;
            return t2_seterr(T2_ENOMEM, "store: out of memory");
        }
        v = g;
        v[(*n)++] = sqlite3_column_int64(s, 0);
    }
    sqlite3_reset(s);
    if (rc != SQLITE_DONE) {
        free(v);
        *n = 0;
        return t2__store_err(st, rc, what);
    }
    *out = v;
    return T2_OK;
}

int t2__store_report_steps(t2__store *st, int64_t trial_id, int64_t **steps, size_t *n)
{
    return int64_rows(st, SQL_REPORT_STEPS, trial_id, NULL, "read report steps", steps, n);
}

static const char SQL_KILLED_TRIALS[] = "SELECT id FROM trials WHERE experiment_id = ?1 AND state = 'CANCELED'"
                                        " AND substr(error, 1, length(?2)) = ?2 ORDER BY id";

int t2__store_killed_trials(t2__store *st, int64_t experiment_id, int64_t **ids, size_t *n)
{
    return int64_rows(st, SQL_KILLED_TRIALS, experiment_id, T2__KILLED_BY_USER, "read killed trials", ids, n);
}

/* Every validation value of one metric of an experiment's trials, by trial then step: what
 * searcher.pruner compared trials with, read again by a resume (controller/prune_link.c). */
static const char SQL_VALIDATION_SERIES[] =
    "SELECT m.trial_id, m.batches, m.value, m.epoch FROM trials t JOIN metrics m ON m.trial_id = t.id"
    " AND m.kind = 'validation' AND m.name = ?2 WHERE t.experiment_id = ?1 ORDER BY m.trial_id, m.batches";

int t2__store_validation_series(t2__store *st, int64_t experiment_id, const char *metric, t2__metric_point **out,
                                size_t *n)
{
    if (!st || !metric || !out || !n) return t2_seterr(T2_EINVAL, "store: read validations: NULL argument");
    *out = NULL;
    *n = 0;
    sqlite3_stmt *s;
    int rc = t2__store_stmt(st, SQL_VALIDATION_SERIES, &s);
    if (rc) return rc;
    if ((rc = sqlite3_bind_int64(s, 1, experiment_id)) != SQLITE_OK ||
        (rc = sqlite3_bind_text(s, 2, metric, -1, SQLITE_STATIC)) != SQLITE_OK)
        return t2__store_err(st, rc, "bind");
    size_t cap = 0;
    t2__metric_point *v = NULL;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        t2__metric_point *g = t2__grow_array(v, &cap, *n, sizeof *v, 64);
        if (!g) {
            sqlite3_reset(s);
            free(v);
            *n = 0;
            return t2_seterr(T2_ENOMEM, "store: out of memory");
        }
        v = g;
        v[*n] = (t2__metric_point){sqlite3_column_int64(s, 0), sqlite3_column_int64(s, 1),
                                   sqlite3_column_type(s, 2) == SQLITE_NULL ? NAN : sqlite3_column_double(s, 2),
                                   sqlite3_column_type(s, 3) == SQLITE_NULL ? NAN : sqlite3_column_double(s, 3)};
        (*n)++;
    }
    sqlite3_reset(s);
    if (rc != SQLITE_DONE) {
        free(v);
        *n = 0;
        return t2__store_err(st, rc, "read validations");
    }
    *out = v;
    return T2_OK;
}

/* ---- checkpoints ----------------------------------------------------------------------- */

#define CKPT_COLS                                                                          \
    "uuid, trial_id, experiment_id, batches, epoch, metric, size_bytes, path, created_at," \
    " state = 'DELETED'"

static const char SQL_LATEST_CKPT[] =
    "SELECT " CKPT_COLS " FROM checkpoints WHERE trial_id = ?1 AND state = 'ACTIVE'"
    " ORDER BY batches DESC, created_at DESC LIMIT 1";
static const char SQL_CKPT_BY_UUID[] =
    "SELECT " CKPT_COLS " FROM checkpoints WHERE uuid = ?1 AND state = 'ACTIVE'";
static const char SQL_CKPTS_OF_TRIAL[] =
    "SELECT " CKPT_COLS " FROM checkpoints WHERE trial_id = ?2 ORDER BY batches, created_at";
static const char SQL_CKPTS_OF_EXP[] =
    "SELECT " CKPT_COLS " FROM checkpoints WHERE experiment_id = ?1"
    " ORDER BY trial_id, batches, created_at";

void t2__checkpoint_row_free(t2__checkpoint_row *r)
{
    if (!r) return;
    free(r->uuid);
    free(r->path);
    memset(r, 0, sizeof *r);
}

void t2__checkpoint_rows_free(t2__checkpoint_row *rows, size_t n)
{
    if (!rows) return;
    for (size_t i = 0; i < n; i++) t2__checkpoint_row_free(&rows[i]);
    free(rows);
}

static int read_ckpt(sqlite3_stmt *s, t2__checkpoint_row *r)
{
    int rc = 0;
    memset(r, 0, sizeof *r);
    r->uuid = t2__store_col_text(s, 0, &rc);
    r->trial_id = sqlite3_column_int64(s, 1);
    r->experiment_id = sqlite3_column_int64(s, 2);
    r->batches = sqlite3_column_int64(s, 3);
    r->epoch = t2__store_col_real(s, 4);
    r->metric = t2__store_col_real(s, 5);
    r->size_bytes = sqlite3_column_int64(s, 6);
    r->path = t2__store_col_text(s, 7, &rc);
    r->created_at = t2__store_col_real(s, 8);
    r->deleted = sqlite3_column_int(s, 9);
    if (rc) t2__checkpoint_row_free(r);
    return rc;
}

int t2__store_latest_checkpoint(t2__store *st, int64_t trial_id, t2__checkpoint_row *out)
{
    if (!st || !out) return t2_seterr(T2_EINVAL, "store: latest_checkpoint: NULL argument");
    memset(out, 0, sizeof *out);
    sqlite3_stmt *s;
    int rc = t2__store_stmt(st, SQL_LATEST_CKPT, &s);
    if (rc) return rc;
    if ((rc = sqlite3_bind_int64(s, 1, trial_id)) != SQLITE_OK) return t2__store_err(st, rc, "bind");
    rc = step_row(st, s, "latest checkpoint");
    if (rc == T2_ENOTFOUND)
        rc = t2_seterr(T2_ENOTFOUND, "store %s: trial %" PRId64 " has no checkpoint", st->path,
                       trial_id);
    if (!rc) rc = read_ckpt(s, out);
    sqlite3_reset(s);
    return rc;
}

/* Best first: checkpoints with a metric before those without, then by the metric in the
 * experiment's direction; ties and metric-less ones newest first (so "no metric" means latest). */
static const char SQL_BEST_CKPT[] =
    "SELECT " CKPT_COLS " FROM checkpoints WHERE experiment_id = ?1 AND (?2 = 0 OR trial_id = ?2)"
    " AND state = 'ACTIVE' ORDER BY metric IS NULL,"
    " CASE WHEN (SELECT smaller_is_better FROM experiments WHERE id = ?1) THEN metric ELSE -metric END,"
    " created_at DESC, batches DESC LIMIT 1";

int t2__store_best_checkpoint(t2__store *st, int64_t experiment_id, int64_t trial_id,
                              t2__checkpoint_row *out)
{
    if (!st || !out) return t2_seterr(T2_EINVAL, "store: best_checkpoint: NULL argument");
    memset(out, 0, sizeof *out);
    sqlite3_stmt *s;
    int rc = t2__store_stmt(st, SQL_BEST_CKPT, &s);
    if (rc) return rc;
    int b = sqlite3_bind_int64(s, 1, experiment_id);
    b = b ? b : sqlite3_bind_int64(s, 2, trial_id);
    if (b != SQLITE_OK) return t2__store_err(st, b, "bind");
    rc = step_row(st, s, "best checkpoint");
    if (rc == T2_ENOTFOUND && trial_id)
        rc = t2_seterr(T2_ENOTFOUND, "store %s: trial %" PRId64 " has no active checkpoint", st->path, trial_id);
    else if (rc == T2_ENOTFOUND)
        rc = t2_seterr(T2_ENOTFOUND, "store %s: experiment %" PRId64 " has no active checkpoint", st->path,
                       experiment_id);
    if (!rc) rc = read_ckpt(s, out);
    sqlite3_reset(s);
    return rc;
}

int t2__store_checkpoint_by_uuid(t2__store *st, const char *uuid, t2__checkpoint_row *out)
{
    if (!st || !uuid || !out) return t2_seterr(T2_EINVAL, "store: checkpoint_by_uuid: NULL argument");
    memset(out, 0, sizeof *out);
    sqlite3_stmt *s;
    int rc = t2__store_stmt(st, SQL_CKPT_BY_UUID, &s);
    if (rc) return rc;
    if ((rc = sqlite3_bind_text(s, 1, uuid, -1, SQLITE_TRANSIENT)) != SQLITE_OK) return t2__store_err(st, rc, "bind");
    rc = step_row(st, s, "checkpoint by uuid");
    if (rc == T2_ENOTFOUND) rc = t2_seterr(T2_ENOTFOUND, "store %s: no active checkpoint %s", st->path, uuid);
    if (!rc) rc = read_ckpt(s, out);
    sqlite3_reset(s);
    return rc;
}

static const char SQL_CKPT_OWNER[] = "SELECT trial_id FROM checkpoints WHERE uuid = ?1";

int t2__store_checkpoint_owner(t2__store *st, const char *uuid, int64_t *trial_id)
{
    if (!st || !uuid || !trial_id) return t2_seterr(T2_EINVAL, "store: checkpoint_owner: NULL argument");
    sqlite3_stmt *s;
    int rc = t2__store_stmt(st, SQL_CKPT_OWNER, &s);
    if (rc) return rc;
    if ((rc = sqlite3_bind_text(s, 1, uuid, -1, SQLITE_TRANSIENT)) != SQLITE_OK) return t2__store_err(st, rc, "bind");
    rc = step_row(st, s, "checkpoint owner");
    if (rc == T2_ENOTFOUND) rc = t2_seterr(T2_ENOTFOUND, "store %s: never wrote checkpoint %s", st->path, uuid);
    if (!rc) *trial_id = sqlite3_column_int64(s, 0);
    sqlite3_reset(s);
    return rc;
}

int t2__store_list_checkpoints(t2__store *st, int64_t experiment_id, int64_t trial_id,
                               t2__checkpoint_row **rows, size_t *n)
{
    if (!st || !rows || !n) return t2_seterr(T2_EINVAL, "store: list_checkpoints: NULL argument");
    *rows = NULL;
    *n = 0;
    sqlite3_stmt *s;
    int rc = t2__store_stmt(st, trial_id > 0 ? SQL_CKPTS_OF_TRIAL : SQL_CKPTS_OF_EXP, &s);
    if (rc) return rc;
    int b = trial_id > 0 ? sqlite3_bind_int64(s, 2, trial_id)
                         : sqlite3_bind_int64(s, 1, experiment_id);
    if (b != SQLITE_OK) return t2__store_err(st, b, "bind");
    t2__checkpoint_row *v = NULL;
    size_t cnt = 0, cap = 0;
    int src;
    while ((src = sqlite3_step(s)) == SQLITE_ROW) {
        t2__checkpoint_row *nv = t2__grow_array(v, &cap, cnt, sizeof *v, 16);
        if (!nv) {
            rc = t2_seterr(T2_ENOMEM, "store: out of memory listing checkpoints");
            goto fail;
        }
        v = nv;
        if ((rc = read_ckpt(s, &v[cnt]))) goto fail;
        cnt++;
    }
    if (src != SQLITE_DONE) {
        rc = t2__store_err(st, src, "list checkpoints");
        goto fail;
    }
    sqlite3_reset(s);
    *rows = v;
    *n = cnt;
    return 0;
fail:
    sqlite3_reset(s);
    t2__checkpoint_rows_free(v, cnt);
    return rc;
}

/* ---- searcher snapshot ----------------------------------------------------------------- */

static const char SQL_LOAD_SEARCHER[] =
    "SELECT events, state FROM searcher_state WHERE experiment_id = ?1";

int t2__store_load_searcher_state(t2__store *st, int64_t experiment_id, int64_t *events,
                                  char **state_json)
{
    if (!st || !state_json)
        return t2_seterr(T2_EINVAL, "store: load_searcher_state: NULL argument");
    *state_json = NULL;
    sqlite3_stmt *s;
    int rc = t2__store_stmt(st, SQL_LOAD_SEARCHER, &s);
    if (rc) return rc;
    if ((rc = sqlite3_bind_int64(s, 1, experiment_id)) != SQLITE_OK)
        return t2__store_err(st, rc, "bind");
    rc = step_row(st, s, "load searcher state");
    if (rc == T2_ENOTFOUND)
        rc = t2_seterr(T2_ENOTFOUND, "store %s: experiment %" PRId64 " has no searcher state",
                       st->path, experiment_id);
    if (!rc) {
        if (events) *events = sqlite3_column_int64(s, 0);
        *state_json = t2__store_col_text(s, 1, &rc);
    }
    sqlite3_reset(s);
    return rc;
}

int t2__store_experiment_ids(t2__store *st, int64_t **ids, size_t *n)
{
    if (!st || !ids || !n) return t2_seterr(T2_EINVAL, "store: experiment_ids: NULL argument");
    *ids = NULL;
    *n = 0;
    sqlite3_stmt *s;
    int rc = t2__store_stmt(st, "SELECT id FROM experiments ORDER BY id", &s);
    if (rc) return rc;
    int64_t *v = NULL;
    size_t cnt = 0, cap = 0;
    int src;
    while ((src = sqlite3_step(s)) == SQLITE_ROW) {
        int64_t *nv = t2__grow_array(v, &cap, cnt, sizeof *v, 64);
        if (!nv) {
            sqlite3_reset(s);
            free(v);
            return t2_seterr(T2_ENOMEM, "store: out of memory listing experiment ids");
        }
        v = nv;
        v[cnt++] = sqlite3_column_int64(s, 0);
    }
    sqlite3_reset(s);
    if (src != SQLITE_DONE) {
        free(v);
        return t2__store_err(st, src, "list experiment ids");
    }
    *ids = v;
    *n = cnt;
    return 0;
}
