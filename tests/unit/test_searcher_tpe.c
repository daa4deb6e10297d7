/* test_searcher_tpe.c — searcher.name: tpe: config errors, determinism per seed, resume from a
 * snapshot mid-search, and that it beats random search on a 2-D quadratic. */
#define _POSIX_C_SOURCE 200809L /* strdup in the searcher test helpers */
#include <math.h>
#include "test_searcher_util.h"
#include "../../searchers/tpe.h"

static const char TPE_HP[] = "  x: {type: double, minval: -5, maxval: 5}\n"
                             "  y: {type: double, minval: -5, maxval: 5}\n";

static const char MIXED_HP[] = "  lr: {type: log, minval: -4, maxval: -1}\n"
                               "  units: {type: int, minval: 4, maxval: 64}\n"
                               "  drop: {type: double, minval: 0.0, maxval: 0.5}\n"
                               "  act: {type: categorical, vals: [relu, tanh, gelu]}\n"
                               "  fixed: 3\n";

/* ---------- a pretend controller that scores each trial by its hparams ---------- */

/* Every CREATE's hparams lie in MIXED_HP's space (when they have its keys); how many of the trials
 * from request 10 on chose act: gelu (the categorical the objective prefers). */
static int64_t gelu_late, late;

static void check_in_space(const t2__search_op *op)
{
    const t2__val *u = t2__val_map_get(op->hparams, "units"), *lr = t2__val_map_get(op->hparams, "lr");
    const t2__val *d = t2__val_map_get(op->hparams, "drop"), *a = t2__val_map_get(op->hparams, "act");
    if (!u) return;
    CHECK(u->kind == T2__VAL_INT && u->i >= 4 && u->i <= 64);
    CHECK(lr && lr->kind == T2__VAL_DOUBLE && lr->d >= 1e-4 * (1 - 1e-12) && lr->d <= 1e-1 * (1 + 1e-12));
    CHECK(d && d->kind == T2__VAL_DOUBLE && d->d >= 0 && d->d <= 0.5);
    CHECK(a && a->kind == T2__VAL_STRING &&
          (!strcmp(a->s, "relu") || !strcmp(a->s, "tanh") || !strcmp(a->s, "gelu")));
    const t2__val *f = t2__val_map_get(op->hparams, "fixed");
    CHECK(f && f->kind == T2__VAL_INT && f->i == 3);
    if (op->request_id >= 10 && a && a->kind == T2__VAL_STRING) {
        late++;
        gelu_late += !strcmp(a->s, "gelu");
    }
}

/* Runs the search to SHUTDOWN answering ops first in, first out (so up to max_concurrent_trials
 * trials are running when a new one is chosen); the best objective value, and every CREATE as
 * text in *creates (may be NULL; free it). */
