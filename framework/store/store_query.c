/* store_query.c — the CLI's listings: list, describe, trials, metrics, checkpoints.
 *
 * Speed on big stores comes from the schema, not from here: `list` reads only the experiments
 * table (trial counts are kept there by triggers), describe walks the (experiment_id,
 * best_validation) index in metric order and stops at its limit, trials walks the
 * (experiment_id, ordinal) unique index, metrics the metrics primary key, checkpoints their
 * trial/experiment indexes. Times are ISO 8601 UTC text; durations are seconds (the table shows
 * them as 1h02m03s). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "store_internal.h"
#include "internal.h" /* t2__hint_home */
#include "t2exp/error.h"

static const t2__store_colspec COLS[] = {
    {"progress", T2__COL_PERCENT},
    {"duration", T2__COL_DURATION},
    {"labels", T2__COL_JSON},
    {"hparams", T2__COL_JSON},
    {"overrides", T2__COL_JSON},
    {NULL, T2__COL_AUTO},
};

static int exists(t2__store *st, const char *sql, int64_t id, const char *what)
{
    sqlite3_stmt *s = NULL;
    int rc = t2__store_prepare(st, sql, &s);
    if (rc) return rc;
    if ((rc = sqlite3_bind_int64(s, 1, id)) != SQLITE_OK) {
        rc = t2__store_err(st, rc, "bind");
        goto done;
    }
    rc = sqlite3_step(s);
    rc = rc == SQLITE_ROW    ? 0
       : rc == SQLITE_DONE ? t2_seterr(T2_ENOTFOUND, "store %s: no %s %" PRId64, st->path, what, id)
                           : t2__store_err(st, rc, what);
done:
    sqlite3_finalize(s);
    return rc;
}

/* ---- list ------------------------------------------------------------------------------ */

/* How long experiment ID (its id column) ran: as T2__SQL_RUN_SECONDS, except that an ACTIVE one no
 * live controller runs (killed, crashed) ran until its last recorded sign of life, not until now
 * (probe_J: the dead time counted on, for as long as nobody resumed it). That sign is looked for in
 * its 256 latest trials (by number: the (experiment_id, ordinal) index, never a walk of them all):
 * their latest start or end, and the latest metric of those of them left RUNNING. Over every trial
 * and metric it cost 144 ms a listing of a 100,000-trial store (review 2). */
#define EXP_RUN_SECONDS(ID)                                                                                     \
    "coalesce(ended_at, CASE WHEN state = 'ACTIVE' THEN CASE WHEN t2_controller_alive(controller_pid,"         \
    " controller_token) THEN :now WHEN started_at IS NULL THEN NULL ELSE max(started_at, coalesce((SELECT"      \
    " max(max(coalesce(r.started_at, 0), coalesce(r.ended_at, 0), coalesce((SELECT max(m.time) FROM metrics m"  \
    " WHERE m.trial_id = r.id AND r.state = 'RUNNING'), 0))) FROM (SELECT id, state, started_at, ended_at"      \
    " FROM trials t WHERE t.experiment_id = " ID " ORDER BY t.ordinal DESC LIMIT 256) r), 0)) END END)"        \
    " - started_at"

/* Whether a live controller process runs the experiment now (1 or 0, whatever its state): JSON and
 * CSV keep the stored state, so this is how a script or the dashboard tells an ACTIVE experiment
 * that runs from one whose controller was killed (the dashboard said ACTIVE as if it ran). */
#define CONTROLLER_RUNNING "t2_controller_alive(controller_pid, controller_token) AS controller_running"

/* list's query: STATE is the state column, EXTRA the columns after duration. */
#define SQL_EXPERIMENTS_OF(STATE, EXTRA)                                                                  \
    "SELECT id, name, " STATE ", searcher_name AS searcher, num_trials AS trials, progress, best_metric, " \
    T2__SQL_ISO("started_at") " AS started, " EXP_RUN_SECONDS("experiments.id") " AS duration" EXTRA      \
    " FROM experiments ORDER BY id"

static const char SQL_EXPERIMENTS[] = SQL_EXPERIMENTS_OF("state", ", " CONTROLLER_RUNNING);

/* The table says which ACTIVE experiments no controller runs (killed or crashed before it recorded
 * an end: the listing said ACTIVE as if it ran, probe_J); JSON and CSV keep the stored state. */
static const char SQL_EXPERIMENTS_TABLE[] = SQL_EXPERIMENTS_OF(
    "CASE WHEN state = 'ACTIVE' AND NOT t2_controller_alive(controller_pid, controller_token)"
    " THEN 'ACTIVE (no controller)' ELSE state END AS state", "");

