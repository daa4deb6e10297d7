/* store_query.c — the experiment store under load.
 *
 *   build/bench/store_query [TRIALS]      (default 100000)
 *
 * 1. Controller writes: a trial's life (create, RUNNING, five metrics, COMPLETED with its
 *    validation, searcher snapshot) through the batch with flush(0) after each trial, against the
 *    same writes committed one by one (flush policy of one row) — the reference, measured here.
 * 2. Listings on a store with TRIALS trials in one experiment: `list` and `describe` (top 10),
 *    table and JSON, median of 21 runs on a read-only connection, output to /dev/null.
 * Last line: store_query: ratio=<batched/one-by-one trial writes per second> <figures>. The goal
 * for the listings is < 200 ms at 100,000 trials. */
#define _XOPEN_SOURCE 700
#include <ftw.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "../framework/store/store.h"
#include "t2exp/error.h"
#include "internal.h"

static int rm_one(const char *p, const struct stat *sb, int flag, struct FTW *f)
{
    (void)sb, (void)flag, (void)f;
    return remove(p);
}

#define TRY(x)                                                                    \
    do {                                                                          \
        int rc_ = (x);                                                            \
        if (rc_) {                                                                \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, t2_errmsg()); \
            exit(1);                                                              \
        }                                                                         \
    } while (0)

static const t2__experiment_new EXP = {
    .name = "bench", .config_yaml = "name: bench\n", .searcher_name = "random",
    .metric = "loss", .smaller_is_better = 1, .trial_object = "/t/q.so", .seed = 1,
};