static double run_search(const t2__config *cfg, uint64_t seed, char **creates)
{
    t2__searcher *s = NULL;
    t2__ops q = {0};
    double best = INFINITY;
    size_t head = 0, cap = 1 << 16, at = 0;
    char *text = creates ? calloc(1, cap) : NULL;
    double *metric = calloc(4096, sizeof *metric);
    int done = 0;
    CHECK_OK(t2__searcher_create(cfg, seed, &s));
    if (!s || !metric) goto out;
    CHECK_OK(t2__searcher_start(s, &q));
    while (!done && head < q.n) {
        t2__search_op op = q.v[head++];
        int rc = T2_OK;
        switch (op.kind) {
        case T2__OP_CREATE:
            CHECK(op.request_id < 4096);
            check_in_space(&op);
            metric[op.request_id] = objective(op.hparams);
            if (metric[op.request_id] < best) best = metric[op.request_id];
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
            rc = t2__searcher_on_validation(s, op.request_id, metric[op.request_id], op.length, &q);
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
    free(metric);
    t2__ops_free(&q);
    t2__searcher_free(s);
    return best;
}

/* ---------- config errors ---------- */

static void test_config_errors(void)
{
    const char *base = "name: tpe, metric: loss, max_length: {batches: 1}, max_trials: 4";
    char buf[512];
    check_bad(base, "  opt:\n    lr: {type: double, minval: 0, maxval: 1}\n",
              "search.yaml:5:5: hyperparameters.opt: tpe does not support nested hyperparameters yet");
    snprintf(buf, sizeof buf, "%s, n_startup_trials: 0", base);
    check_bad(buf, TPE_HP, "search.yaml:1:");
    check_bad(buf, TPE_HP, "searcher.n_startup_trials: ");
    snprintf(buf, sizeof buf, "%s, n_ei_candidates: 0", base);
    check_bad(buf, TPE_HP, "searcher.n_ei_candidates: ");
    snprintf(buf, sizeof buf, "%s, gamma: 1.5", base);
    check_bad(buf, TPE_HP, "searcher.gamma: expected a number in (0, 1], got 1.5");
    snprintf(buf, sizeof buf, "%s, prior_weight: 0", base);
    check_bad(buf, TPE_HP, "searcher.prior_weight: expected a positive number, got 0");
    snprintf(buf, sizeof buf, "%s, multivariate: maybe", base);
    check_bad(buf, TPE_HP, "searcher.multivariate: ");
    check_bad("name: tpe, metric: loss, max_length: {batches: 1}", TPE_HP, "searcher.max_trials: missing required key");

    /* The defaults are Optuna's; tpe keys under another searcher are warnings. */
    t2__config *cfg = load_cfg(base, TPE_HP);
    if (cfg) {
        CHECK(cfg->searcher.name == T2__SEARCH_TPE);
        CHECK(cfg->searcher.tpe.n_startup_trials == 10 && cfg->searcher.tpe.n_ei_candidates == 24);
        CHECK(cfg->searcher.tpe.gamma == 0.1 && cfg->searcher.tpe.prior_weight == 1.0);
        CHECK(!cfg->searcher.tpe.multivariate);
        /* A config built or changed by a caller is checked by the searcher itself. */
        t2__searcher *s = NULL;
        cfg->searcher.tpe.n_startup_trials = 0;
        CHECK_RC(t2__searcher_create(cfg, 1, &s), T2_EINVAL);
        CHECK(s == NULL);
        CHECK_CONTAINS(t2_errmsg(), "searcher.n_startup_trials");
    }
    t2__config_free(cfg);
    cfg = load_cfg("name: random, metric: loss, max_length: {batches: 1}, max_trials: 4, gamma: 0.2", TPE_HP);
    if (cfg) {
        size_t n = 0;
        const char *const *w = t2__config_warnings(cfg, &n);
        CHECK(n == 1);
        if (n) CHECK_CONTAINS(w[0], "does not apply to the random searcher");
    }
    t2__config_free(cfg);
}

/* ---------- determinism ---------- */

static void test_determinism(void)
{
    const char *sc[] = {"name: tpe, metric: loss, max_length: {batches: 2}, max_trials: 30, n_startup_trials: 5, "
                        "max_concurrent_trials: 3",
                        "name: tpe, metric: loss, max_length: {batches: 2}, max_trials: 30, n_startup_trials: 5, "
                        "max_concurrent_trials: 1, multivariate: true"};
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
            /* 30 creates, and the model's picks (after the first 5) stay in the space. */
            size_t lines = 0;
            for (const char *p = a; *p; p++) lines += *p == '\n';
            CHECK(lines == 30);
            CHECK(strstr(a, "\"fixed\":3") != NULL);
        }
        free(a);
        free(b);
        free(c);
        t2__config_free(cfg);
    }
}

/* ---------- resume ---------- */

static double metric_by_id(int64_t rid, int64_t length, void *ctx)
{
    (void)ctx;
    (void)length;
    if (rid == 9) return NAN; /* counts as the worst result */
    return (double)((rid * 7919) % 101) / 100.0;
}

static int fate(int64_t rid, int64_t length, void *ctx)
{
    (void)length;
    (void)ctx;
    return rid == 4 || rid == 13 ? 2 : rid == 6 ? 1 : rid == 15 ? 3 : 0;
}

