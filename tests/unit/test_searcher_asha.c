/* test_searcher_asha.c — adaptive ASHA: the bracket layout of each mode (rungs, trials and
 * starting trials per bracket, rung lengths), promotion and stop decisions on scripted metric
 * sequences (divisor 2 and 4, smaller_is_better both ways, stop_once), failures and exits that
 * must not stall the search, invalid-hparams replacement, SHUTDOWN exactly once at the end,
 * snapshot/restore equivalence at every event of whole runs, and the preview. */
#define _POSIX_C_SOURCE 200809L /* strdup */
#include <float.h>
#include "test_searcher_util.h"
#include "../../searchers/asha.h"

/* The scripts below were written for t2exp's own settings, max_concurrent_trials 0 (each bracket
 * starts with max(its trials, divisor)) and stop_once false (pause and promote); they are kept as
 * the tests of those settings, added here unless the keys set them. The defaults, Determined's
 * (16 and stop once), have their own tests (test_determined_defaults). */
static const char *own_settings(const char *keys)
{
    static char buf[1024];
    snprintf(buf, sizeof buf, "%s%s%s", strstr(keys, "max_concurrent_trials") ? "" : "max_concurrent_trials: 0, ",
             strstr(keys, "stop_once") ? "" : "stop_once: false, ", keys);
    return buf;
}

static t2__searcher *make(const char *searcher_keys, uint64_t seed, t2__config **cfg_out)
{
    char keys[1024];
    snprintf(keys, sizeof keys, "name: adaptive_asha, metric: loss, %s", own_settings(searcher_keys));
    t2__config *cfg = load_cfg(keys, "  lr: {type: log, minval: -4, maxval: -1}\n");
    t2__searcher *s = NULL;
    if (cfg) CHECK_OK(t2__searcher_create(cfg, seed, &s));
    *cfg_out = cfg;
    return s;
}

/* ---------- layout ---------- */

static void layout_of(const char *keys, t2__asha_layout *L)
{
    char full[1024];
    snprintf(full, sizeof full, "name: adaptive_asha, metric: loss, %s", own_settings(keys));
    t2__config *cfg = load_cfg(full, NULL);
    memset(L, 0, sizeof *L);
    if (cfg) CHECK_OK(t2__asha_layout_of(&cfg->searcher, L));
    t2__config_free(cfg);
}

static const char *layout_text(const t2__asha_layout *L)
{
    static char buf[512];
    size_t at = (size_t)snprintf(buf, sizeof buf, "max_rungs %" PRId64 ":", L->max_rungs);
    for (size_t i = 0; i < L->nbrackets; i++)
        at += (size_t)snprintf(buf + at, sizeof buf - at, " [%" PRId64 " rungs, %" PRId64 " trials, %" PRId64 " at start]",
                               L->rungs[i], L->max_trials[i], L->initial[i]);
    return buf;
}

