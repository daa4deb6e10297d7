/* store_write.c — the controller's writes. Each joins the open batch (store.c) through a cached
 * prepared statement, so a write costs one B-tree insert or update and no commit. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "store_internal.h"
#include "t2exp/error.h"

#define TEXT(s, i, v) sqlite3_bind_text((s), (i), (v), -1, SQLITE_STATIC)

/* Every bind result is checked; they only fail on a programming error (index) or NOMEM. */
static int bind_rc(t2__store *st, int rc)
{
    return rc == SQLITE_OK ? 0 : t2__store_err(st, rc, "bind");
}

/* Runs an UPDATE/INSERT that must touch exactly one row. */
static int exec_one(t2__store *st, sqlite3_stmt *s, const char *what, const char *thing, int64_t id)
{
    int rc = t2__store_exec_stmt(st, s, what);
    if (rc) return rc;
    if (sqlite3_changes(st->db) != 1)
        return t2_seterr(T2_ENOTFOUND, "store %s: %s: no %s %" PRId64, st->path, what, thing, id);
    return t2__store_write_done(st);
}

static const char SQL_CREATE_EXPERIMENT[] =
    "INSERT INTO experiments (name, description, labels, config_yaml, searcher_name, metric,"
    " smaller_is_better, trial_object, seed, created_at, started_at, overrides)"
    " VALUES (?1, ?2, coalesce(?3, '[]'), ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?10, coalesce(?11, '[]'))";

int t2__store_create_experiment(t2__store *st, const t2__experiment_new *e, int64_t *id)
{
    if (!st || !e || !id) return t2_seterr(T2_EINVAL, "store: create_experiment: NULL argument");
    const char *missing = !e->name ? "name" : !e->config_yaml ? "config_yaml"
                        : !e->searcher_name ? "searcher_name" : !e->metric ? "metric"
                        : !e->trial_object ? "trial_object" : NULL;
    if (missing) return t2_seterr(T2_EINVAL, "store: create_experiment: %s is required", missing);
    int rc;
    sqlite3_stmt *s;
    if ((rc = t2__store_write_begin(st)) || (rc = t2__store_stmt(st, SQL_CREATE_EXPERIMENT, &s)))
        return rc;
    int b = TEXT(s, 1, e->name);
    b = b ? b : TEXT(s, 2, e->description);
    b = b ? b : TEXT(s, 3, e->labels_json);
    b = b ? b : TEXT(s, 4, e->config_yaml);
    b = b ? b : TEXT(s, 5, e->searcher_name);
    b = b ? b : TEXT(s, 6, e->metric);
    b = b ? b : sqlite3_bind_int(s, 7, e->smaller_is_better != 0);
    b = b ? b : TEXT(s, 8, e->trial_object);
    b = b ? b : sqlite3_bind_int64(s, 9, e->seed);
    b = b ? b : sqlite3_bind_double(s, 10, t2__store_now(st));
    b = b ? b : TEXT(s, 11, e->overrides_json);
    if ((rc = bind_rc(st, b))) return rc;
    if ((rc = t2__store_exec_stmt(st, s, "create experiment"))) return rc;
    *id = sqlite3_last_insert_rowid(st->db);
    return t2__store_write_done(st);
}

static const char SQL_EXP_STATE[] =
    "UPDATE experiments SET state = ?2, started_at = coalesce(started_at, ?3),"
    " ended_at = CASE WHEN ?2 = 'ACTIVE' THEN NULL ELSE ?3 END WHERE id = ?1";

int t2__store_set_experiment_state(t2__store *st, int64_t id, int state)
{
    const char *name = t2__exp_state_name(state);
    if (!st || !name) return t2_seterr(T2_EINVAL, "store: set_experiment_state: bad state %d", state);
    int rc;
    sqlite3_stmt *s;
    if ((rc = t2__store_write_begin(st)) || (rc = t2__store_stmt(st, SQL_EXP_STATE, &s))) return rc;
    int b = sqlite3_bind_int64(s, 1, id);
    b = b ? b : TEXT(s, 2, name);
    b = b ? b : sqlite3_bind_double(s, 3, t2__store_now(st));
    if ((rc = bind_rc(st, b))) return rc;
    return exec_one(st, s, "set experiment state", "experiment", id);
}

static const char SQL_EXP_PROGRESS[] = "UPDATE experiments SET progress = ?2 WHERE id = ?1";

int t2__store_set_experiment_progress(t2__store *st, int64_t id, double progress)
{
    if (!st || !(progress >= 0 && progress <= 1))
        return t2_seterr(T2_EINVAL, "store: experiment progress %g is not in [0, 1]", progress);
    if (t2__store_queues(st)) {
        t2__store_rec r = {.kind = T2__REC_PROGRESS, .id = id, .d = {progress}};
        return t2__store_async_put(st, &r, NULL, NULL);
    }
    int rc;
    sqlite3_stmt *s;
    if ((rc = t2__store_write_begin(st)) || (rc = t2__store_stmt(st, SQL_EXP_PROGRESS, &s)))
        return rc;
    int b = sqlite3_bind_int64(s, 1, id);
    b = b ? b : sqlite3_bind_double(s, 2, progress);
    if ((rc = bind_rc(st, b))) return rc;
    return exec_one(st, s, "set experiment progress", "experiment", id);
}

static const char SQL_EXP_BEST[] =
    "UPDATE experiments SET best_trial_id = ?2, best_metric = ?3 WHERE id = ?1";

int t2__store_set_experiment_best(t2__store *st, int64_t id, int64_t trial_id, double metric)
{
    if (!st) return t2_seterr(T2_EINVAL, "store: set_experiment_best on NULL");
    if (t2__store_queues(st)) {
        t2__store_rec r = {.kind = T2__REC_BEST, .id = id, .i = {trial_id}, .d = {metric}};
        return t2__store_async_put(st, &r, NULL, NULL);
    }
    int rc;
    sqlite3_stmt *s;
    if ((rc = t2__store_write_begin(st)) || (rc = t2__store_stmt(st, SQL_EXP_BEST, &s))) return rc;
    int b = sqlite3_bind_int64(s, 1, id);
    b = b ? b : trial_id > 0 ? sqlite3_bind_int64(s, 2, trial_id) : sqlite3_bind_null(s, 2);
    b = b ? b : t2__store_bind_real(s, 3, metric);
    if ((rc = bind_rc(st, b))) return rc;
    return exec_one(st, s, "set experiment best", "experiment", id);
}

