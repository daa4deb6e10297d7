/* test_pruner.c — the pruning rules (searchers/pruner.h) against numbers worked out by hand: the
 * patient and threshold rules on a trial's own values, and the percentile rule:
 * the median over odd and even counts (numpy's linear interpolation), percentile 25 in both
 * directions, many values arriving between two verdicts, n_startup_trials, n_min_trials, NaN in
 * the reference and in a trial's own values, the best value so far being what is compared, a step
 * with no reference, re-reported steps, forget, completing twice, refused params; then 2000
 * interleaved trials x 20 steps, every verdict checked against a brute-force recomputation from
 * every value reported. */
#include <stdint.h>
#include <stdlib.h>
#include "check.h"
#include "../../searchers/pruner.h"
#include "t2exp/rng.h"

static t2__pruner *mk(double percentile, int64_t startup, int64_t nmin, int smaller_is_better)
{
    t2__pruner_params prm = {.percentile = percentile, .n_startup_trials = startup, .n_min_trials = nmin, .smaller_is_better = smaller_is_better};
    t2__pruner *p = NULL;
    CHECK_OK(t2__pruner_create(&prm, &p));
    return p;
}

/* Records only (decide = 0, out NULL). */
static void rec(t2__pruner *p, int64_t trial, int64_t step, double v)
{
    CHECK_OK(t2__pruner_report(p, trial, step, NULL, v, 0, NULL));
}

static void done(t2__pruner *p, int64_t trial, int64_t step, double v)
{
    rec(p, trial, step, v);
    CHECK_OK(t2__pruner_completed(p, trial));
}

static t2__prune_verdict judge(t2__pruner *p, int64_t trial, int64_t step, double v)
{
    t2__prune_verdict out = {.prune = -1, .best = -1, .threshold = -1, .compared = -1};
    CHECK_OK(t2__pruner_report(p, trial, step, NULL, v, 1, &out));
    return out;
}

/* The verdict must be exactly {prune, best, threshold, compared}; NaN matches NaN. */
#define CHECK_VERDICT(vd, want_prune, want_best, want_thr, want_compared)                          \
    do {                                                                                           \
        t2__prune_verdict v_ = (vd);                                                               \
        double wb_ = (want_best), wt_ = (want_thr);                                                \
        CHECK(v_.prune == (want_prune));                                                           \
        CHECK(isnan(wb_) ? isnan(v_.best) : v_.best == wb_);                                       \
        CHECK(isnan(wt_) ? isnan(v_.threshold) : v_.threshold == wt_);                             \
        CHECK(v_.compared == (want_compared));                                                     \
        if (v_.prune != (want_prune) || v_.compared != (want_compared))                            \
            fprintf(stderr, "  got prune %d best %.17g threshold %.17g compared %lld\n", v_.prune,  \
                    v_.best, v_.threshold, (long long)v_.compared);                                \
    } while (0)

static void test_median(void)
{
    t2__pruner *p = mk(50, 0, 1, 1);
    if (!p) return;
    done(p, 1, 100, 5);
    done(p, 2, 100, 1);
    done(p, 3, 100, 3);
    /* Odd: sorted {1, 3, 5}, h = (3 - 1) * 0.5 = 1, threshold v[1] = 3. 3 > 3 is false: a tie keeps. */
    CHECK_VERDICT(judge(p, 10, 100, 3), 0, 3, 3, 3);
    CHECK_VERDICT(judge(p, 11, 100, 3.5), 1, 3.5, 3, 3);
    CHECK_VERDICT(judge(p, 12, 100, 2), 0, 2, 3, 3);
    /* Even: sorted {1, 3, 5, 8}, h = 3 * 0.5 = 1.5, threshold 3 + 0.5 * (5 - 3) = 4. */
    done(p, 4, 100, 8);
    CHECK_VERDICT(judge(p, 13, 100, 4), 0, 4, 4, 4);
    CHECK_VERDICT(judge(p, 14, 100, 4.25), 1, 4.25, 4, 4);
    CHECK(t2__pruner_completed_count(p) == 4);
    t2__pruner_free(p);
}

