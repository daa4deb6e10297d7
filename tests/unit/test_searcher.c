/* test_searcher.c — single, grid and random searchers: the exact trials a grid config gives
 * (counts, log spacing, int ranges with count > range, categorical, nested) in Determined's order, random draws pinned
 * to the seed, the event protocol (validations before max_length, CLOSE, SHUTDOWN exactly after
 * the last trial ends, invalid-hparams replacement), the pruner's event (a pruned trial is closed
 * and done; single, adaptive_asha and pbt refuse it), snapshot/restore, preview, and the config
 * errors a search can hit. */
#define _POSIX_C_SOURCE 200809L /* strdup */
#include "test_searcher_util.h"

/* The hparams of every CREATE in ops as one JSON-ish line per trial. */
static char *creates_json(const t2__ops *ops)
{
    size_t cap = 1 << 16, at = 0;
    char *out = calloc(cap, 1);
    for (size_t k = 0; out && k < ops->n; k++) {
        if (ops->v[k].kind != T2__OP_CREATE) continue;
        char *json = NULL;
        t2__val_to_json(ops->v[k].hparams, &json, NULL);
        at += (size_t)snprintf(out + at, cap - at, "%s%s", at ? "\n" : "", json ? json : "?");
        free(json);
    }
    return out;
}

static size_t count_kind(const t2__ops *ops, t2__op_kind kind)
{
    size_t n = 0;
    for (size_t k = 0; k < ops->n; k++) n += ops->v[k].kind == kind;
    return n;
}

static void test_grid_points(void)
{
    t2__config *cfg = load_cfg("name: grid, metric: loss, max_length: {batches: 10}",
                               "  lr: {type: log, minval: -3, maxval: -1, count: 3}\n"
                               "  layers: {type: int, minval: 1, maxval: 3, count: 10}\n"
                               "  act: {type: categorical, vals: [relu, tanh]}\n"
                               "  opt:\n"
                               "    momentum: {type: double, minval: 0.5, maxval: 0.9, count: 2}\n"
                               "    name: sgd\n");
    if (!cfg) return;
    t2__searcher *s = NULL;
    t2__ops ops = {0};
    CHECK_OK(t2__searcher_create(cfg, 1, &s));
    CHECK(t2__searcher_total_trials(s) == 36); /* 3 lr x 3 layers (count 10 > range 3) x 2 act x 2 momentum */
    CHECK_OK(t2__searcher_start(s, &ops));
    CHECK(count_kind(&ops, T2__OP_CREATE) == 36);
    CHECK(count_kind(&ops, T2__OP_TRAIN) == 36);
    /* Determined's order: the product over the leaves sorted by name (act, global_batch_size,
     * layers, lr, opt.momentum, opt.name), the first varying slowest, created from the end; every
     * trial trains to max_length. */
    for (size_t k = 0; k < ops.n; k++) {
        CHECK(ops.v[k].request_id == (int64_t)(k / 2));
        if (ops.v[k].kind == T2__OP_TRAIN) CHECK(ops.v[k].length == 10);
    }
    char *all = creates_json(&ops);
    char *line = all ? strtok(all, "\n") : NULL;
    CHECK_STR(line, "{\"global_batch_size\":8,\"lr\":0.1,\"layers\":3,\"act\":\"tanh\",\"opt\":{\"momentum\":0.9,\"name\":\"sgd\"}}");
    line = strtok(NULL, "\n");
    CHECK_STR(line, "{\"global_batch_size\":8,\"lr\":0.1,\"layers\":3,\"act\":\"tanh\",\"opt\":{\"momentum\":0.5,\"name\":\"sgd\"}}");
    line = strtok(NULL, "\n");
    CHECK_STR(line, "{\"global_batch_size\":8,\"lr\":0.01,\"layers\":3,\"act\":\"tanh\",\"opt\":{\"momentum\":0.9,\"name\":\"sgd\"}}");
    for (int k = 3; k <= 18 && line; k++) line = strtok(NULL, "\n"); /* request 18: act, the slowest, turns */
    CHECK_STR(line, "{\"global_batch_size\":8,\"lr\":0.1,\"layers\":3,\"act\":\"relu\",\"opt\":{\"momentum\":0.9,\"name\":\"sgd\"}}");
    free(all);
    /* The last request: every axis at its start. */
    char *json = NULL;
    CHECK_OK(t2__val_to_json(ops.v[70].hparams, &json, NULL));
    CHECK_STR(json, "{\"global_batch_size\":8,\"lr\":0.001,\"layers\":1,\"act\":\"relu\",\"opt\":{\"momentum\":0.5,\"name\":\"sgd\"}}");
    free(json);
    /* Every point exactly once: each request is a different point of the configs module's grid. */
    t2__val *grid = NULL;
    CHECK_OK(t2__hparam_grid(cfg->hparams, 0, &grid));
    for (size_t k = 0; grid && 2 * k < ops.n; k++) {
        size_t found = 0;
        for (size_t j = 0; j < grid->n; j++) found += t2__val_equal(grid->items[j], ops.v[2 * k].hparams);
        for (size_t j = 0; j < k; j++) CHECK(!t2__val_equal(ops.v[2 * j].hparams, ops.v[2 * k].hparams));
        CHECK(found == 1);
    }
    t2__val_free(grid);
    /* Seeds: a hash of experiment seed and request id, all different. */
    for (size_t k = 2; k < ops.n; k += 2) CHECK(ops.v[k].seed != ops.v[k - 2].seed);
    t2__ops_free(&ops);
    t2__searcher_free(s);
    t2__config_free(cfg);
}