int t2__store_print_experiments(t2__store *st, t2__store_format fmt, FILE *out)
{
    return t2__store_print_query(st, fmt == T2__FMT_TABLE ? SQL_EXPERIMENTS_TABLE : SQL_EXPERIMENTS, NULL, 0, COLS,
                                 fmt, out);
}

/* ---- describe -------------------------------------------------------------------------- */

/* describe's experiment: BEST is the best_trial column, EXTRA columns before the config. */
#define SQL_EXPERIMENT_OF(BEST, EXTRA)                                                                    \
    "SELECT id, name, description, labels, state, searcher_name AS searcher, metric,"                      \
    " smaller_is_better, progress, num_trials AS trials, " BEST " AS best_trial, best_metric,"             \
    " trial_object, seed, parts, " T2__SQL_ISO("created_at") " AS created, " T2__SQL_ISO("started_at")     \
    " AS started, " T2__SQL_ISO("ended_at") " AS ended, " EXP_RUN_SECONDS("e.id") " AS duration,"          \
    " error, overrides, checkpoint_dir,"                                                                   \
    /* Which BLAS kernels the trials ran on: one line each, normally one in all, in the order the         \
     * store first met them; experiment_blas holds them (a trigger on trials.blas_id), so this            \
     * never reads the trials (a DISTINCT over 100,000 of them took 0.4 s). */                            \
    " (SELECT group_concat(line, char(10)) FROM (SELECT l.line FROM experiment_blas x"                     \
    "  JOIN blas_lines l ON l.id = x.blas_id WHERE x.experiment_id = e.id ORDER BY x.blas_id)) AS blas,"    \
    EXTRA " config_yaml AS config FROM experiments e WHERE id = :exp"

/* JSON keeps best_trial the store id (docs/writing-a-trial.md) and says whether a controller runs
 * it. The table adds the trial's EXP.N, as every other line of the CLI names a trial: "14 (4.6)". */
static const char SQL_EXPERIMENT[] = SQL_EXPERIMENT_OF("best_trial_id", " " CONTROLLER_RUNNING ",");
static const char SQL_EXPERIMENT_TABLE[] = SQL_EXPERIMENT_OF(
    "best_trial_id || coalesce(' (' || id || '.' || (SELECT b.ordinal FROM trials b WHERE b.id = best_trial_id) || ')', '')", "");

/* Lineage: the trial number (ordinal) of the trial whose checkpoint this one started from (pbt). */
#define PARENT_COL "(SELECT p.ordinal FROM trials p WHERE p.id = t.parent_trial_id) AS parent"

/* A table's trial state: RUNNING in an experiment no controller runs (killed or crashed before it
 * recorded an end) reads "RUNNING (no controller)", as list says of the experiment (the trials
 * table said RUNNING as if it ran); QUEUED in an ERRORED experiment reads "QUEUED (experiment
 * ERRORED)": it waits for a `t2exp resume`, not for a slot (it read as if it would run next). JSON
 * and CSV keep the stored state. The liveness check runs for RUNNING rows only and the experiment's
 * state is read for QUEUED ones only (CASE goes in order), so a listing of 100,000 ended trials
 * makes neither. */
#define STATE_SHOWN                                                                                      \
    "CASE WHEN t.state NOT IN ('RUNNING', 'QUEUED') THEN t.state"                                        \
    " WHEN t.state = 'QUEUED' THEN CASE WHEN (SELECT e.state FROM experiments e"                         \
    " WHERE e.id = t.experiment_id) = 'ERRORED' THEN 'QUEUED (experiment ERRORED)' ELSE t.state END"     \
    " WHEN (SELECT t2_controller_alive(e.controller_pid,"                                              \
    " e.controller_token) FROM experiments e WHERE e.id = t.experiment_id) THEN t.state"              \
    " ELSE 'RUNNING (no controller)' END AS state"

/* describe's line for an ERRORED experiment whose trials did not all end: they run again only
 * through resume (which continues an ERRORED experiment as a PAUSED one). */
static const char SQL_UNFINISHED[] =
    "SELECT count(*), (SELECT count(*) FROM searcher_state WHERE experiment_id = ?1) FROM trials"
    " WHERE experiment_id = ?1 AND state IN ('QUEUED', 'PAUSED', 'RUNNING')";

#define RANK_COLS_WITH(STATE)                                                                 \
    "ordinal AS trial, id, " STATE ", hparams, best_validation, latest_validation,"           \
    " batches_trained AS batches, restarts,"                                                  \
    " (SELECT count(*) FROM checkpoints c WHERE c.trial_id = t.id AND c.state = 'ACTIVE')"    \
    " AS checkpoints, " PARENT_COL
#define RANK_COLS RANK_COLS_WITH("state")