static void test_percentile25(void)
{
    /* Minimised: sorted {10, 20, 30, 40}, q = 25, h = 3 * 0.25 = 0.75,
     * threshold 10 + 0.75 * (20 - 10) = 17.5. */
    t2__pruner *p = mk(25, 0, 1, 1);
    if (!p) return;
    done(p, 1, 50, 40);
    done(p, 2, 50, 10);
    done(p, 3, 50, 30);
    done(p, 4, 50, 20);
    CHECK_VERDICT(judge(p, 9, 50, 17.5), 0, 17.5, 17.5, 4);
    CHECK_VERDICT(judge(p, 10, 50, 17), 0, 17, 17.5, 4);
    CHECK_VERDICT(judge(p, 11, 50, 18), 1, 18, 17.5, 4);
    t2__pruner_free(p);

    /* Maximised: q = 100 - 25 = 75, h = 3 * 0.75 = 2.25, threshold 30 + 0.25 * (40 - 30) = 32.5;
     * pruned when best < 32.5. */
    p = mk(25, 0, 1, 0);
    if (!p) return;
    done(p, 1, 50, 40);
    done(p, 2, 50, 10);
    done(p, 3, 50, 30);
    done(p, 4, 50, 20);
    CHECK_VERDICT(judge(p, 9, 50, 32.5), 0, 32.5, 32.5, 4);
    CHECK_VERDICT(judge(p, 10, 50, 32), 1, 32, 32.5, 4);
    CHECK_VERDICT(judge(p, 11, 50, 40), 0, 40, 32.5, 4);
    t2__pruner_free(p);

    /* percentile 100: minimised q = 100, the largest {1, 2, 3} -> 3; maximised q = 0, the smallest -> 1. */
    p = mk(100, 0, 1, 1);
    if (!p) return;
    done(p, 1, 7, 2);
    done(p, 2, 7, 3);
    done(p, 3, 7, 1);
    CHECK_VERDICT(judge(p, 9, 7, 3), 0, 3, 3, 3);
    CHECK_VERDICT(judge(p, 10, 7, 3.5), 1, 3.5, 3, 3);
    t2__pruner_free(p);
    p = mk(100, 0, 1, 0);
    if (!p) return;
    done(p, 1, 7, 2);
    done(p, 2, 7, 3);
    done(p, 3, 7, 1);
    CHECK_VERDICT(judge(p, 9, 7, 1), 0, 1, 1, 3);
    CHECK_VERDICT(judge(p, 10, 7, 0.5), 1, 0.5, 1, 3);
    t2__pruner_free(p);
}

/* Many values arriving between two verdicts at a step (a sort and merge, not one insert each). */
static void test_many_at_once(void)
{
    t2__pruner *p = mk(50, 0, 1, 1);
    if (!p) return;
    const double first[] = {7, 3, 9, 1, 5, 8, 2, 6, 4}, second[] = {12, 15, 10, 14, 11, 13};
    int64_t id = 1;
    for (size_t k = 0; k < 9; k++) done(p, id++, 10, first[k]);
    /* 1..9: h = 8 * 0.5 = 4 -> 5. */
    CHECK_VERDICT(judge(p, 100, 10, 5), 0, 5, 5, 9);
    for (size_t k = 0; k < 6; k++) done(p, id++, 10, second[k]);
    /* 1..15: h = 14 * 0.5 = 7 -> 8. */
    CHECK_VERDICT(judge(p, 101, 10, 8.5), 1, 8.5, 8, 15);
    done(p, id++, 10, 0.5);
    /* {0.5, 1..15}: h = 15 * 0.5 = 7.5 -> v[7] = 7, v[8] = 8: 7.5. */
    CHECK_VERDICT(judge(p, 102, 10, 7.5), 0, 7.5, 7.5, 16);
    CHECK_VERDICT(judge(p, 103, 10, 7.75), 1, 7.75, 7.5, 16);
    t2__pruner_free(p);
}

static void test_startup(void)
{
    t2__pruner *p = mk(50, 3, 1, 1);
    if (!p) return;
    done(p, 1, 10, 1);
    done(p, 2, 10, 2);
    /* 2 completed < 3: no comparison however bad; compared is still the count at the step. */
    CHECK_VERDICT(judge(p, 9, 10, 100), 0, 100, NAN, 2);
    CHECK_VERDICT(judge(p, 8, 10, NAN), 0, NAN, NAN, 2); /* not even an all-NaN trial */
    done(p, 3, 10, 3);
    /* 3 completed: {1, 2, 3}, median h = 1 -> 2; trial 9's 100 at step 10 is pruned. */
    CHECK_VERDICT(judge(p, 9, 10, 100), 1, 100, 2, 3);
    t2__pruner_free(p);

    /* n_startup_trials 0 with nothing completed: Optuna returns early (no completed trial), so even
     * an all-NaN trial stays until one trial completed, here one without a validation. */
    p = mk(50, 0, 1, 1);
    if (!p) return;
    CHECK_VERDICT(judge(p, 1, 10, NAN), 0, NAN, NAN, 0);
    CHECK_OK(t2__pruner_completed(p, 2)); /* unknown trial: counts, adds no value */
    CHECK(t2__pruner_completed_count(p) == 1);
    CHECK_VERDICT(judge(p, 1, 20, NAN), 1, NAN, NAN, 0);
    t2__pruner_free(p);
}