/* Trials per second for n trial lifecycles with the given flush policy. */
static double write_rate(const char *home, int n, long rows)
{
    t2__store *st;
    TRY(t2__store_open(home, 0, &st));
    t2__store_set_flush_policy(st, rows, 200);
    int64_t e, t;
    TRY(t2__store_create_experiment(st, &EXP, &e));
    TRY(t2__store_flush(st, 1));
    double t0 = t2__now();
    for (int i = 0; i < n; i++) {
        TRY(t2__store_create_trial(st, e, -1, "{\"lr\":0.01,\"width\":64}", i, 100, &t));
        t2__trial_update u = {.set = T2__TU_STATE, .state = T2__TRIAL_RUNNING};
        TRY(t2__store_update_trial(st, t, &u));
        for (int b = 1; b <= 4; b++)
            TRY(t2__store_add_metric(st, t, T2__METRIC_TRAINING, 25 * b, NAN, "loss", 1.0 / b));
        TRY(t2__store_add_metric(st, t, T2__METRIC_VALIDATION, 100, NAN, "loss", 0.3));
        u = (t2__trial_update){.set = T2__TU_STATE | T2__TU_VALIDATION | T2__TU_BATCHES,
                               .state = T2__TRIAL_COMPLETED, .validation = 0.3,
                               .batches_trained = 100};
        TRY(t2__store_update_trial(st, t, &u));
        TRY(t2__store_save_searcher_state(st, e, i + 1, "{\"next\":1,\"rng\":[1,2,3,4]}"));
        TRY(t2__store_flush(st, 0));
    }
    TRY(t2__store_flush(st, 1));
    double dt = t2__now() - t0;
    TRY(t2__store_close(st));
    return n / dt;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

#define RUNS 21

static double median_ms(t2__store *st, int64_t id, int which)
{
    double v[RUNS];
    for (int r = 0; r < RUNS; r++) {
        FILE *f = fopen("/dev/null", "w");
        double t0 = t2__now();
        switch (which) {
        case 0: TRY(t2__store_print_experiments(st, T2__FMT_TABLE, f)); break;
        case 1: TRY(t2__store_print_experiments(st, T2__FMT_JSON, f)); break;
        case 2: TRY(t2__store_print_experiment(st, id, 10, T2__FMT_TABLE, f)); break;
        default: TRY(t2__store_print_experiment(st, id, 10, T2__FMT_JSON, f)); break;
        }
        v[r] = (t2__now() - t0) * 1e3;
        fclose(f);
    }
    qsort(v, RUNS, sizeof v[0], cmp);
    return v[RUNS / 2];
}

int main(int argc, char **argv)
{
    int ntrials = argc > 1 ? atoi(argv[1]) : 100000;
    if (ntrials <= 0) ntrials = 100000;
    const char *tmp = getenv("TMPDIR");
    char dir[512], home[600];
    snprintf(dir, sizeof dir, "%s/t2bench.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }

    snprintf(home, sizeof home, "%s/batched", dir);
    double batched = write_rate(home, 20000, 1000);
    snprintf(home, sizeof home, "%s/one_by_one", dir);
    double single = write_rate(home, 2000, 1);
    printf("trial writes: batched %.0f trials/s, committed one by one %.0f trials/s\n", batched,
           single);

    snprintf(home, sizeof home, "%s/big", dir);
    t2__store *st;
    TRY(t2__store_open(home, 0, &st));
    int64_t e, t, big = 0;
    double t0 = t2__now();
    TRY(t2__store_begin(st));
    for (int k = 0; k < 50; k++) TRY(t2__store_create_experiment(st, &EXP, &e));
    TRY(t2__store_create_experiment(st, &EXP, &big));
    char hp[96];
    for (int i = 0; i < ntrials; i++) {
        snprintf(hp, sizeof hp, "{\"lr\":%.6g,\"width\":%d}", 1e-4 * (1 + i % 997), 16 << (i % 4));
        TRY(t2__store_create_trial(st, big, -1, hp, i, 1000, &t));
        if (i % 5 == 4) continue;
        t2__trial_update u = {.set = T2__TU_STATE | T2__TU_VALIDATION, .state = T2__TRIAL_COMPLETED,
                              .validation = (double)((i * 7919L) % ntrials) / ntrials};
        TRY(t2__store_update_trial(st, t, &u));
    }
    TRY(t2__store_commit(st));
    TRY(t2__store_close(st));
    printf("built %d trials in one transaction: %.0f ms\n", ntrials, (t2__now() - t0) * 1e3);

    /* What one `t2exp list` process pays: open (schema read), list, close. */
    double v[RUNS];
    for (int r = 0; r < RUNS; r++) {
        FILE *f = fopen("/dev/null", "w");
        double t1 = t2__now();
        TRY(t2__store_open(home, 1, &st));
        TRY(t2__store_print_experiments(st, T2__FMT_TABLE, f));
        TRY(t2__store_close(st));
        v[r] = (t2__now() - t1) * 1e3;
        fclose(f);
    }
    qsort(v, RUNS, sizeof v[0], cmp);
    double open_list = v[RUNS / 2];

    TRY(t2__store_open(home, 1, &st));
    double list = median_ms(st, big, 0), list_json = median_ms(st, big, 1);
    double desc = median_ms(st, big, 2), desc_json = median_ms(st, big, 3);
    TRY(t2__store_close(st));
    printf("median of %d on %d trials: open+list+close %.2f ms, list %.2f ms, list --json %.2f ms,"
           " describe %.2f ms, describe --json %.2f ms\n", RUNS, ntrials, open_list, list,
           list_json, desc, desc_json);
    /* STORE_QUERY_KEEP=1: the big store stays for other benchmarks (bench/run_dashboard.sh). */
    if (getenv("STORE_QUERY_KEEP")) printf("kept store: %s (experiment %lld has the %d trials)\n", home, (long long)big, ntrials);
    else nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
    printf("store_query: ratio=%.1f batched_trials_per_s=%.0f one_by_one_trials_per_s=%.0f"
           " trials=%d open_list_close_ms=%.2f list_ms=%.2f describe_ms=%.2f describe_json_ms=%.2f\n",
           batched / single, batched, single, ntrials, open_list, list, desc, desc_json);
    return 0;
}