static void test_grid_small_axes(void)
{
    /* int with count 1 -> the rounded midpoint; double count 3; log base 2. */
    t2__config *cfg = load_cfg("name: grid, metric: loss, max_length: {epochs: 1}",
                               "  w: {type: int, minval: 0, maxval: 5, count: 1}\n"
                               "  d: {type: double, minval: 0, maxval: 1, count: 3}\n"
                               "  b: {type: log, base: 2, minval: 0, maxval: 2, count: 3}\n");
    if (!cfg) return;
    t2__searcher *s = NULL;
    t2__ops ops = {0};
    CHECK_OK(t2__searcher_create(cfg, 1, &s));
    CHECK_OK(t2__searcher_start(s, &ops));
    char *all = creates_json(&ops);
    /* Sorted: b (slowest), d, w; created from the end. */
    CHECK_STR(all, "{\"global_batch_size\":8,\"w\":3,\"d\":1.0,\"b\":4.0}\n"
                   "{\"global_batch_size\":8,\"w\":3,\"d\":0.5,\"b\":4.0}\n"
                   "{\"global_batch_size\":8,\"w\":3,\"d\":0.0,\"b\":4.0}\n"
                   "{\"global_batch_size\":8,\"w\":3,\"d\":1.0,\"b\":2.0}\n"
                   "{\"global_batch_size\":8,\"w\":3,\"d\":0.5,\"b\":2.0}\n"
                   "{\"global_batch_size\":8,\"w\":3,\"d\":0.0,\"b\":2.0}\n"
                   "{\"global_batch_size\":8,\"w\":3,\"d\":1.0,\"b\":1.0}\n"
                   "{\"global_batch_size\":8,\"w\":3,\"d\":0.5,\"b\":1.0}\n"
                   "{\"global_batch_size\":8,\"w\":3,\"d\":0.0,\"b\":1.0}");
    free(all);
    t2__ops_free(&ops);
    t2__searcher_free(s);
    t2__config_free(cfg);
}

/* The protocol on a 2-point grid: validations before max_length get no answer, the one at
 * max_length a CLOSE (once), SHUTDOWN comes with the exit of the last trial and never before. */
static void test_flat_protocol(void)
{
    t2__config *cfg = load_cfg("name: grid, metric: loss, max_length: {batches: 100}",
                               "  act: {type: categorical, vals: [relu, tanh]}\n");
    if (!cfg) return;
    t2__searcher *s = NULL;
    t2__ops ops = {0};
    CHECK_OK(t2__searcher_create(cfg, 7, &s));
    CHECK_RC(t2__searcher_on_validation(s, 0, 1.0, 100, &ops), T2_ESTATE); /* before start */
    CHECK_OK(t2__searcher_start(s, &ops));
    CHECK_STR(ops_text(&ops, 0, 0), "C0 T0@100 C1 T1@100");
    CHECK_RC(t2__searcher_start(s, &ops), T2_ESTATE);
    CHECK(t2__searcher_progress(s) == 0.0);
    t2__ops_clear(&ops);
    CHECK_RC(t2__searcher_on_validation(s, 2, 1.0, 100, &ops), T2_EINVAL); /* never created */
    CHECK_RC(t2__searcher_on_validation(s, -1, 1.0, 100, &ops), T2_EINVAL);
    CHECK_OK(t2__searcher_on_trial_created(s, 0, &ops));
    CHECK_OK(t2__searcher_on_validation(s, 0, 0.5, 50, &ops)); /* a periodic validation */
    CHECK_STR(ops_text(&ops, 0, 0), "");
    CHECK_OK(t2__searcher_on_validation(s, 1, 0.4, 100, &ops));
    CHECK_OK(t2__searcher_on_validation(s, 1, 0.4, 100, &ops)); /* reported twice: one CLOSE */
    CHECK_STR(ops_text(&ops, 0, 0), "X1");
    t2__ops_clear(&ops);
    CHECK_OK(t2__searcher_on_trial_exited(s, 1, &ops));
    CHECK_STR(ops_text(&ops, 0, 0), "");
    CHECK_NEAR(t2__searcher_progress(s), 0.5, 1e-12);
    CHECK_OK(t2__searcher_on_trial_exited(s, 1, &ops)); /* events about ended trials are ignored */
    CHECK_OK(t2__searcher_on_validation(s, 1, 0.4, 100, &ops));
    CHECK_STR(ops_text(&ops, 0, 0), "");
    /* A grid point that fails (even with invalid hparams) is done: no replacement. */
    CHECK_OK(t2__searcher_on_trial_failed(s, 0, 1, &ops));
    CHECK_STR(ops_text(&ops, 0, 0), "S");
    CHECK(t2__searcher_progress(s) == 1.0);
    t2__ops_clear(&ops);
    CHECK_OK(t2__searcher_on_trial_exited(s, 0, &ops));
    CHECK_STR(ops_text(&ops, 0, 0), ""); /* SHUTDOWN only once */
    t2__ops_free(&ops);
    t2__searcher_free(s);
    t2__config_free(cfg);
}

static const char RANDOM_HP[] = "  lr: {type: log, minval: -4, maxval: -1}\n"
                                "  units: {type: int, minval: 1, maxval: 3}\n"
                                "  drop: {type: double, minval: 0.1, maxval: 0.5}\n"
                                "  act: {type: categorical, vals: [relu, tanh, gelu]}\n"
                                "  fixed: {type: const, val: 3}\n";