/* Trials with a validation in metric order, then those without. Each half walks the
 * (experiment_id, best_validation) index — whose entries end with the rowid, hence the id
 * tie-break — and the LIMITs stop the walk early, so the top 10 of 100,000 trials reads about
 * ten index entries and never sorts. The inner LIMITs also keep SQLite from flattening the
 * halves, so the union yields them in this order. */
#define RANKED_WITH(dir, COLS)                                                                  \
    "SELECT * FROM (SELECT " COLS " FROM trials t WHERE experiment_id = :exp"                 \
    " AND best_validation IS NOT NULL ORDER BY best_validation " dir ", id " dir " LIMIT :lim)" \
    " UNION ALL SELECT * FROM (SELECT " COLS " FROM trials t WHERE experiment_id = :exp"       \
    " AND best_validation IS NULL ORDER BY id LIMIT :lim) LIMIT :lim"
#define RANKED(dir) RANKED_WITH(dir, RANK_COLS)

static const char SQL_RANKED_ASC[] = RANKED("ASC");
static const char SQL_RANKED_DESC[] = RANKED("DESC");
static const char SQL_RANKED_ASC_TABLE[] = RANKED_WITH("ASC", RANK_COLS_WITH(STATE_SHOWN));
static const char SQL_RANKED_DESC_TABLE[] = RANKED_WITH("DESC", RANK_COLS_WITH(STATE_SHOWN));

/* Each trial that started from another's checkpoint, with its ancestors back to a trial that
 * started fresh: "0 @2 > 4 @4 > 5" reads "trial 4 started from trial 0's checkpoint at batch 2,
 * trial 5 from trial 4's at batch 4" (pbt: one step per exploit, at a round's end). */
static const char SQL_LINEAGE[] =
    "WITH RECURSIVE a(child, node, chain) AS ("
    " SELECT id, id, CAST(ordinal AS TEXT) FROM trials WHERE experiment_id = :exp AND parent_trial_id IS NOT NULL"
    " UNION ALL SELECT a.child, p.id, p.ordinal || ' @' || coalesce(ck.batches, '?') || ' > ' || a.chain"
    " FROM a JOIN trials n ON n.id = a.node JOIN trials p ON p.id = n.parent_trial_id"
    " LEFT JOIN checkpoints ck ON ck.uuid = n.parent_checkpoint)"
    " SELECT t.ordinal AS trial, a.chain AS lineage FROM a JOIN trials t ON t.id = a.child"
    " WHERE (SELECT parent_trial_id FROM trials WHERE id = a.node) IS NULL ORDER BY t.ordinal";
static const char SQL_HAS_LINEAGE[] =
    "SELECT count(*) FROM trials WHERE experiment_id = :exp AND parent_trial_id IS NOT NULL";

static const char SQL_EXP_HEAD[] =
    "SELECT smaller_is_better, metric, num_trials FROM experiments WHERE id = ?1";

/* The row s is on as "key  value" lines, NULL columns left out; the column named skip (NULL: none)
 * is not printed but returned in *skipped (text valid while s stays on the row). b: scratch. */
static int key_values(sqlite3_stmt *s, const char *skip, const char **skipped, t2__sbuf *b, FILE *out)
{
    int n = sqlite3_column_count(s), keyw = 0;
    for (int c = 0; c < n; c++) {
        const char *nm = sqlite3_column_name(s, c);
        int l = nm ? (int)strlen(nm) : 0;
        if (l > keyw) keyw = l;
    }
    for (int c = 0; c < n; c++) {
        const char *name = sqlite3_column_name(s, c);
        if (!name) name = "";
        if (skip && strcmp(name, skip) == 0) {
            *skipped = (const char *)sqlite3_column_text(s, c);
            continue;
        }
        if (sqlite3_column_type(s, c) == SQLITE_NULL) continue;
        b->n = 0;
        t2__store_cell(b, s, c, t2__store_col_kind(COLS, name));
        if (b->oom) return t2_seterr(T2_ENOMEM, "store: out of memory describing");
        fprintf(out, "%-*s  %s\n", keyw, name, b->p ? b->p : "");
    }
    return T2_OK;
}

/* An ERRORED experiment keeps the trials it did not finish (QUEUED, PAUSED), which no controller
 * will run unless it is resumed: said, so that QUEUED does not read as "next to run". One that
 * ended before its searcher's state was first saved cannot be resumed (experiment_resume.c says
 * why): its trials never run, and the line says that instead. */