static const char SQL_EXP_ERROR[] = "UPDATE experiments SET error = ?2 WHERE id = ?1";
static const char SQL_EXP_OVERRIDES[] = "UPDATE experiments SET overrides = ?2 WHERE id = ?1";

/* One text column of experiment id (sql: "UPDATE experiments SET col = ?2 WHERE id = ?1"). */
static int set_experiment_text(t2__store *st, const char *sql, int64_t id, const char *text, const char *what)
{
    int rc;
    sqlite3_stmt *s;
    if ((rc = t2__store_write_begin(st)) || (rc = t2__store_stmt(st, sql, &s))) return rc;
    int b = sqlite3_bind_int64(s, 1, id);
    b = b ? b : TEXT(s, 2, text);
    if ((rc = bind_rc(st, b))) return rc;
    return exec_one(st, s, what, "experiment", id);
}

int t2__store_set_experiment_error(t2__store *st, int64_t id, const char *error)
{
    if (!st) return t2_seterr(T2_EINVAL, "store: set_experiment_error on NULL");
    return set_experiment_text(st, SQL_EXP_ERROR, id, error, "set experiment error");
}

int t2__store_set_experiment_overrides(t2__store *st, int64_t id, const char *overrides_json)
{
    if (!st || !overrides_json) return t2_seterr(T2_EINVAL, "store: set_experiment_overrides: NULL argument");
    return set_experiment_text(st, SQL_EXP_OVERRIDES, id, overrides_json, "set experiment overrides");
}

static const char SQL_EXP_PARTS[] = "UPDATE experiments SET parts = ?2 WHERE id = ?1";

int t2__store_set_experiment_parts(t2__store *st, int64_t id, int parts)
{
    if (!st || parts < 1 || parts > 64)
        return t2_seterr(T2_EINVAL, "store: set_experiment_parts: %d not in 1..64", parts);
    int rc;
    sqlite3_stmt *s;
    if ((rc = t2__store_write_begin(st)) || (rc = t2__store_stmt(st, SQL_EXP_PARTS, &s))) return rc;
    int b = sqlite3_bind_int64(s, 1, id);
    b = b ? b : sqlite3_bind_int(s, 2, parts);
    if ((rc = bind_rc(st, b))) return rc;
    return exec_one(st, s, "set experiment parts", "experiment", id);
}

static const char SQL_EXP_CKPT_DIR[] = "UPDATE experiments SET checkpoint_dir = ?2 WHERE id = ?1";

int t2__store_set_experiment_checkpoint_dir(t2__store *st, int64_t id, const char *dir)
{
    if (!st || !dir || !*dir)
        return t2_seterr(T2_EINVAL, "store: set_experiment_checkpoint_dir: needs a directory");
    return set_experiment_text(st, SQL_EXP_CKPT_DIR, id, dir, "set experiment checkpoint_dir");
}

/* A negative ordinal takes the next free one; max() over the (experiment_id, ordinal) unique
 * index is one B-tree descent, not a scan. Every column a trial's writes set, so that a row whose
 * writes were folded (store_fold.c) is one insert. */
#define INSERT_TRIALS                                                                                          \
    "INSERT INTO trials (experiment_id, ordinal, hparams, seed, target_length_batches, created_at, id, log_path," \
    " state, restarts, batches_trained, best_validation, latest_validation, error, started_at, ended_at, hosts," \
    " parent_trial_id, parent_checkpoint, blas_id) VALUES" /* in bind_trial_row's parameter order */
enum { TRIAL_PARAMS = 20 };
static const char SQL_INSERT_TRIAL[] =
    INSERT_TRIALS " (?1, CASE WHEN ?2 >= 0 THEN ?2 ELSE"
    " (SELECT coalesce(max(ordinal), 0) + 1 FROM trials WHERE experiment_id = ?1) END,"
    " ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20)";
/* What the trials_blas trigger does for an update of blas_id; an insert does not fire it. */
static const char SQL_EXPERIMENT_BLAS[] =
    "INSERT OR IGNORE INTO experiment_blas (experiment_id, blas_id) VALUES (?1, ?2)";

static int blas_line_id(t2__store *st, const char *line, int64_t *id);

int t2__store_create_trial(t2__store *st, int64_t experiment_id, int64_t ordinal,
                           const char *hparams_json, int64_t seed, int64_t target_length_batches,
                           int64_t *id)
{
    if (!st || !hparams_json || !id)
        return t2_seterr(T2_EINVAL, "store: create_trial: NULL argument");
    if (t2__store_queues(st)) {
        t2__store_rec r = {.kind = T2__REC_CREATE_TRIAL, .i = {experiment_id, ordinal, seed, target_length_batches}};
        int rc = t2__store_async_trial_id(st, &r.id);
        if (!rc) rc = t2__store_async_put(st, &r, hparams_json, NULL);
        *id = rc ? 0 : r.id;
        return rc;
    }
    t2__fold_row row = {.experiment_id = experiment_id,
                         .ordinal = ordinal,
                         .seed = seed,
                         .target = target_length_batches > 0 ? target_length_batches : 0,
                         .hparams = hparams_json,
                         .state = T2__TRIAL_QUEUED,
                         .best = NAN,
                         .latest = NAN,
                         .created_at = t2__store_now(st),
                         .started_at = NAN,
                         .ended_at = NAN};
    return t2__store_insert_trial_row(st, &row, id);
}

