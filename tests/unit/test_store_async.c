/* test_store_async.c — the store's writer thread (store_async.c) leaves the same rows as writing on
 * the caller's thread, hands out the same trial ids, keeps the searcher snapshot in the commit of
 * the rows it describes, reports a queued write's error on the next call, and shares the store
 * with another process writing at the same time. */
#include "test_store_util.h" /* first: it sets the feature macros */
#include "store/store_internal.h" /* t2__store_async_wait */
#include <signal.h>
#include <sys/wait.h>

#define N 300

static double now_s = 1000;

static int64_t new_experiment(t2__store *st)
{
    t2__experiment_new e = {.name = "async", .config_yaml = "name: async\n", .searcher_name = "random",
                            .metric = "loss", .trial_object = "/t.so"};
    int64_t id = 0;
    CHECK_OK(t2__store_create_experiment(st, &e, &id));
    return id;
}

/* A fresh store with one experiment and one trial (*id), committed. */
static t2__store *store_with_trial(char *dir, size_t dlen, char *home, size_t hlen, int64_t *id)
{
    scratch_home(dir, dlen, home, hlen);
    t2__store *st = NULL;
    CHECK_OK(t2__store_open(home, 0, &st));
    if (!st) exit(1);
    CHECK_OK(t2__store_create_trial(st, new_experiment(st), 1, "{}", 1, 0, id));
    CHECK_OK(t2__store_flush(st, 1));
    return st;
}

/* The hook writes what the snapshot would: the trial count the controller knows. */
static int64_t known_trials;
static int save_snapshot(void *ud)
{
    t2__store *st = ud;
    char json[64];
    snprintf(json, sizeof json, "{\"trials\":%lld}", (long long)known_trials);
    return t2__store_save_searcher_state(st, 2, known_trials, json);
}

#define DO(call)                                                                                  \
    do {                                                                                          \
        if ((rc = (call))) {                                                                      \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, t2_errmsg());            \
            return rc;                                                                            \
        }                                                                                         \
    } while (0)

/* Trials made ahead of their runs, as a searcher's queue is, in an experiment where smaller is
 * better: their rows exist before the batches that update them, which fold the updates of a row
 * into one statement (or stop folding where two validations meet). Every field the updates set,
 * restarts, explicit times, several validations, a row whose first write is not an update. */