static int unfinished_line(t2__store *st, int64_t id, FILE *out)
{
    sqlite3_stmt *s;
    int rc = t2__store_prepare(st, SQL_UNFINISHED, &s);
    if (rc) return rc;
    int b = sqlite3_bind_int64(s, 1, id), src = b ? b : sqlite3_step(s);
    if (src != SQLITE_ROW) rc = t2__store_err(st, src, "describe: unfinished trials");
    else if (sqlite3_column_int64(s, 0) > 0 && sqlite3_column_int64(s, 1) > 0)
        fprintf(out, "%lld trial(s) did not end: they run only when `t2exp%s resume %lld` continues it\n",
                (long long)sqlite3_column_int64(s, 0), t2__hint_home(), (long long)id);
    else if (sqlite3_column_int64(s, 0) > 0)
        fprintf(out, "%lld trial(s) did not end and never will: it ended before its searcher's state was first "
                     "saved, so it cannot be resumed; create it again once the error is fixed\n",
                (long long)sqlite3_column_int64(s, 0));
    sqlite3_finalize(s);
    return rc;
}

/* The table form: the experiment as "key  value" lines, its config indented, then the trials. */
static int describe_table(t2__store *st, const t2__store_param *p, size_t np, const char *ranked,
                          const char *metric, int smaller, int64_t ntrials, long limit, FILE *out)
{
    sqlite3_stmt *s = NULL;
    t2__sbuf b = {0};
    int rc = t2__store_prepare(st, SQL_EXPERIMENT_TABLE, &s);
    if (rc) return rc;
    if ((rc = t2__store_bind_params(st, s, p, np))) goto done;
    int src = sqlite3_step(s);
    if (src != SQLITE_ROW) {
        rc = t2__store_err(st, src, "describe");
        goto done;
    }
    const char *config = NULL;
    if ((rc = key_values(s, "config", &config, &b, out))) goto done;
    /* ACTIVE with no live controller: it was killed or crashed before it could record its end, and
     * every view went on saying ACTIVE (probe_J). Said here; the state stays what the store holds. */
    long pid = 0;
    t2__experiment_row row;
    int active = 0, errored = 0;
    if (t2__store_get_experiment(st, p[0].i, &row) == T2_OK) {
        active = row.state == T2__EXP_ACTIVE;
        errored = row.state == T2__EXP_ERRORED;
        t2__experiment_row_free(&row);
    }
    if (active && t2__store_controller(st, p[0].i, &pid) == 0)
        fprintf(out, "no controller runs it: it was killed or crashed before it recorded an end; "
                     "`t2exp%s resume %lld` continues it\n", t2__hint_home(), (long long)p[0].i);
    t2_clearerr();
    if (errored && (rc = unfinished_line(st, p[0].i, out))) goto done;
    fputs("config:\n", out);
    /* Indented so the YAML reads as a block under its heading. */
    for (const char *l = config ? config : ""; *l;) {
        const char *e = strchr(l, '\n');
        size_t len = e ? (size_t)(e - l) : strlen(l);
        b.n = 0;
        t2__sbuf_put(&b, l, len); /* user text: no raw control characters to the terminal */
        if (b.oom) {
            rc = t2_seterr(T2_ENOMEM, "store: out of memory describing");
            goto done;
        }
        t2__store_printable(b.p, b.n);
        fprintf(out, "    %.*s\n", (int)b.n, b.p ? b.p : "");
        l += len + (e != NULL);
    }
    /* The metric's name is the config's text too: an escape sequence in it reached the terminal. */
    b.n = 0;
    t2__sbuf_put(&b, metric ? metric : "", metric ? strlen(metric) : 0);
    if (b.oom) {
        rc = t2_seterr(T2_ENOMEM, "store: out of memory describing");
        goto done;
    }
    t2__store_printable(b.p, b.n);
    if (limit > 0 && limit < ntrials)
        fprintf(out, "\ntrials ranked by %.*s (%s is better), top %ld of %" PRId64 ":\n", (int)b.n, b.p ? b.p : "",
                smaller ? "smaller" : "larger", limit, ntrials);
    else
        fprintf(out, "\ntrials ranked by %.*s (%s is better), all %" PRId64 ":\n", (int)b.n, b.p ? b.p : "",
                smaller ? "smaller" : "larger", ntrials);
    sqlite3_finalize(s);
    s = NULL;
    if ((rc = t2__store_prepare(st, ranked, &s)) || (rc = t2__store_bind_params(st, s, p, np)))
        goto done;
    rc = t2__store_print_table_stmt(st, s, COLS, out);
    sqlite3_finalize(s);
    s = NULL;
    if (!rc && !(rc = t2__store_prepare(st, SQL_HAS_LINEAGE, &s)) && !(rc = t2__store_bind_params(st, s, p, 1)) &&
        sqlite3_step(s) == SQLITE_ROW && sqlite3_column_int64(s, 0) > 0) {
        sqlite3_finalize(s);
        s = NULL;
        fputs("\nlineage (ancestors first, each with the batch its checkpoint was taken at):\n", out);
        if (!(rc = t2__store_prepare(st, SQL_LINEAGE, &s)) && !(rc = t2__store_bind_params(st, s, p, 1)))
            rc = t2__store_print_table_stmt(st, s, COLS, out);
    }
done:
    sqlite3_finalize(s);
    t2__sbuf_free(&b);
    return rc;
}