/* Binds row r's values to s's parameters o+1..o+20 (INSERT_TRIALS's column order). */
static int bind_trial_row(sqlite3_stmt *s, int o, const t2__fold_row *r, const char *state, int64_t blas)
{
    int b = sqlite3_bind_int64(s, o + 1, r->experiment_id);
    b = b ? b : sqlite3_bind_int64(s, o + 2, r->ordinal);
    b = b ? b : TEXT(s, o + 3, r->hparams);
    b = b ? b : sqlite3_bind_int64(s, o + 4, r->seed);
    b = b ? b : r->target > 0 ? sqlite3_bind_int64(s, o + 5, r->target) : sqlite3_bind_null(s, o + 5);
    b = b ? b : sqlite3_bind_double(s, o + 6, r->created_at);
    b = b ? b : r->id > 0 ? sqlite3_bind_int64(s, o + 7, r->id) : sqlite3_bind_null(s, o + 7);
    b = b ? b : TEXT(s, o + 8, r->log_path);
    b = b ? b : TEXT(s, o + 9, state);
    b = b ? b : sqlite3_bind_int(s, o + 10, r->restarts);
    b = b ? b : sqlite3_bind_int64(s, o + 11, r->batches);
    b = b ? b : t2__store_bind_real(s, o + 12, r->best);
    b = b ? b : t2__store_bind_real(s, o + 13, r->latest);
    b = b ? b : TEXT(s, o + 14, r->error);
    b = b ? b : t2__store_bind_real(s, o + 15, r->started_at);
    b = b ? b : t2__store_bind_real(s, o + 16, r->ended_at);
    b = b ? b : TEXT(s, o + 17, r->hosts);
    b = b ? b : r->parent_id > 0 ? sqlite3_bind_int64(s, o + 18, r->parent_id) : sqlite3_bind_null(s, o + 18);
    b = b ? b : TEXT(s, o + 19, r->parent_checkpoint);
    b = b ? b : blas ? sqlite3_bind_int64(s, o + 20, blas) : sqlite3_bind_null(s, o + 20);
    return b;
}

/* What the trials_blas trigger does for an update of blas_id (an insert does not fire it), once a
 * transaction for a pair. */
static int add_experiment_blas(t2__store *st, int64_t experiment_id, int64_t blas)
{
    if (!blas || (st->eblas_exp == experiment_id && st->eblas_id == blas && st->eblas_gen == st->tx_gen)) return T2_OK;
    sqlite3_stmt *s;
    int rc = t2__store_stmt(st, SQL_EXPERIMENT_BLAS, &s);
    if (rc) return rc;
    int b = sqlite3_bind_int64(s, 1, experiment_id);
    b = b ? b : sqlite3_bind_int64(s, 2, blas);
    if ((rc = bind_rc(st, b)) || (rc = t2__store_exec_stmt(st, s, "add experiment BLAS"))) return rc;
    st->eblas_exp = experiment_id;
    st->eblas_id = blas;
    st->eblas_gen = st->tx_gen;
    return T2_OK;
}

/* experiments.num_trials, kept by the inserts themselves since schema 12 (a trigger did it per
 * row: about a third of a trial insert's cost). Deletes still have their trigger. */
static const char SQL_COUNT_TRIALS[] = "UPDATE experiments SET num_trials = num_trials + ?2 WHERE id = ?1";

static int count_trials(t2__store *st, int64_t experiment_id, size_t n)
{
    sqlite3_stmt *s;
    int rc = t2__store_stmt(st, SQL_COUNT_TRIALS, &s);
    if (rc) return rc;
    int b = sqlite3_bind_int64(s, 1, experiment_id);
    b = b ? b : sqlite3_bind_int64(s, 2, (sqlite3_int64)n);
    if ((rc = bind_rc(st, b))) return rc;
    return t2__store_exec_stmt(st, s, "count trials");
}

int t2__store_insert_trial_row(t2__store *st, const t2__fold_row *r, int64_t *id)
{
    const char *state = t2__trial_state_name(r->state);
    if (!state) return t2_seterr(T2_EINVAL, "store: trial %lld: bad state %d", (long long)r->id, r->state);
    int rc;
    int64_t blas = 0;
    sqlite3_stmt *s;
    if ((rc = t2__store_write_begin(st)) || (r->blas && (rc = blas_line_id(st, r->blas, &blas))) ||
        (rc = t2__store_stmt(st, SQL_INSERT_TRIAL, &s)))
        return rc;
    if ((rc = bind_rc(st, bind_trial_row(s, 0, r, state, blas)))) return rc;
    if ((rc = t2__store_exec_stmt(st, s, "create trial"))) return rc;
    *id = sqlite3_last_insert_rowid(st->db);
    if ((rc = count_trials(st, r->experiment_id, 1)) || (rc = add_experiment_blas(st, r->experiment_id, blas)))
        return rc;
    return t2__store_write_done(st);
}

/* head, then n rows of `per` parameters numbered in order (?1..?per the first row, ?per+1.. the
 * second, ...), then tail: a multi-row insert's SQL, malloc'd (NULL: out of memory). */
static char *rows_sql_for(const char *head, int n, int per, const char *tail)
{
    size_t cap = strlen(head) + strlen(tail) + (size_t)n * (size_t)per * 9 + 16;
    char *sql = malloc(cap);
    if (!sql) return NULL;
    size_t len = (size_t)snprintf(sql, cap, "%s", head);
    for (int i = 0; i < n; i++)
        for (int p = 1; p <= per; p++)
            len += (size_t)snprintf(sql + len, cap - len, "%s?%d%s", p > 1 ? ", " : i ? ", (" : " (", i * per + p,
                                    p == per ? ")" : "");
    snprintf(sql + len, cap - len, "%s", tail);
    return sql;
}