static void test_layout(void)
{
    t2__asha_layout L;
    /* Defaults: standard, divisor 4, max_rungs 5. 16 trials cap the rungs at log4(16) + 1 = 3;
     * standard keeps brackets of 2..3 rungs; weights 4^2/3 and 4/2 split 16 trials 11 + 4, the
     * remainder 1 to the first; each starts max(last bracket's trials, divisor) = 4. */
    layout_of("max_trials: 16, max_length: {batches: 1000}", &L);
    CHECK_STR(layout_text(&L), "max_rungs 3: [3 rungs, 12 trials, 4 at start] [2 rungs, 4 trials, 4 at start]");
    layout_of("mode: aggressive, max_trials: 16, max_length: {batches: 1000}", &L);
    CHECK_STR(layout_text(&L), "max_rungs 3: [3 rungs, 16 trials, 16 at start]");
    /* Conservative: 3, 2 and 1 rungs; 16 * (5.33, 2, 1) / 8.33 = 10, 3, 1, remainder 2 to the first. */
    layout_of("mode: conservative, max_trials: 16, max_length: {batches: 1000}", &L);
    CHECK_STR(layout_text(&L),
              "max_rungs 3: [3 rungs, 12 trials, 4 at start] [2 rungs, 3 trials, 3 at start] [1 rungs, 1 trials, 1 at start]");
    /* max_concurrent_trials split evenly over brackets, the remainder to the first. */
    layout_of("max_trials: 16, max_concurrent_trials: 5, max_length: {batches: 1000}", &L);
    CHECK_STR(layout_text(&L), "max_rungs 3: [3 rungs, 12 trials, 3 at start] [2 rungs, 4 trials, 2 at start]");
    /* Fewer than one per bracket still gives every bracket one. */
    layout_of("mode: conservative, max_trials: 16, max_concurrent_trials: 1, max_length: {batches: 1000}", &L);
    CHECK_STR(layout_text(&L),
              "max_rungs 3: [3 rungs, 12 trials, 1 at start] [2 rungs, 3 trials, 1 at start] [1 rungs, 1 trials, 1 at start]");
    /* max_length caps the rungs too: 4^2 <= 20 < 4^3. */
    layout_of("mode: aggressive, max_trials: 1000, max_length: {batches: 20}", &L);
    CHECK(L.max_rungs == 3);
    /* As Determined: log(1000)/log(10) rounds below 3 in floating point, so an exact power loses a
     * rung (10/100/1000, not 1/10/100/1000); bracket_rungs: [4] gives the fourth. */
    layout_of("mode: aggressive, divisor: 10, max_trials: 1000, max_length: {batches: 1000}", &L);
    CHECK_STR(layout_text(&L), "max_rungs 3: [3 rungs, 1000 trials, 1000 at start]");
    layout_of("divisor: 10, bracket_rungs: [4], max_trials: 1000, max_length: {batches: 1000}", &L);
    CHECK_STR(layout_text(&L), "max_rungs 4: [4 rungs, 1000 trials, 1000 at start]");
    /* max_rungs wins when smaller; standard with 5 rungs keeps brackets of 3..5. */
    layout_of("divisor: 2, max_rungs: 5, max_trials: 100, max_length: {epochs: 64}", &L);
    CHECK_STR(layout_text(&L),
              "max_rungs 5: [5 rungs, 50 trials, 20 at start] [4 rungs, 30 trials, 20 at start] [3 rungs, 20 trials, 20 at start]");
    /* bracket_rungs as given, most rungs first, not capped. */
    layout_of("divisor: 3, bracket_rungs: [2, 4], max_trials: 30, max_length: {batches: 10}", &L);
    CHECK_STR(layout_text(&L), "max_rungs 4: [4 rungs, 25 trials, 5 at start] [2 rungs, 5 trials, 5 at start]");
}

static void test_rung_lengths(void)
{
    /* max_length / divisor^k, floored, at least 1. */
    CHECK(t2__asha_rung_length(1000, 4, 3, 0) == 62);
    CHECK(t2__asha_rung_length(1000, 4, 3, 1) == 250);
    CHECK(t2__asha_rung_length(1000, 4, 3, 2) == 1000);
    CHECK(t2__asha_rung_length(3, 4, 3, 0) == 1);
    CHECK(t2__asha_rung_length(3, 4, 3, 1) == 1);
    CHECK(t2__asha_rung_length(100, 2.5, 3, 0) == 16);
    /* As seen in ops: standard over 1000 batches gives 62/250/1000 and 250/1000. */
    t2__config *cfg = NULL;
    t2__ops ops = {0};
    t2__searcher *s = make("max_trials: 16, max_length: {batches: 1000}", 1, &cfg);
    if (s) {
        CHECK_OK(t2__searcher_start(s, &ops));
        CHECK_STR(ops_text(&ops, 0, 0), "C0 T0@62 C1 T1@62 C2 T2@62 C3 T3@62 C4 T4@250 C5 T5@250 C6 T6@250 C7 T7@250");
        CHECK(t2__searcher_total_trials(s) == 16);
    }
    t2__ops_free(&ops);
    t2__searcher_free(s);
    t2__config_free(cfg);
}

