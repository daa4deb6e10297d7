/* test_pruner_halving.c — successive halving and hyperband (searchers/halving.h through pruner.h)
 * against numbers worked out by hand: the rungs' steps, the best max(1, n / rf) promoted (ties
 * kept), both directions, a validation reaching several rungs, NaN, bootstrap_count,
 * min_early_stopping_rate, a trial with no unit, re-reported steps, pruned and forgotten trials'
 * values staying at their rungs, hyperband's bracket shares and separate competitions; then 3000
 * interleaved trials, every verdict checked against a brute-force recomputation from the
 * recorded values. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "../../searchers/pruner.h"
#include "t2exp/rng.h"

static t2__pruner *mk(int64_t rf, int64_t mesr, int64_t bootstrap, int64_t brackets, int smaller)
{
    t2__pruner_params prm = {.rule = T2__PRUNE_HALVING, .reduction_factor = rf, .min_early_stopping_rate = mesr,
                             .bootstrap_count = bootstrap, .n_brackets = brackets, .smaller_is_better = smaller};
    t2__pruner *p = NULL;
    CHECK_OK(t2__pruner_create(&prm, &p));
    return p;
}

/* A min_resource of n batches. */
static t2__halving_unit U(int64_t n)
{
    return (t2__halving_unit){.n = n, .mul = 1, .div = 1};
}

static t2__prune_verdict judge(t2__pruner *p, int64_t trial, int64_t step, int64_t unit, double v)
{
    t2__prune_verdict out = {.prune = -1};
    t2__halving_unit u = U(unit);
    CHECK_OK(t2__pruner_report(p, trial, step, &u, v, 1, &out));
    return out;
}

static void rec(t2__pruner *p, int64_t trial, int64_t step, int64_t unit, double v)
{
    t2__halving_unit u = U(unit);
    CHECK_OK(t2__pruner_report(p, trial, step, &u, v, 0, NULL));
}

/* prune, rung, its step, compared, keep, threshold (NaN matches NaN). */
#define CHECK_HV(vd, w_prune, w_rung, w_at, w_n, w_keep, w_thr)                                                  \
    do {                                                                                                        \
        t2__prune_verdict v_ = (vd);                                                                            \
        double wt_ = (w_thr);                                                                                   \
        int ok_ = v_.prune == (w_prune) && v_.rung == (w_rung) && v_.rung_batches == (w_at) &&                  \
                  v_.compared == (w_n) && v_.keep == (w_keep) && (isnan(wt_) ? isnan(v_.threshold) : v_.threshold == wt_); \
        CHECK(ok_);                                                                                             \
        if (!ok_)                                                                                               \
            fprintf(stderr, "  got prune %d rung %lld at %lld compared %lld keep %lld threshold %g\n", v_.prune, \
                    (long long)v_.rung, (long long)v_.rung_batches, (long long)v_.compared, (long long)v_.keep,  \
                    v_.threshold);                                                                              \
    } while (0)

