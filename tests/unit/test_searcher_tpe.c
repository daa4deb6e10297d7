/* test_searcher_tpe.c — searcher.name: tpe: config errors, determinism per seed, resume from a
 * snapshot mid-search, that it beats random search on a 2-D quadratic, and trials stopped by the
 * controller's pruner (startup count, their rank in the split, snapshots, old snapshots), and
 * sampling per bracket under a hyperband pruner. */
#define _POSIX_C_SOURCE 200809L /* strdup in the searcher test helpers */
#include <math.h>
#include "test_searcher_util.h"
#include "../../searchers/pruner.h"
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

/* ---------- invalid hparams steer the model away ---------- */

/* The pretend trial of test_invalid_region: loss (x - 1)^2, invalid hparams when x > 2 (30% of
 * [-5, 5], beside the optimum). */
typedef struct region {
    double x[4096];
    int64_t invalid;
} region;

static void region_created(int64_t rid, const t2__val *hp, void *ctx)
{
    region *g = ctx;
    double x = 0;
    const t2__val *v = t2__val_map_get(hp, "x");
    CHECK(v && t2__val_as_double(v, &x) == T2_OK);
    if (rid >= 0 && rid < 4096) g->x[rid] = x;
}

static double region_metric(int64_t rid, int64_t length, void *ctx)
{
    (void)length;
    const region *g = ctx;
    return rid < 4096 ? (g->x[rid] - 1) * (g->x[rid] - 1) : 0;
}

static int region_fate(int64_t rid, int64_t length, void *ctx)
{
    (void)length;
    region *g = ctx;
    int bad = rid >= 4096 || g->x[rid] > 2;
    g->invalid += bad;
    return bad ? 2 : 0;
}

/* A trial with invalid hparams is a point worse than every result for tpe and for adaptive_asha's
 * tpe sampler: with none in the model the invalid part looked best to l(x)/g(x) and nearly every
 * proposal after the startup trials went there (the controller ended such searches after 100
 * replacements in a row). Random draws put 30% there; the model must do no worse than twice that
 * share, and a restored searcher replays the same choices. */