/* Restoring a fresh searcher from the snapshot before an event and replaying the rest gives the
 * same ops (CREATE hparams included) and the same states, with failures, invalid hparams and a
 * trial that stopped by itself on the way. */
static void test_resume(void)
{
    for (int v = 0; v < 2; v++) {
        t2__config *cfg = load_cfg(v ? "name: tpe, metric: acc, smaller_is_better: false, max_length: {batches: 3}, "
                                       "max_trials: 24, n_startup_trials: 4, max_concurrent_trials: 3, multivariate: true"
                                     : "name: tpe, metric: loss, max_length: {batches: 3}, max_trials: 24, "
                                       "n_startup_trials: 4, max_concurrent_trials: 3",
                                   MIXED_HP);
        if (!cfg) continue;
        t2__searcher *s = NULL;
        drive_script sc = {.metric = metric_by_id, .fate = fate, .snapshots = 1};
        drive_run r;
        CHECK_OK(t2__searcher_create(cfg, 21, &s));
        if (s && !drive(s, &sc, &r)) {
            CHECK(r.shutdowns == 1);
            CHECK(r.created == 24 + 2); /* requests 4 and 13 were invalid and replaced */
            CHECK(t2__searcher_progress(s) == 1.0);
            for (size_t k = 0; k < r.nev; k += 5) check_replay(cfg, 21, &r, k);
            check_replay(cfg, 21, &r, r.nev - 1);
            /* A damaged state is refused with a format error. */
            t2__val *st = NULL;
            t2__searcher *other = NULL;
            CHECK_OK(t2__val_from_json(r.ev[r.nev / 2].state, strlen(r.ev[r.nev / 2].state), &st, NULL));
            t2__val *trials = t2__val_lookup(st, "state.trials");
            CHECK(trials && trials->n > 2);
            if (trials && trials->n > 2) t2__val_list_append(trials->items[1], t2__val_int(1));
            CHECK_OK(t2__searcher_create(cfg, 21, &other));
            CHECK_RC(t2__searcher_restore(other, st), T2_EFORMAT);
            /* ... and leaves a searcher that had a good state as it was. */
            t2__val *good = NULL, *after = NULL;
            char *json = NULL;
            CHECK_OK(t2__val_from_json(r.ev[r.nev - 1].state, strlen(r.ev[r.nev - 1].state), &good, NULL));
            CHECK_OK(t2__searcher_restore(other, good));
            CHECK_RC(t2__searcher_restore(other, st), T2_EFORMAT);
            CHECK_OK(t2__searcher_snapshot(other, &after));
            CHECK_OK(t2__val_to_json(after, &json, NULL));
            CHECK_STR(json, r.ev[r.nev - 1].state);
            free(json);
            t2__val_free(after);
            t2__val_free(good);
            t2__searcher_free(other);
            t2__val_free(st);
        }
        drive_free(&r);
        t2__searcher_free(s);
        t2__config_free(cfg);
    }
}

/* ---------- TPE beats random ---------- */

static void test_beats_random(void)
{
    enum { SEEDS = 9 };
    const char *searchers[] = {"name: random, metric: loss, max_length: {batches: 1}, max_trials: 60",
                               "name: tpe, metric: loss, max_length: {batches: 1}, max_trials: 60, max_concurrent_trials: 1",
                               "name: tpe, metric: loss, max_length: {batches: 1}, max_trials: 60, max_concurrent_trials: 1, "
                               "multivariate: true",
                               "name: tpe, metric: loss, max_length: {batches: 1}, max_trials: 60, max_concurrent_trials: 4"};
    double med[4];
    for (int k = 0; k < 4; k++) {
        double best[SEEDS];
        t2__config *cfg = load_cfg(searchers[k], TPE_HP);
        if (!cfg) return;
        for (int i = 0; i < SEEDS; i++) best[i] = run_search(cfg, 1000 + (uint64_t)i * 17, NULL);
        med[k] = median(best, SEEDS);
        printf("2-D quadratic, 60 trials, median best over %d seeds: %-9s %.5f (%s)\n", SEEDS,
               k == 0 ? "random" : k == 1 ? "tpe" : k == 2 ? "tpe-mv" : "tpe-c4", med[k], searchers[k]);
        t2__config_free(cfg);
    }
    CHECK(med[1] < med[0]);
    CHECK(med[2] < med[0]);
    CHECK(med[3] < med[0]);
}