static void test_min_trials(void)
{
    t2__pruner *p = mk(50, 0, 3, 1);
    if (!p) return;
    done(p, 1, 5, 10);
    done(p, 2, 5, 20);
    CHECK_VERDICT(judge(p, 9, 5, 100), 0, 100, NAN, 2); /* 2 values at step 5 < 3 */
    done(p, 3, 7, 1);                                    /* a third completed trial, not at step 5 */
    CHECK_VERDICT(judge(p, 9, 5, 100), 0, 100, NAN, 2);
    done(p, 4, 5, 30);
    /* {10, 20, 30}: median h = 1 -> 20. */
    CHECK_VERDICT(judge(p, 9, 5, 100), 1, 100, 20, 3);
    t2__pruner_free(p);
}

static void test_nan(void)
{
    t2__pruner *p = mk(50, 0, 1, 1);
    if (!p) return;
    done(p, 1, 5, NAN);
    done(p, 2, 5, 2);
    done(p, 3, 5, 4);
    done(p, 4, 5, NAN);
    done(p, 5, 5, 6);
    done(p, 6, 8, NAN);
    /* Step 5: five values, the non-NaN {2, 4, 6}, median h = (3 - 1) * 0.5 = 1 -> 4 (nanpercentile). */
    CHECK_VERDICT(judge(p, 9, 5, 4), 0, 4, 4, 5);
    CHECK_VERDICT(judge(p, 10, 5, 5), 1, 5, 4, 5);
    /* Step 8: only a NaN: nanpercentile is NaN, no comparison. */
    CHECK_VERDICT(judge(p, 11, 8, 1e9), 0, 1e9, NAN, 1);
    /* All of a trial's values NaN: pruned (diverged), before any reference is looked at. */
    CHECK_VERDICT(judge(p, 12, 5, NAN), 1, NAN, NAN, 5);
    CHECK_VERDICT(judge(p, 13, 99, NAN), 1, NAN, NAN, 0);
    /* A trial's own NaN values are skipped in its best. */
    rec(p, 14, 3, NAN);
    CHECK_VERDICT(judge(p, 14, 5, 4), 0, 4, 4, 5);
    rec(p, 15, 3, 1);
    CHECK_VERDICT(judge(p, 15, 5, NAN), 0, 1, 4, 5);
    t2__pruner_free(p);

    /* Optuna counts NaN values for n_min_trials (it takes every value at the step, and only
     * nanpercentile skips NaN): {NaN, NaN, 2, 4} is 4 >= 4, threshold the median of {2, 4}:
     * h = 0.5, 2 + 0.5 * (4 - 2) = 3. */
    p = mk(50, 0, 4, 1);
    if (!p) return;
    done(p, 1, 5, NAN);
    done(p, 2, 5, NAN);
    done(p, 3, 5, 2);
    CHECK_VERDICT(judge(p, 9, 5, 3.5), 0, 3.5, NAN, 3);
    done(p, 4, 5, 4);
    CHECK_VERDICT(judge(p, 9, 5, 3.5), 1, 3.5, 3, 4);
    t2__pruner_free(p);
}

static void test_best_so_far(void)
{
    t2__pruner *p = mk(50, 0, 1, 1);
    if (!p) return;
    for (int64_t t = 1; t <= 3; t++) {
        rec(p, t, 10, 4 + (double)t); /* step 10: {5, 6, 7}, median 6 */
        done(p, t, 20, 2 + (double)t); /* step 20: {3, 4, 5}, median 4 */
    }
    CHECK_VERDICT(judge(p, 9, 10, 2), 0, 2, 6, 3);
    /* 4.5 at step 20 is above the median 4, but the best so far is 2 (step 10). */
    CHECK_VERDICT(judge(p, 9, 20, 4.5), 0, 2, 4, 3);
    /* Latest 3 <= 4 keeps although step 10's 8 was worse than its median. */
    rec(p, 10, 10, 8);
    CHECK_VERDICT(judge(p, 10, 20, 3), 0, 3, 4, 3);
    rec(p, 11, 10, 8);
    CHECK_VERDICT(judge(p, 11, 20, 4.25), 1, 4.25, 4, 3);
    t2__pruner_free(p);

    /* Maximised: the best is the largest; 7 at step 10 beats step 20's median 4 though 1 does not. */
    p = mk(50, 0, 1, 0);
    if (!p) return;
    for (int64_t t = 1; t <= 3; t++) done(p, t, 20, 2 + (double)t);
    rec(p, 9, 10, 7);
    CHECK_VERDICT(judge(p, 9, 20, 1), 0, 7, 4, 3);
    CHECK_VERDICT(judge(p, 10, 20, 3.5), 1, 3.5, 4, 3);
    t2__pruner_free(p);
}