static char *random_creates(const t2__config *cfg, uint64_t seed, t2__ops *ops)
{
    t2__searcher *s = NULL;
    CHECK_OK(t2__searcher_create(cfg, seed, &s));
    if (!s) return NULL;
    CHECK_OK(t2__searcher_start(s, ops));
    t2__searcher_free(s);
    return creates_json(ops);
}

static void test_random(void)
{
    t2__config *cfg = load_cfg("name: random, metric: acc, smaller_is_better: false, max_trials: 40, "
                               "max_length: {batches: 5}",
                               RANDOM_HP);
    if (!cfg) return;
    t2__ops a = {0}, b = {0}, c = {0};
    char *ja = random_creates(cfg, 42, &a), *jb = random_creates(cfg, 42, &b), *jc = random_creates(cfg, 43, &c);
    CHECK(count_kind(&a, T2__OP_CREATE) == 40);
    CHECK(count_kind(&a, T2__OP_TRAIN) == 40);
    CHECK(ja && jb && strcmp(ja, jb) == 0); /* same seed, same trials */
    CHECK(ja && jc && strcmp(ja, jc) != 0); /* another seed, other trials */
    for (size_t k = 0; k < a.n && k < b.n; k++) CHECK(a.v[k].seed == b.v[k].seed);
    CHECK(a.v[0].seed != c.v[0].seed);
    /* Every draw inside its range; over 40 draws the int hits both ends and every category shows. */
    int seen_int[4] = {0}, seen_cat[3] = {0};
    for (size_t k = 0; k < a.n; k++) {
        if (a.v[k].kind != T2__OP_CREATE) continue;
        const t2__val *hp = a.v[k].hparams;
        double lr = t2__val_lookup(hp, "lr")->d, drop = t2__val_lookup(hp, "drop")->d;
        const t2__val *units = t2__val_lookup(hp, "units"), *act = t2__val_lookup(hp, "act");
        CHECK(lr >= 1e-4 && lr < 1e-1);
        CHECK(drop >= 0.1 && drop < 0.5);
        CHECK(units->kind == T2__VAL_INT && units->i >= 1 && units->i <= 3);
        if (units->i >= 1 && units->i <= 3) seen_int[units->i]++;
        seen_cat[!strcmp(act->s, "tanh") + 2 * !strcmp(act->s, "gelu")]++;
        CHECK(t2__val_lookup(hp, "fixed")->i == 3);
        CHECK(t2__val_lookup(hp, "global_batch_size")->i == 8);
    }
    CHECK(seen_int[1] && seen_int[2] && seen_int[3]);
    CHECK(seen_cat[0] && seen_cat[1] && seen_cat[2]);
    /* Pinned: request 0 of seed 42 (changes only if the derivation of hparams from seeds changes,
     * which would change every user's experiments). */
    char *first = ja ? strtok(ja, "\n") : NULL;
    CHECK_STR(first, "{\"global_batch_size\":8,\"lr\":0.015665109120061395,\"units\":1,\"drop\":0.12756200099627796,"
                     "\"act\":\"relu\",\"fixed\":3}");
    free(ja);
    free(jb);
    free(jc);
    t2__ops_free(&a);
    t2__ops_free(&b);
    t2__ops_free(&c);
    t2__config_free(cfg);
}

/* searcher.points_to_evaluate: the first trials take the points' values; what a point leaves out is
 * the draw the trial would have had anyway, and the trials after the points are unchanged. TPE
 * takes a point even past its startup trials, where it would otherwise propose. */
static void test_points_to_evaluate(void)
{
    const char *base = "name: random, metric: acc, smaller_is_better: false, max_trials: 5, max_length: {batches: 5}";
    char with[512];
    snprintf(with, sizeof with, "%s, points_to_evaluate: [{lr: 0.05, act: gelu, units: 3}, {drop: 0.25}]", base);
    t2__config *a = load_cfg(base, RANDOM_HP), *b = load_cfg(with, RANDOM_HP);
    if (a && b) {
        t2__ops oa = {0}, ob = {0};
        char *ja = random_creates(a, 7, &oa), *jb = random_creates(b, 7, &ob);
        const t2__val *h[2][5] = {{0}};
        for (int w = 0; w < 2; w++) {
            const t2__ops *o = w ? &ob : &oa;
            int k = 0;
            for (size_t i = 0; i < o->n && k < 5; i++)
                if (o->v[i].kind == T2__OP_CREATE) h[w][k++] = o->v[i].hparams;
        }
        if (h[1][0] && h[1][1] && h[0][0] && h[0][1]) {
            CHECK(t2__val_lookup(h[1][0], "lr")->d == 0.05);
            CHECK(!strcmp(t2__val_lookup(h[1][0], "act")->s, "gelu"));
            CHECK(t2__val_lookup(h[1][0], "units")->i == 3);
            CHECK(t2__val_equal(t2__val_lookup(h[1][0], "drop"), t2__val_lookup(h[0][0], "drop"))); /* drawn */
            CHECK(t2__val_lookup(h[1][1], "drop")->d == 0.25);
            CHECK(t2__val_equal(t2__val_lookup(h[1][1], "lr"), t2__val_lookup(h[0][1], "lr")));
            for (int k = 2; k < 5; k++) CHECK(h[0][k] && h[1][k] && t2__val_equal(h[0][k], h[1][k]));
        }
        free(ja);
        free(jb);
        t2__ops_free(&oa);
        t2__ops_free(&ob);
    }
    t2__config_free(a);
    t2__config_free(b);
    /* TPE, one startup trial, two points: request 1 is the point, not a proposal. */
    t2__config *t = load_cfg("name: tpe, metric: loss, max_length: {batches: 1}, max_trials: 4, n_startup_trials: 1, "
                             "max_concurrent_trials: 1, points_to_evaluate: [{drop: 0.2}, {drop: 0.4, units: 1}]",
                             RANDOM_HP);
    t2__searcher *s = NULL;
    if (t && !t2__searcher_create(t, 3, &s)) {
        t2__ops ops = {0};
        CHECK_OK(t2__searcher_start(s, &ops));
        CHECK(ops.n >= 1 && ops.v[0].kind == T2__OP_CREATE && t2__val_lookup(ops.v[0].hparams, "drop")->d == 0.2);
        size_t from = ops.n;
        CHECK_OK(t2__searcher_on_validation(s, 0, 1.0, 1, &ops));
        CHECK_OK(t2__searcher_on_trial_exited(s, 0, &ops));
        const t2__val *next = NULL;
        for (size_t i = from; i < ops.n && !next; i++)
            if (ops.v[i].kind == T2__OP_CREATE) next = ops.v[i].hparams;
        CHECK(next && t2__val_lookup(next, "drop")->d == 0.4 && t2__val_lookup(next, "units")->i == 1);
        t2__ops_free(&ops);
    }
    t2__searcher_free(s);
    t2__config_free(t);
}