static int ahead(t2__store *st)
{
    enum { M = 90 };
    int rc = 0;
    t2__experiment_new e = {.name = "ahead", .config_yaml = "name: ahead\n", .searcher_name = "random",
                            .metric = "loss", .trial_object = "/t.so", .smaller_is_better = 1};
    int64_t exp = 0, ids[M];
    DO(t2__store_create_experiment(st, &e, &exp));
    t2__store_set_flush_policy(st, 100000, 1000000); /* long batches: many writes of a row in one */
    for (int j = 0; j < M; j++) {
        now_s = 5000 + j;
        /* Given ordinals, as the controller gives them, go as inserts of several rows; one left to
         * SQLite (the next free) runs at its place between them. */
        DO(t2__store_create_trial(st, exp, j % 20 == 7 ? -1 : j, "{\"a\":1}", j, 0, &ids[j]));
    }
    int64_t n = 0;
    DO(t2__store_query_int(st, "SELECT count(*) FROM trials", &n)); /* the writer is idle here */
    for (int j = 0; j < M; j++) {
        int64_t id = ids[j];
        now_s = 6000 + j;
        t2__trial_update u = {.set = T2__TU_STATE, .state = T2__TRIAL_RUNNING};
        if (j % 8 == 3) DO(t2__store_set_trial_hosts(st, id, "c:2"));
        DO(t2__store_update_trial(st, id, &u));
        if (j % 3 == 0) {
            now_s += 0.25;
            u = (t2__trial_update){.set = T2__TU_STATE | T2__TU_RESTARTS, .state = T2__TRIAL_PAUSED, .restarts = 1};
            DO(t2__store_update_trial(st, id, &u));
            now_s += 0.25;
            u = (t2__trial_update){.set = T2__TU_STATE, .state = T2__TRIAL_RUNNING};
            DO(t2__store_update_trial(st, id, &u));
        }
        DO(t2__store_set_trial_blas(st, id, j % 11 == 5 ? "BLAS: third" : "BLAS: OpenBLAS 0.3.21, core X"));
        u = (t2__trial_update){.set = T2__TU_VALIDATION | T2__TU_BATCHES, .batches_trained = 1, .validation = 1.0 / (j + 1)};
        DO(t2__store_update_trial(st, id, &u));
        DO(t2__store_add_metric(st, id, T2__METRIC_VALIDATION, 1, NAN, "loss", 1.0 / (j + 1)));
        if (j % 10 == 9) DO(t2__store_query_int(st, "SELECT count(*) FROM trials", &n)); /* best is old */
        /* A second validation (better or worse) stops the fold of a row the batch did not make. */
        u.batches_trained = 2;
        u.validation = j % 3 ? 0.5 / (j + 1) : 2.0 / (j + 1);
        if (j % 4) DO(t2__store_update_trial(st, id, &u));
        if (j % 5 == 0) {
            u = (t2__trial_update){.set = T2__TU_VALIDATION | T2__TU_BEST, .validation = NAN, .best_validation = 7};
            DO(t2__store_update_trial(st, id, &u));
        }
        if (j % 7 == 0) {
            u = (t2__trial_update){.set = T2__TU_TARGET | T2__TU_BEST | T2__TU_LATEST, .target_length_batches = 500,
                                   .best_validation = 0.125, .latest_validation = j % 14 ? 0.375 : NAN};
            DO(t2__store_update_trial(st, id, &u));
            u = (t2__trial_update){.set = T2__TU_VALIDATION, .validation = 0.0625};
            if (j % 14 == 0) DO(t2__store_update_trial(st, id, &u));
        }
        if (j % 4 == 0) {
            u = (t2__trial_update){.set = T2__TU_STARTED | T2__TU_ENDED, .started_at = j % 8 ? 123 : NAN, .ended_at = 456};
            DO(t2__store_update_trial(st, id, &u));
            if (j % 8 == 0) {
                /* Running again: ended_at goes, started_at (NULL) is set; the trial stays so. */
                u = (t2__trial_update){.set = T2__TU_STATE, .state = T2__TRIAL_RUNNING};
                DO(t2__store_update_trial(st, id, &u));
                continue;
            }
            u = (t2__trial_update){.set = T2__TU_STATE, .state = T2__TRIAL_RUNNING};
            DO(t2__store_update_trial(st, id, &u)); /* the explicit started_at stays */
        }
        if (j % 4 == 2) {
            u = (t2__trial_update){.set = T2__TU_STATE, .state = T2__TRIAL_RUNNING};
            DO(t2__store_update_trial(st, id, &u)); /* started_at stays the first */
        }
        char log[64];
        snprintf(log, sizeof log, "/w/trial-%d.log", j);
        u = (t2__trial_update){.set = T2__TU_LOG_PATH, .log_path = log};
        DO(t2__store_update_trial(st, id, &u));
        now_s += 0.5;
        u = (t2__trial_update){.set = T2__TU_STATE | (j % 6 == 5 ? T2__TU_ERROR : 0),
                               .state = j % 6 == 5 ? T2__TRIAL_CANCELED : T2__TRIAL_COMPLETED,
                               .error = "stopped"};
        DO(t2__store_update_trial(st, id, &u));
        if (j % 13 == 6) DO(t2__store_set_trial_parent(st, id, ids[j - 1], "4567-uuid"));
        if (j == M / 2) DO(t2__store_query_int(st, "SELECT count(*) FROM trials", &n)); /* a hand-over mid-way */
    }
    /* Made and run within one batch: two validations meet in the row the insert writes. */
    for (int j = 0; j < 12; j++) {
        int64_t id = 0;
        now_s = 7000 + j;
        DO(t2__store_create_trial(st, exp, -1, "{\"b\":2}", j, 0, &id));
        t2__trial_update u = {.set = T2__TU_STATE, .state = T2__TRIAL_RUNNING};
        DO(t2__store_update_trial(st, id, &u));
        for (int v = 0; v < 3; v++) {
            u = (t2__trial_update){.set = T2__TU_VALIDATION | T2__TU_BATCHES, .batches_trained = v + 1,
                                   .validation = (double)((j + v) % 3) / (j + 1)};
            DO(t2__store_update_trial(st, id, &u));
        }
        u = (t2__trial_update){.set = T2__TU_STATE, .state = T2__TRIAL_COMPLETED};
        DO(t2__store_update_trial(st, id, &u));
    }
    t2__store_set_flush_policy(st, 50, 1000000);
    return 0;
}