static void test_unknown_step(void)
{
    t2__pruner *p = mk(50, 0, 1, 1);
    if (!p) return;
    done(p, 1, 10, 1);
    done(p, 2, 30, 1);
    /* No completed trial reported at step 15 (10 and 30 did): no comparison. */
    CHECK_VERDICT(judge(p, 9, 15, 100), 0, 100, NAN, 0);
    CHECK_VERDICT(judge(p, 9, 40, 100), 0, 100, NAN, 0);
    CHECK_VERDICT(judge(p, 9, 1, 100), 0, 100, NAN, 0);
    t2__pruner_free(p);
}

static void test_replace(void)
{
    t2__pruner *p = mk(50, 0, 1, 1);
    if (!p) return;
    done(p, 1, 10, 5);
    /* A step reported again keeps its first value, as the store keeps a step's first row (a
     * resume rebuilds the pruner from it): the 1 at step 10 stays, the 9 is ignored, and the
     * best 1 does not prune. */
    rec(p, 9, 10, 1);
    CHECK_VERDICT(judge(p, 9, 10, 9), 0, 1, 5, 1);
    /* Steps out of order, then a repeat in the middle: best min(2, 6, 1) = 1 (the 7 ignored). */
    rec(p, 8, 20, 2);
    rec(p, 8, 5, 6);
    rec(p, 8, 10, 1);
    CHECK_VERDICT(judge(p, 8, 10, 7), 0, 1, 5, 1);
    /* A completed trial's reference is its first value at the step: 100 then 2 at step 30 -> {100}. */
    rec(p, 2, 30, 100);
    done(p, 2, 30, 2);
    CHECK_VERDICT(judge(p, 10, 30, 3), 0, 3, 100, 1);
    CHECK_VERDICT(judge(p, 11, 30, 200), 1, 200, 100, 1);
    t2__pruner_free(p);
}

static void test_forget(void)
{
    t2__pruner *p = mk(50, 0, 1, 1);
    if (!p) return;
    rec(p, 1, 10, 100);
    t2__pruner_forget(p, 1);
    CHECK_OK(t2__pruner_completed(p, 1)); /* no effect after forget */
    CHECK(t2__pruner_completed_count(p) == 0);
    done(p, 2, 10, 5);
    CHECK(t2__pruner_completed_count(p) == 1);
    /* Only trial 2's 5 counts (with trial 1's 100 the median of {5, 100} would be 52.5). */
    CHECK_VERDICT(judge(p, 9, 10, 6), 1, 6, 5, 1);
    /* A report for a forgotten trial is ignored. */
    CHECK_VERDICT(judge(p, 1, 10, 1), 0, NAN, NAN, 0);
    CHECK_VERDICT(judge(p, 1, 20, 1), 0, NAN, NAN, 0);
    /* Forgetting a trial that never reported, then completing it: still nothing. */
    t2__pruner_forget(p, 3);
    CHECK_OK(t2__pruner_completed(p, 3));
    CHECK(t2__pruner_completed_count(p) == 1);
    /* Forgetting a completed trial does not take its values back. */
    t2__pruner_forget(p, 2);
    CHECK(t2__pruner_completed_count(p) == 1);
    CHECK_VERDICT(judge(p, 10, 10, 6), 1, 6, 5, 1);
    /* Forgetting twice, and NULL, are harmless. */
    t2__pruner_forget(p, 9);
    t2__pruner_forget(p, 9);
    t2__pruner_forget(NULL, 9);
    t2__pruner_free(p);
}

