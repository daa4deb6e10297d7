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

/* Every kind of hot write, reads and flushes between them, an explicit transaction and a
 * checkpoint row (both run on the caller's thread). Returns the first failing call's code. */
static int workload(t2__store *st, int64_t exp, int64_t *ids)
{
    int rc = 0;
#define DO(call)                                                                                  \
    do {                                                                                          \
        if ((rc = (call))) {                                                                      \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, t2_errmsg());            \
            return rc;                                                                            \
        }                                                                                         \
    } while (0)
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
        if (k % 7 == 0) DO(t2__store_set_experiment_best(st, exp, id, 2.0 / (k + 1)));
        snprintf(err, sizeof err, "boom %d", k);
        u = (t2__trial_update){.set = T2__TU_STATE | T2__TU_BATCHES | T2__TU_VALIDATION | (k % 5 ? 0 : T2__TU_ERROR),
                               .state = k % 5 ? T2__TRIAL_COMPLETED : T2__TRIAL_ERRORED,
                               .batches_trained = 1,
                               .validation = 2.0 / (k + 1),
                               .error = err};
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
    DO(t2__store_flush(st, 1));
    t2__store_set_precommit(st, NULL, NULL);
    return 0;
#undef DO
}

/* Every row of every table the writes touch, one line a row, in rowid order. */
static char *dump(t2__store *st)
{
    static const char *const tables[] = {"experiments", "trials", "metrics", "trial_log_segments", "blas_lines",
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
    CHECK_TEXT(got, want);
    free(want);
    free(got);
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
    test_same_rows();
    test_snapshot_in_commit();
    test_error_reported();
    test_own_write_commits();
    test_two_writers();
    return check_report("test_store_async");
}