/* ---------- scripted decisions ---------- */

/* Applies one validation and returns the ops it produced as text. */
static const char *val(t2__searcher *s, t2__ops *ops, int64_t rid, double metric, int64_t length)
{
    t2__ops_clear(ops);
    CHECK_OK(t2__searcher_on_validation(s, rid, metric, length, ops));
    return ops_text(ops, 0, 0);
}

static const char *exited(t2__searcher *s, t2__ops *ops, int64_t rid)
{
    t2__ops_clear(ops);
    CHECK_OK(t2__searcher_on_trial_exited(s, rid, ops));
    return ops_text(ops, 0, 0);
}

static const char *failed(t2__searcher *s, t2__ops *ops, int64_t rid, int invalid)
{
    t2__ops_clear(ops);
    CHECK_OK(t2__searcher_on_trial_failed(s, rid, invalid, ops));
    return ops_text(ops, 0, 0);
}

/* Aggressive, divisor 2, 4 trials over 4 batches: one bracket with rungs at 1, 2, 4, all four
 * trials at once, up to rung 0 settled (its four results in, trials 1 and 3 promoted, 0 and 2
 * closed and exited). sign = -1 runs the same script as a larger-is-better metric. NULL if the
 * searcher could not be made (*cfg may still need freeing). */
static t2__searcher *rung0_settled(int sign, t2__config **cfg, t2__ops *ops)
{
    t2__searcher *s = make(sign > 0 ? "mode: aggressive, divisor: 2, max_trials: 4, max_length: {batches: 4}"
                                    : "mode: aggressive, divisor: 2, max_trials: 4, max_length: {batches: 4}, "
                                      "smaller_is_better: false",
                           3, cfg);
    if (!s) return NULL;
    CHECK_OK(t2__searcher_start(s, ops));
    CHECK_STR(ops_text(ops, 0, 0), "C0 T0@1 C1 T1@1 C2 T2@1 C3 T3@1");
    /* 1 result: floor(1/2) = 0 go on. */
    CHECK_STR(val(s, ops, 0, sign * 0.4, 1), "");
    /* 2 results: 1 goes on, and the new one is the best: promoted at once. */
    CHECK_STR(val(s, ops, 1, sign * 0.3, 1), "T1@2");
    CHECK_STR(val(s, ops, 1, sign * 0.3, 1), ""); /* a repeat carries no decision */
    /* 3 results: still 1; the new one is the worst. */
    CHECK_STR(val(s, ops, 2, sign * 0.5, 1), "");
    CHECK(t2__searcher_progress(s) > 0 && t2__searcher_progress(s) < 1);
    /* 4 results: 2 go on; the new one is best: promoted. All 4 trials are in rung 0 and nothing
     * is outstanding there, so the two that cannot be promoted any more are closed. */
    CHECK_STR(val(s, ops, 3, sign * 0.1, 1), "T3@2 X0 X2");
    CHECK_STR(exited(s, ops, 0), "");
    CHECK_STR(exited(s, ops, 2), "");
    return s;
}

static void script_promotions(int sign)
{
    t2__config *cfg = NULL;
    t2__ops ops = {0};
    t2__searcher *s = rung0_settled(sign, &cfg, &ops);
    if (!s) goto done;
    /* Rung 1 (length 2): the first result waits, the second (better) goes on; rung 1 is then
     * settled and the waiting one is closed. */
    CHECK_STR(val(s, &ops, 1, sign * 0.25, 2), "");
    CHECK_STR(val(s, &ops, 3, sign * 0.2, 2), "T3@4 X1");
    CHECK_STR(exited(s, &ops, 1), "");
    /* The top rung closes its trial; its exit ends the search. */
    CHECK_STR(val(s, &ops, 3, sign * 0.15, 4), "X3");
    CHECK(t2__searcher_progress(s) < 1);
    CHECK_STR(exited(s, &ops, 3), "S");
    CHECK(t2__searcher_progress(s) == 1.0);
done:
    t2__ops_free(&ops);
    t2__searcher_free(s);
    t2__config_free(cfg);
}