/* Invalid hparams: random draws a replacement under a new request id; max_trials counts only
 * valid trials, so progress and the total stay right. Other failures are not replaced. */
static void test_random_failures(void)
{
    t2__config *cfg = load_cfg("name: random, metric: loss, max_trials: 3, max_length: {batches: 5}", RANDOM_HP);
    if (!cfg) return;
    t2__searcher *s = NULL;
    t2__ops ops = {0};
    CHECK_OK(t2__searcher_create(cfg, 5, &s));
    CHECK_OK(t2__searcher_start(s, &ops));
    CHECK_STR(ops_text(&ops, 0, 0), "C0 T0@5 C1 T1@5 C2 T2@5");
    t2__ops_clear(&ops);
    CHECK_OK(t2__searcher_on_trial_failed(s, 1, 1, &ops));
    CHECK_STR(ops_text(&ops, 0, 0), "C3 T3@5");
    CHECK(t2__searcher_total_trials(s) == 3);
    CHECK(t2__searcher_progress(s) == 0.0);
    /* The replacement's hparams are those of request 3, whatever happened before. */
    t2__val *want = NULL;
    t2__searcher *s2 = NULL;
    t2__ops ops2 = {0};
    t2__config *cfg4 = load_cfg("name: random, metric: loss, max_trials: 4, max_length: {batches: 5}", RANDOM_HP);
    if (cfg4 && !t2__searcher_create(cfg4, 5, &s2) && !t2__searcher_start(s2, &ops2)) want = ops2.v[6].hparams;
    CHECK(want && t2__val_equal(want, ops.v[0].hparams));
    t2__ops_free(&ops2);
    t2__searcher_free(s2);
    t2__config_free(cfg4);
    t2__ops_clear(&ops);
    CHECK_OK(t2__searcher_on_trial_failed(s, 0, 0, &ops)); /* a crash: not replaced */
    CHECK_STR(ops_text(&ops, 0, 0), "");
    CHECK_NEAR(t2__searcher_progress(s), 1.0 / 3.0, 1e-12);
    CHECK_OK(t2__searcher_on_validation(s, 2, 0.1, 5, &ops));
    CHECK_OK(t2__searcher_on_validation(s, 3, 0.1, 5, &ops));
    CHECK_OK(t2__searcher_on_trial_exited(s, 2, &ops));
    CHECK_STR(ops_text(&ops, 0, 0), "X2 X3");
    t2__ops_clear(&ops);
    CHECK_OK(t2__searcher_on_trial_exited(s, 3, &ops));
    CHECK_STR(ops_text(&ops, 0, 0), "S");
    t2__ops_free(&ops);
    t2__searcher_free(s);
    t2__config_free(cfg);
}

/* Trials that call their hparams invalid are replaced, but not forever: the 100th replacement in a
 * row is refused with an error (random, adaptive ASHA and tpe all replace). A validation in
 * between starts the count again, and the count survives a snapshot. */