static void test_successive_halving(void)
{
    /* rf 2, unit 1: rungs at batches 1, 2, 4, 8. */
    t2__pruner *p = mk(2, 0, 0, 1, 1);
    if (!p) return;
    CHECK_HV(judge(p, 1, 1, 1, 5), 0, 0, 1, 1, 1, 5);   /* alone: promoted (best of 1) */
    CHECK_HV(judge(p, 2, 1, 1, 3), 0, 0, 1, 2, 1, 3);   /* {3, 5}: the best 1 */
    CHECK_HV(judge(p, 3, 1, 1, 4), 1, 0, 1, 3, 1, 3);   /* {3, 4, 5}: 4 is not the best */
    CHECK_HV(judge(p, 4, 1, 1, 4.5), 1, 0, 1, 4, 2, 4); /* {3, 4, 4.5, 5}: the best 2 reach 4 */
    CHECK_HV(judge(p, 5, 1, 1, 3.5), 0, 0, 1, 5, 2, 3.5); /* {3, 3.5, ...}: a tie with the bound goes on */
    CHECK_HV(judge(p, 2, 2, 1, 2), 0, 1, 2, 1, 1, 2);   /* trial 2 at rung 1 */
    CHECK_HV(judge(p, 2, 3, 1, 9), 0, -1, -1, 0, 0, NAN); /* no rung at 3: no verdict */
    /* A first validation at batch 4 reaches rungs 0, 1 and 2: recorded at each, the last judged. */
    CHECK_HV(judge(p, 6, 4, 1, 1), 0, 2, 4, 1, 1, 1);
    /* Trial 9's first validation at 2 reaches rung 0 (promoted: 1.5 is among the best 3 of 7) and
     * rung 1, which holds {1, 2} from trials 6 and 2: 1.5 is not the best of 3. */
    CHECK_HV(judge(p, 9, 2, 1, 1.5), 1, 1, 2, 3, 1, 1);
    /* A re-reported step (a restarted trial) keeps its first value and records nothing, but is
     * judged again at the rung it reached, against the rung as it is now: trial 2's 2 at rung 1,
     * which trials 6 and 9 joined since with 1 and 1.5. */
    CHECK_HV(judge(p, 2, 2, 1, 0.1), 1, 1, 2, 3, 1, 1);
    CHECK_HV(judge(p, 2, 3, 1, 0.1), 0, -1, -1, 0, 0, NAN); /* step 3 reached no rung */
    /* NaN past a rung: pruned there, nothing recorded (rung 0 still holds 7 values). */
    t2__prune_verdict v = judge(p, 7, 1, 1, NAN);
    CHECK(v.prune == 1 && v.rung == 0 && v.rung_batches == 1 && isnan(v.best));
    /* Pruned and forgotten trials stay at their rungs, as Optuna's competing values include every
     * trial's; recording without a verdict (decide 0) counts too. */
    t2__pruner_forget(p, 3);
    rec(p, 10, 1, 1, 0.5);
    CHECK_HV(judge(p, 8, 1, 1, 100), 1, 0, 1, 9, 4, 3); /* {0.5, 1, 1.5, 3, 3.5, 4, 4.5, 5, 100}: best 4 */
    /* Completion keeps the trial's values too and counts it. */
    CHECK_OK(t2__pruner_completed(p, 1));
    CHECK(t2__pruner_completed_count(p) == 1);
    CHECK_HV(judge(p, 11, 1, 1, 3.9), 1, 0, 1, 10, 5, 3.5);
    /* A trial with no unit (an epoch length still unknown) reaches no rung. */
    CHECK_HV(judge(p, 12, 1000, 0, 0), 0, -1, -1, 0, 0, NAN);
    t2__pruner_free(p);

    /* Maximised, rf 3: {1..6} keeps the best 2, i.e. >= 5. */
    p = mk(3, 0, 0, 1, 0);
    if (!p) return;
    for (int i = 1; i <= 5; i++) rec(p, i, 7, 7, i);
    CHECK_HV(judge(p, 6, 7, 7, 6), 0, 0, 7, 6, 2, 5);
    CHECK_HV(judge(p, 7, 7, 7, 4.5), 1, 0, 7, 7, 2, 5);
    t2__pruner_free(p);

    /* min_early_stopping_rate 1, unit 3, rf 2: the first rung at 3 * 2 = 6; bootstrap_count 2: the
     * first two trials there are pruned whatever their values. */
    p = mk(2, 1, 2, 1, 1);
    if (!p) return;
    CHECK_HV(judge(p, 1, 5, 3, 1), 0, -1, -1, 0, 0, NAN);
    v = judge(p, 1, 6, 3, 1);
    CHECK(v.prune && v.bootstrap && v.rung == 0 && v.rung_batches == 6 && v.compared == 1 && isnan(v.threshold));
    v = judge(p, 2, 6, 3, 0);
    CHECK(v.prune && v.bootstrap && v.compared == 2);
    CHECK_HV(judge(p, 3, 6, 3, 0.5), 1, 0, 6, 3, 1, 0);  /* 3 > 2: judged, and 0.5 is not the best */
    t2__pruner_free(p);
}

/* Hyperband, 3 brackets, rf 3: shares 9, 5 and 3 of 17 (Optuna's ceil(3 * 3^s / (s + 1))); bracket b
 * starts at unit * 3^b, and competes only within itself. */