/* Every kind of hot write, reads and flushes between them, an explicit transaction and a
 * checkpoint row (both run on the caller's thread). Returns the first failing call's code. */
static int workload(t2__store *st, int64_t exp, int64_t *ids)
{
    int rc = 0;
    t2__store_set_precommit(st, save_snapshot, st);
    for (int k = 0; k < N; k++) {
        now_s = 1000 + k;
        char hp[64], err[64];
        snprintf(hp, sizeof hp, "{\"k\":%d}", k);
        int64_t id = 0;
        t2__store_group(st, 1);
        DO(t2__store_create_trial(st, exp, k + 1, hp, k, k % 3 ? 0 : 100, &id));
        ids[k] = id;
        known_trials = k + 1;
        t2__store_group(st, 0);
        t2__trial_update u = {.set = T2__TU_LOG_PATH, .log_path = "/w/trial.log"};
        DO(t2__store_update_trial(st, id, &u));
        DO(t2__store_add_log_segment(st, id, "/w/worker-0.log", (int64_t)k * 100));
        u = (t2__trial_update){.set = T2__TU_STATE, .state = T2__TRIAL_RUNNING};
        DO(t2__store_update_trial(st, id, &u));
        DO(t2__store_set_trial_blas(st, id, k % 50 == 7 ? "BLAS: other" : "BLAS: OpenBLAS 0.3.21, core X"));
        DO(t2__store_set_trial_hosts(st, id, k % 2 ? "a:1" : "b:1"));
        if (k > 0 && k % 40 == 0) DO(t2__store_set_trial_parent(st, id, ids[k - 1], "0123-uuid"));
        DO(t2__store_add_metric(st, id, T2__METRIC_TRAINING, 1, NAN, "loss", 1.0 / (k + 1)));
        DO(t2__store_add_metric(st, id, T2__METRIC_VALIDATION, 1, 0.5, "loss", 2.0 / (k + 1)));
        DO(t2__store_add_metric(st, id, T2__METRIC_TRAINING, 1, NAN, "batch_s", k * 1e-6));
        t2__store_timing tm = {1e3 + k, 3.2e4 + k, k % 3 ? 1e-6 * k : NAN, 2e-6, 0};
        DO(t2__store_add_timing(st, id, 1, k % 4 ? 0.25 : NAN, &tm));
        if (k % 7 == 0) DO(t2__store_set_experiment_best(st, exp, id, 2.0 / (k + 1)));
        snprintf(err, sizeof err, "boom %d", k);
        u = (t2__trial_update){.set = T2__TU_STATE | T2__TU_BATCHES | T2__TU_VALIDATION | (k % 5 ? 0 : T2__TU_ERROR),
                               .state = k % 5 ? T2__TRIAL_COMPLETED : T2__TRIAL_ERRORED,
                               .batches_trained = 1,
                               .validation = 2.0 / (k + 1),
                               .error = err};
        if (k % 9 == 4) {
            /* A second validation, worse then better under the experiment's max. */
            t2__trial_update v = {.set = T2__TU_VALIDATION | T2__TU_BATCHES, .batches_trained = 2,
                                  .validation = k % 2 ? 1.0 / (k + 1) : 3.0 / (k + 1)};
            DO(t2__store_update_trial(st, id, &v));
        }
        DO(t2__store_update_trial(st, id, &u));
        DO(t2__store_set_experiment_progress(st, exp, (double)k / N));
        if (k % 25 == 0) DO(t2__store_flush(st, 0));
        if (k % 60 == 30) {
            /* A read sees every write before it. */
            char sql[128];
            snprintf(sql, sizeof sql, "SELECT count(*) FROM trials WHERE experiment_id = %lld", (long long)exp);
            int64_t n = -1;
            DO(t2__store_query_int(st, sql, &n));
            CHECK(n == k + 1);
        }
        if (k % 90 == 89) DO(t2__store_flush(st, 1));
        if (k == 150) {
            DO(t2__store_begin(st));
            t2__checkpoint_new c = {.uuid = "ck-150", .trial_id = id, .batches = 1, .epoch = NAN, .metric = NAN,
                                    .size_bytes = 10, .path = "/ck/ck-150"};
            DO(t2__store_add_checkpoint(st, &c));
            DO(t2__store_add_metric(st, id, T2__METRIC_TRAINING, 2, NAN, "loss", 0.25));
            DO(t2__store_commit(st));
        }
    }
    DO(ahead(st));
    DO(t2__store_flush(st, 1));
    t2__store_set_precommit(st, NULL, NULL);
    return 0;
}
#undef DO