static void test_invalid_streak(void)
{
    static const char *const searchers[] = {
        "name: random, metric: loss, max_trials: 1, max_length: {batches: 5}",
        "name: adaptive_asha, metric: loss, max_trials: 1, max_length: {batches: 5}",
        "name: tpe, metric: loss, max_trials: 1, max_length: {batches: 5}",
    };
    for (size_t k = 0; k < sizeof searchers / sizeof *searchers; k++) {
        t2__config *cfg = load_cfg(searchers[k], RANDOM_HP);
        if (!cfg) return;
        t2__searcher *s = NULL, *s2 = NULL;
        t2__ops ops = {0};
        t2__val *st = NULL;
        CHECK_OK(t2__searcher_create(cfg, 5, &s));
        CHECK_OK(t2__searcher_start(s, &ops));
        int64_t rid = 0;
        for (int i = 0; i < 99; i++) { /* 99 replacements in a row are drawn */
            t2__ops_clear(&ops);
            CHECK_OK(t2__searcher_on_trial_failed(s, rid, 1, &ops));
            CHECK(count_kind(&ops, T2__OP_CREATE) == 1);
            rid++;
        }
        CHECK_OK(t2__searcher_on_validation(s, rid, 0.5, 1, &ops)); /* a valid trial: the count restarts */
        for (int i = 0; i < 99; i++) {
            t2__ops_clear(&ops);
            CHECK_OK(t2__searcher_on_trial_failed(s, rid++, 1, &ops));
        }
        CHECK_OK(t2__searcher_snapshot(s, &st));
        CHECK_OK(t2__searcher_create(cfg, 5, &s2));
        CHECK_OK(t2__searcher_restore(s2, st));
        for (int j = 0; j < 2; j++) { /* the 100th in a row fails, in the original and the restored searcher */
            t2__ops_clear(&ops);
            CHECK_RC(t2__searcher_on_trial_failed(j ? s2 : s, rid, 1, &ops), T2_EHPARAM);
            CHECK_CONTAINS(t2_errmsg(), "100 trials in a row called their hyperparameters invalid");
            CHECK(ops.n == 0);
        }
        t2__val_free(st);
        t2__ops_free(&ops);
        t2__searcher_free(s);
        t2__searcher_free(s2);
        t2__config_free(cfg);
    }
}

static void test_single(void)
{
    t2__config *cfg = load_cfg("name: single, metric: loss, max_length: {records: 640}",
                               "  lr: 0.01\n  opt: {name: sgd, momentum: 0.9}\n");
    if (!cfg) return;
    t2__searcher *s = NULL;
    t2__ops ops = {0};
    CHECK_OK(t2__searcher_create(cfg, 9, &s));
    CHECK(t2__searcher_total_trials(s) == 1);
    CHECK_OK(t2__searcher_start(s, &ops));
    CHECK_STR(ops_text(&ops, 0, 0), "C0 T0@640");
    char *json = creates_json(&ops);
    CHECK_STR(json, "{\"global_batch_size\":8,\"lr\":0.01,\"opt\":{\"name\":\"sgd\",\"momentum\":0.9}}");
    free(json);
    CHECK(ops.v[0].seed == t2_hash64(9 ^ t2_hash64(0)));
    t2__ops_clear(&ops);
    CHECK_OK(t2__searcher_on_trial_failed(s, 0, 1, &ops)); /* single: nothing to replace with */
    CHECK_STR(ops_text(&ops, 0, 0), "S");
    t2__ops_free(&ops);
    t2__searcher_free(s);
    t2__config_free(cfg);
    /* A searchable leaf in a single search: one draw from the seed, as Determined does. */
    cfg = load_cfg("name: single, metric: loss, max_length: {batches: 1}",
                   "  lr: {type: double, minval: 0.1, maxval: 0.2}\n");
    if (!cfg) return;
    CHECK_OK(t2__searcher_create(cfg, 9, &s));
    CHECK_OK(t2__searcher_start(s, &ops));
    double lr = ops.n ? t2__val_lookup(ops.v[0].hparams, "lr")->d : -1;
    CHECK(lr >= 0.1 && lr < 0.2);
    t2__ops_free(&ops);
    t2__searcher_free(s);
    t2__config_free(cfg);
}

static double metric_by_id(int64_t rid, int64_t length, void *ctx)
{
    (void)ctx;
    return (double)((rid * 7919) % 101) / 100.0 + 1.0 / (double)length;
}

static int flat_fate(int64_t rid, int64_t length, void *ctx)
{
    (void)length;
    (void)ctx;
    return rid % 7 == 3 ? 2 : rid % 11 == 5 ? 1 : 0;
}

/* Restoring from a snapshot taken before any event and replaying the rest gives the same ops. */
static void test_flat_snapshots(void)
{
    t2__config *cfg = load_cfg("name: random, metric: loss, max_trials: 30, max_length: {batches: 5}", RANDOM_HP);
    if (!cfg) return;
    t2__searcher *s = NULL;
    drive_script sc = {.metric = metric_by_id, .fate = flat_fate, .snapshots = 1};
    drive_run r;
    CHECK_OK(t2__searcher_create(cfg, 11, &s));
    if (s && !drive(s, &sc, &r)) {
        CHECK(r.shutdowns == 1);
        CHECK(r.created == 30 + 5); /* requests 3, 10, 17, 24, 31 were invalid and replaced */
        for (size_t k = 0; k < r.nev; k += 3) check_replay(cfg, 11, &r, k);
        check_replay(cfg, 11, &r, r.nev - 1);
        /* A state saved under another seed or by another searcher is refused. */
        t2__searcher *other = NULL;
        t2__val *st = NULL;
        CHECK_OK(t2__val_from_json(r.ev[3].state, strlen(r.ev[3].state), &st, NULL));
        CHECK_OK(t2__searcher_create(cfg, 12, &other));
        CHECK_RC(t2__searcher_restore(other, st), T2_EINVAL);
        CHECK_CONTAINS(t2_errmsg(), "experiment seed");
        t2__searcher_free(other);
        t2__config *g = load_cfg("name: grid, metric: loss, max_length: {batches: 5}", NULL);
        if (g) {
            CHECK_OK(t2__searcher_create(g, 11, &other));
            CHECK_RC(t2__searcher_restore(other, st), T2_EINVAL);
            CHECK_CONTAINS(t2_errmsg(), "saved by the random searcher");
            t2__searcher_free(other);
            t2__config_free(g);
        }
        /* A damaged state is refused with a format error, and the searcher is unchanged. */
        t2__val_set_path(st, "state.closing", t2__val_string("x"));
        CHECK_OK(t2__searcher_create(cfg, 11, &other));
        CHECK_RC(t2__searcher_restore(other, st), T2_EFORMAT);
        t2__searcher_free(other);
        t2__val_free(st);
    }
    drive_free(&r);
    t2__searcher_free(s);
    t2__config_free(cfg);
}