static void test_complete_twice(void)
{
    t2__pruner *p = mk(50, 0, 1, 1);
    if (!p) return;
    done(p, 1, 10, 5);
    CHECK_OK(t2__pruner_completed(p, 1));
    CHECK(t2__pruner_completed_count(p) == 1);
    CHECK_OK(t2__pruner_completed(p, 2)); /* no validation */
    CHECK_OK(t2__pruner_completed(p, 2));
    CHECK(t2__pruner_completed_count(p) == 2);
    /* A completed trial's later report is ignored; the reference at step 10 stays {5}. */
    CHECK_VERDICT(judge(p, 1, 10, 1000), 0, NAN, NAN, 0);
    rec(p, 1, 10, 1000);
    CHECK_VERDICT(judge(p, 9, 10, 6), 1, 6, 5, 1);
    t2__pruner_free(p);
}

static void test_params(void)
{
    t2__pruner *p = (t2__pruner *)&p; /* must be set to NULL on refusal */
    const double bad_pct[] = {0, -1, 100.0001, NAN, INFINITY, -INFINITY};
    for (size_t k = 0; k < sizeof bad_pct / sizeof *bad_pct; k++) {
        t2__pruner_params prm = {.percentile = bad_pct[k], .n_startup_trials = 0, .n_min_trials = 1, .smaller_is_better = 1};
        p = (t2__pruner *)&p;
        CHECK_RC(t2__pruner_create(&prm, &p), T2_EINVAL);
        CHECK(p == NULL);
    }
    t2__pruner_params prm = {.percentile = 50, .n_startup_trials = -1, .n_min_trials = 1, .smaller_is_better = 1};
    CHECK_RC(t2__pruner_create(&prm, &p), T2_EINVAL);
    CHECK(strstr(t2_errmsg(), "n_startup_trials") != NULL);
    prm = (t2__pruner_params){.percentile = 50, .n_startup_trials = 0, .n_min_trials = 0, .smaller_is_better = 1};
    CHECK_RC(t2__pruner_create(&prm, &p), T2_EINVAL);
    CHECK(strstr(t2_errmsg(), "n_min_trials") != NULL);
    prm = (t2__pruner_params){.percentile = 50, .n_startup_trials = 0, .n_min_trials = -5, .smaller_is_better = 1};
    CHECK_RC(t2__pruner_create(&prm, &p), T2_EINVAL);
    CHECK_RC(t2__pruner_create(NULL, &p), T2_EINVAL);
    CHECK_RC(t2__pruner_create(&prm, NULL), T2_EINVAL);
    /* The edges that are in range. */
    prm = (t2__pruner_params){.percentile = 100, .n_startup_trials = 0, .n_min_trials = 1, .smaller_is_better = 0};
    CHECK_OK(t2__pruner_create(&prm, &p));
    /* Judging needs somewhere to put the verdict. */
    CHECK_RC(t2__pruner_report(p, 1, 1, NULL, 1.0, 1, NULL), T2_EINVAL);
    CHECK_RC(t2__pruner_report(NULL, 1, 1, NULL, 1.0, 0, NULL), T2_EINVAL);
    CHECK_RC(t2__pruner_completed(NULL, 1), T2_EINVAL);
    CHECK(t2__pruner_completed_count(NULL) == 0);
    t2__pruner_free(p);
    prm = (t2__pruner_params){.percentile = 1e-9, .n_startup_trials = 1000000, .n_min_trials = 1000000, .smaller_is_better = 1};
    CHECK_OK(t2__pruner_create(&prm, &p));
    t2__pruner_free(p);
    t2__pruner_free(NULL);
}

/* ---- a larger run against a brute-force recomputation ---- */

#define NT 2000
#define NS 20
enum { M_NONE, M_RUNNING, M_COMPLETED, M_FORGOTTEN };
static double m_val[NT][NS];
static int m_has[NT][NS];
static int m_state[NT];

/* Deterministic curves: a per-trial level that improves with i (as a search finds better
 * hparams, so that later trials also complete), plus a falling term and noise, all multiples of
 * 1/128, so every percentile below (h a multiple of 1/4) is exact in both formulas and compared
 * with ==. Some values are NaN, and every trial i % 101 == 7 diverges (all NaN). */
