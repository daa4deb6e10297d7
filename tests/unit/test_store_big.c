/* test_store_big.c — a store with 100,000 trials in one experiment (and 200 small experiments):
 * the listings must stay interactive. The hard check is on the query plans (index walks, no
 * sort of the whole experiment), and every listing must succeed. The timings are printed, not
 * asserted: a time bound fails on a loaded or instrumented machine (valgrind took 13 s for
 * the 100k-row describe) without saying anything about the code. The target (< 200 ms) is
 * measured by bench/store_query. */
#include "test_store_util.h"
#include "store/store_internal.h"

#define NTRIALS 100000
#define NSMALL 200

static char dir[512], home[600];

static int64_t big_id, metric_trial;

static int p_list(t2__store *st, FILE *f) { return t2__store_print_experiments(st, T2__FMT_TABLE, f); }
static int p_list_json(t2__store *st, FILE *f) { return t2__store_print_experiments(st, T2__FMT_JSON, f); }
static int p_desc10(t2__store *st, FILE *f) { return t2__store_print_experiment(st, big_id, 10, T2__FMT_TABLE, f); }
static int p_desc10_json(t2__store *st, FILE *f) { return t2__store_print_experiment(st, big_id, 10, T2__FMT_JSON, f); }
static int p_desc_all(t2__store *st, FILE *f) { return t2__store_print_experiment(st, big_id, 0, T2__FMT_TABLE, f); }
static int p_trials_csv(t2__store *st, FILE *f) { return t2__store_print_trials(st, big_id, T2__FMT_CSV, f); }
static int p_metrics(t2__store *st, FILE *f) { return t2__store_print_metrics(st, metric_trial, NULL, T2__FMT_TABLE, f); }
static int p_ckpts(t2__store *st, FILE *f) { return t2__store_print_checkpoints(st, big_id, 0, 0, T2__FMT_TABLE, f); }

typedef struct {
    const char *what;
    int (*fn)(t2__store *, FILE *);
} timed;

/* Runs one listing into /dev/null: the cost measured is the query and the formatting. */
static int to_null(t2__store *st, void *ud, FILE *out)
{
    (void)out;
    const timed *t = ud;
    FILE *f = fopen("/dev/null", "w");
    int rc = t->fn(st, f);
    fclose(f);
    return rc;
}

static void build(void)
{
    t2__store *st = NULL;
    CHECK_OK(t2__store_open(home, 0, &st));
    if (!st) return;
    t2__experiment_new e = {.name = "small", .config_yaml = "name: small\n",
                            .searcher_name = "random", .metric = "loss", .smaller_is_better = 1,
                            .trial_object = "/t/q.so", .seed = 1};
    double t0 = mono_s();
    CHECK_OK(t2__store_begin(st));
    int64_t id, tid;
    for (int i = 0; i < NSMALL / 2; i++) {
        CHECK_OK(t2__store_create_experiment(st, &e, &id));
        for (int k = 0; k < 5; k++) CHECK_OK(t2__store_create_trial(st, id, -1, "{}", k, 0, &tid));
    }
    e.name = "big";
    e.searcher_name = "adaptive_asha";
    CHECK_OK(t2__store_create_experiment(st, &e, &big_id));
    char hp[128];
    for (int i = 0; i < NTRIALS; i++) {
        snprintf(hp, sizeof hp, "{\"lr\":%.6g,\"width\":%d,\"dropout\":%.2f}",
                 1e-4 * (1 + i % 997), 16 << (i % 4), (i % 50) / 100.0);
        CHECK_OK(t2__store_create_trial(st, big_id, -1, hp, i, 1000, &tid));
        if (i % 5 == 4) continue; /* a fifth never validated */
        t2__trial_update u = {.set = T2__TU_STATE | T2__TU_VALIDATION | T2__TU_BATCHES,
                              .state = T2__TRIAL_COMPLETED,
                              .validation = 0.1 + (double)((i * 7919) % NTRIALS) / NTRIALS,
                              .batches_trained = 1000};
        CHECK_OK(t2__store_update_trial(st, tid, &u));
        if (i % 100 == 0) {
            char uuid[32];
            snprintf(uuid, sizeof uuid, "ck-%d", i);
            t2__checkpoint_new c = {.uuid = uuid, .trial_id = tid, .batches = 1000,
                                    .epoch = NAN, .metric = u.validation, .path = "/c"};
            CHECK_OK(t2__store_add_checkpoint(st, &c));
        }
        if (i % 1000 == 0)
            for (int b = 1; b <= 10; b++) {
                CHECK_OK(t2__store_add_metric(st, tid, T2__METRIC_TRAINING, 100 * b, NAN,
                                              "loss", 1.0 / b));
                t2__store_timing tm = {1000.0 / b, 32000.0 / b, 1e-4, 1e-3, 0};
                CHECK_OK(t2__store_add_timing(st, tid, 100 * b, NAN, &tm));
            }
    }
    for (int i = 0; i < NSMALL / 2; i++) CHECK_OK(t2__store_create_experiment(st, &e, &id));
    CHECK_OK(t2__store_commit(st));
    printf("built %d trials in %.0f ms\n", NTRIALS + NSMALL / 2 * 5, (mono_s() - t0) * 1e3);
    CHECK_OK(t2__store_close(st));
}