/* Every row of every table the writes touch, one line a row, in rowid order. */
static char *dump(t2__store *st)
{
    static const char *const tables[] = {"experiments", "trials", "metrics", "report_timings", "trial_log_segments", "blas_lines",
                                         "experiment_blas", "searcher_state", "checkpoints", "sqlite_sequence"};
    size_t cap = 1 << 22, len = 0;
    char *out = malloc(cap), *cols = malloc(4096), *sql = malloc(16384);
    out[0] = '\0';
    for (size_t t = 0; t < sizeof tables / sizeof *tables; t++) {
        snprintf(sql, 16384, "SELECT group_concat('quote(\"' || name || '\")', ' || '','' || ') FROM pragma_table_info('%s')",
                 tables[t]);
        if (t2__store_query_text(st, sql, cols, 4096)) {
            fprintf(stderr, "dump %s: %s\n", tables[t], t2_errmsg());
            check_failures++;
            continue;
        }
        snprintf(sql, 16384, "SELECT coalesce(group_concat(r, char(10)), '') FROM (SELECT %s AS r FROM %s ORDER BY 1)",
                 cols, tables[t]);
        len += (size_t)snprintf(out + len, cap - len, "== %s\n", tables[t]);
        if (t2__store_query_text(st, sql, out + len, cap - len)) {
            fprintf(stderr, "dump %s: %s\n", tables[t], t2_errmsg());
            check_failures++;
        }
        len += strlen(out + len);
        len += (size_t)snprintf(out + len, cap - len, "\n");
    }
    free(cols);
    free(sql);
    return out;
}

/* One store per mode; experiment 1 had 5 trials and was deleted, so AUTOINCREMENT's counter is
 * ahead of max(id): the first new trial is 6 either way. */
static char *run_mode(int async, int64_t *ids)
{
    char dir[512], home[600];
    scratch_home(dir, sizeof dir, home, sizeof home);
    t2__store *st = NULL;
    CHECK_OK(t2__store_open(home, 0, &st));
    if (!st) return strdup("");
    t2__store_set_clock(st, fixed_clock, &now_s);
    now_s = 1000;
    int64_t gone = new_experiment(st), tid;
    for (int k = 0; k < 5; k++) CHECK_OK(t2__store_create_trial(st, gone, -1, "{}", k, 0, &tid));
    CHECK_OK(t2__store_flush(st, 1));
    CHECK_OK(t2__store_delete_experiment(st, gone));
    int64_t exp = new_experiment(st);
    CHECK(exp == 2);
    CHECK_OK(t2__store_flush(st, 1));
    t2__store_set_flush_policy(st, 50, 1000000);
    if (async) CHECK_OK(t2__store_async_start(st));
    CHECK_OK(workload(st, exp, ids));
    if (async) CHECK_OK(t2__store_async_stop(st));
    char *d = dump(st);
    CHECK_OK(t2__store_close(st));
    rm_rf(dir);
    return d;
}