/* The pruner's event on random and grid by hand: a pruned trial gets CLOSE (once) as at
 * max_length, ends when it exits, counts as done and is not replaced; the event before start, for
 * an unknown trial, at a negative length or for an ended trial is refused or ignored as every
 * event is. */
static void test_flat_pruned(void)
{
    static const char *const sc[] = {"name: random, metric: loss, max_trials: 3, max_length: {batches: 10}",
                                     "name: grid, metric: loss, max_length: {batches: 10}"};
    for (int v = 0; v < 2; v++) {
        t2__config *cfg = load_cfg(sc[v], v ? "  act: {type: categorical, vals: [relu, tanh, gelu]}\n" : RANDOM_HP);
        if (!cfg) continue;
        t2__searcher *s = NULL;
        t2__ops ops = {0};
        CHECK_OK(t2__searcher_create(cfg, 3, &s));
        CHECK_RC(t2__searcher_on_trial_pruned(s, 0, 0.9, 5, &ops), T2_ESTATE);
        CHECK_OK(t2__searcher_start(s, &ops));
        CHECK_STR(ops_text(&ops, 0, 0), "C0 T0@10 C1 T1@10 C2 T2@10");
        t2__ops_clear(&ops);
        CHECK_RC(t2__searcher_on_trial_pruned(s, 3, 0.9, 5, &ops), T2_EINVAL); /* never created */
        CHECK_CONTAINS(t2_errmsg(), "never created");
        CHECK_RC(t2__searcher_on_trial_pruned(s, -1, 0.9, 5, &ops), T2_EINVAL);
        CHECK_RC(t2__searcher_on_trial_pruned(s, 0, 0.9, -1, &ops), T2_EINVAL);
        CHECK_OK(t2__searcher_on_validation(s, 0, 0.9, 5, &ops)); /* the validation the pruner judged */
        CHECK_OK(t2__searcher_on_trial_pruned(s, 0, 0.9, 5, &ops));
        CHECK_OK(t2__searcher_on_trial_pruned(s, 0, 0.9, 5, &ops)); /* reported twice: one CLOSE */
        CHECK_STR(ops_text(&ops, 0, 0), "X0");
        t2__ops_clear(&ops);
        CHECK(!t2__searcher_has_ended(s, 0));
        CHECK_OK(t2__searcher_on_trial_exited(s, 0, &ops));
        CHECK_STR(ops_text(&ops, 0, 0), ""); /* done, and not replaced */
        CHECK(t2__searcher_has_ended(s, 0));
        CHECK_NEAR(t2__searcher_progress(s), 1.0 / 3.0, 1e-12);
        CHECK_OK(t2__searcher_on_trial_pruned(s, 0, 0.9, 5, &ops)); /* ended: ignored */
        CHECK_STR(ops_text(&ops, 0, 0), "");
        CHECK_OK(t2__searcher_on_validation(s, 1, 0.5, 10, &ops));
        CHECK_OK(t2__searcher_on_trial_pruned(s, 2, NAN, 3, &ops));
        CHECK_STR(ops_text(&ops, 0, 0), "X1 X2");
        t2__ops_clear(&ops);
        CHECK_OK(t2__searcher_on_trial_exited(s, 2, &ops));
        CHECK_STR(ops_text(&ops, 0, 0), "");
        CHECK_OK(t2__searcher_on_trial_exited(s, 1, &ops));
        CHECK_STR(ops_text(&ops, 0, 0), "S");
        CHECK(t2__searcher_progress(s) == 1.0);
        CHECK(t2__searcher_total_trials(s) == 3);
        t2__ops_clear(&ops);
        CHECK_OK(t2__searcher_on_trial_pruned(s, 1, 0.5, 5, &ops));
        CHECK_OK(t2__searcher_on_trial_exited(s, 1, &ops));
        CHECK_STR(ops_text(&ops, 0, 0), ""); /* SHUTDOWN only once */
        t2__ops_free(&ops);
        t2__searcher_free(s);
        t2__config_free(cfg);
    }
}

/* Every third trial pruned at half its length, one with invalid hparams: random and grid create
 * exactly their plan (random plus the one replacement), close every trial that did not fail, shut
 * down once, and a restore from any snapshot (a pruned trial on the closing list included)
 * continues the same. */
static int pruned_fate(int64_t rid, int64_t length, void *ctx)
{
    (void)length;
    (void)ctx;
    return rid % 3 == 1 ? 4 : rid == 5 ? 2 : 0;
}