int t2__store_insert_trial_rows(t2__store *st, const t2__fold_row *const *v, size_t n)
{
    while (n > 0) {
        size_t c = n < T2__STORE_TRIAL_ROWS ? n : T2__STORE_TRIAL_ROWS;
        int rc;
        if (c == 1) {
            int64_t id;
            if ((rc = t2__store_insert_trial_row(st, v[0], &id))) return rc;
        } else {
            char **sql = &st->trials_sql[c - 1];
            if (!*sql && !(*sql = rows_sql_for(INSERT_TRIALS, (int)c, TRIAL_PARAMS, "")))
                return t2_seterr(T2_ENOMEM, "store: out of memory");
            int64_t blas[T2__STORE_TRIAL_ROWS] = {0};
            const char *state[T2__STORE_TRIAL_ROWS];
            if ((rc = t2__store_write_begin(st))) return rc;
            for (size_t i = 0; i < c; i++) {
                if (v[i]->id <= 0 || v[i]->ordinal < 0 || v[i]->experiment_id != v[0]->experiment_id)
                    return t2_seterr(T2_EINVAL, "store: insert_trial_rows: rows need their ids, ordinals, one experiment");
                if (!(state[i] = t2__trial_state_name(v[i]->state)))
                    return t2_seterr(T2_EINVAL, "store: trial %lld: bad state %d", (long long)v[i]->id, v[i]->state);
                if (v[i]->blas && (rc = blas_line_id(st, v[i]->blas, &blas[i]))) return rc;
            }
            sqlite3_stmt *s;
            if ((rc = t2__store_stmt(st, *sql, &s))) return rc;
            int b = 0;
            for (size_t i = 0; i < c && !b; i++) b = bind_trial_row(s, (int)i * TRIAL_PARAMS, v[i], state[i], blas[i]);
            if ((rc = bind_rc(st, b)) || (rc = t2__store_exec_stmt(st, s, "create trials")) ||
                (rc = count_trials(st, v[0]->experiment_id, c)))
                return rc;
            for (size_t i = 0; i < c; i++)
                if ((rc = add_experiment_blas(st, v[i]->experiment_id, blas[i]))) return rc;
            for (size_t i = 0; i < c; i++)
                if ((rc = t2__store_write_done(st))) return rc;
        }
        v += c;
        n -= c;
    }
    return T2_OK;
}

/* Every combination of fields in one statement: ?2 is the T2__TU_* mask and each column keeps
 * its value unless its bit is set. SET expressions see the row's old values, which the VALIDATION
 * case relies on. Used when a store has met more masks than update_sql holds. */
static const char SQL_UPDATE_TRIAL[] =
    "UPDATE trials SET"
    " state = CASE WHEN ?2 & 1 THEN ?3 ELSE state END,"
    " restarts = CASE WHEN ?2 & 2 THEN ?4 ELSE restarts END,"
    " batches_trained = CASE WHEN ?2 & 4 THEN ?5 ELSE batches_trained END,"
    " target_length_batches = CASE WHEN ?2 & 8 THEN ?6 ELSE target_length_batches END,"
    " best_validation = CASE"
    "  WHEN ?2 & 64 AND ?9 IS NOT NULL THEN CASE"
    "   WHEN best_validation IS NULL THEN ?9"
    "   WHEN (SELECT smaller_is_better FROM experiments WHERE experiments.id = trials.experiment_id)"
    "    THEN min(best_validation, ?9)"
    "   ELSE max(best_validation, ?9) END"
    "  WHEN ?2 & 16 THEN ?7 ELSE best_validation END,"
    " latest_validation = CASE WHEN ?2 & 64 THEN ?9 WHEN ?2 & 32 THEN ?8"
    "  ELSE latest_validation END,"
    " error = CASE WHEN ?2 & 128 THEN ?10 ELSE error END,"
    " log_path = CASE WHEN ?2 & 256 THEN ?11 ELSE log_path END,"
    " started_at = CASE WHEN ?2 & 512 THEN ?12"
    "  WHEN ?2 & 1 AND ?3 = 'RUNNING' THEN coalesce(started_at, ?14) ELSE started_at END,"
    " ended_at = CASE WHEN ?2 & 1024 THEN ?13"
    "  WHEN ?2 & 1 THEN CASE WHEN (?3 = 'COMPLETED' OR ?3 = 'ERRORED' OR ?3 = 'CANCELED') THEN ?14 END"
    "  ELSE ended_at END"
    " WHERE id = ?1";

/* The statement for one mask: only the columns it sets, so an update of the state or the batch
 * count leaves the indexes on best_validation and blas alone. SQLite maintains every index whose
 * column a statement assigns, whatever the value, so the one-for-all statement rewrote both on
 * every update: most of the controller's store time in a search of short trials. The same
 * parameter numbers as SQL_UPDATE_TRIAL, and the same meaning for each mask. */
/* Both update builders below: SET appends one assignment to sql; the four plain columns every
 * update may set; the statement's end (a row with no field must still be there) as a malloc'd copy. */
#define SET(text) (strcat(sql, sep), strcat(sql, text), sep = ", ")
static void set_plain(char *sql, const char **psep, unsigned m)
{
    const char *sep = *psep;
    if (m & T2__TU_STATE) SET("state = ?3");
    if (m & T2__TU_RESTARTS) SET("restarts = ?4");
    if (m & T2__TU_BATCHES) SET("batches_trained = ?5");
    if (m & T2__TU_TARGET) SET("target_length_batches = ?6");
    *psep = sep;
}

static char *finish_sql(char *sql, const char *sep)
{
    if (!strcmp(sep, " ")) strcat(sql, " id = id");
    strcat(sql, " WHERE id = ?1");
    char *p = malloc(strlen(sql) + 1);
    return p ? strcpy(p, sql) : NULL;
}