static void test_same_rows(void)
{
    static int64_t sync_ids[N], async_ids[N];
    char *want = run_mode(0, sync_ids);
    char *got = run_mode(1, async_ids);
    CHECK(sync_ids[0] == 6);
    CHECK(memcmp(sync_ids, async_ids, sizeof sync_ids) == 0);
    CHECK(strstr(want, "'boom 295'") != NULL); /* the dump holds the rows it should */
    CHECK(strstr(want, ",1295.0,1295.0,32295.0,") != NULL); /* trial 295's timings: time, then the rates */
    CHECK_TEXT(got, want);
    free(want);
    free(got);
}

static int no_direction(void *ud, int64_t experiment_id, int *out)
{
    (void)ud, (void)experiment_id, (void)out;
    return -1;
}

/* The fold on its own: a row's writes join its first one up to a commit record, never past it;
 * a write it cannot fold (two validations and no direction) and the row's later ones stay. */
static void test_fold_bounds(void)
{
    t2__trial_update running = {.set = T2__TU_STATE, .state = T2__TRIAL_RUNNING};
    t2__trial_update val = {.set = T2__TU_VALIDATION, .validation = 1};
    t2__store_rec v[] = {
        {.kind = T2__REC_CREATE_TRIAL, .id = 7, .i = {1, 1, 0, 0}},
        {.kind = T2__REC_UPDATE_TRIAL, .id = 7, .u = running},
        {.kind = T2__REC_METRIC, .id = 7},
        {.kind = T2__REC_UPDATE_TRIAL, .id = 8, .u = running},
        {.kind = T2__REC_TRIAL_HOSTS, .id = 8},
        {.kind = T2__REC_COMMIT},
        {.kind = T2__REC_UPDATE_TRIAL, .id = 7, .u = val},
        {.kind = T2__REC_UPDATE_TRIAL, .id = 7, .u = val},
        {.kind = T2__REC_UPDATE_TRIAL, .id = 7, .u = running},
        {.kind = T2__REC_UPDATE_TRIAL, .id = 8, .u = val},
        {.kind = T2__REC_CREATE_TRIAL, .id = 8, .i = {1, 2, 0, 0}},
    };
    int want[] = {T2__REC_CREATE_TRIAL, T2__REC_FOLDED, T2__REC_METRIC, T2__REC_ROW, T2__REC_FOLDED, T2__REC_COMMIT,
                  T2__REC_ROW, T2__REC_UPDATE_TRIAL, T2__REC_UPDATE_TRIAL, T2__REC_ROW, T2__REC_CREATE_TRIAL};
    t2__fold_rows rows = {0};
    CHECK_OK(t2__store_fold(v, sizeof v / sizeof *v, &rows, no_direction, NULL));
    for (size_t i = 0; i < sizeof v / sizeof *v; i++) {
        if (v[i].kind != want[i]) fprintf(stderr, "record %zu: kind %d, want %d\n", i, v[i].kind, want[i]);
        CHECK(v[i].kind == want[i]);
    }
    CHECK(rows.n == 5);
    CHECK(v[10].row == 5 && rows.v[4].created && rows.v[4].id == 8); /* a second insert keeps a row of its own */
    CHECK(rows.v[0].created && rows.v[0].state == T2__TRIAL_RUNNING);
    CHECK(!rows.v[2].created && (rows.v[2].set & T2__FOLD_BEST_OF_OLD) && rows.v[2].best == 1);
    t2__fold_rows_free(&rows);
}