static void test_flat_pruned_run(void)
{
    static const char *const sc[] = {"name: random, metric: loss, max_trials: 12, max_length: {batches: 8}",
                                     "name: grid, metric: loss, max_length: {batches: 8}"};
    for (int v = 0; v < 2; v++) {
        t2__config *cfg = load_cfg(sc[v], v ? "  a: {type: int, minval: 1, maxval: 4, count: 4}\n"
                                              "  b: {type: categorical, vals: [x, y, z]}\n"
                                            : RANDOM_HP);
        if (!cfg) continue;
        t2__searcher *s = NULL;
        drive_script d = {.metric = metric_by_id, .fate = pruned_fate, .snapshots = 1};
        drive_run r;
        CHECK_OK(t2__searcher_create(cfg, 4, &s));
        if (s && !drive(s, &d, &r)) {
            int64_t pruned = 0;
            for (size_t k = 0; k < r.nev; k++) {
                if (r.ev[k].kind != EV_PRUNED) continue;
                char want[32];
                snprintf(want, sizeof want, "X%" PRId64, r.ev[k].rid);
                CHECK(r.ev[k].length == 4);
                CHECK_STR(r.ev[k].ops, want);
                pruned++;
            }
            CHECK(pruned == 4); /* requests 1, 4, 7, 10 */
            CHECK(r.created == (v ? 12 : 13)); /* random replaces request 5 (invalid) with request 12 */
            CHECK(r.closes == r.created - 1);
            CHECK(r.shutdowns == 1);
            CHECK(t2__searcher_progress(s) == 1.0);
            for (size_t k = 0; k < r.nev; k += 2) check_replay(cfg, 4, &r, k);
        }
        drive_free(&r);
        t2__searcher_free(s);
        t2__config_free(cfg);
    }
}

/* adaptive_asha and pbt do not take a pruner: the event is refused (T2_EINVAL, naming the
 * searcher) and adds no op. single takes one (the rules that judge a trial by its own values):
 * its one trial is closed, and the search then shuts down. */
static void test_no_pruner(void)
{
    static const char *const sc[] = {
        "name: adaptive_asha, metric: loss, max_trials: 4, max_length: {batches: 64}",
        "name: pbt, metric: loss, population_size: 4, num_rounds: 3, length_per_round: {batches: 10}",
    };
    static const char *const names[] = {"the adaptive_asha searcher", "the pbt searcher"};
    for (size_t k = 0; k < sizeof sc / sizeof *sc; k++) {
        t2__config *cfg = load_cfg(sc[k], RANDOM_HP);
        if (!cfg) continue;
        t2__searcher *s = NULL;
        t2__ops ops = {0};
        CHECK_OK(t2__searcher_create(cfg, 2, &s));
        CHECK_OK(t2__searcher_start(s, &ops));
        size_t n = ops.n;
        CHECK(n >= 2 && ops.v[1].kind == T2__OP_TRAIN);
        CHECK_RC(t2__searcher_on_trial_pruned(s, 0, 0.5, 1, &ops), T2_EINVAL);
        CHECK_CONTAINS(t2_errmsg(), names[k]);
        CHECK_CONTAINS(t2_errmsg(), "does not take a pruner");
        CHECK(ops.n == n);
        CHECK(!t2__searcher_has_ended(s, 0));
        /* The searcher is unharmed: the trial's validation at its target is taken as usual. */
        if (n >= 2) CHECK_OK(t2__searcher_on_validation(s, 0, 0.5, ops.v[1].length, &ops));
        t2__ops_free(&ops);
        t2__searcher_free(s);
        t2__config_free(cfg);
    }
    t2__config *cfg = load_cfg("name: single, metric: loss, max_length: {batches: 10}", RANDOM_HP);
    if (!cfg) return;
    t2__searcher *s = NULL;
    t2__ops ops = {0};
    CHECK_OK(t2__searcher_create(cfg, 2, &s));
    CHECK_OK(t2__searcher_start(s, &ops));
    size_t n = ops.n;
    CHECK_OK(t2__searcher_on_trial_pruned(s, 0, 0.5, 4, &ops));
    CHECK(ops.n == n + 1 && ops.v[n].kind == T2__OP_CLOSE && ops.v[n].request_id == 0);
    CHECK_OK(t2__searcher_on_trial_exited(s, 0, &ops));
    CHECK(ops.n == n + 2 && ops.v[n + 1].kind == T2__OP_SHUTDOWN);
    t2__ops_free(&ops);
    t2__searcher_free(s);
    t2__config_free(cfg);
}

static void test_preview_grid(void)
{
    t2__config *cfg = load_cfg("name: grid, metric: loss, max_length: {batches: 20}",
                               "  lr: {type: log, minval: -2, maxval: -1, count: 2}\n"
                               "  act: {type: categorical, vals: [relu, tanh]}\n");
    if (!cfg) return;
    t2__val *pv = NULL;
    char *json = NULL;
    CHECK_OK(t2__searcher_preview(cfg, 1, &pv));
    CHECK_OK(t2__val_to_json(pv, &json, NULL));
    CHECK_STR(json, "[{\"request_id\":0,\"hparams\":{\"global_batch_size\":8,\"lr\":0.1,\"act\":\"tanh\"},\"lengths\":[20]},"
                    "{\"request_id\":1,\"hparams\":{\"global_batch_size\":8,\"lr\":0.01,\"act\":\"tanh\"},\"lengths\":[20]},"
                    "{\"request_id\":2,\"hparams\":{\"global_batch_size\":8,\"lr\":0.1,\"act\":\"relu\"},\"lengths\":[20]},"
                    "{\"request_id\":3,\"hparams\":{\"global_batch_size\":8,\"lr\":0.01,\"act\":\"relu\"},\"lengths\":[20]}]");
    free(json);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    CHECK(f != NULL);
    if (f) {
        CHECK_OK(t2__preview_print(pv, f));
        fclose(f);
        CHECK_STR(text, "  trial  lengths  hparams\n"
                        "      0  20       {\"global_batch_size\":8,\"lr\":0.1,\"act\":\"tanh\"}\n"
                        "      1  20       {\"global_batch_size\":8,\"lr\":0.01,\"act\":\"tanh\"}\n"
                        "      2  20       {\"global_batch_size\":8,\"lr\":0.1,\"act\":\"relu\"}\n"
                        "      3  20       {\"global_batch_size\":8,\"lr\":0.01,\"act\":\"relu\"}\n"
                        "4 trials, 4 trained to 20, 0 stopped earlier; length trained 80 in total\n");
        free(text);
    }
    t2__val_free(pv);
    t2__config_free(cfg);
}