int t2__store_print_experiment(t2__store *st, int64_t id, long trials_limit,
                               t2__store_format fmt, FILE *out)
{
    if (!st || !out) return t2_seterr(T2_EINVAL, "store: describe: NULL argument");
    if (fmt != T2__FMT_TABLE && fmt != T2__FMT_JSON && fmt != T2__FMT_CSV)
        return t2_seterr(T2_EINVAL, "store: describe: unknown format %d", (int)fmt);
    sqlite3_stmt *s = NULL;
    char *exp_json = NULL, *trials_json = NULL;
    t2__sbuf q = {0};
    int rc = t2__store_prepare(st, SQL_EXP_HEAD, &s);
    if (rc) return rc;
    if ((rc = sqlite3_bind_int64(s, 1, id)) != SQLITE_OK) {
        rc = t2__store_err(st, rc, "bind");
        goto done;
    }
    int src = sqlite3_step(s);
    if (src != SQLITE_ROW) {
        rc = src == SQLITE_DONE
                 ? t2_seterr(T2_ENOTFOUND, "store %s: no experiment %" PRId64, st->path, id)
                 : t2__store_err(st, src, "describe");
        goto done;
    }
    int smaller = sqlite3_column_int(s, 0);
    char metric[256];
    snprintf(metric, sizeof metric, "%s", (const char *)sqlite3_column_text(s, 1));
    int64_t ntrials = sqlite3_column_int64(s, 2);
    sqlite3_finalize(s);
    s = NULL;

    const char *ranked = smaller ? SQL_RANKED_ASC : SQL_RANKED_DESC;
    const t2__store_param p[] = {
        {.name = ":exp", .type = T2__P_INT, .i = id},
        {.name = ":lim", .type = T2__P_INT, .i = trials_limit > 0 ? trials_limit : -1},
    };
    size_t np = sizeof p / sizeof p[0];
    if (fmt == T2__FMT_TABLE) {
        rc = describe_table(st, p, np, smaller ? SQL_RANKED_ASC_TABLE : SQL_RANKED_DESC_TABLE, metric, smaller, ntrials,
                            trials_limit, out);
    } else if (fmt == T2__FMT_CSV) {
        rc = t2__store_print_query(st, ranked, p, np, COLS, fmt, out);
    } else {
        /* One document; json() turns each part's text back into JSON so it nests as a value. */
        if ((rc = t2__store_json_sql(st, SQL_EXPERIMENT, COLS, 0, &exp_json)) ||
            (rc = t2__store_json_sql(st, ranked, COLS, 1, &trials_json)))
            goto done;
        t2__sbuf_printf(&q, "SELECT json_object('experiment', json((%s)), 'trials', json((%s)))",
                        exp_json, trials_json);
        if (q.oom) {
            rc = t2_seterr(T2_ENOMEM, "store: out of memory building a JSON query");
            goto done;
        }
        if ((rc = t2__store_prepare(st, q.p, &s)) || (rc = t2__store_bind_params(st, s, p, np)))
            goto done;
        rc = t2__store_print_json_stmt(st, s, out);
    }
done:
    sqlite3_finalize(s);
    free(exp_json);
    free(trials_json);
    t2__sbuf_free(&q);
    return rc;
}

/* ---- trials, metrics, checkpoints ------------------------------------------------------ */


/* Trial seeds use all 64 bits and SQLite stores them signed: shown unsigned, as the runner uses
 * them (text, so JSON readers that hold numbers as doubles keep every digit). */
/* A trial's run time, as T2__SQL_RUN_SECONDS, except that a RUNNING one in an experiment no live
 * controller runs ran until its latest metric (EXP_RUN_SECONDS). */
#define TRIAL_RUN_SECONDS                                                                                        \
    "coalesce(ended_at, CASE WHEN state = 'RUNNING' THEN CASE WHEN (SELECT t2_controller_alive(e.controller_pid," \
    " e.controller_token) FROM experiments e WHERE e.id = t.experiment_id) THEN :now ELSE max(started_at,"       \
    " coalesce((SELECT max(m.time) FROM metrics m WHERE m.trial_id = t.id), 0)) END END) - started_at"

#define SQL_TRIALS_WITH(STATE)                                                                                      \
    "SELECT ordinal AS trial, id, " STATE ", hparams, printf('%llu', seed) AS seed, restarts, batches_trained AS batches," \
    " target_length_batches AS target_batches, best_validation, latest_validation, "                                \
    T2__SQL_ISO("started_at") " AS started, " TRIAL_RUN_SECONDS " AS duration, hosts, error, " PARENT_COL        \
    " FROM trials t WHERE experiment_id = :exp ORDER BY ordinal"