/* Another handle on the store sees the snapshot and the trials it counts in one commit: after any
 * commit, the snapshot's count is the number of trials committed. */
static void test_snapshot_in_commit(void)
{
    char dir[512], home[600];
    scratch_home(dir, sizeof dir, home, sizeof home);
    t2__store *st = NULL, *ro = NULL;
    CHECK_OK(t2__store_open(home, 0, &st));
    int64_t exp = new_experiment(st);
    new_experiment(st); /* the hook writes experiment 2's snapshot */
    CHECK_OK(t2__store_flush(st, 1));
    CHECK_OK(t2__store_open(home, 1, &ro));
    t2__store_set_flush_policy(st, 7, 1000000);
    t2__store_set_precommit(st, save_snapshot, st);
    CHECK_OK(t2__store_async_start(st));
    int bad = 0, seen = 0;
    for (int k = 0; k < 2000; k++) {
        int64_t id;
        /* As the controller applies the searcher's ops: no commit between a row and the count. */
        t2__store_group(st, 1);
        CHECK_OK(t2__store_create_trial(st, exp, k + 1, "{}", k, 0, &id));
        known_trials = k + 1;
        t2__store_group(st, 0);
        CHECK_OK(t2__store_add_metric(st, id, T2__METRIC_TRAINING, 1, NAN, "loss", 1));
        if (k % 3 == 0) CHECK_OK(t2__store_flush(st, 0));
        if (k % 50 == 0) {
            int64_t n = -1, events = -1;
            CHECK_OK(t2__store_query_int(ro, "SELECT count(*) FROM trials", &n));
            if (t2__store_query_int(ro, "SELECT events FROM searcher_state WHERE experiment_id = 2", &events)) events = 0;
            seen += n > 0;
            if (n != events) {
                if (!bad) fprintf(stderr, "a reader saw %lld trials and a snapshot of %lld\n", (long long)n,
                                  (long long)events);
                bad++;
            }
        }
    }
    CHECK_OK(t2__store_async_stop(st));
    CHECK(bad == 0);
    CHECK(seen > 0); /* commits happened while the trials were written, not only at the end */
    t2__store_set_precommit(st, NULL, NULL);
    CHECK_OK(t2__store_close(ro));
    CHECK_OK(t2__store_close(st));
    rm_rf(dir);
}

/* A queued write that fails returns 0 when queued; the next call returns its error with the
 * writer's message; what was queued after it was dropped; writes after that run again. */
static void test_error_reported(void)
{
    char dir[512], home[600];
    int64_t id;
    t2__store *st = store_with_trial(dir, sizeof dir, home, sizeof home, &id);
    CHECK_OK(t2__store_async_start(st));
    t2__trial_update u = {.set = T2__TU_BATCHES, .batches_trained = 3};
    CHECK_OK(t2__store_update_trial(st, 999, &u)); /* queued: no trial 999 */
    CHECK_OK(t2__store_add_metric(st, id, T2__METRIC_TRAINING, 1, NAN, "dropped", 1));
    CHECK_RC(t2__store_flush(st, 1), T2_ENOTFOUND);
    CHECK_MSG("no trial 999");
    CHECK_OK(t2__store_add_metric(st, id, T2__METRIC_TRAINING, 2, NAN, "kept", 1));
    CHECK_OK(t2__store_flush(st, 1));
    CHECK(sql_int(st, "SELECT count(*) FROM metrics WHERE name = 'dropped'") == 0);
    CHECK(sql_int(st, "SELECT count(*) FROM metrics WHERE name = 'kept'") == 1);
    /* An error still queued when the thread stops is stop's. */
    CHECK_OK(t2__store_update_trial(st, 998, &u));
    CHECK_RC(t2__store_async_stop(st), T2_ENOTFOUND);
    CHECK_MSG("no trial 998");
    CHECK_OK(t2__store_close(st));
    rm_rf(dir);
}

/* A write the caller's thread makes itself (a checkpoint row) commits with flush(0) by age as a
 * queued one does: the batch would otherwise keep the write lock from other controllers. */