static double value_of(int i, int j, uint64_t salt)
{
    uint64_t h = t2_hash64(((uint64_t)i << 16 | (uint64_t)j) ^ salt);
    if (i % 101 == 7 || h % 37 == 0) return NAN;
    double level = (double)(t2_hash64((uint64_t)i ^ salt) % 256) / 16 - (double)i / 128;
    return level + (NS - j) * 0.25 + (double)(h % 64) / 64;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Optuna's prune recomputed from every value in the model, the percentile by the textbook formula
 * v[lo] + (h - lo) * (v[lo + 1] - v[lo]), h = (n - 1) * q / 100. */
static t2__prune_verdict brute(const t2__pruner_params *prm, int i, int j)
{
    static double vals[NT];
    t2__prune_verdict w = {.prune = 0, .best = NAN, .threshold = NAN, .compared = 0};
    for (int k = 0; k < NS; k++) {
        double v = m_val[i][k];
        if (m_has[i][k] && !isnan(v) &&
            (isnan(w.best) || (prm->smaller_is_better ? v < w.best : v > w.best)))
            w.best = v;
    }
    int64_t ncompleted = 0;
    size_t n = 0;
    for (int c = 0; c < NT; c++) {
        if (m_state[c] != M_COMPLETED) continue;
        ncompleted++;
        if (!m_has[c][j]) continue;
        w.compared++;
        if (!isnan(m_val[c][j])) vals[n++] = m_val[c][j];
    }
    if (ncompleted == 0 || ncompleted < prm->n_startup_trials) return w;
    if (isnan(w.best)) {
        w.prune = 1;
        return w;
    }
    if (w.compared < prm->n_min_trials || n == 0) return w;
    qsort(vals, n, sizeof *vals, cmp_d);
    double q = prm->smaller_is_better ? prm->percentile : 100 - prm->percentile;
    double h = (double)(n - 1) * q / 100;
    size_t lo = (size_t)floor(h);
    w.threshold = lo + 1 < n ? vals[lo] + (h - (double)lo) * (vals[lo + 1] - vals[lo]) : vals[lo];
    w.prune = prm->smaller_is_better ? w.best > w.threshold : w.best < w.threshold;
    return w;
}

/* Trial i validates step j (batches 50 * (j + 1)) at tick 2 * i + j, so about ten run at once and
 * completions interleave with other trials' validations. Steps 0 and 1 are warmup and the last is
 * the final validation (decide = 0). Trials i % 5 == 1 validate only even steps; trials
 * i % 17 == 3 "restart" and validate step 4 again with a new value (ignored) before step 5; trials
 * i % 13 == 0 fail at their end (forget) instead of completing. Every verdict is compared with
 * brute() exactly. */
static void run_large(const t2__pruner_params *prm, uint64_t salt, int sign)
{
    t2__pruner *p = NULL;
    CHECK_OK(t2__pruner_create(prm, &p));
    if (!p) return;
    memset(m_has, 0, sizeof m_has);
    memset(m_state, 0, sizeof m_state);
    int64_t checked = 0, compared = 0, pruned = 0, completed = 0, bad = 0;
    for (int t = 0; t < 2 * NT + NS; t++) {
        for (int i = t / 2 > NT - 1 ? NT - 1 : t / 2; i >= 0 && t - 2 * i < NS; i--) {
            int j = t - 2 * i;
            if (m_state[i] == M_FORGOTTEN || m_state[i] == M_COMPLETED) continue;
            m_state[i] = M_RUNNING;
            if (i % 17 == 3 && j == 5) { /* the repeat is ignored: step 4 keeps its first value */
                double again = sign * value_of(i, 4, salt ^ 0xabcdef);
                if (!m_has[i][4]) m_val[i][4] = again;
                m_has[i][4] = 1;
                CHECK_OK(t2__pruner_report(p, i, 50 * (4 + 1), NULL, again, 0, NULL));
            }
            if (i % 5 == 1 && j % 2 == 1 && j != NS - 1) continue;
            double v = sign * value_of(i, j, salt);
            m_val[i][j] = v;
            m_has[i][j] = 1;
            int decide = j >= 2 && j < NS - 1;
            t2__prune_verdict got = {.prune = -1, .best = -1, .threshold = -1, .compared = -1};
            CHECK_OK(t2__pruner_report(p, i, 50 * ((int64_t)j + 1), NULL, v, decide, decide ? &got : NULL));
            if (decide) {
                t2__prune_verdict want = brute(prm, i, j);
                checked++;
                compared += !isnan(got.threshold);
                if (got.prune != want.prune || got.compared != want.compared ||
                    !(isnan(want.best) ? isnan(got.best) : got.best == want.best) ||
                    !(isnan(want.threshold) ? isnan(got.threshold) : got.threshold == want.threshold)) {
                    if (bad++ < 5)
                        fprintf(stderr, "trial %d step %d: got {%d, %.17g, %.17g, %lld}, want {%d, %.17g, %.17g, %lld}\n",
                                i, j, got.prune, got.best, got.threshold, (long long)got.compared, want.prune,
                                want.best, want.threshold, (long long)want.compared);
                }
                if (got.prune) {
                    pruned++;
                    t2__pruner_forget(p, i);
                    m_state[i] = M_FORGOTTEN;
                    continue;
                }
            }
            if (j == NS - 1) {
                if (i % 13 == 0) {
                    t2__pruner_forget(p, i);
                    m_state[i] = M_FORGOTTEN;
                } else {
                    CHECK_OK(t2__pruner_completed(p, i));
                    m_state[i] = M_COMPLETED;
                    completed++;
                }
            }
        }
        if (t % 500 == 0) CHECK(t2__pruner_completed_count(p) == completed);
    }
    CHECK(bad == 0);
    CHECK(t2__pruner_completed_count(p) == completed);
    /* The run means something: thousands of verdicts, most of them real comparisons, and both
     * outcomes common. */
    CHECK(checked > 5000 && compared > checked / 2);
    CHECK(pruned > 500 && completed > 200);
    printf("large run (percentile %g, %s): %lld verdicts checked by brute force, %lld with a threshold, "
           "%lld trials pruned, %lld completed\n",
           prm->percentile, prm->smaller_is_better ? "min" : "max", (long long)checked, (long long)compared,
           (long long)pruned, (long long)completed);
    t2__pruner_free(p);
}

static void test_large(void)
{
    t2__pruner_params a = {.percentile = 50, .n_startup_trials = 5, .n_min_trials = 3, .smaller_is_better = 1};
    run_large(&a, 1, 1);
    /* Maximised, the values negated: q = 75, h a multiple of 0.75. */
    t2__pruner_params b = {.percentile = 25, .n_startup_trials = 10, .n_min_trials = 1, .smaller_is_better = 0};
    run_large(&b, 2, -1);
}

/* PATIENT (Optuna's PatientPruner, no wrapped pruner), patience 2: a verdict needs more than 3
 * values; the trial is pruned when the best of its last 3 is not better than the best before them
 * by more than min_delta (minimising: nanmin(before) + min_delta < nanmin(after)). No completed
 * trial is needed. */
static void test_patient(void)
{
    t2__pruner_params prm = {.rule = T2__PRUNE_PATIENT, .patience = 2, .smaller_is_better = 1};
    t2__pruner *p = NULL;
    CHECK_OK(t2__pruner_create(&prm, &p));
    if (!p) return;
    rec(p, 1, 1, 5);
    rec(p, 1, 2, 4);
    CHECK_VERDICT(judge(p, 1, 3, 4.5), 0, 4, NAN, 0);   /* 3 values: not more than patience + 1 */
    CHECK_VERDICT(judge(p, 1, 4, 4.2), 0, 4, 5, 0);     /* before {5}, after {4, 4.5, 4.2}: 5 < 4 no */
    CHECK_VERDICT(judge(p, 1, 5, 4.1), 1, 4.1, 4, 0);   /* before {5, 4}, after {4.5, 4.2, 4.1} */
    /* An improvement inside the window keeps it: before {5, 4, 4.5}, after {4.2, 4.1, 3}. */
    CHECK_VERDICT(judge(p, 1, 6, 3), 0, 3, 4, 0);
    /* NaN after: nanmin skips it; all NaN after: no verdict. */
    rec(p, 2, 1, 1);
    rec(p, 2, 2, NAN);
    rec(p, 2, 3, NAN);
    CHECK_VERDICT(judge(p, 2, 4, NAN), 0, NAN, 1, 0);
    t2__pruner_free(p);

    /* Maximising with min_delta 0.5: before {1, 2}, after {2.4, 2.3, 2.2}: 2 - 0.5 > 2.4 no;
     * after {2.3, 2.2, 1.4} with before {1, 2, 2.4}: 2.4 - 0.5 = 1.9 > 2.3 no; then {2.2, 1.4, 1.8}
     * against {.., 2.4, 2.3}: 1.9 > 2.2 no; then {1.4, 1.8, 1.7} against max 2.4: 1.9 > 1.8 yes. */
    prm = (t2__pruner_params){.rule = T2__PRUNE_PATIENT, .patience = 2, .min_delta = 0.5, .smaller_is_better = 0};
    CHECK_OK(t2__pruner_create(&prm, &p));
    if (!p) return;
    const double v[] = {1, 2, 2.4, 2.3, 2.2, 1.4, 1.8, 1.7};
    const int want[] = {0, 0, 0, 0, 0, 0, 0, 1};
    for (int k = 0; k < 8; k++) {
        t2__prune_verdict out = judge(p, 1, k + 1, v[k]);
        CHECK(out.prune == want[k]);
        if (out.prune != want[k]) fprintf(stderr, "  patient, maximising: value %d: prune %d\n", k, out.prune);
    }
    t2__pruner_free(p);
    prm.min_delta = -1;
    CHECK_RC(t2__pruner_create(&prm, &p), T2_EINVAL);
    prm.min_delta = 0, prm.patience = -1;
    CHECK_RC(t2__pruner_create(&prm, &p), T2_EINVAL);
}

/* A patient rule around the median (Optuna's PatientPruner(MedianPruner(), patience=1)): the
 * median is asked only once the trial has stopped improving; a trial above the median that still
 * improves goes on, one below it that stopped goes on too. */
static void test_patient_wrapped(void)
{
    t2__pruner_params prm = {.percentile = 50, .n_startup_trials = 0, .n_min_trials = 1, .smaller_is_better = 1,
                             .patient_wrap = 1, .patience = 1};
    t2__pruner *p = NULL;
    CHECK_OK(t2__pruner_create(&prm, &p));
    if (!p) return;
    for (int t = 1; t <= 3; t++) {
        for (int s = 1; s <= 6; s++) rec(p, t, s, 1);
        CHECK_OK(t2__pruner_completed(p, t));
    }
    /* 5, 4, 3, 3.5: improving (the best of the last 2 beats the best before them) though above the
     * median 1 all along; 3.2 at step 5: the last two (3.5, 3.2) no better than 3 before: asked. */
    CHECK_VERDICT(judge(p, 10, 1, 5), 0, 5, NAN, 0);
    CHECK_VERDICT(judge(p, 10, 2, 4), 0, 4, NAN, 0);
    CHECK_VERDICT(judge(p, 10, 3, 3), 0, 3, NAN, 0);
    CHECK_VERDICT(judge(p, 10, 4, 3.5), 0, 3, NAN, 0);
    t2__prune_verdict v = judge(p, 10, 5, 3.2);
    CHECK_VERDICT(v, 1, 3, 1, 3);
    CHECK(v.patient == 1 && v.patient_best == 3.2 && v.patient_before == 3);
    /* Stopped improving, but below the median: asked, and goes on. */
    rec(p, 11, 1, 0.5);
    rec(p, 11, 2, 0.4);
    rec(p, 11, 3, 0.45);
    v = judge(p, 11, 4, 0.46);
    CHECK_VERDICT(v, 0, 0.4, 1, 3);
    CHECK(v.patient == 1);
    t2__pruner_free(p);
    /* A patient rule cannot wrap a patient rule. */
    prm.rule = T2__PRUNE_PATIENT;
    CHECK_RC(t2__pruner_create(&prm, &p), T2_EINVAL);
}

/* THRESHOLD (Optuna's ThresholdPruner): the value at the step (not the best) outside [lower, upper]
 * or NaN; no other trial needed. */
static void test_threshold(void)
{
    t2__pruner_params prm = {.rule = T2__PRUNE_THRESHOLD, .lower = 1, .upper = 10, .smaller_is_better = 1};
    t2__pruner *p = NULL;
    CHECK_OK(t2__pruner_create(&prm, &p));
    if (!p) return;
    CHECK_VERDICT(judge(p, 1, 1, 5), 0, 5, NAN, 0);
    CHECK_VERDICT(judge(p, 1, 2, 10), 0, 10, NAN, 0);    /* the bound itself is inside */
    CHECK_VERDICT(judge(p, 1, 3, 10.5), 1, 10.5, 10, 0); /* above, though its best (5) is inside */
    CHECK_VERDICT(judge(p, 2, 1, 0.5), 1, 0.5, 1, 0);
    CHECK_VERDICT(judge(p, 3, 1, NAN), 1, NAN, NAN, 0);
    t2__pruner_free(p);
    prm.lower = 3, prm.upper = 2;
    CHECK_RC(t2__pruner_create(&prm, &p), T2_EINVAL);
    prm.lower = NAN, prm.upper = 2;
    CHECK_RC(t2__pruner_create(&prm, &p), T2_EINVAL);
}

int main(void)
{
    test_median();
    test_percentile25();
    test_many_at_once();
    test_startup();
    test_min_trials();
    test_nan();
    test_best_so_far();
    test_unknown_step();
    test_replace();
    test_forget();
    test_complete_twice();
    test_params();
    test_patient();
    test_threshold();
    test_patient_wrapped();
    test_large();
    return check_report("test_pruner");
}
