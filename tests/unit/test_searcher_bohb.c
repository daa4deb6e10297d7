/* test_searcher_bohb.c — adaptive_asha with sampler: tpe (the BOHB idea): config errors, sampler
 * random unchanged, determinism per seed, resume from a snapshot mid-search, that it beats sampler
 * random on a 2-D quadratic, and preview. */
#define _POSIX_C_SOURCE 200809L /* strdup in the searcher test helpers */
#include <math.h>
#include "test_searcher_util.h"

static const char QUAD_HP[] = "  x: {type: double, minval: -5, maxval: 5}\n"
                              "  y: {type: double, minval: -5, maxval: 5}\n";

static const char MIXED_HP[] = "  lr: {type: log, minval: -4, maxval: -1}\n"
                               "  units: {type: int, minval: 4, maxval: 64}\n"
                               "  act: {type: categorical, vals: [relu, tanh, gelu]}\n"
                               "  fixed: 3\n";

/* The metric a trial reports at `length` of `max`: f plus noise that shrinks as it trains, so that
 * the short rungs rank the trials roughly and the long ones well. */
static double noisy(double f, int64_t rid, int64_t length, int64_t max)
{
    uint64_t h = t2_hash64((uint64_t)rid * 1000003u + (uint64_t)length);
    double u = (double)(h >> 11) / 9007199254740992.0;
    return f + (u - 0.5) * 2.0 * sqrt((double)max / (double)length) / 4.0;
}

static double best_any; /* the best f of any trial created, over a run_search */

/* Runs the search to SHUTDOWN answering ops first in, first out. Returns the best f among the
 * trials that trained to max_length (what ASHA hands back); every CREATE as text in *creates
 * (may be NULL; free it). */
static double run_search(const t2__config *cfg, uint64_t seed, char **creates)
{
    t2__searcher *s = NULL;
    t2__ops q = {0};
    double best = INFINITY;
    size_t head = 0, cap = 1 << 16, at = 0;
    char *text = creates ? calloc(1, cap) : NULL;
    double *f = calloc(4096, sizeof *f);
    int64_t max = cfg->searcher.max_length.n;
    int done = 0;
    best_any = INFINITY;
    CHECK_OK(t2__searcher_create(cfg, seed, &s));
    if (!s || !f) goto out;
    CHECK_OK(t2__searcher_start(s, &q));
    while (!done && head < q.n) {
        t2__search_op op = q.v[head++];
        int rc = T2_OK;
        switch (op.kind) {
        case T2__OP_CREATE:
            CHECK(op.request_id < 4096);
            f[op.request_id] = objective(op.hparams);
            if (f[op.request_id] < best_any) best_any = f[op.request_id];
            if (text) {
                char *json = NULL;
                CHECK_OK(t2__val_to_json(op.hparams, &json, NULL));
                int n = snprintf(text + at, cap - at, "C%" PRId64 " %016" PRIx64 " %s\n", op.request_id, op.seed,
                                 json ? json : "?");
                if (n > 0 && (size_t)n < cap - at) at += (size_t)n;
                free(json);
            }
            rc = t2__searcher_on_trial_created(s, op.request_id, &q);
            break;
        case T2__OP_TRAIN:
            if (op.length == max && f[op.request_id] < best) best = f[op.request_id];
            rc = t2__searcher_on_validation(s, op.request_id, noisy(f[op.request_id], op.request_id, op.length, max),
                                            op.length, &q);
            break;
        case T2__OP_CLOSE: rc = t2__searcher_on_trial_exited(s, op.request_id, &q); break;
        case T2__OP_SHUTDOWN: done = 1; break;
        }
        CHECK_OK(rc);
        if (rc) break;
    }
    CHECK(done);
out:
    if (creates) *creates = text;
    free(f);
    t2__ops_free(&q);
    t2__searcher_free(s);
    return best;
}

/* ---------- config ---------- */

static size_t nwarnings(const t2__config *cfg, const char *want)
{
    size_t n = 0;
    const char *const *w = t2__config_warnings(cfg, &n);
    if (want && n) CHECK_CONTAINS(w[0], want);
    return n;
}