static void test_own_write_commits(void)
{
    char dir[512], home[600];
    int64_t id;
    t2__store *st = store_with_trial(dir, sizeof dir, home, sizeof home, &id), *ro = NULL;
    CHECK_OK(t2__store_open(home, 1, &ro));
    t2__store_set_flush_policy(st, 100000, 0);
    CHECK_OK(t2__store_async_start(st));
    t2__checkpoint_new c = {.uuid = "ck-1", .trial_id = id, .batches = 1, .epoch = NAN, .metric = NAN,
                            .size_bytes = 10, .path = "/ck/ck-1"};
    CHECK_OK(t2__store_add_checkpoint(st, &c));
    CHECK_OK(t2__store_flush(st, 0));
    CHECK_OK(t2__store_async_wait(st));
    int64_t n = -1;
    CHECK_OK(t2__store_query_int(ro, "SELECT count(*) FROM checkpoints", &n));
    CHECK(n == 1);
    CHECK_OK(t2__store_async_stop(st));
    CHECK_OK(t2__store_close(ro));
    CHECK_OK(t2__store_close(st));
    rm_rf(dir);
}

/* A second process writes trials in its own transactions while this one writes through the
 * thread: no id is given twice, and every metric row sits on its own trial. */
static void test_two_writers(void)
{
    char dir[512], home[600];
    scratch_home(dir, sizeof dir, home, sizeof home);
    t2__store *st = NULL;
    CHECK_OK(t2__store_open(home, 0, &st));
    int64_t exp = new_experiment(st);
    CHECK_OK(t2__store_flush(st, 1));
    pid_t pid = fork();
    if (pid == 0) {
        t2__store *other = NULL;
        if (t2__store_open(home, 0, &other)) _exit(3);
        for (int k = 0; k < 300; k++) {
            char hp[32];
            snprintf(hp, sizeof hp, "{\"c\":%d}", k);
            int64_t id;
            if (t2__store_begin(other) || t2__store_create_trial(other, exp, -1, hp, k, 0, &id) ||
                t2__store_add_metric(other, id, T2__METRIC_TRAINING, 1, NAN, "v", k) || t2__store_commit(other))
                _exit(4);
        }
        _exit(t2__store_close(other) ? 5 : 0);
    }
    t2__store_set_flush_policy(st, 40, 5);
    CHECK_OK(t2__store_async_start(st));
    for (int k = 0; k < 3000; k++) {
        char hp[32];
        snprintf(hp, sizeof hp, "{\"p\":%d}", k);
        int64_t id;
        CHECK_OK(t2__store_create_trial(st, exp, -1, hp, k, 0, &id));
        CHECK_OK(t2__store_add_metric(st, id, T2__METRIC_TRAINING, 1, NAN, "v", k));
        if (k % 5 == 0) CHECK_OK(t2__store_flush(st, 0));
    }
    CHECK_OK(t2__store_async_stop(st));
    CHECK_OK(t2__store_flush(st, 1)); /* an open batch would hold the lock the child waits for */
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CHECK(sql_int(st, "SELECT count(*) FROM trials") == 3300);
    CHECK(sql_int(st, "SELECT count(DISTINCT ordinal) FROM trials") == 3300);
    CHECK(sql_int(st, "SELECT count(*) FROM metrics m JOIN trials t ON t.id = m.trial_id WHERE"
                      " coalesce(json_extract(t.hparams, '$.p'), json_extract(t.hparams, '$.c')) = m.value") == 3300);
    CHECK(sql_int(st, "SELECT count(*) FROM trials WHERE json_extract(hparams, '$.c') IS NOT NULL") == 300);
    CHECK_OK(t2__store_close(st));
    rm_rf(dir);
}

int main(void)
{
    test_fold_bounds();
    test_same_rows();
    test_snapshot_in_commit();
    test_error_reported();
    test_own_write_commits();
    test_two_writers();
    return check_report("test_store_async");
}