/* Rung 0 settled and closed out, then a trial in it leaves it (invalid hparams) and its
 * replacement reports there: rung 0 is full again, and the newcomer, not promoted, must be closed
 * like the others were (close_out goes through a rung again once it changed: a skip of rungs it
 * had gone through once passed every other test here and left the newcomer running for good). */
static void script_closed_out_rung_changes(void)
{
    t2__config *cfg = NULL;
    t2__ops ops = {0};
    t2__searcher *s = rung0_settled(1, &cfg, &ops);
    if (!s) goto done;
    CHECK_STR(failed(s, &ops, 3, 1), "C4 T4@1");
    CHECK_STR(val(s, &ops, 4, 0.9, 1), "X4");
done:
    t2__ops_free(&ops);
    t2__searcher_free(s);
    t2__config_free(cfg);
}

/* A late promotion: the trial at the edge goes on when the count grows, not only the newcomer;
 * with max_concurrent_trials 2 every result that promotes no one requests the next trial. */
static void script_late_promotion(void)
{
    t2__config *cfg = NULL;
    t2__ops ops = {0};
    t2__searcher *s = make("mode: aggressive, divisor: 2, max_trials: 4, max_concurrent_trials: 2, "
                           "max_length: {batches: 4}",
                           3, &cfg);
    if (!s) goto done;
    CHECK_OK(t2__searcher_start(s, &ops));
    CHECK_STR(ops_text(&ops, 0, 0), "C0 T0@1 C1 T1@1");
    CHECK_STR(val(s, &ops, 0, 0.1, 1), "C2 T2@1");
    /* 2 results, 1 goes on: the best (trial 0) was not promoted yet, so it goes now. */
    CHECK_STR(val(s, &ops, 1, 0.3, 1), "T0@2");
    CHECK_STR(val(s, &ops, 2, 0.2, 1), "C3 T3@1");
    /* 4 results, 2 go on: trial 2 (0.2) is now at the edge. Then rung 0 is full and settled. */
    CHECK_STR(val(s, &ops, 3, 0.4, 1), "T2@2 X1 X3");
    /* Rung 1: the first result waits; with the second the count grows to 1 and the waiting one
     * (better) is at the edge: it goes on and the newcomer is closed (rung 1 is settled). */
    CHECK_STR(val(s, &ops, 2, 0.5, 2), "");
    CHECK_STR(val(s, &ops, 0, 0.6, 2), "T2@4 X0");
    CHECK_STR(exited(s, &ops, 1), "");
    CHECK_STR(exited(s, &ops, 3), "");
    CHECK_STR(exited(s, &ops, 0), "");
    CHECK_STR(val(s, &ops, 2, 0.7, 4), "X2");
    CHECK_STR(exited(s, &ops, 2), "S");
done:
    t2__ops_free(&ops);
    t2__searcher_free(s);
    t2__config_free(cfg);
}

/* stop_once: each result is ranked at once; the trial goes on without pausing while in the top
 * floor(n / divisor) (at least the best so far), else stops. */