static void test_invalid_region(void)
{
    static const char *searchers[] = {
        "name: tpe, metric: loss, max_length: {batches: 2}, max_trials: 40, n_startup_trials: 5, max_concurrent_trials: 2",
        "name: adaptive_asha, sampler: tpe, metric: loss, max_length: {batches: 4}, divisor: 2, max_trials: 40, "
        "n_startup_trials: 3, max_concurrent_trials: 2"};
    for (int v = 0; v < 2; v++)
        for (uint64_t seed = 1; seed <= 5; seed++) {
            t2__config *cfg = load_cfg(searchers[v], "  x: {type: double, minval: -5, maxval: 5}\n");
            if (!cfg) continue;
            region *g = calloc(1, sizeof *g);
            t2__searcher *s = NULL;
            drive_script sc = {.metric = region_metric, .fate = region_fate, .ctx = g, .created = region_created,
                               .snapshots = seed == 1};
            drive_run r;
            CHECK_OK(t2__searcher_create(cfg, seed, &s));
            if (g && s && !drive(s, &sc, &r)) {
                CHECK(r.shutdowns == 1);
                if (g->invalid * 10 > 6 * (40 + g->invalid))
                    fprintf(stderr, "%s seed %" PRIu64 ": %" PRId64 " invalid of %" PRId64 " trials\n", searchers[v], seed,
                            g->invalid, 40 + g->invalid);
                CHECK(g->invalid * 10 <= 6 * (40 + g->invalid)); /* at most 60% of the trials */
                if (seed == 1)
                    for (size_t k = 0; k < r.nev; k += 7) check_replay(cfg, seed, &r, k);
                drive_free(&r);
            }
            t2__searcher_free(s);
            t2__config_free(cfg);
            free(g);
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

/* ---------- pruned trials ---------- */

/* The CREATE hparams of request rid among ops[from..), or NULL. */
static const t2__val *created(const t2__ops *ops, size_t from, int64_t rid)
{
    for (size_t k = from; k < ops->n; k++)
        if (ops->v[k].kind == T2__OP_CREATE && ops->v[k].request_id == rid) return ops->v[k].hparams;
    return NULL;
}

/* Pruned trials count toward n_startup_trials, as Optuna counts COMPLETE and PRUNED trials there:
 * with three startup trials all pruned (one trial at a time), request 3 is the model's choice, not
 * the random draw the random searcher makes for request 3. When the third instead stops without a
 * result, request 3 is still that random draw. A pruned trial's exit keeps its result. */
static void test_pruned_startup(void)
{
    t2__config *cfg = load_cfg("name: tpe, metric: loss, max_length: {batches: 10}, max_trials: 6, "
                               "n_startup_trials: 3, max_concurrent_trials: 1",
                               TPE_HP);
    t2__config *rnd = load_cfg("name: random, metric: loss, max_length: {batches: 10}, max_trials: 6", TPE_HP);
    t2__searcher *r = NULL;
    t2__ops draws = {0};
    if (!cfg || !rnd || t2__searcher_create(rnd, 31, &r) || t2__searcher_start(r, &draws)) {
        CHECK(0);
        goto out;
    }
    for (int v = 0; v < 2; v++) {
        t2__searcher *s = NULL;
        t2__ops ops = {0};
        CHECK_OK(t2__searcher_create(cfg, 31, &s));
        CHECK_OK(t2__searcher_start(s, &ops));
        CHECK_STR(ops_text(&ops, 0, 0), "C0 T0@10");
        for (int64_t rid = 0; s && rid < 3; rid++) {
            size_t mark = ops.n;
            char want[32];
            if (v == 1 && rid == 2) {
                CHECK_OK(t2__searcher_on_trial_exited(s, rid, &ops)); /* stopped by itself: no result */
            } else {
                CHECK_OK(t2__searcher_on_validation(s, rid, 0.1 * (double)rid, 4, &ops)); /* periodic: no answer */
                CHECK_OK(t2__searcher_on_trial_pruned(s, rid, 0.1 * (double)rid, 4, &ops));
                CHECK_OK(t2__searcher_on_trial_pruned(s, rid, 0.1 * (double)rid, 4, &ops)); /* twice: one CLOSE */
                snprintf(want, sizeof want, "X%" PRId64, rid);
                CHECK_STR(ops_text(&ops, mark, 0), want);
                mark = ops.n;
                CHECK_OK(t2__searcher_on_trial_exited(s, rid, &ops));
            }
            snprintf(want, sizeof want, "C%" PRId64 " T%" PRId64 "@10", rid + 1, rid + 1);
            CHECK_STR(ops_text(&ops, mark, 0), want);
        }
        for (int64_t rid = 0; rid < 4; rid++) {
            const t2__val *got = created(&ops, 0, rid), *draw = created(&draws, 0, rid);
            CHECK(got && draw);
            /* Requests 0..2 are startup draws; 3 is the model's only after three results. */
            if (got && draw) CHECK(t2__val_equal(got, draw) == (rid < 3 || v == 1));
        }
        /* A trial that has its result (CLOSE sent) is not pruned after it. */
        size_t mark = ops.n;
        CHECK_OK(t2__searcher_on_validation(s, 3, 0.5, 10, &ops));
        CHECK_OK(t2__searcher_on_trial_pruned(s, 3, 0.5, 5, &ops));
        CHECK_STR(ops_text(&ops, mark, 0), "X3");
        /* The pruned trials kept their result through their exit: state 3, with the step. */
        t2__val *st = NULL;
        CHECK_OK(t2__searcher_snapshot(s, &st));
        const t2__val *trials = t2__val_lookup(st, "state.trials"), *steps = t2__val_lookup(st, "state.pruned");
        /* Rows by request: pruned, pruned, pruned (v 0) or gone (v 1), done. */
        int64_t want_state[4] = {3, 3, v ? 2 : 3, 1};
        CHECK(trials && trials->n == 4);
        for (size_t k = 0; trials && k < trials->n && k < 4; k++) CHECK(trials->items[k]->items[0]->i == want_state[k]);
        CHECK(steps && steps->n == (size_t)(v ? 2 : 3));
        if (steps && steps->n >= 2) CHECK(steps->items[1]->items[0]->i == 1 && steps->items[1]->items[1]->i == 4);
        t2__val_free(st);
        t2__ops_free(&ops);
        t2__searcher_free(s);
    }
out:
    t2__ops_free(&draws);
    t2__searcher_free(r);
    t2__config_free(rnd);
    t2__config_free(cfg);
}

/* Under a hyperband pruner each trial is drawn from its bracket's trials alone, as Optuna's
 * TPESampler does under a HyperbandPruner: request R is a random (startup) draw while R's bracket
 * has fewer than n_startup_trials results, however many the other brackets have; and what the
 * other brackets' trials scored does not move R's choice. Two searches, one trial at a time, whose
 * trials score alike in bracket 0 and differently elsewhere. */
static double hb_loss(int64_t rid, int64_t bracket, int other)
{
    double v = 0.37 * (double)((rid * 7919) % 101);
    return bracket == 0 || !other ? v : 100.0 - v;
}

static void test_hyperband_brackets(void)
{
    char text[1024];
    snprintf(text, sizeof text,
             "searcher: {name: tpe, metric: loss, max_length: {batches: 16}, max_trials: 60, n_startup_trials: 3,\n"
             "  max_concurrent_trials: 1, pruner: {name: hyperband, min_resource: {batches: 1}, reduction_factor: 2}}\n"
             "min_validation_period: {batches: 1}\nhyperparameters:\n  global_batch_size: 8\n%s",
             TPE_HP);
    t2__config *cfg = NULL;
    CHECK_OK(t2__config_load_string(text, "hb.yaml", NULL, 0, &cfg));
    t2__config *rnd = load_cfg("name: random, metric: loss, max_length: {batches: 16}, max_trials: 60", TPE_HP);
    t2__searcher *r = NULL;
    t2__pruner *hb = NULL;
    t2__ops draws = {0}, ops[2] = {{0}, {0}};
    if (!cfg || !rnd || t2__searcher_create(rnd, 5, &r) || t2__searcher_start(r, &draws) ||
        t2__pruner_from_config(&cfg->searcher.pruner, 1, &hb)) {
        CHECK(0);
        goto out;
    }
    CHECK(cfg->searcher.pruner.n_brackets == 5);
    CHECK(t2__pruner_bracket(hb, 0) >= 0);
    for (int other = 0; other < 2; other++) {
        t2__searcher *s = NULL;
        CHECK_OK(t2__searcher_create(cfg, 5, &s));
        CHECK_OK(t2__searcher_start(s, &ops[other]));
        for (int64_t rid = 0; s && rid < 59; rid++) {
            int64_t b = t2__pruner_bracket(hb, rid);
            CHECK_OK(t2__searcher_on_validation(s, rid, hb_loss(rid, b, other), 16, &ops[other]));
            CHECK_OK(t2__searcher_on_trial_exited(s, rid, &ops[other]));
        }
        t2__searcher_free(s);
    }
    int64_t results[64] = {0}, fewer = 0, zero = 0;
    for (int64_t rid = 0; rid < 60; rid++) {
        int64_t b = t2__pruner_bracket(hb, rid);
        const t2__val *a = created(&ops[0], 0, rid), *o = created(&ops[1], 0, rid), *draw = created(&draws, 0, rid);
        CHECK(a && o && draw && b >= 0 && b < 5);
        if (!a || !o || !draw || b < 0 || b >= 5) continue;
        /* Startup draws exactly while the bracket has fewer than 3 results (rid results in all). */
        CHECK(t2__val_equal(a, draw) == (results[b] < 3));
        fewer += results[b] < 3 && rid >= 3;
        /* Bracket 0's choices never depend on the other brackets' scores; the others' do. */
        if (b == 0) CHECK(t2__val_equal(a, o));
        else zero += results[b] >= 3 && !t2__val_equal(a, o);
        results[b]++;
    }
    CHECK(fewer > 0); /* some draws were random only because of their bracket */
    CHECK(zero > 0);  /* and the other brackets' scores did matter to their own trials */
    CHECK(results[0] >= 5);
out:
    t2__ops_free(&ops[0]);
    t2__ops_free(&ops[1]);
    t2__ops_free(&draws);
    t2__pruner_free(hb);
    t2__searcher_free(r);
    t2__config_free(rnd);
    t2__config_free(cfg);
}

/* Fills obs with one observation per point of pts (a 1-D space): kind 'c' completed, 'p' pruned
 * (at step[k]), 'r' running. */
static size_t make_obs(t2__tpe_obs *obs, const char *kinds, const double *pts, const double *loss,
                       const int64_t *step)
{
    size_t n = strlen(kinds);
    for (size_t k = 0; k < n; k++)
        obs[k] = (t2__tpe_obs){.id = (int64_t)k, .loss = loss[k], .x = &pts[k], .running = kinds[k] == 'r',
                               .pruned = kinds[k] == 'p', .step = kinds[k] == 'p' ? step[k] : 0};
    return n;
}

/* How many of 50 choices land in x > 0 when the good group must be the trials at x > 0. */
static int choices_right(double gamma, const char *kinds, const double *pts, const double *loss, const int64_t *step)
{
    t2__tpe_param p = {.kind = T2__HP_DOUBLE, .low = -5, .high = 5};
    t2__tpe_model m = {.p = &p, .np = 1, .prior_weight = 1.0, .n_candidates = 24};
    t2__tpe_obs obs[16];
    int right = 0;
    for (uint64_t seed = 1; seed <= 50; seed++) {
        size_t n = make_obs(obs, kinds, pts, loss, step);
        t2_rng rng;
        t2_rng_seed(&rng, t2_hash64(seed));
        double x = 0;
        CHECK_OK(t2__tpe_propose(&m, gamma, obs, n, &rng, &x));
        right += x > 0;
    }
    return right;
}

/* Optuna's ranking of pruned trials in the split: after every completed trial however good their
 * metric (they stopped early, where metrics are not comparable), deeper steps before shallower
 * ones, and only then by metric; running ones last. Each case puts the trials that must form the
 * good group at x > 0 and the others at x < 0, so ranking a pruned trial as a completed one (or
 * by metric before step) makes the model choose x < 0. */
static void test_pruned_order(void)
{
    /* Four completed (losses 1..4) and four pruned with better losses (-10..-7): n_below 4 takes
     * the completed ones. */
    static const double pts1[] = {3, 3.5, 4, 4.5, -3, -3.5, -4, -4.5};
    static const double loss1[] = {1, 2, 3, 4, -10, -9, -8, -7};
    static const int64_t step1[] = {0, 0, 0, 0, 5, 5, 5, 5};
    CHECK(choices_right(0.5, "ccccpppp", pts1, loss1, step1) == 50);
    /* One completed, three pruned deep (step 8, worse losses), three pruned early (step 2, better
     * losses): n_below 4 takes the completed one and the deep ones. */
    static const double pts2[] = {4, 3.5, 4, 4.5, -3.5, -4, -4.5};
    static const double loss2[] = {5, 9, 9, 9, -9, -9, -9};
    static const int64_t step2[] = {0, 8, 8, 8, 2, 2, 2};
    CHECK(choices_right(0.55, "cpppppp", pts2, loss2, step2) == 50);
    /* Pruned trials are finished observations: with no completed one, they fit l, and running
     * trials (the constant liar) fit g whatever n_below. */
    static const double pts3[] = {3.5, 4, 4.5, -3.5, -4, -4.5};
    static const double loss3[] = {9, 9, 9, 0, 0, 0};
    static const int64_t step3[] = {3, 3, 3, 0, 0, 0};
    CHECK(choices_right(1.0, "ppprrr", pts3, loss3, step3) == 50);
    /* The control: the same points with the first case's pruned trials completed go to x < 0. */
    CHECK(choices_right(0.5, "cccccccc", pts1, loss1, step1) == 0);
}

static double pruned_metric(int64_t rid, int64_t length, void *ctx)
{
    (void)ctx;
    if (rid == 13) return NAN; /* a pruned trial's NaN is its worst result */
    return (double)((rid * 7919) % 101) / 100.0 + 1.0 / (double)length;
}

static int pruned_fate(int64_t rid, int64_t length, void *ctx)
{
    (void)length;
    (void)ctx;
    return rid % 4 == 1 ? 4 : rid == 6 ? 2 : rid == 10 ? 1 : rid == 15 ? 3 : 0;
}

/* A search with pruned trials (and failures, invalid hparams, a trial that stops by itself):
 * each pruned trial gets CLOSE and no replacement, and restoring from the snapshot before any
 * event and replaying the rest gives the same ops and states as the unbroken run. A state whose
 * pruned steps do not match its rows is refused. */
static void test_pruned_resume(void)
{
    for (int v = 0; v < 2; v++) {
        t2__config *cfg = load_cfg(v ? "name: tpe, metric: acc, smaller_is_better: false, max_length: {batches: 4}, "
                                       "max_trials: 24, n_startup_trials: 4, max_concurrent_trials: 3, multivariate: true"
                                     : "name: tpe, metric: loss, max_length: {batches: 4}, max_trials: 24, "
                                       "n_startup_trials: 4, max_concurrent_trials: 3",
                                   MIXED_HP);
        if (!cfg) continue;
        t2__searcher *s = NULL;
        drive_script sc = {.metric = pruned_metric, .fate = pruned_fate, .snapshots = 1};
        drive_run r;
        CHECK_OK(t2__searcher_create(cfg, 23, &s));
        if (s && !drive(s, &sc, &r)) {
            int64_t pruned = 0;
            for (size_t k = 0; k < r.nev; k++) {
                if (r.ev[k].kind != EV_PRUNED) continue;
                char want[32];
                snprintf(want, sizeof want, "X%" PRId64, r.ev[k].rid);
                CHECK_STR(r.ev[k].ops, want);
                pruned++;
            }
            CHECK(pruned == 6); /* requests 1, 5, 9, 13, 17, 21 */
            CHECK(r.shutdowns == 1);
            CHECK(r.created == 24 + 1); /* request 6 was invalid and replaced */
            CHECK(t2__searcher_progress(s) == 1.0);
            CHECK(strstr(r.ev[r.nev - 1].state, "\"pruned\":[[1,2],[5,2],[9,2],[13,2],[17,2],[21,2]]") != NULL);
            for (size_t k = 0; k < r.nev; k += 3) check_replay(cfg, 23, &r, k);
            check_replay(cfg, 23, &r, r.nev - 1);
            /* Pruned steps that do not match the rows are refused, leaving the searcher as it was. */
            static const char *const bad[] = {"[]", "[[1,2],[5,2],[9,2],[13,2],[17,2],[21,-1]]",
                                              "[[1,2],[5,2],[9,2],[13,2],[17,2],[20,2]]",
                                              "[[1,2],[9,2],[5,2],[13,2],[17,2],[21,2]]", "{}"};
            const char *good = r.ev[r.nev / 2].state;
            t2__searcher *other = NULL;
            t2__val *gv = NULL;
            CHECK(strstr(good, "\"pruned\":[[1,2],") != NULL);
            CHECK_OK(t2__searcher_create(cfg, 23, &other));
            CHECK_OK(t2__val_from_json(good, strlen(good), &gv, NULL));
            CHECK_OK(t2__searcher_restore(other, gv));
            t2__val_free(gv);
            for (size_t b = 0; other && b < sizeof bad / sizeof *bad; b++) {
                t2__val *st = NULL, *steps = NULL;
                CHECK_OK(t2__val_from_json(r.ev[r.nev - 1].state, strlen(r.ev[r.nev - 1].state), &st, NULL));
                CHECK_OK(t2__val_from_json(bad[b], strlen(bad[b]), &steps, NULL));
                CHECK_OK(t2__val_set_path(st, "state.pruned", steps));
                CHECK_RC(t2__searcher_restore(other, st), T2_EFORMAT);
                CHECK_CONTAINS(t2_errmsg(), "state.pruned");
                t2__val_free(st);
            }
            t2__val *after = NULL;
            char *json = NULL;
            CHECK_OK(t2__searcher_snapshot(other, &after));
            CHECK_OK(t2__val_to_json(after, &json, NULL));
            CHECK_STR(json, good);
            free(json);
            t2__val_free(after);
            t2__searcher_free(other);
        }
        drive_free(&r);
        t2__searcher_free(s);
        t2__config_free(cfg);
    }
}

/* A snapshot the searcher wrote before pruning existed (this is one, from a tpe run of TPE_HP with
 * the config below and seed 5, before event 15 of old_fate's run: trials done, pending and gone,
 * the model proposing): it restores, and the search continues exactly as the old searcher did
 * (its CREATEs below were written by it). A run of today's searcher without pruning writes the
 * same snapshot, byte for byte. And a row that says pruned in a state without steps is refused. */
static const char OLD_STATE[] =
    "{\"version\":1,\"searcher\":\"tpe\",\"experiment_seed\":\"0000000000000005\",\"started\":true,\"shutdown\":false,"
    "\"next_request\":6,\"invalid_streak\":0,\"ended\":{\"low\":4,\"ids\":[]},\"state\":{\"invalid\":0,\"trials\":["
    "[1,0.0,1.7423259230318298,2.212245104539795],[1,0.4,3.3933852989084414,1.5039169957134932],"
    "[1,0.8,-1.501361758045273,4.330671670704067],[2,null,-4.872727910215294,-3.282304535884541],"
    "[1,0.5,2.1995972898338323,-4.533986154758397],[0,null,-3.146368956453604,1.0161302410514697]]}}";

static double old_metric(int64_t rid, int64_t length, void *ctx)
{
    (void)ctx;
    (void)length;
    return (double)((rid * 37) % 11) / 10.0;
}

static int old_fate(int64_t rid, int64_t length, void *ctx)
{
    (void)length;
    (void)ctx;
    return rid == 3 ? 3 : rid == 5 ? 1 : 0;
}

static void test_old_snapshot(void)
{
    t2__config *cfg = load_cfg("name: tpe, metric: loss, max_length: {batches: 4}, max_trials: 8, n_startup_trials: 2, "
                               "max_concurrent_trials: 2",
                               TPE_HP);
    if (!cfg) return;
    t2__searcher *s = NULL;
    t2__val *st = NULL, *again = NULL;
    t2__ops ops = {0};
    char *json = NULL;
    CHECK_OK(t2__val_from_json(OLD_STATE, strlen(OLD_STATE), &st, NULL));
    CHECK_OK(t2__searcher_create(cfg, 5, &s));
    CHECK_OK(t2__searcher_restore(s, st));
    CHECK_OK(t2__searcher_snapshot(s, &again));
    CHECK_OK(t2__val_to_json(again, &json, NULL));
    CHECK_STR(json, OLD_STATE);
    CHECK_OK(t2__searcher_on_trial_failed(s, 5, 0, &ops));
    CHECK_STR(ops_text(&ops, 0, 1),
              "C6{5765c9fd02a11332 {\"global_batch_size\":8,\"x\":-4.853082553577784,\"y\":0.9457920447192905}} T6@4");
    t2__ops_clear(&ops);
    CHECK_OK(t2__searcher_on_trial_exited(s, 4, &ops));
    CHECK_STR(ops_text(&ops, 0, 1),
              "C7{88bf589a5ce00596 {\"global_batch_size\":8,\"x\":4.099373669828836,\"y\":4.473301939851208}} T7@4");
    /* Today's searcher writes that state in the same run. */
    t2__searcher *fresh = NULL;
    drive_script sc = {.metric = old_metric, .fate = old_fate, .snapshots = 1};
    drive_run r;
    CHECK_OK(t2__searcher_create(cfg, 5, &fresh));
    if (fresh && !drive(fresh, &sc, &r)) {
        CHECK(r.nev > 15);
        if (r.nev > 15) CHECK_STR(r.ev[15].state, OLD_STATE);
        drive_free(&r);
    }
    /* A row that says pruned needs its step. */
    t2__val *trials = t2__val_lookup(st, "state.trials");
    CHECK(trials && trials->n == 6);
    if (trials && trials->n == 6) trials->items[1]->items[0]->i = 3;
    t2__searcher *other = NULL;
    CHECK_OK(t2__searcher_create(cfg, 5, &other));
    CHECK_RC(t2__searcher_restore(other, st), T2_EFORMAT);
    CHECK_CONTAINS(t2_errmsg(), "state.pruned must list the step of each of the 1 pruned trials");
    t2__searcher_free(other);
    t2__searcher_free(fresh);
    free(json);
    t2__val_free(again);
    t2__val_free(st);
    t2__ops_free(&ops);
    t2__searcher_free(s);
    t2__config_free(cfg);
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
    test_invalid_region();
    test_config_errors();
    test_determinism();
    test_resume();
    test_beats_random();
    test_mixed_space();
    test_categorical_rarely_tried();
    test_pruned_startup();
    test_pruned_order();
    test_pruned_resume();
    test_hyperband_brackets();
    test_old_snapshot();
    test_preview();
    return check_report("test_searcher_tpe");
}