static void test_config(void)
{
    const char *asha = "name: adaptive_asha, metric: loss, max_length: {batches: 16}, max_trials: 8";
    char buf[512];
    snprintf(buf, sizeof buf, "%s, sampler: tpf", asha);
    check_bad(buf, QUAD_HP, "search.yaml:1:");
    check_bad(buf, QUAD_HP, "searcher.sampler: 'tpf' is not a sampler (expected random or tpe; did you mean 'tpe'?)");
    snprintf(buf, sizeof buf, "%s, sampler: [tpe]", asha);
    check_bad(buf, QUAD_HP, "is not a sampler (expected random or tpe)");
    check_bad("name: random, metric: loss, max_length: {batches: 1}, max_trials: 4, sampler: tpe", QUAD_HP,
              "searcher.sampler: only the adaptive_asha searcher takes a sampler (the random searcher");
    check_bad("name: tpe, metric: loss, max_length: {batches: 1}, max_trials: 4, sampler: random", QUAD_HP,
              "search.yaml:1:");
    snprintf(buf, sizeof buf, "%s, sampler: tpe, gamma: 2", asha);
    check_bad(buf, QUAD_HP, "searcher.gamma: expected a number in (0, 1], got 2");
    snprintf(buf, sizeof buf, "%s, sampler: tpe", asha);
    check_bad(buf, "  opt:\n    lr: {type: double, minval: 0, maxval: 1}\n",
              "search.yaml:5:5: hyperparameters.opt: tpe does not support nested hyperparameters yet");

    /* The tpe keys apply with sampler: tpe (before or after it), and are ignored with a warning
     * under sampler: random, as under any searcher they do not apply to. */
    snprintf(buf, sizeof buf, "%s, gamma: 0.25, n_startup_trials: 3, multivariate: true, sampler: tpe", asha);
    t2__config *cfg = load_cfg(buf, QUAD_HP);
    if (cfg) {
        CHECK(cfg->searcher.sampler == T2__SAMPLER_TPE);
        CHECK(cfg->searcher.tpe.gamma == 0.25 && cfg->searcher.tpe.n_startup_trials == 3);
        CHECK(cfg->searcher.tpe.multivariate);
        CHECK(nwarnings(cfg, NULL) == 0);
        t2__searcher *s = NULL;
        cfg->searcher.tpe.n_startup_trials = 0; /* a caller's config is checked by the searcher */
        CHECK_RC(t2__searcher_create(cfg, 1, &s), T2_EINVAL);
        CHECK(s == NULL);
        CHECK_CONTAINS(t2_errmsg(), "searcher.n_startup_trials");
    }
    t2__config_free(cfg);
    snprintf(buf, sizeof buf, "%s, gamma: 0.25", asha);
    cfg = load_cfg(buf, QUAD_HP);
    if (cfg) {
        CHECK(cfg->searcher.sampler == T2__SAMPLER_RANDOM);
        CHECK(nwarnings(cfg, "does not apply to the adaptive_asha searcher with sampler: random (it does with "
                             "sampler: tpe)") == 1);
    }
    t2__config_free(cfg);
}

/* ---------- sampler random is today's behaviour ---------- */

static double metric_by_id(int64_t rid, int64_t length, void *ctx)
{
    (void)ctx;
    if (rid == 9) return NAN; /* counts as the worst result */
    return (double)((rid * 7919 + length * 31) % 101) / 100.0;
}

static int fate(int64_t rid, int64_t length, void *ctx)
{
    (void)length;
    (void)ctx;
    return rid == 4 || rid == 13 ? 2 : rid == 6 ? 1 : rid == 15 ? 3 : 0;
}

/* The same events give the same ops and the same snapshots with and without `sampler: random`. */
static void test_random_unchanged(void)
{
    const char *sc = "name: adaptive_asha, metric: loss, max_length: {batches: 16}, max_trials: 30, "
                     "max_concurrent_trials: 3";
    char buf[512];
    snprintf(buf, sizeof buf, "%s, sampler: random", sc);
    t2__config *a = load_cfg(sc, MIXED_HP), *b = load_cfg(buf, MIXED_HP);
    t2__searcher *sa = NULL, *sb = NULL;
    drive_script script = {.metric = metric_by_id, .fate = fate, .snapshots = 1};
    drive_run ra, rb;
    memset(&ra, 0, sizeof ra);
    memset(&rb, 0, sizeof rb);
    if (a && b && !t2__searcher_create(a, 5, &sa) && !t2__searcher_create(b, 5, &sb) && !drive(sa, &script, &ra) &&
        !drive(sb, &script, &rb)) {
        CHECK(ra.nev == rb.nev);
        for (size_t k = 0; k < ra.nev && k < rb.nev; k++) {
            CHECK_STR(ra.ev[k].ops, rb.ev[k].ops);
            CHECK_STR(ra.ev[k].state, rb.ev[k].state);
        }
        CHECK(strstr(ra.ev[ra.nev - 1].state, "points") == NULL);
    }
    drive_free(&ra);
    drive_free(&rb);
    t2__searcher_free(sa);
    t2__searcher_free(sb);
    t2__config_free(a);
    t2__config_free(b);
}