static void script_stop_once(void)
{
    t2__config *cfg = NULL;
    t2__ops ops = {0};
    t2__searcher *s = make("mode: aggressive, divisor: 2, max_trials: 5, max_concurrent_trials: 4, stop_once: true, "
                           "max_length: {batches: 4}",
                           3, &cfg);
    if (!s) goto done;
    CHECK_OK(t2__searcher_start(s, &ops));
    CHECK_STR(ops_text(&ops, 0, 0), "C0 T0@1 C1 T1@1 C2 T2@1 C3 T3@1");
    CHECK_STR(val(s, &ops, 0, 0.4, 1), "T0@2");     /* the only result: best so far */
    CHECK_STR(val(s, &ops, 1, 0.3, 1), "T1@2");     /* best of 2 */
    CHECK_STR(val(s, &ops, 2, 0.5, 1), "X2 C4 T4@1"); /* 3rd of 3: stops; its place is refilled */
    CHECK_STR(val(s, &ops, 3, 0.1, 1), "T3@2");     /* best of 4 */
    CHECK_STR(val(s, &ops, 4, 0.35, 1), "X4");      /* 3rd of 5, floor(5/2) = 2: stops; max_trials reached */
    CHECK_STR(val(s, &ops, 0, 0.45, 2), "T0@4");
    CHECK_STR(val(s, &ops, 1, 0.3, 2), "T1@4");
    CHECK_STR(val(s, &ops, 3, 0.5, 2), "X3");
    CHECK_STR(val(s, &ops, 0, 0.4, 4), "X0");
    CHECK_STR(val(s, &ops, 1, 0.2, 4), "X1");
    CHECK_STR(exited(s, &ops, 2), "");
    CHECK_STR(exited(s, &ops, 4), "");
    CHECK_STR(exited(s, &ops, 3), "");
    CHECK_STR(exited(s, &ops, 0), "");
    CHECK_STR(exited(s, &ops, 1), "S");
done:
    t2__ops_free(&ops);
    t2__searcher_free(s);
    t2__config_free(cfg);
}

/* Divisor 4, two brackets: standard over 16 batches with 8 trials caps the rungs at
 * log4(8) + 1 = 2, so brackets of 2 and 1 rungs; weights 4/2 and 1/1 split 8 trials 5 + 2, the
 * remainder to the first. Each bracket decides on its own. */
static void script_divisor4(void)
{
    t2__asha_layout L;
    layout_of("max_trials: 8, max_length: {batches: 16}", &L);
    CHECK_STR(layout_text(&L), "max_rungs 2: [2 rungs, 6 trials, 4 at start] [1 rungs, 2 trials, 2 at start]");
    t2__config *cfg = NULL;
    t2__ops ops = {0};
    t2__searcher *s = make("max_trials: 8, max_length: {batches: 16}", 4, &cfg);
    if (!s) goto done;
    CHECK_OK(t2__searcher_start(s, &ops));
    CHECK_STR(ops_text(&ops, 0, 0), "C0 T0@4 C1 T1@4 C2 T2@4 C3 T3@4 C4 T4@16 C5 T5@16");
    /* Bracket 0 (rungs at 4 and 16): floor(n/4) go on, so nobody before the 4th result; each
     * result that promotes nobody requests the next trial until the bracket has its 6. */
    CHECK_STR(val(s, &ops, 0, 3.0, 4), "C6 T6@4");
    CHECK_STR(val(s, &ops, 1, 2.0, 4), "C7 T7@4");
    CHECK_STR(val(s, &ops, 2, 4.0, 4), "");
    CHECK_STR(val(s, &ops, 3, 5.0, 4), "T1@16");      /* 4 results: 1 goes on, the best so far (trial 1) */
    CHECK_STR(val(s, &ops, 6, 1.0, 4), "T6@16");      /* 5 results, still 1, but the newcomer is better */
    CHECK_STR(val(s, &ops, 7, 6.0, 4), "X0 X2 X3 X7"); /* all 6 in and none outstanding: close the rest */
    /* Bracket 1 has one rung: each trial is closed when it reports. */
    CHECK_STR(val(s, &ops, 4, 9.0, 16), "X4");
    CHECK_STR(val(s, &ops, 1, 0.5, 16), "X1");
    CHECK_STR(val(s, &ops, 5, 9.0, 16), "X5");
    CHECK_STR(val(s, &ops, 6, 0.7, 16), "X6");
    for (int64_t r = 0; r < 7; r++) CHECK_STR(exited(s, &ops, r), "");
    CHECK_STR(exited(s, &ops, 7), "S");
done:
    t2__ops_free(&ops);
    t2__searcher_free(s);
    t2__config_free(cfg);
}