static void test_hyperband(void)
{
    t2__pruner *p = mk(3, 0, 0, 3, 1);
    if (!p) return;
    int count[3] = {0, 0, 0}, first[3] = {-1, -1, -1}, second[3] = {-1, -1, -1};
    for (int t = 0; t < 17000; t++) {
        /* Its bracket is where its first rung lies: report at 1, 3 and 9 until one records. */
        t2__prune_verdict v = judge(p, t, 1, 1, 100000 - t);
        if (v.rung < 0) v = judge(p, t, 3, 1, 100000 - t);
        if (v.rung < 0) v = judge(p, t, 9, 1, 100000 - t);
        int b = v.rung_batches == 1 ? 0 : v.rung_batches == 3 ? 1 : v.rung_batches == 9 ? 2 : -1;
        CHECK(b >= 0 && v.bracket == b && v.rung == 0);
        if (b < 0) break;
        count[b]++;
        if (first[b] < 0) first[b] = t;
        else if (second[b] < 0) second[b] = t;
        CHECK(v.compared == count[b]); /* only its bracket's trials */
    }
    printf("hyperband brackets: %d %d %d of 17000 (shares 9000 5000 3000)\n", count[0], count[1], count[2]);
    for (int b = 0; b < 3; b++) {
        double want = 1000.0 * (b == 0 ? 9 : b == 1 ? 5 : 3);
        CHECK(fabs(count[b] - want) < 0.05 * want);
    }
    t2__pruner_free(p);
}

/* A patient rule (patience 0) around successive halving: a value is recorded at its rung whether or
 * not the rule is asked; once asked (the last value worse than the best before), the halving rule
 * judges every rung the trial reached since it was last judged, each with the value recorded there
 * (Optuna's SuccessiveHalvingPruner catches up on them the same way, with the value of that moment). */
static void test_patient_wrapped(void)
{
    t2__pruner_params prm = {.rule = T2__PRUNE_HALVING, .reduction_factor = 2, .n_brackets = 1, .smaller_is_better = 1,
                             .patient_wrap = 1, .patience = 0};
    t2__pruner *p = NULL;
    CHECK_OK(t2__pruner_create(&prm, &p));
    if (!p) return;
    CHECK_HV(judge(p, 1, 1, 1, 1), 0, -1, -1, 0, 0, NAN);   /* one value: not asked, but recorded */
    CHECK_HV(judge(p, 2, 1, 1, 0.5), 0, -1, -1, 0, 0, NAN);
    CHECK_HV(judge(p, 3, 1, 1, 2), 0, -1, -1, 0, 0, NAN);   /* rung 0: {0.5, 1, 2} */
    /* Worse than 2 before: asked; rung 0, passed unjudged at batch 1, comes first: 2 is not the best. */
    t2__prune_verdict v = judge(p, 3, 2, 1, 3);
    CHECK_HV(v, 1, 0, 1, 3, 1, 0.5);
    CHECK(v.patient == 1 && v.best == 2);
    CHECK_HV(judge(p, 4, 1, 1, 1.5), 0, -1, -1, 0, 0, NAN); /* rung 0: 4 values */
    v = judge(p, 4, 2, 1, 4);
    CHECK_HV(v, 1, 0, 1, 4, 2, 1);
    /* 0.2 then 0.3: asked at batch 2, promoted at rung 0 (the best 2 of 5) and at rung 1 ({0.3, 3, 4}). */
    CHECK_HV(judge(p, 6, 1, 1, 0.2), 0, -1, -1, 0, 0, NAN);
    v = judge(p, 6, 2, 1, 0.3);
    CHECK_HV(v, 0, 1, 2, 3, 1, 0.3);
    CHECK(v.patient == 1);
    /* Judged at rungs 0 and 1 already: a worse value at 3 (no new rung) judges nothing more. */
    v = judge(p, 6, 3, 1, 0.4);
    CHECK(!v.prune && v.patient == 1 && v.rung == -1);
    v = judge(p, 5, 1, 1, 0.1); /* a first value is not judged, even where rung 0 would prune... */
    CHECK(!v.prune && v.patient == 0);
    v = judge(p, 5, 2, 1, 0.05); /* ...nor an improving one */
    CHECK(!v.prune && v.patient == 0);
    t2__pruner_free(p);
}

/* A length in records or epochs: rung k at the first batch past min_resource * rf^k of them, not
 * at a first rung rounded to batches times rf^k. */