/* The bad inputs of the must-show list that the config loader refuses before any
 * searcher exists: each fails with T2_EINVAL and a message naming the key and the problem. */
static void check_bad_yaml(const char *yaml, const char *want1, const char *want2)
{
    t2__config *cfg = NULL;
    CHECK_RC(t2__config_load_string(yaml, "bad.yaml", NULL, 0, &cfg), T2_EINVAL);
    CHECK(cfg == NULL);
    CHECK_CONTAINS(t2_errmsg(), want1);
    CHECK_CONTAINS(t2_errmsg(), want2);
    t2__config_free(cfg);
}

static void test_bad_configs(void)
{
    check_bad_yaml("searcher: {name: grid, metric: loss, max_length: {batches: 1}}\n"
              "hyperparameters:\n  global_batch_size: 8\n  lr: {type: double, minval: 0.1, maxval: 0.2}\n",
              "bad.yaml:4:7: hyperparameters.lr", "needs a count");
    check_bad_yaml("searcher: {name: random, metric: loss, max_length: {batches: 1}}\n"
              "hyperparameters:\n  global_batch_size: 8\n",
              "searcher.max_trials", "missing required key");
    check_bad_yaml("searcher: {name: adaptive_asha, metric: loss, max_length: {batches: 1}}\n"
              "hyperparameters:\n  global_batch_size: 8\n",
              "searcher.max_trials", "missing required key");
    check_bad_yaml("searcher: {name: random, metric: loss, max_trials: 2, max_length: {batches: 1}}\n"
              "hyperparameters:\n  global_batch_size: 8\n  lr: {type: double, minval: 0.5, maxval: 0.2}\n",
              "hyperparameters.lr.maxval", "less than minval");
    check_bad_yaml("searcher: {name: random, metric: loss, max_trials: 2, max_length: {batches: 1}}\n"
              "hyperparameters:\n  global_batch_size: 8\n  act: {type: categorical, vals: []}\n",
              "hyperparameters.act.vals", "empty list");
}

/* The searchers refuse a plan past T2__MAX_TRIALS themselves, also for a config that did not
 * come through the loader's checks (a caller that builds or changes one): nothing is created. */
static void test_plan_caps(void)
{
    t2__searcher *s = NULL;
    t2__config *cfg = load_cfg("name: random, metric: loss, max_trials: 4, max_length: {batches: 1}", NULL);
    if (cfg) {
        cfg->searcher.max_trials = INT64_MAX;
        CHECK_RC(t2__searcher_create(cfg, 1, &s), T2_EINVAL);
        CHECK(s == NULL);
        CHECK_STR(t2_errmsg(), "searcher.max_trials: at most 1000000 trials, got 9223372036854775807");
        cfg->searcher.max_trials = T2__MAX_TRIALS; /* the cap itself is allowed */
        CHECK_OK(t2__searcher_create(cfg, 1, &s));
        CHECK(s && t2__searcher_total_trials(s) == T2__MAX_TRIALS);
        t2__searcher_free(s);
        s = NULL;
    }
    t2__config_free(cfg);

    cfg = load_cfg("name: adaptive_asha, metric: loss, max_trials: 4, max_length: {batches: 64}", NULL);
    if (cfg) {
        cfg->searcher.max_trials = T2__MAX_TRIALS + 1;
        CHECK_RC(t2__searcher_create(cfg, 1, &s), T2_EINVAL);
        CHECK(s == NULL);
        CHECK_STR(t2_errmsg(), "searcher.max_trials: at most 1000000 trials, got 1000001");
    }
    t2__config_free(cfg);

    /* A grid of 1000 points made 10 million by raising a count after loading. */
    cfg = load_cfg("name: grid, metric: loss, max_length: {batches: 1}",
                   "  a: {type: double, minval: 0, maxval: 1, count: 10}\n"
                   "  b: {type: double, minval: 0, maxval: 1, count: 100}\n");
    if (cfg) {
        t2__hparam *b = (t2__hparam *)t2__hparam_find(cfg->hparams, "b");
        CHECK(b != NULL);
        if (b) b->count = 1000000;
        CHECK_RC(t2__searcher_create(cfg, 1, &s), T2_EINVAL);
        CHECK(s == NULL);
        CHECK_STR(t2_errmsg(), "hyperparameters: the grid has 10000000 points, more than the 1000000 a grid search may have");
    }
    t2__config_free(cfg);
}

int main(void)
{
    test_plan_caps();
    test_grid_points();
    test_grid_small_axes();
    test_flat_protocol();
    test_random();
    test_points_to_evaluate();
    test_random_failures();
    test_invalid_streak();
    test_single();
    test_flat_snapshots();
    test_flat_pruned();
    test_flat_pruned_run();
    test_no_pruner();
    test_preview_grid();
    test_bad_configs();
    return check_report("test_searcher");
}