/* Every kind of hparam is in the space, and the model learns the categorical the objective prefers
 * (a third of random draws would pick it). */
static void test_mixed_space(void)
{
    const char *sc[] = {"name: random, metric: loss, max_length: {batches: 1}, max_trials: 60",
                        "name: tpe, metric: loss, max_length: {batches: 1}, max_trials: 60, max_concurrent_trials: 1",
                        "name: tpe, metric: loss, max_length: {batches: 1}, max_trials: 60, max_concurrent_trials: 1, "
                        "multivariate: true"};
    double share[3];
    for (int v = 0; v < 3; v++) {
        t2__config *cfg = load_cfg(sc[v], MIXED_HP);
        if (!cfg) return;
        gelu_late = late = 0;
        for (uint64_t seed = 1; seed <= 5; seed++) run_search(cfg, seed, NULL);
        share[v] = late ? (double)gelu_late / (double)late : 0;
        printf("mixed space, trials 10..59 of 5 seeds choosing act: gelu: %s %.2f\n",
               v == 0 ? "random" : v == 1 ? "tpe" : "tpe-mv", share[v]);
        t2__config_free(cfg);
    }
    CHECK(share[1] > 0.5 && share[2] > 0.5 && share[0] < 0.45);
}

/* A categorical that the good group never took and the other group rarely took must be tried
 * again (Optuna's smoothing, prior_weight / (n + 1) per value): good = 4 trials on b, other = 18
 * on b and 18 on c, none on a. l(a)/g(a) is about 5 against b's 1.4, and a sixth of l's draws
 * are a, so nearly every choice among 24 candidates (1 - (5/6)^24 = 0.987) is a. Spreading prior_weight over
 * the values instead (the old rule) gave l(a)/g(a) 1.2 against b's 1.45: a was never chosen. */
static void test_categorical_rarely_tried(void)
{
    t2__tpe_param p = {.kind = T2__HP_CATEGORICAL, .nchoices = 3};
    t2__tpe_model m = {.p = &p, .np = 1, .prior_weight = 1.0, .n_candidates = 24};
    double v[40];
    const double *pts[40];
    for (int k = 0; k < 40; k++) {
        v[k] = k < 22 ? 1 : 2; /* good: 0..3, other: 4..39 */
        pts[k] = &v[k];
    }
    int chose_a = 0;
    for (uint64_t seed = 1; seed <= 200; seed++) {
        t2_rng rng;
        t2_rng_seed(&rng, t2_hash64(seed));
        double x = -1;
        CHECK_OK(t2__tpe_suggest(&m, pts, 4, pts + 4, 36, &rng, &x));
        CHECK(x == 0 || x == 1 || x == 2);
        chose_a += x == 0;
    }
    printf("categorical rarely tried by the other group: chosen in %d of 200 draws\n", chose_a);
    CHECK(chose_a > 170);
}

/* ---------- preview ---------- */

static void test_preview(void)
{
    t2__config *cfg = load_cfg("name: tpe, metric: loss, max_length: {batches: 20}, max_trials: 15", MIXED_HP);
    if (!cfg) return;
    t2__val *pv = NULL;
    CHECK_OK(t2__searcher_preview(cfg, 3, &pv));
    CHECK(pv && pv->n == 15);
    for (size_t k = 0; pv && k < pv->n; k++) {
        const t2__val *lengths = t2__val_map_get(pv->items[k], "lengths");
        CHECK(lengths && lengths->n == 1 && lengths->items[0]->i == 20);
    }
    t2__val_free(pv);
    t2__config_free(cfg);
}

int main(void)
{
    test_config_errors();
    test_determinism();
    test_resume();
    test_beats_random();
    test_mixed_space();
    test_categorical_rarely_tried();
    test_preview();
    return check_report("test_searcher_tpe");
}