/* Failures: a failed trial counts as the worst result of its rung and its place is refilled; a
 * promoted trial that is already gone passes through as the worst; invalid hparams leave no
 * trace and are replaced in the same bracket. */
static void script_failures(void)
{
    t2__config *cfg = NULL;
    t2__ops ops = {0};
    t2__searcher *s = make("mode: aggressive, divisor: 2, max_trials: 4, max_concurrent_trials: 2, "
                           "max_length: {batches: 4}",
                           3, &cfg);
    if (!s) goto done;
    CHECK_OK(t2__searcher_start(s, &ops));
    CHECK_STR(ops_text(&ops, 0, 0), "C0 T0@1 C1 T1@1");
    CHECK_STR(failed(s, &ops, 0, 0), "C2 T2@1");   /* crash in rung 0: worst result, refilled */
    CHECK_STR(failed(s, &ops, 1, 1), "C3 T3@1");   /* invalid: replaced, not counted */
    CHECK(t2__searcher_total_trials(s) == 4);
    CHECK_STR(val(s, &ops, 2, 0.5, 1), "T2@2");   /* 2 results (0 is the worst): the best goes on */
    CHECK_STR(val(s, &ops, 3, 0.7, 1), "C4 T4@1");
    CHECK_STR(val(s, &ops, 4, 0.2, 1), "T4@2 X3"); /* 4 results, 2 go on; 0 failed, so only 3 needs closing */
    CHECK_STR(failed(s, &ops, 2, 0), "");          /* fails in rung 1: the worst there, waits */
    CHECK_STR(val(s, &ops, 4, 0.1, 2), "T4@4");    /* 2 results in rung 1: 4 is the best */
    CHECK_STR(val(s, &ops, 4, 0.1, 4), "X4");
    CHECK_STR(exited(s, &ops, 3), "");
    CHECK_STR(exited(s, &ops, 4), "S");
done:
    t2__ops_free(&ops);
    t2__searcher_free(s);
    t2__config_free(cfg);
}

/* A trial that exits without being closed (it stopped itself) is treated like a failure. */
static void script_exit_on_its_own(void)
{
    t2__config *cfg = NULL;
    t2__ops ops = {0};
    t2__searcher *s = make("mode: aggressive, divisor: 2, max_trials: 2, max_length: {batches: 2}", 3, &cfg);
    if (!s) goto done;
    CHECK_OK(t2__searcher_start(s, &ops));
    CHECK_STR(ops_text(&ops, 0, 0), "C0 T0@1 C1 T1@1");
    CHECK_STR(exited(s, &ops, 0), "");
    CHECK_STR(val(s, &ops, 1, 0.3, 1), "T1@2");
    CHECK_STR(val(s, &ops, 1, 0.3, 2), "X1");
    CHECK_STR(exited(s, &ops, 1), "S");
done:
    t2__ops_free(&ops);
    t2__searcher_free(s);
    t2__config_free(cfg);
}

/* ---------- whole runs ---------- */

typedef struct run_ctx {
    uint64_t salt;
    int failures; /* inject failures, invalid hparams and early exits */
} run_ctx;

static double pseudo(int64_t rid, int64_t length, void *ctx)
{
    const run_ctx *c = ctx;
    double base = (double)(t2_hash64((uint64_t)rid ^ c->salt) >> 11) * 0x1p-53;
    if (rid % 13 == 4) return NAN; /* a diverged trial: the worst */
    return base + 0.1 / (double)length;
}

static int fate(int64_t rid, int64_t length, void *ctx)
{
    const run_ctx *c = ctx;
    if (!c->failures) return 0;
    uint64_t h = t2_hash64((uint64_t)rid * 31 + (uint64_t)length + c->salt);
    switch (h % 17) {
    case 0: return 1;
    case 1: return length <= 2 ? 2 : 0; /* invalid hparams show up early */
    case 2: return 3;
    default: return 0;
    }
}