static int plan(t2__store *st, void *ud, FILE *out)
{
    const t2__store_param p[] = {{.name = ":e", .type = T2__P_INT, .i = big_id}};
    return t2__store_print_query(st, ud, p, 1, NULL, T2__FMT_CSV, out);
}

/* The plan of the listing's shapes: index walks, never a sort of the experiment's trials. */
static void check_plan(t2__store *st, const char *sql, const char *want, const char *never)
{
    int rc;
    char q[8192];
    if (snprintf(q, sizeof q, "EXPLAIN QUERY PLAN %s", sql) >= (int)sizeof q) {
        fprintf(stderr, "check_plan: a query longer than %zu bytes: %.60s...\n", sizeof q, sql);
        check_failures++;
        return;
    }
    char *got = capture(st, plan, q, &rc);
    CHECK_OK(rc);
    if (!strstr(got, want) || (never && strstr(got, never))) {
        fprintf(stderr, "plan of %s\n%s\nwanted \"%s\"%s%s\n", sql, got, want,
                never ? ", never " : "", never ? never : "");
        check_failures++;
    }
    free(got);
}

int main(void)
{
    scratch_home(dir, sizeof dir, home, sizeof home);
    build();
    t2__store *st = NULL;
    CHECK_OK(t2__store_open(home, 1, &st));
    if (!st) return check_report("test_store_big");
    CHECK_OK(t2__store_trial_id(st, big_id, 49001, &metric_trial)); /* i = 49000 has metrics */

    /* The real queries of every listing: each reaches the experiment's trials, metrics and
     * checkpoints through an index (never a full scan), and none sorts trials or metrics in a
     * temporary B-tree: those rows come out of the index in order. Checkpoints are sorted (the
     * garbage collector keeps a few per trial; 7 ms for this experiment's). */
    for (const t2__store_named_sql *q = t2__store_queries; q->name; q++) {
        check_plan(st, q->sql, "", "SCAN t\n");
        check_plan(st, q->sql, "", "SCAN trials\n");
        check_plan(st, q->sql, "", "SCAN m\n");
        check_plan(st, q->sql, "", "SCAN r\n");
        check_plan(st, q->sql, "", "SCAN c\n");
        if (strncmp(q->name, "checkpoints", 11) != 0) check_plan(st, q->sql, "", "TEMP B-TREE");
    }
    /* And the indexes they are meant to use. */
    check_plan(st, t2__store_queries[2].sql, "trials_by_metric", NULL);
    check_plan(st, t2__store_queries[3].sql, "trials_by_metric", NULL);
    check_plan(st, t2__store_queries[1].sql, "SEARCH x USING PRIMARY KEY (experiment_id=?)", NULL);
    check_plan(st, t2__store_queries[2].sql, "checkpoints_by_trial", NULL);

    const timed runs[] = {
        {"list (table)", p_list},
        {"list (json)", p_list_json},
        {"describe top 10 (table)", p_desc10},
        {"describe top 10 (json)", p_desc10_json},
        {"describe all 100k (table)", p_desc_all},
        {"trials all 100k (csv)", p_trials_csv},
        {"metrics of one trial", p_metrics},
        {"checkpoints of the experiment", p_ckpts},
    };
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
        double t0 = mono_s();
        int rc;
        char *got = capture(st, to_null, (void *)&runs[i], &rc);
        double dt = mono_s() - t0;
        free(got);
        CHECK_OK(rc);
        printf("%-32s %8.1f ms\n", runs[i].what, dt * 1e3);
    }
    CHECK_OK(t2__store_close(st));
    rm_rf(dir);
    return check_report("test_store_big");
}