static const char SQL_TRIALS[] = SQL_TRIALS_WITH("state");
static const char SQL_TRIALS_TABLE[] = SQL_TRIALS_WITH(STATE_SHOWN);

int t2__store_print_trials(t2__store *st, int64_t experiment_id, t2__store_format fmt, FILE *out)
{
    if (!st) return t2_seterr(T2_EINVAL, "store: trials: NULL store");
    int rc = exists(st, "SELECT 1 FROM experiments WHERE id = ?1", experiment_id, "experiment");
    if (rc) return rc;
    const t2__store_param p[] = {{.name = ":exp", .type = T2__P_INT, .i = experiment_id}};
    return t2__store_print_query(st, fmt == T2__FMT_TABLE ? SQL_TRIALS_TABLE : SQL_TRIALS, p, 1, COLS, fmt, out);
}

/* A report's metrics are two tables since schema 14: what the trial reported (metrics) and the
 * runner's five timings (report_timings, one row a report), which read as the training metrics
 * t2exp.batches_per_s and so on. The listings merge them: one arm of a compound select for
 * metrics and one for each timing column, each in key order (kind, batches, then name: a timing
 * arm's rows are unique by kind and batches within a trial, so its constant name sorts nothing),
 * merged without a sort. The join with trials is what lets SQLite see that uniqueness. */
#define METRIC_TIME "strftime('%Y-%m-%dT%H:%M:%fZ', m.time, 'unixepoch')"
#define TIMING_ARM(lead, where, col)                                                                \
    " UNION ALL SELECT " lead "r.kind, r.batches, r.epoch, 't2exp." col "', r." col ","                 \
    " strftime('%Y-%m-%dT%H:%M:%fZ', r.time, 'unixepoch')"                                           \
    " FROM trials t JOIN report_timings r ON r.trial_id = t.id WHERE " where " AND (:kind IS NULL OR r.kind = :kind)"
#define TIMING_ARMS(lead, where)                                                                    \
    TIMING_ARM(lead, where, "batches_per_s") TIMING_ARM(lead, where, "samples_per_s")                \
    TIMING_ARM(lead, where, "data_s") TIMING_ARM(lead, where, "compute_s") TIMING_ARM(lead, where, "comm_s")

static const char SQL_METRICS[] =
    "SELECT m.kind AS kind, m.batches AS batches, m.epoch AS epoch, m.name AS name, m.value AS value,"
    " " METRIC_TIME " AS time"
    " FROM trials t JOIN metrics m ON m.trial_id = t.id WHERE t.id = :trial AND (:kind IS NULL OR m.kind = :kind)"
    TIMING_ARMS("", "t.id = :trial")
    " ORDER BY kind, batches, name";

int t2__store_print_metrics(t2__store *st, int64_t trial_id, const char *kind,
                            t2__store_format fmt, FILE *out)
{
    if (!st) return t2_seterr(T2_EINVAL, "store: metrics: NULL store");
    if (kind && strcmp(kind, "training") != 0 && strcmp(kind, "validation") != 0)
        return t2_seterr(T2_EINVAL, "store: metric kind '%s' is neither training nor validation",
                         kind);
    int rc = exists(st, "SELECT 1 FROM trials WHERE id = ?1", trial_id, "trial");
    if (rc) return rc;
    /* A NULL text parameter binds SQL NULL: both kinds. */
    const t2__store_param p[] = {
        {.name = ":trial", .type = T2__P_INT, .i = trial_id},
        {.name = ":kind", .type = T2__P_TEXT, .s = kind},
    };
    return t2__store_print_query(st, SQL_METRICS, p, 2, COLS, fmt, out);
}

/* `metrics EXP`: every trial's rows in one table, trial by trial in key order. The ordinal orders
 * the merge and is left out by the outer select, a plain scan of the merge's co-routine in its
 * order (an ORDER BY there would sort every row again). test_store_query checks the order. */
#define EXP_LEAD "t.ordinal, t.experiment_id || '.' || t.ordinal, t.id, "
static const char SQL_EXP_METRICS[] =
    "SELECT trial, trial_id, kind, batches, epoch, name, value, time FROM ("
    "SELECT t.ordinal AS ordinal, t.experiment_id || '.' || t.ordinal AS trial, t.id AS trial_id, m.kind AS kind,"
    " m.batches AS batches, m.epoch AS epoch, m.name AS name, m.value AS value, " METRIC_TIME " AS time"
    " FROM trials t JOIN metrics m ON m.trial_id = t.id"
    " WHERE t.experiment_id = :exp AND (:kind IS NULL OR m.kind = :kind)"
    TIMING_ARMS(EXP_LEAD, "t.experiment_id = :exp")
    " ORDER BY ordinal, kind, batches, name)";