static int64_t n_failed, n_invalid; /* over all whole runs: the failure paths were exercised */

/* Runs a search to its end and checks the global invariants, then restores from the snapshot
 * before every event and replays. */
static void whole_run(const char *keys, uint64_t seed, int failures)
{
    t2__config *cfg = NULL;
    run_ctx ctx = {.salt = seed * 77, .failures = failures};
    drive_script sc = {.metric = pseudo, .fate = fate, .ctx = &ctx, .snapshots = 1};
    drive_run r;
    t2__searcher *s = make(keys, seed, &cfg);
    if (!s) {
        t2__config_free(cfg);
        return;
    }
    int64_t total = t2__searcher_total_trials(s);
    if (!drive(s, &sc, &r)) {
        CHECK(r.shutdowns == 1);
        CHECK(t2__searcher_progress(s) == 1.0);
        /* Without failures exactly the planned trials run; with them, at most the invalid ones more. */
        if (!failures) CHECK(r.created == total);
        else CHECK(r.created >= total);
        /* SHUTDOWN is the answer to the last event and nothing came after. */
        const char *last = r.ev[r.nev - 1].ops;
        CHECK(last && strlen(last) >= 1 && last[strlen(last) - 1] == 'S');
        for (size_t k = 0; k + 1 < r.nev; k++) CHECK(!strchr(r.ev[k].ops, 'S'));
        for (size_t k = 0; k < r.nev; k++) {
            n_failed += r.ev[k].kind == EV_FAILED && !r.ev[k].invalid;
            n_invalid += r.ev[k].kind == EV_FAILED && r.ev[k].invalid;
            check_replay(cfg, seed, &r, k);
        }
    }
    drive_free(&r);
    t2__searcher_free(s);
    t2__config_free(cfg);
}

static void test_whole_runs(void)
{
    whole_run("max_trials: 16, max_length: {batches: 64}", 1, 0);
    whole_run("max_trials: 16, max_length: {batches: 64}", 2, 1);
    whole_run("mode: aggressive, divisor: 2, max_trials: 20, max_length: {batches: 32}", 3, 1);
    whole_run("mode: conservative, divisor: 3, max_trials: 30, max_concurrent_trials: 4, max_length: {epochs: 27}", 4, 1);
    whole_run("divisor: 2, max_trials: 25, stop_once: true, max_length: {batches: 16}", 5, 0);
    whole_run("mode: conservative, divisor: 2, max_trials: 25, max_concurrent_trials: 3, stop_once: true, "
              "smaller_is_better: false, max_length: {batches: 16}",
              6, 1);
    whole_run("bracket_rungs: [3, 1], divisor: 2, max_trials: 9, max_length: {batches: 3}", 7, 1);
    CHECK(n_failed >= 3 && n_invalid >= 3);
}

/* ---------- preview ---------- */