static char *update_sql_for(unsigned m)
{
    char sql[1400] = "UPDATE trials SET";
    const char *sep = " ";
    set_plain(sql, &sep, m);
    if (m & T2__TU_VALIDATION) {
        SET("best_validation = CASE WHEN ?9 IS NOT NULL THEN CASE"
            " WHEN best_validation IS NULL THEN ?9"
            " WHEN (SELECT smaller_is_better FROM experiments WHERE experiments.id = trials.experiment_id)"
            " THEN min(best_validation, ?9) ELSE max(best_validation, ?9) END");
        strcat(sql, m & T2__TU_BEST ? " ELSE ?7 END" : " ELSE best_validation END");
        SET("latest_validation = ?9");
    } else {
        if (m & T2__TU_BEST) SET("best_validation = ?7");
        if (m & T2__TU_LATEST) SET("latest_validation = ?8");
    }
    if (m & T2__TU_ERROR) SET("error = ?10");
    if (m & T2__TU_LOG_PATH) SET("log_path = ?11");
    if (m & T2__TU_STARTED) SET("started_at = ?12");
    else if (m & T2__TU_STATE) SET("started_at = CASE WHEN ?3 = 'RUNNING' THEN coalesce(started_at, ?14) ELSE started_at END");
    if (m & T2__TU_ENDED) SET("ended_at = ?13");
    else if (m & T2__TU_STATE) SET("ended_at = CASE WHEN (?3 = 'COMPLETED' OR ?3 = 'ERRORED' OR ?3 = 'CANCELED') THEN ?14 END");
    return finish_sql(sql, sep);
}

/* The SQL a folded row's update (store_fold.c) needs for the columns `set`: each one it assigns,
 * with update_sql_for's parameter numbers, and ?15 blas_id, ?16 hosts, ?17 and ?18 the parent. */
static char *row_sql_for(unsigned m)
{
    char sql[1400] = "UPDATE trials SET";
    const char *sep = " ";
    set_plain(sql, &sep, m);
    if (m & T2__TU_BEST) SET("best_validation = ?7");
    else if (m & T2__FOLD_BEST_OF_OLD)
        SET("best_validation = CASE WHEN best_validation IS NULL THEN ?7"
            " WHEN (SELECT smaller_is_better FROM experiments WHERE experiments.id = trials.experiment_id)"
            " THEN min(best_validation, ?7) ELSE max(best_validation, ?7) END");
    if (m & T2__TU_LATEST) SET("latest_validation = ?8");
    if (m & T2__TU_ERROR) SET("error = ?10");
    if (m & T2__TU_LOG_PATH) SET("log_path = ?11");
    if (m & T2__TU_STARTED) SET("started_at = ?12");
    else if (m & T2__FOLD_STARTED_COALESCE) SET("started_at = coalesce(started_at, ?12)");
    if (m & T2__TU_ENDED) SET("ended_at = ?13");
    if (m & T2__FOLD_BLAS) SET("blas_id = ?15");
    if (m & T2__FOLD_HOSTS) SET("hosts = ?16");
    if (m & T2__FOLD_PARENT) SET("parent_trial_id = ?17, parent_checkpoint = ?18");
    return finish_sql(sql, sep);
}
#undef SET

/* Keys of update_sql: a mask of update_sql_for, or a row's set for row_sql_for with this bit. */
#define ROW_KEY (1u << 20)

/* The SQL for key, made once per store; NULL with *fresh = 1 past the table's room (the caller
 * makes it and prepares it once), or NULL: ENOMEM. */
static const char *update_sql(t2__store *st, unsigned key, int *fresh)
{
    *fresh = 0;
    for (int i = 0; i < st->nupdate_sql; i++)
        if (st->update_sql[i].mask == key) return st->update_sql[i].sql;
    if (st->nupdate_sql == T2__STORE_UPDATE_SQLS) {
        *fresh = 1;
        return NULL;
    }
    char *sql = key & ROW_KEY ? row_sql_for(key & ~ROW_KEY) : update_sql_for(key);
    if (!sql) return NULL;
    st->update_sql[st->nupdate_sql].mask = key;
    st->update_sql[st->nupdate_sql++].sql = sql;
    return sql;
}

int t2__store_update_trial_row(t2__store *st, const t2__fold_row *r)
{
    const char *state = NULL;
    if ((r->set & T2__TU_STATE) && !(state = t2__trial_state_name(r->state)))
        return t2_seterr(T2_EINVAL, "store: trial %lld: bad state %d", (long long)r->id, r->state);
    int rc, fresh;
    int64_t blas = 0;
    const char *sql = update_sql(st, r->set | ROW_KEY, &fresh);
    char *own = fresh ? row_sql_for(r->set) : NULL;
    if (!sql && !own) return t2_seterr(T2_ENOMEM, "store: out of memory");
    sqlite3_stmt *s = NULL;
    if ((rc = t2__store_write_begin(st)) || ((r->set & T2__FOLD_BLAS) && (rc = blas_line_id(st, r->blas, &blas))) ||
        (rc = own ? t2__store_prepare(st, own, &s) : t2__store_stmt(st, sql, &s))) {
        free(own);
        return rc;
    }
    int np = sqlite3_bind_parameter_count(s);
#define BIND(i, call) (b ? b : (i) <= np ? (call) : SQLITE_OK)
    int b = sqlite3_bind_int64(s, 1, r->id);
    b = BIND(3, TEXT(s, 3, state));
    b = BIND(4, sqlite3_bind_int(s, 4, r->restarts));
    b = BIND(5, sqlite3_bind_int64(s, 5, r->batches));
    b = BIND(6, r->target > 0 ? sqlite3_bind_int64(s, 6, r->target) : sqlite3_bind_null(s, 6));
    b = BIND(7, t2__store_bind_real(s, 7, r->best));
    b = BIND(8, t2__store_bind_real(s, 8, r->latest));
    b = BIND(10, TEXT(s, 10, r->error));
    b = BIND(11, TEXT(s, 11, r->log_path));
    b = BIND(12, t2__store_bind_real(s, 12, r->started_at));
    b = BIND(13, t2__store_bind_real(s, 13, r->ended_at));
    b = BIND(15, blas ? sqlite3_bind_int64(s, 15, blas) : sqlite3_bind_null(s, 15));
    b = BIND(16, TEXT(s, 16, r->hosts));
    b = BIND(17, r->parent_id > 0 ? sqlite3_bind_int64(s, 17, r->parent_id) : sqlite3_bind_null(s, 17));
    b = BIND(18, TEXT(s, 18, r->parent_checkpoint));
#undef BIND
    rc = bind_rc(st, b);
    if (!rc) rc = exec_one(st, s, "update trial", "trial", r->id);
    if (own) {
        sqlite3_finalize(s);
        free(own);
    }
    return rc;
}