static void test_units(void)
{
    t2__pruner *p = mk(3, 0, 0, 1, 1);
    if (!p) return;
    t2__halving *h = NULL; /* the rung positions are the halving object's: make one with the same params */
    t2__halving_params hp = {.reduction_factor = 3, .n_brackets = 1, .smaller_is_better = 1};
    CHECK_OK(t2__halving_create(&hp, &h));
    t2__halving_unit records = {.n = 100, .mul = 1, .div = 64}, epochs = {.n = 2, .mul = 7, .div = 1};
    CHECK(t2__halving_rung_batches(h, 0, 0, &records) == 2);   /* 100 records: batch 2 (128) */
    CHECK(t2__halving_rung_batches(h, 0, 1, &records) == 5);   /* 300: batch 5 (320), not 2 * 3 */
    CHECK(t2__halving_rung_batches(h, 0, 2, &records) == 15);  /* 900: batch 15 (960) */
    CHECK(t2__halving_rung_batches(h, 0, 1, &epochs) == 42);   /* 6 epochs of 7 batches */
    t2__halving_unit unknown = {.n = 2, .mul = 0, .div = 1};   /* an epoch's length not known yet */
    CHECK(t2__halving_rung_batches(h, 0, 0, &unknown) == -1);
    t2__halving_unit huge = {.n = INT64_MAX / 2, .mul = 3, .div = 1};
    CHECK(t2__halving_rung_batches(h, 0, 0, &huge) == -1);
    /* Through the pruner: a trial of global batch 64 reports batches 2, 4, 5: rungs at 2 and 5. */
    t2__prune_verdict v;
    CHECK_OK(t2__pruner_report(p, 1, 2, &records, 1, 1, &v));
    CHECK(v.rung == 0 && v.rung_batches == 2);
    CHECK_OK(t2__pruner_report(p, 1, 4, &records, 1, 1, &v));
    CHECK(v.rung == -1);
    CHECK_OK(t2__pruner_report(p, 1, 5, &records, 1, 1, &v));
    CHECK(v.rung == 1 && v.rung_batches == 5);
    t2__halving_free(h);
    t2__pruner_free(p);
}

static void test_refused(void)
{
    t2__pruner *p = NULL;
    t2__pruner_params prm = {.rule = T2__PRUNE_HALVING, .reduction_factor = 1, .n_brackets = 1};
    CHECK_RC(t2__pruner_create(&prm, &p), T2_EINVAL);
    prm.reduction_factor = 2, prm.n_brackets = 0;
    CHECK_RC(t2__pruner_create(&prm, &p), T2_EINVAL);
    prm.n_brackets = 1, prm.bootstrap_count = -1;
    CHECK_RC(t2__pruner_create(&prm, &p), T2_EINVAL);
    CHECK(p == NULL);
    /* A rung past 2^63 batches is never reached (no overflow). */
    p = mk(1000000, 62, 0, 1, 1);
    if (p) CHECK_HV(judge(p, 1, INT64_MAX, 1, 1), 0, -1, -1, 0, 0, NAN);
    t2__pruner_free(p);
}

/* ---- 3000 interleaved trials against a brute-force recomputation ---- */

#define NT 3000
#define NS 24
enum { RF = 3, UNIT = 2, BOOT = 1 };
static double rec_v[NT * 8];      /* every value recorded at a rung, in order */
static int rec_b[NT * 8], rec_r[NT * 8];
static size_t nrec;
static int64_t m_rungs[NT], m_last[NT];
static int m_done[NT];

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The model: the same rule, written the slow way (Optuna's loop, every rung's values gathered and
 * sorted afresh at each verdict). */
static t2__prune_verdict model(int bracket, int64_t i, int64_t step, double v, int decide, int64_t mesr, int smaller)
{
    static double vals[NT];
    t2__prune_verdict w = {.prune = 0, .rung = -1, .rung_batches = -1, .threshold = NAN};
    if (step <= m_last[i]) return w; /* a repeat */
    m_last[i] = step;
    for (;;) {
        int64_t at = UNIT;
        for (int64_t k = 0; k < mesr + bracket + m_rungs[i]; k++) at *= RF;
        if (step < at) return w;
        if (!w.prune) w.rung = m_rungs[i], w.rung_batches = at;
        if (isnan(v)) {
            w.prune |= decide;
            return w;
        }
        rec_v[nrec] = v, rec_b[nrec] = bracket, rec_r[nrec] = (int)m_rungs[i];
        nrec++;
        if (decide && !w.prune) {
            size_t n = 0;
            for (size_t k = 0; k < nrec; k++)
                if (rec_b[k] == bracket && rec_r[k] == m_rungs[i]) vals[n++] = rec_v[k];
            qsort(vals, n, sizeof *vals, cmp_d);
            int64_t keep = (int64_t)n / RF < 1 ? 1 : (int64_t)n / RF;
            w.compared = (int64_t)n, w.keep = keep;
            if ((int64_t)n <= BOOT) w.prune = 1, w.threshold = NAN;
            else {
                w.threshold = smaller ? vals[keep - 1] : vals[n - (size_t)keep];
                w.prune = smaller ? v > w.threshold : v < w.threshold;
            }
        }
        m_rungs[i]++;
    }
}