static void test_preview(void)
{
    t2__config *cfg = load_cfg("name: adaptive_asha, metric: loss, mode: aggressive, divisor: 2, max_trials: 8, "
                               "max_length: {batches: 8}",
                               "  lr: {type: log, minval: -4, maxval: -1}\n");
    if (!cfg) return;
    t2__val *pv = NULL, *again = NULL;
    CHECK_OK(t2__searcher_preview(cfg, 5, &pv));
    CHECK_OK(t2__searcher_preview(cfg, 5, &again));
    CHECK(pv && again && t2__val_equal(pv, again)); /* deterministic */
    /* 8 trials, rungs 1, 2, 4, 8; every trial's lengths follow the rungs from the start. */
    int at_len[9] = {0};
    CHECK(pv && pv->n == 8);
    for (size_t i = 0; pv && i < pv->n; i++) {
        const t2__val *l = t2__val_map_get(pv->items[i], "lengths");
        CHECK(t2__val_map_get(pv->items[i], "request_id")->i == (int64_t)i);
        CHECK(l->n >= 1 && l->n <= 4);
        for (size_t k = 0; k < l->n; k++) CHECK(l->items[k]->i == (int64_t)1 << k);
        if (l->n) at_len[l->items[l->n - 1]->i]++;
    }
    /* Asynchronous promotion sends more than half on at times: at least 1 reaches the top, and
     * some stop at every rung. */
    CHECK(at_len[8] >= 1 && at_len[1] >= 1);
    CHECK(at_len[1] + at_len[2] + at_len[4] + at_len[8] == 8);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (f) {
        CHECK_OK(t2__preview_print(pv, f));
        fclose(f);
        CHECK_CONTAINS(text, "  trial  lengths     hparams\n      0  ");
        CHECK_CONTAINS(text, "8 trials, ");
        free(text);
    }
    t2__val_free(pv);
    t2__val_free(again);
    t2__config_free(cfg);
}

/* Determined's defaults: max_concurrent_trials 16 split between the brackets (8 each here, the
 * second capped by its 4 trials; with 0 the first started only 4), and stop once: the second
 * result of a rung is below the cut and its trial is closed at once, not paused. */
static void test_determined_defaults(void)
{
    t2__asha_layout L;
    t2__config *cfg = load_cfg("name: adaptive_asha, metric: loss, max_trials: 16, max_length: {batches: 1000}", NULL);
    if (cfg) {
        CHECK(cfg->searcher.max_concurrent_trials == 16 && cfg->searcher.stop_once == 1);
        CHECK_OK(t2__asha_layout_of(&cfg->searcher, &L));
        CHECK_STR(layout_text(&L), "max_rungs 3: [3 rungs, 12 trials, 8 at start] [2 rungs, 4 trials, 4 at start]");
    }
    t2__config_free(cfg);
    t2__ops ops = {0};
    t2__searcher *s = NULL;
    cfg = load_cfg("name: adaptive_asha, metric: loss, mode: aggressive, divisor: 2, max_trials: 4, "
                   "max_length: {batches: 4}",
                   "  lr: {type: log, minval: -4, maxval: -1}\n");
    if (cfg) CHECK_OK(t2__searcher_create(cfg, 1, &s));
    if (s) {
        CHECK_OK(t2__searcher_start(s, &ops));
        CHECK_STR(ops_text(&ops, 0, 0), "C0 T0@1 C1 T1@1 C2 T2@1 C3 T3@1");
        CHECK_STR(val(s, &ops, 0, 0.5, 1), "T0@2");
        CHECK_STR(val(s, &ops, 1, 0.9, 1), "X1");
    }
    t2__ops_free(&ops);
    t2__searcher_free(s);
    t2__config_free(cfg);
}

/* A divisor so large that divisor^61 overflows: the bracket weights are taken in logarithms
 * (inf / inf gave NaN, converted to an integer), and int(divisor) for the start count saturates
 * (converting 1e300 to int64 is undefined; it gave INT64_MIN on x86, so a bracket started one
 * trial instead of all of them). */
static void test_layout_huge_divisor(void)
{
    t2__asha_layout L;
    layout_of("divisor: 1e300, bracket_rungs: [62, 1], max_trials: 100, max_length: {batches: 1000}", &L);
    CHECK_STR(layout_text(&L), "max_rungs 62: [62 rungs, 100 trials, 100 at start] [1 rungs, 1 trials, 1 at start]");
}

int main(void)
{
    test_layout();
    test_layout_huge_divisor();
    test_determined_defaults();
    test_rung_lengths();
    script_promotions(1);
    script_promotions(-1);
    script_late_promotion();
    script_closed_out_rung_changes();
    script_stop_once();
    script_divisor4();
    script_failures();
    script_exit_on_its_own();
    test_whole_runs();
    test_preview();
    return check_report("test_searcher_asha");
}