int t2__store_update_trial(t2__store *st, int64_t trial_id, const t2__trial_update *u)
{
    if (!st || !u) return t2_seterr(T2_EINVAL, "store: update_trial: NULL argument");
    const char *state = NULL;
    if ((u->set & T2__TU_STATE) && !(state = t2__trial_state_name(u->state)))
        return t2_seterr(T2_EINVAL, "store: update_trial: bad state %d", u->state);
    if (u->set >= (T2__TU_ENDED << 1))
        return t2_seterr(T2_EINVAL, "store: update_trial: unknown field bits 0x%x", u->set);
    if (t2__store_queues(st)) {
        t2__store_rec r = {.kind = T2__REC_UPDATE_TRIAL, .id = trial_id, .u = *u};
        return t2__store_async_put(st, &r, u->set & T2__TU_ERROR ? u->error : NULL,
                                   u->set & T2__TU_LOG_PATH ? u->log_path : NULL);
    }
    int fresh;
    const char *sql = update_sql(st, u->set, &fresh);
    if (fresh) sql = SQL_UPDATE_TRIAL;
    if (!sql) return t2_seterr(T2_ENOMEM, "store: out of memory");
    int rc;
    sqlite3_stmt *s;
    if ((rc = t2__store_write_begin(st)) || (rc = t2__store_stmt(st, sql, &s))) return rc;
    /* A mask's statement names only some parameters: each is bound only up to the last it has
     * (binding past it is SQLITE_RANGE; one skipped below it is harmless). */
    int np = sqlite3_bind_parameter_count(s);
#define BIND(i, call) (b ? b : (i) <= np ? (call) : SQLITE_OK)
    int b = sqlite3_bind_int64(s, 1, trial_id);
    b = BIND(2, sqlite3_bind_int(s, 2, (int)u->set));
    b = BIND(3, TEXT(s, 3, state));
    b = BIND(4, sqlite3_bind_int(s, 4, u->restarts));
    b = BIND(5, sqlite3_bind_int64(s, 5, u->batches_trained));
    b = BIND(6, u->target_length_batches > 0 ? sqlite3_bind_int64(s, 6, u->target_length_batches)
                                             : sqlite3_bind_null(s, 6));
    b = BIND(7, t2__store_bind_real(s, 7, u->best_validation));
    b = BIND(8, t2__store_bind_real(s, 8, u->latest_validation));
    b = BIND(9, t2__store_bind_real(s, 9, u->validation));
    b = BIND(10, TEXT(s, 10, u->error));
    b = BIND(11, TEXT(s, 11, u->log_path));
    b = BIND(12, t2__store_bind_real(s, 12, u->started_at));
    b = BIND(13, t2__store_bind_real(s, 13, u->ended_at));
    b = BIND(14, sqlite3_bind_double(s, 14, t2__store_now(st)));
#undef BIND
    if ((rc = bind_rc(st, b))) return rc;
    return exec_one(st, s, "update trial", "trial", trial_id);
}

static const char SQL_BLAS_LINE_ADD[] = "INSERT OR IGNORE INTO blas_lines (line) VALUES (?1)";
static const char SQL_BLAS_LINE_ID[] = "SELECT id FROM blas_lines WHERE line = ?1";
static const char SQL_SET_TRIAL_BLAS[] = "UPDATE trials SET blas_id = ?2 WHERE id = ?1";
static const char SQL_SET_TRIAL_HOSTS[] = "UPDATE trials SET hosts = ?2 WHERE id = ?1";

/* One text column of one trial. */
static int set_trial_text(t2__store *st, const char *sql, int64_t trial_id, const char *value, const char *what)
{
    int rc;
    sqlite3_stmt *s;
    if ((rc = t2__store_write_begin(st)) || (rc = t2__store_stmt(st, sql, &s))) return rc;
    int b = sqlite3_bind_int64(s, 1, trial_id);
    b = b ? b : TEXT(s, 2, value);
    if ((rc = bind_rc(st, b))) return rc;
    return exec_one(st, s, what, "trial", trial_id);
}

static const char SQL_SET_TRIAL_PARENT[] =
    "UPDATE trials SET parent_trial_id = ?2, parent_checkpoint = ?3 WHERE id = ?1";

int t2__store_set_trial_parent(t2__store *st, int64_t trial_id, int64_t parent_id, const char *uuid)
{
    if (!st || !uuid || parent_id <= 0) return t2_seterr(T2_EINVAL, "store: set trial parent: bad argument");
    if (t2__store_queues(st)) {
        t2__store_rec r = {.kind = T2__REC_TRIAL_PARENT, .id = trial_id, .i = {parent_id}};
        return t2__store_async_put(st, &r, uuid, NULL);
    }
    int rc;
    sqlite3_stmt *s;
    if ((rc = t2__store_write_begin(st)) || (rc = t2__store_stmt(st, SQL_SET_TRIAL_PARENT, &s))) return rc;
    int b = sqlite3_bind_int64(s, 1, trial_id);
    b = b ? b : sqlite3_bind_int64(s, 2, parent_id);
    b = b ? b : TEXT(s, 3, uuid);
    if ((rc = bind_rc(st, b))) return rc;
    return exec_one(st, s, "set trial parent", "trial", trial_id);
}

/* blas_lines' id of line, the line added if new. Every trial on a machine reports the same line,
 * so the last one is remembered, for the rest of the transaction only: a rollback would take a
 * line added in it away again. */