#undef EXP_LEAD
#undef TIMING_ARMS
#undef TIMING_ARM
#undef METRIC_TIME

int t2__store_print_experiment_metrics(t2__store *st, int64_t experiment_id, const char *kind,
                                       t2__store_format fmt, FILE *out)
{
    if (!st) return t2_seterr(T2_EINVAL, "store: metrics: NULL store");
    if (kind && strcmp(kind, "training") != 0 && strcmp(kind, "validation") != 0)
        return t2_seterr(T2_EINVAL, "store: metric kind '%s' is neither training nor validation",
                         kind);
    int rc = exists(st, "SELECT 1 FROM experiments WHERE id = ?1", experiment_id, "experiment");
    if (rc) return rc;
    const t2__store_param p[] = {
        {.name = ":exp", .type = T2__P_INT, .i = experiment_id},
        {.name = ":kind", .type = T2__P_TEXT, .s = kind},
    };
    return t2__store_print_query(st, SQL_EXP_METRICS, p, 2, COLS, fmt, out);
}

#define CKPT_SQL(where)                                                                         \
    "SELECT c.uuid, c.trial_id, t.ordinal AS trial, c.batches, c.epoch, c.metric, c.size_bytes," \
    " c.state, " T2__SQL_ISO("c.created_at") " AS created, c.path"                                     \
    " FROM checkpoints c JOIN trials t ON t.id = c.trial_id WHERE " where                      \
    " ORDER BY t.ordinal, c.batches, c.created_at"

/* Named one by one: an element of a const array is no constant initializer to clang, and
 * t2__store_queries below names each. */
static const char SQL_CKPTS_EXP[] = CKPT_SQL("c.experiment_id = :exp AND c.state = 'ACTIVE'");
static const char SQL_CKPTS_EXP_ALL[] = CKPT_SQL("c.experiment_id = :exp");
static const char SQL_CKPTS_TRIAL[] = CKPT_SQL("c.trial_id = :trial AND c.state = 'ACTIVE'");
static const char SQL_CKPTS_TRIAL_ALL[] = CKPT_SQL("c.trial_id = :trial");
static const char *const SQL_CKPTS[2][2] = {
    {SQL_CKPTS_EXP, SQL_CKPTS_EXP_ALL},
    {SQL_CKPTS_TRIAL, SQL_CKPTS_TRIAL_ALL},
};

int t2__store_print_checkpoints(t2__store *st, int64_t experiment_id, int64_t trial_id,
                                int include_deleted, t2__store_format fmt, FILE *out)
{
    if (!st) return t2_seterr(T2_EINVAL, "store: checkpoints: NULL store");
    int by_trial = trial_id > 0;
    int rc = by_trial
                 ? exists(st, "SELECT 1 FROM trials WHERE id = ?1", trial_id, "trial")
                 : exists(st, "SELECT 1 FROM experiments WHERE id = ?1", experiment_id,
                          "experiment");
    if (rc) return rc;
    const t2__store_param p[] = {
        {.name = ":exp", .type = T2__P_INT, .i = experiment_id},
        {.name = ":trial", .type = T2__P_INT, .i = trial_id},
    };
    return t2__store_print_query(st, SQL_CKPTS[by_trial][include_deleted != 0], p, 2, COLS, fmt,
                                 out);
}

/* ---- describe EXP.N -------------------------------------------------------------------- */

/* One trial, as `det trial describe` shows one: its row (with its experiment's name and metric,
 * the BLAS line it ran on and its active checkpoints' count), then its latest validation's
 * metrics, then its checkpoints. */
static const char SQL_TRIAL_ONE[] =
    "SELECT t.experiment_id || '.' || t.ordinal AS trial, t.id, t.experiment_id AS experiment,"
    " e.name AS experiment_name, t.state, t.hparams, printf('%llu', t.seed) AS seed, t.restarts,"
    " t.batches_trained AS batches, t.target_length_batches AS target_batches, e.metric,"
    " t.best_validation, t.latest_validation, " T2__SQL_ISO("t.started_at") " AS started, " T2__SQL_ISO("t.ended_at") " AS ended,"
    " coalesce(t.ended_at, CASE WHEN t.state = 'RUNNING' THEN :now END) - t.started_at AS duration,"
    " t.hosts, t.error, " PARENT_COL ","
    " (SELECT l.line FROM blas_lines l WHERE l.id = t.blas_id) AS blas,"
    " (SELECT count(*) FROM checkpoints c WHERE c.trial_id = t.id AND c.state = 'ACTIVE') AS checkpoints"
    " FROM trials t JOIN experiments e ON e.id = t.experiment_id WHERE t.id = :trial";