static void run_large(int brackets, int64_t mesr, int smaller, uint64_t salt)
{
    t2__pruner *p = mk(RF, mesr, BOOT, brackets, smaller);
    if (!p) return;
    nrec = 0;
    memset(m_rungs, 0, sizeof m_rungs);
    memset(m_last, 0, sizeof m_last);
    memset(m_done, 0, sizeof m_done);
    int64_t checked = 0, pruned = 0, judged = 0, bad = 0;
    /* Trial i validates every other batch: step j at tick 3 * i + j, so trials overlap; some values
     * NaN; trials i % 7 == 2 re-report their step 6 after step 10 (a restart); the last step is
     * their final validation (not judged); trials i % 11 == 0 are recorded without verdicts. */
    for (int t = 0; t < 3 * NT + NS; t++) {
        for (int i = t / 3 < NT ? t / 3 : NT - 1; i >= 0 && t - 3 * i < NS; i--) {
            int j = t - 3 * i;
            if (m_done[i] || j % 2) continue;
            uint64_t h = t2_hash64((uint64_t)i << 20 ^ (uint64_t)j ^ salt);
            double level = (double)(t2_hash64((uint64_t)i ^ salt) % 512) / 8;
            double v = h % 53 == 0 ? NAN : (smaller ? 1 : -1) * (level + (NS - j) + (double)(h % 16) / 16);
            int decide = j < NS - 2 && i % 11 != 0;
            int64_t step = (int64_t)j + 2;
            int b;
            t2__prune_verdict got = {.prune = -1};
            t2__halving_unit u = U(UNIT);
            CHECK_OK(t2__pruner_report(p, i, step, &u, v, decide, decide ? &got : NULL));
            if (i % 7 == 2 && j == 8) CHECK_OK(t2__pruner_report(p, i, 6, &u, v + 1, 0, NULL)); /* step 6 again */
            if (decide) b = (int)got.bracket;
            else { /* the bracket from a verdict-free probe is not exposed: ask with a repeat */
                t2__prune_verdict probe;
                CHECK_OK(t2__pruner_report(p, i, step, &u, v, 1, &probe));
                b = (int)probe.bracket;
            }
            t2__prune_verdict want = model(b, i, step, v, decide, mesr, smaller);
            if (i % 7 == 2 && j == 8) model(b, i, 6, v + 1, 0, mesr, smaller);
            if (!decide) {
                if (j == NS - 2) {
                    m_done[i] = 1;
                    CHECK_OK(t2__pruner_completed(p, i));
                }
                continue;
            }
            checked++;
            judged += got.rung >= 0;
            int same = got.prune == want.prune && got.rung == want.rung && got.rung_batches == want.rung_batches &&
                       (!got.prune || got.compared == want.compared) &&
                       (isnan(want.threshold) ? isnan(got.threshold) : got.threshold == want.threshold);
            if (!same && bad++ < 5)
                fprintf(stderr, "trial %d step %lld: got {%d rung %lld at %lld n %lld thr %g}, want {%d rung %lld at %lld n %lld thr %g}\n",
                        i, (long long)step, got.prune, (long long)got.rung, (long long)got.rung_batches,
                        (long long)got.compared, got.threshold, want.prune, (long long)want.rung,
                        (long long)want.rung_batches, (long long)want.compared, want.threshold);
            if (got.prune) {
                pruned++;
                m_done[i] = 1;
                t2__pruner_forget(p, i);
            }
        }
    }
    CHECK(bad == 0);
    CHECK(checked > 5000 && judged > 2000 && pruned > 1000 && pruned < NT);
    printf("large run (%d bracket(s), rate %lld, %s): %lld verdicts checked by brute force, %lld at a rung, %lld "
           "pruned\n", brackets, (long long)mesr, smaller ? "min" : "max", (long long)checked, (long long)judged,
           (long long)pruned);
    t2__pruner_free(p);
}

int main(void)
{
    test_successive_halving();
    test_hyperband();
    test_refused();
    test_patient_wrapped();
    test_units();
    run_large(1, 0, 1, 1);
    run_large(1, 1, 0, 2);
    run_large(3, 0, 1, 3);
    return check_report("test_pruner_halving");
}