static int blas_line_id(t2__store *st, const char *line, int64_t *id)
{
    if (st->blas_line && st->blas_gen == st->tx_gen && strcmp(st->blas_line, line) == 0) {
        *id = st->blas_id;
        return 0;
    }
    int rc;
    sqlite3_stmt *s;
    if ((rc = t2__store_stmt(st, SQL_BLAS_LINE_ADD, &s))) return rc;
    if ((rc = bind_rc(st, TEXT(s, 1, line))) || (rc = t2__store_exec_stmt(st, s, "add BLAS line"))) return rc;
    if ((rc = t2__store_stmt(st, SQL_BLAS_LINE_ID, &s))) return rc;
    if ((rc = bind_rc(st, TEXT(s, 1, line)))) return rc;
    int step = sqlite3_step(s);
    if (step != SQLITE_ROW) {
        rc = step == SQLITE_DONE ? t2_seterr(T2_EIO, "store %s: BLAS line added but not found", st->path)
                                 : t2__store_err(st, step, "find BLAS line");
        sqlite3_reset(s);
        return rc;
    }
    *id = sqlite3_column_int64(s, 0);
    sqlite3_reset(s);
    size_t n = strlen(line) + 1;
    char *copy = malloc(n);
    if (!copy) return t2_seterr(T2_ENOMEM, "store %s: out of memory", st->path);
    memcpy(copy, line, n);
    free(st->blas_line);
    st->blas_line = copy;
    st->blas_id = *id;
    st->blas_gen = st->tx_gen;
    return 0;
}

int t2__store_set_trial_blas(t2__store *st, int64_t trial_id, const char *blas)
{
    if (!st || !blas) return t2_seterr(T2_EINVAL, "store: set trial blas: NULL argument");
    if (t2__store_queues(st)) {
        t2__store_rec r = {.kind = T2__REC_TRIAL_BLAS, .id = trial_id};
        return t2__store_async_put(st, &r, blas, NULL);
    }
    int rc;
    int64_t line = 0;
    sqlite3_stmt *s;
    if ((rc = t2__store_write_begin(st)) || (rc = blas_line_id(st, blas, &line)) ||
        (rc = t2__store_stmt(st, SQL_SET_TRIAL_BLAS, &s)))
        return rc;
    int b = sqlite3_bind_int64(s, 1, trial_id);
    b = b ? b : sqlite3_bind_int64(s, 2, line);
    if ((rc = bind_rc(st, b))) return rc;
    return exec_one(st, s, "set trial blas", "trial", trial_id);
}

int t2__store_set_trial_hosts(t2__store *st, int64_t trial_id, const char *hosts)
{
    if (!st || !hosts) return t2_seterr(T2_EINVAL, "store: set trial hosts: NULL argument");
    if (t2__store_queues(st)) {
        t2__store_rec r = {.kind = T2__REC_TRIAL_HOSTS, .id = trial_id};
        return t2__store_async_put(st, &r, hosts, NULL);
    }
    return set_trial_text(st, SQL_SET_TRIAL_HOSTS, trial_id, hosts, "set trial hosts");
}

int t2__store_add_metric(t2__store *st, int64_t trial_id, int kind, int64_t batches, double epoch,
                         const char *name, double value)
{
    const char *k = t2__metric_kind_name(kind);
    if (!st || !k || !name || !*name)
        return t2_seterr(T2_EINVAL, "store: add_metric: needs a store, a kind and a name");
    t2__store_rec r = {.kind = T2__REC_METRIC, .id = trial_id, .k = kind, .i = {batches}, .d = {epoch, value}, .s1 = name};
    if (t2__store_queues(st)) return t2__store_async_put(st, &r, name, NULL);
    r.now = t2__store_now(st);
    const t2__store_rec *v = &r;
    return t2__store_insert_recs(st, &t2__metric_rows, &v, 1);
}

int t2__store_add_timing(t2__store *st, int64_t trial_id, int64_t batches, double epoch, const t2__store_timing *t)
{
    if (!st || !t) return t2_seterr(T2_EINVAL, "store: add_timing: NULL argument");
    t2__store_rec r = {.kind = T2__REC_TIMING, .id = trial_id, .i = {batches},
                       .d = {epoch, t->batches_per_s, t->samples_per_s, t->data_s, t->compute_s, t->comm_s}};
    if (t2__store_queues(st)) return t2__store_async_put(st, &r, NULL, NULL);
    r.now = t2__store_now(st);
    const t2__store_rec *v = &r;
    return t2__store_insert_recs(st, &t2__timing_rows, &v, 1);
}

int t2__store_insert_recs(t2__store *st, const t2__rows_insert *ins, const t2__store_rec *const *v, size_t n)
{
    char **sql = st->rows_sql[ins->cache];
    while (n > 0) {
        int size = T2__STORE_ROW_SIZES - 1; /* 1 << size rows: the largest that n fills */
        while ((size_t)1 << size > n) size--;
        size_t c = (size_t)1 << size;
        int rc;
        if (!sql[size] && !(sql[size] = rows_sql_for(ins->head, (int)c, ins->per, ins->tail)))
            return t2_seterr(T2_ENOMEM, "store: out of memory");
        sqlite3_stmt *s;
        if ((rc = t2__store_write_begin(st)) || (rc = t2__store_stmt(st, sql[size], &s))) return rc;
        int b = 0;
        for (size_t i = 0; i < c && !b; i++) b = ins->bind(s, (int)i * ins->per, v[i]);
        if ((rc = bind_rc(st, b)) || (rc = t2__store_exec_stmt(st, s, ins->what))) return rc;
        for (size_t i = 0; i < c; i++)
            if ((rc = t2__store_write_done(st))) return rc;
        v += c;
        n -= c;
    }
    return T2_OK;
}

/* A metric record's row (add_metric checked its kind and name before queueing it). */
static int bind_metric(sqlite3_stmt *s, int o, const t2__store_rec *r)
{
    const char *k = t2__metric_kind_name(r->k);
    if (!k || !r->s1 || !*r->s1) return SQLITE_MISUSE;
    int b = sqlite3_bind_int64(s, o + 1, r->id);
    b = b ? b : TEXT(s, o + 2, k);
    b = b ? b : sqlite3_bind_int64(s, o + 3, r->i[0]);
    b = b ? b : t2__store_bind_real(s, o + 4, r->d[0]);
    b = b ? b : TEXT(s, o + 5, r->s1);
    b = b ? b : t2__store_bind_real(s, o + 6, r->d[1]);
    return b ? b : sqlite3_bind_double(s, o + 7, r->now);
}