/* ---------- determinism ---------- */

static void test_determinism(void)
{
    const char *sc[] = {"name: adaptive_asha, metric: loss, max_length: {batches: 16}, max_trials: 40, "
                        "sampler: tpe, n_startup_trials: 4, max_concurrent_trials: 1",
                        "name: adaptive_asha, metric: loss, max_length: {batches: 16}, max_trials: 40, "
                        "sampler: tpe, n_startup_trials: 4, max_concurrent_trials: 1, multivariate: true, "
                        "stop_once: false"};
    for (int v = 0; v < 2; v++) {
        t2__config *cfg = load_cfg(sc[v], MIXED_HP);
        if (!cfg) continue;
        char *a = NULL, *b = NULL, *c = NULL;
        run_search(cfg, 7, &a);
        run_search(cfg, 7, &b);
        run_search(cfg, 8, &c);
        CHECK(a && b && c);
        if (a && b && c) {
            CHECK_STR(a, b);
            CHECK(strcmp(a, c) != 0);
            size_t lines = 0;
            for (const char *p = a; *p; p++) lines += *p == '\n';
            CHECK(lines == 40);
            CHECK(strstr(a, "\"fixed\":3") != NULL);
            /* The first trials are sampler random's, request for request; the model's are not. */
            t2__config *rc = load_cfg("name: adaptive_asha, metric: loss, max_length: {batches: 16}, max_trials: 40, "
                                      "max_concurrent_trials: 1",
                                      MIXED_HP);
            char *r = NULL;
            if (rc) run_search(rc, 7, &r);
            CHECK(r && strchr(a, '\n') && strncmp(a, r, (size_t)(strchr(a, '\n') - a)) == 0);
            CHECK(r && strcmp(a, r) != 0);
            free(r);
            t2__config_free(rc);
        }
        free(a);
        free(b);
        free(c);
        t2__config_free(cfg);
    }
}

/* ---------- resume ---------- */

/* Restoring a fresh searcher from the snapshot before an event and replaying the rest gives the
 * same ops (CREATE hparams included) and states, with failures, invalid hparams, a NaN metric and
 * a trial that stopped by itself on the way; the model has chosen hparams by then. */