/* Every metric of the trial's latest validation (the metrics primary key: no sort). */
static const char SQL_TRIAL_LAST_VALIDATION[] =
    "SELECT m.batches, m.epoch, m.name, m.value, strftime('%Y-%m-%dT%H:%M:%fZ', m.time, 'unixepoch') AS time"
    " FROM metrics m WHERE m.trial_id = :trial AND m.kind = 'validation' AND m.batches ="
    " (SELECT max(batches) FROM metrics WHERE trial_id = :trial AND kind = 'validation') ORDER BY m.name";

int t2__store_print_trial(t2__store *st, int64_t trial_id, t2__store_format fmt, FILE *out)
{
    if (!st || !out) return t2_seterr(T2_EINVAL, "store: describe: NULL argument");
    int rc = exists(st, "SELECT 1 FROM trials WHERE id = ?1", trial_id, "trial");
    if (rc) return rc;
    const t2__store_param p[] = {{.name = ":trial", .type = T2__P_INT, .i = trial_id}};
    if (fmt == T2__FMT_CSV) return t2__store_print_query(st, SQL_TRIAL_ONE, p, 1, COLS, fmt, out);
    sqlite3_stmt *s = NULL;
    t2__sbuf b = {0};
    char *trial_json = NULL, *val_json = NULL, *ck_json = NULL;
    if (fmt == T2__FMT_JSON) {
        if ((rc = t2__store_json_sql(st, SQL_TRIAL_ONE, COLS, 0, &trial_json)) ||
            (rc = t2__store_json_sql(st, SQL_TRIAL_LAST_VALIDATION, COLS, 1, &val_json)) ||
            (rc = t2__store_json_sql(st, SQL_CKPTS_TRIAL, COLS, 1, &ck_json)))
            goto done;
        t2__sbuf_printf(&b, "SELECT json_object('trial', json((%s)), 'latest_validation', json((%s)),"
                        " 'checkpoints', json((%s)))", trial_json, val_json, ck_json);
        if (b.oom) {
            rc = t2_seterr(T2_ENOMEM, "store: out of memory building a JSON query");
            goto done;
        }
        if (!(rc = t2__store_prepare(st, b.p, &s)) && !(rc = t2__store_bind_params(st, s, p, 1)))
            rc = t2__store_print_json_stmt(st, s, out);
        goto done;
    }
    if ((rc = t2__store_prepare(st, SQL_TRIAL_ONE, &s)) || (rc = t2__store_bind_params(st, s, p, 1))) goto done;
    int src = sqlite3_step(s);
    if (src != SQLITE_ROW) {
        rc = t2__store_err(st, src, "describe trial");
        goto done;
    }
    if ((rc = key_values(s, NULL, NULL, &b, out))) goto done;
    fputs("\nlatest validation:\n", out);
    if ((rc = t2__store_print_query(st, SQL_TRIAL_LAST_VALIDATION, p, 1, COLS, fmt, out))) goto done;
    fputs("\ncheckpoints:\n", out);
    rc = t2__store_print_query(st, SQL_CKPTS_TRIAL, p, 1, COLS, fmt, out);
done:
    sqlite3_finalize(s);
    t2__sbuf_free(&b);
    free(trial_json);
    free(val_json);
    free(ck_json);
    return rc;
}

const t2__store_named_sql t2__store_queries[] = {
    {"list", SQL_EXPERIMENTS},
    {"describe", SQL_EXPERIMENT},
    {"describe: ranked, smaller is better", SQL_RANKED_ASC},
    {"describe: ranked, larger is better", SQL_RANKED_DESC},
    {"describe: head", SQL_EXP_HEAD},
    {"trials", SQL_TRIALS},
    {"trials: table", SQL_TRIALS_TABLE},
    {"describe: ranked table, smaller is better", SQL_RANKED_ASC_TABLE},
    {"metrics of a trial", SQL_METRICS},
    {"metrics of an experiment", SQL_EXP_METRICS},
    {"checkpoints of an experiment", SQL_CKPTS_EXP},
    {"checkpoints of an experiment, deleted too", SQL_CKPTS_EXP_ALL},
    {"checkpoints of a trial", SQL_CKPTS_TRIAL},
    {"checkpoints of a trial, deleted too", SQL_CKPTS_TRIAL_ALL},
    {"describe a trial", SQL_TRIAL_ONE},
    {"describe a trial: latest validation", SQL_TRIAL_LAST_VALIDATION},
    {"list (table)", SQL_EXPERIMENTS_TABLE}, /* last: test_store_big names the others by index */
    {NULL, NULL},
};