/* ON CONFLICT DO NOTHING names the one conflict we expect (the step already recorded); unlike
 * INSERT OR IGNORE it still reports any other broken constraint. */
const t2__rows_insert t2__metric_rows = {
    T2__REC_METRIC, T2__ROWS_METRICS, "INSERT INTO metrics (trial_id, kind, batches, epoch, name, value, time) VALUES",
    " ON CONFLICT (trial_id, kind, batches, name) DO NOTHING", 7, bind_metric, "add metrics"};

/* A timing record's row: the report's step, epoch and time, then its five timings. */
static int bind_timing(sqlite3_stmt *s, int o, const t2__store_rec *r)
{
    int b = sqlite3_bind_int64(s, o + 1, r->id);
    b = b ? b : TEXT(s, o + 2, "training");
    b = b ? b : sqlite3_bind_int64(s, o + 3, r->i[0]);
    b = b ? b : t2__store_bind_real(s, o + 4, r->d[0]);
    b = b ? b : sqlite3_bind_double(s, o + 5, r->now);
    for (int i = 1; i <= 5 && !b; i++) b = t2__store_bind_real(s, o + 5 + i, r->d[i]);
    return b;
}

const t2__rows_insert t2__timing_rows = {
    T2__REC_TIMING, T2__ROWS_TIMINGS, "INSERT INTO report_timings (trial_id, kind, batches, epoch, time, batches_per_s, samples_per_s, data_s,"
    " compute_s, comm_s) VALUES",
    " ON CONFLICT (trial_id, kind, batches) DO NOTHING", 10, bind_timing, "add report timings"};

/* The experiment id is copied from the trial so GC can select by experiment without a join;
 * an unknown trial inserts nothing, which exec_one reports. */
static const char SQL_ADD_CHECKPOINT[] =
    "INSERT INTO checkpoints (uuid, trial_id, experiment_id, batches, epoch, metric, size_bytes,"
    " path, created_at)"
    " SELECT ?1, id, experiment_id, ?3, ?4, ?5, ?6, ?7, ?8 FROM trials WHERE id = ?2";

int t2__store_add_checkpoint(t2__store *st, const t2__checkpoint_new *c)
{
    if (!st || !c || !c->uuid || !*c->uuid || !c->path)
        return t2_seterr(T2_EINVAL, "store: add_checkpoint: needs a uuid and a path");
    int rc;
    sqlite3_stmt *s;
    if ((rc = t2__store_write_begin(st)) || (rc = t2__store_stmt(st, SQL_ADD_CHECKPOINT, &s)))
        return rc;
    int b = TEXT(s, 1, c->uuid);
    b = b ? b : sqlite3_bind_int64(s, 2, c->trial_id);
    b = b ? b : sqlite3_bind_int64(s, 3, c->batches);
    b = b ? b : t2__store_bind_real(s, 4, c->epoch);
    b = b ? b : t2__store_bind_real(s, 5, c->metric);
    b = b ? b : sqlite3_bind_int64(s, 6, c->size_bytes);
    b = b ? b : TEXT(s, 7, c->path);
    b = b ? b : sqlite3_bind_double(s, 8, t2__store_now(st));
    if ((rc = bind_rc(st, b))) return rc;
    return exec_one(st, s, "add checkpoint", "trial", c->trial_id);
}

static const char SQL_CKPT_DELETED[] =
    "UPDATE checkpoints SET state = 'DELETED' WHERE uuid = ?1";

int t2__store_mark_checkpoint_deleted(t2__store *st, const char *uuid)
{
    if (!st || !uuid) return t2_seterr(T2_EINVAL, "store: mark_checkpoint_deleted: NULL argument");
    int rc;
    sqlite3_stmt *s;
    if ((rc = t2__store_write_begin(st)) || (rc = t2__store_stmt(st, SQL_CKPT_DELETED, &s)))
        return rc;
    if ((rc = bind_rc(st, TEXT(s, 1, uuid)))) return rc;
    if ((rc = t2__store_exec_stmt(st, s, "mark checkpoint deleted"))) return rc;
    if (sqlite3_changes(st->db) != 1)
        return t2_seterr(T2_ENOTFOUND, "store %s: no checkpoint %s", st->path, uuid);
    return t2__store_write_done(st);
}

static const char SQL_SAVE_SEARCHER[] =
    "INSERT INTO searcher_state (experiment_id, events, state, updated_at) VALUES (?1, ?2, ?3, ?4)"
    " ON CONFLICT (experiment_id) DO UPDATE SET events = excluded.events,"
    " state = excluded.state, updated_at = excluded.updated_at";

int t2__store_save_searcher_state(t2__store *st, int64_t experiment_id, int64_t events,
                                  const char *state_json)
{
    if (!st || !state_json)
        return t2_seterr(T2_EINVAL, "store: save_searcher_state: NULL argument");
    if (t2__store_queues(st)) {
        t2__store_rec r = {.kind = T2__REC_SEARCHER, .id = experiment_id, .i = {events}};
        return t2__store_async_put(st, &r, state_json, NULL);
    }
    int rc;
    sqlite3_stmt *s;
    if ((rc = t2__store_write_begin(st)) || (rc = t2__store_stmt(st, SQL_SAVE_SEARCHER, &s)))
        return rc;
    int b = sqlite3_bind_int64(s, 1, experiment_id);
    b = b ? b : sqlite3_bind_int64(s, 2, events);
    b = b ? b : TEXT(s, 3, state_json);
    b = b ? b : sqlite3_bind_double(s, 4, t2__store_now(st));
    if ((rc = bind_rc(st, b))) return rc;
    if ((rc = t2__store_exec_stmt(st, s, "save searcher state"))) return rc;
    return t2__store_write_done(st);
}