static void test_resume(void)
{
    const char *sc[] = {"name: adaptive_asha, metric: loss, max_length: {batches: 16}, max_trials: 40, "
                        "sampler: tpe, n_startup_trials: 3, max_concurrent_trials: 3",
                        "name: adaptive_asha, metric: acc, smaller_is_better: false, max_length: {batches: 16}, "
                        "max_trials: 40, sampler: tpe, n_startup_trials: 3, max_concurrent_trials: 3, "
                        "stop_once: false, multivariate: true"};
    for (int v = 0; v < 2; v++) {
        t2__config *cfg = load_cfg(sc[v], MIXED_HP);
        if (!cfg) continue;
        t2__searcher *s = NULL;
        drive_script script = {.metric = metric_by_id, .fate = fate, .snapshots = 1};
        drive_run r;
        memset(&r, 0, sizeof r);
        CHECK_OK(t2__searcher_create(cfg, 21, &s));
        if (s && !drive(s, &script, &r)) {
            CHECK(r.shutdowns == 1);
            CHECK(t2__searcher_progress(s) == 1.0);
            for (size_t k = 0; k < r.nev; k += 7) check_replay(cfg, 21, &r, k);
            check_replay(cfg, 21, &r, r.nev - 1);
            /* A damaged point is refused with a format error, and the searcher keeps its state. */
            t2__val *st = NULL;
            t2__searcher *other = NULL;
            CHECK_OK(t2__val_from_json(r.ev[r.nev / 2].state, strlen(r.ev[r.nev / 2].state), &st, NULL));
            t2__val *pts = t2__val_lookup(st, "state.points");
            CHECK(pts && pts->n > 2);
            if (pts && pts->n > 2) t2__val_list_append(pts->items[1], t2__val_int(1));
            CHECK_OK(t2__searcher_create(cfg, 21, &other));
            CHECK_RC(t2__searcher_restore(other, st), T2_EFORMAT);
            /* ... as is a state without points (sampler random's), and a searcher that had a good
             * state keeps it. */
            t2__val *good = NULL, *after = NULL, *nopts = NULL;
            char *json = NULL;
            CHECK_OK(t2__val_from_json(r.ev[r.nev - 1].state, strlen(r.ev[r.nev - 1].state), &good, NULL));
            CHECK_OK(t2__val_from_json(r.ev[r.nev - 1].state, strlen(r.ev[r.nev - 1].state), &nopts, NULL));
            CHECK_OK(t2__searcher_restore(other, good));
            CHECK_RC(t2__searcher_restore(other, st), T2_EFORMAT);
            t2__val *inner = t2__val_lookup(nopts, "state");
            CHECK(inner && inner->kind == T2__VAL_MAP);
            if (inner && inner->kind == T2__VAL_MAP) CHECK_OK(t2__val_map_set(inner, "points", t2__val_null()));
            CHECK_RC(t2__searcher_restore(other, nopts), T2_EFORMAT);
            CHECK_OK(t2__searcher_snapshot(other, &after));
            CHECK_OK(t2__val_to_json(after, &json, NULL));
            CHECK_STR(json, r.ev[r.nev - 1].state);
            free(json);
            t2__val_free(after);
            t2__val_free(good);
            t2__val_free(nopts);
            t2__val_free(st);
            t2__searcher_free(other);
        }
        drive_free(&r);
        t2__searcher_free(s);
        t2__config_free(cfg);
    }
}

/* ---------- TPE beats random ---------- */

static void test_beats_random(void)
{
    enum { SEEDS = 9, KINDS = 4 };
    const char *base = "name: adaptive_asha, metric: loss, max_length: {batches: 16}, divisor: 4, max_trials: 60";
    const char *extra[KINDS] = {"", ", sampler: tpe, max_concurrent_trials: 1",
                                ", sampler: tpe, max_concurrent_trials: 1, multivariate: true",
                                ", sampler: tpe, max_concurrent_trials: 4"};
    const char *label[KINDS] = {"random", "tpe", "tpe-mv", "tpe-c4"};
    double med[KINDS];
    for (int k = 0; k < KINDS; k++) {
        char buf[512];
        double best[SEEDS], any[SEEDS];
        snprintf(buf, sizeof buf, "%s%s", base, extra[k]);
        t2__config *cfg = load_cfg(buf, QUAD_HP);
        if (!cfg) return;
        for (int i = 0; i < SEEDS; i++) {
            best[i] = run_search(cfg, 1000 + (uint64_t)i * 17, NULL);
            any[i] = best_any;
        }
        med[k] = median(best, SEEDS);
        printf("ASHA on a 2-D quadratic, 60 trials, median over %d seeds of the best at max_length: %-7s %.5f, "
               "of any trial: %.5f\n", SEEDS, label[k], med[k], median(any, SEEDS));
        t2__config_free(cfg);
    }
    CHECK(med[1] < med[0]);
    CHECK(med[2] < med[0]);
    CHECK(med[3] < med[0]);
}

/* ---------- preview ---------- */

static void test_preview(void)
{
    t2__config *cfg = load_cfg("name: adaptive_asha, metric: loss, max_length: {batches: 16}, max_trials: 30, "
                               "sampler: tpe, n_startup_trials: 3",
                               MIXED_HP);
    if (!cfg) return;
    t2__val *pv = NULL;
    CHECK_OK(t2__searcher_preview(cfg, 3, &pv));
    CHECK(pv && pv->n == 30);
    t2__val_free(pv);
    t2__config_free(cfg);
}

int main(void)
{
    test_config();
    test_random_unchanged();
    test_determinism();
    test_resume();
    test_beats_random();
    test_preview();
    return check_report("test_searcher_bohb");
}
