/* test_config_hparams.c — the search space: grid points pinned to exact values (counts, log
 * spacing, int ranges including count > range, categorical, nesting and order), random sampling
 * reproducible from a seed and matching the documented draws, building assignments. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "../../configs/config.h" /* configs/ is not on the test include path */

/* Loads a single-searcher config whose hyperparameters section is `hp` (indented two spaces). */
static t2__config *space(const char *hp)
{
    char text[4096];
    snprintf(text, sizeof text,
             "searcher: {name: single, metric: loss, max_length: {batches: 1}}\n"
             "hyperparameters:\n  global_batch_size: 8\n%s",
             hp);
    t2__config *cfg = NULL;
    int rc = t2__config_load_string(text, "space.yaml", NULL, 0, &cfg);
    if (rc) {
        fprintf(stderr, "space(): %s\n", t2_errmsg());
        check_failures++;
    }
    return cfg;
}

/* The grid values of one hyperparameter as JSON. */
static char *axis_json(const t2__config *cfg, const char *path)
{
    t2__val *axis = NULL;
    char *json = NULL;
    const t2__hparam *h = t2__hparam_find(cfg->hparams, path);
    if (!h || t2__hparam_axis(h, &axis) || t2__val_to_json(axis, &json, NULL)) {
        fprintf(stderr, "axis_json(%s): %s\n", path, t2_errmsg());
        check_failures++;
    }
    t2__val_free(axis);
    return json;
}

#define CHECK_AXIS(cfg, path, want)                                                               \
    do {                                                                                          \
        char *j_ = axis_json(cfg, path);                                                          \
        CHECK_STR(j_, want);                                                                      \
        free(j_);                                                                                 \
    } while (0)

static void test_axes(void)
{
    t2__config *cfg = space("  d5: {type: double, minval: -5, maxval: 5, count: 5}\n"
                            "  d1: {type: double, minval: 0.2, maxval: 0.4, count: 1}\n"
                            "  d3: {type: double, minval: 0, maxval: 1, count: 3}\n"
                            "  l10: {type: log, minval: -4, maxval: -1, count: 4}\n"
                            "  l2: {type: log, base: 2, minval: 0, maxval: 3, count: 4}\n"
                            "  l1: {type: log, minval: -3, maxval: -1, count: 1}\n"
                            "  i3: {type: int, minval: 8, maxval: 12, count: 3}\n"
                            "  i4: {type: int, minval: 0, maxval: 10, count: 4}\n"
                            "  ibig: {type: int, minval: 1, maxval: 3, count: 10}\n"
                            "  ione: {type: int, minval: 0, maxval: 1, count: 1}\n"
                            "  ineg: {type: int, minval: -3, maxval: -1, count: 2}\n"
                            "  isame: {type: int, minval: 4, maxval: 4, count: 5}\n"
                            "  cat: {type: categorical, vals: [relu, 1, true, [1, 2], {a: 1}]}\n"
                            "  k: {type: const, val: {x: 1}}\n"
                            "  plain: [1, 2]\n");
    if (!cfg) return;
    CHECK_AXIS(cfg, "d5", "[-5.0,-2.5,0.0,2.5,5.0]");
    CHECK_AXIS(cfg, "d1", "[0.30000000000000004]"); /* the midpoint, (0.2 + 0.4) / 2 in doubles */
    CHECK_AXIS(cfg, "d3", "[0.0,0.5,1.0]");
    CHECK_AXIS(cfg, "l10", "[0.0001,0.001,0.01,0.1]"); /* evenly spaced in the exponent */
    CHECK_AXIS(cfg, "l2", "[1.0,2.0,4.0,8.0]");
    CHECK_AXIS(cfg, "l1", "[0.01]");
    CHECK_AXIS(cfg, "i3", "[8,10,12]");
    CHECK_AXIS(cfg, "i4", "[0,3,7,10]");   /* round(10/3) = 3, round(20/3) = 7 */
    CHECK_AXIS(cfg, "ibig", "[1,2,3]");    /* count > range: every integer once */
    CHECK_AXIS(cfg, "ione", "[1]");        /* round(0.5) rounds half away from zero, as Go does */
    CHECK_AXIS(cfg, "ineg", "[-3,-1]");
    CHECK_AXIS(cfg, "isame", "[4]");
    CHECK_AXIS(cfg, "cat", "[\"relu\",1,true,[1,2],{\"a\":1}]");
    CHECK_AXIS(cfg, "k", "[{\"x\":1}]");
    CHECK_AXIS(cfg, "plain", "[[1,2]]");
    CHECK_AXIS(cfg, "global_batch_size", "[8]");

    uint64_t n = 0;
    CHECK_OK(t2__hparam_grid_size(cfg->hparams, &n));
    CHECK(n == 5ull * 1 * 3 * 4 * 4 * 1 * 3 * 4 * 3 * 1 * 2 * 1 * 5);

    /* A double without count has no grid; neither has a group. */
    t2__config_free(cfg);
    cfg = space("  d: {type: double, minval: 0, maxval: 1}\n  g: {a: 1}\n");
    if (!cfg) return;
    t2__val *axis = NULL;
    CHECK_RC(t2__hparam_axis(t2__hparam_find(cfg->hparams, "d"), &axis), T2_EINVAL);
    CHECK_STR(t2_errmsg(), "hparams: grid search needs a count for the double hyperparameter 'd'");
    CHECK_RC(t2__hparam_axis(t2__hparam_find(cfg->hparams, "g"), &axis), T2_EINVAL);
    CHECK_STR(t2_errmsg(), "hparams: 'g' is a group of hyperparameters, not one");
    CHECK(axis == NULL);
    CHECK_RC(t2__hparam_grid_size(cfg->hparams, &n), T2_EINVAL);
    t2__config_free(cfg);
}

static void test_grid(void)
{
    t2__config *cfg = space("  opt:\n"
                            "    lr: {type: log, minval: -2, maxval: -1, count: 2}\n"
                            "    mom: 0.9\n"
                            "  units: {type: int, minval: 1, maxval: 2, count: 5}\n"
                            "  act: {type: categorical, vals: [relu, tanh]}\n"
                            "  empty: {}\n");
    if (!cfg) return;
    static const char *const want[] = {
        "{\"global_batch_size\":8,\"opt\":{\"lr\":0.01,\"mom\":0.9},\"units\":1,\"act\":\"relu\",\"empty\":{}}",
        "{\"global_batch_size\":8,\"opt\":{\"lr\":0.01,\"mom\":0.9},\"units\":1,\"act\":\"tanh\",\"empty\":{}}",
        "{\"global_batch_size\":8,\"opt\":{\"lr\":0.01,\"mom\":0.9},\"units\":2,\"act\":\"relu\",\"empty\":{}}",
        "{\"global_batch_size\":8,\"opt\":{\"lr\":0.01,\"mom\":0.9},\"units\":2,\"act\":\"tanh\",\"empty\":{}}",
        "{\"global_batch_size\":8,\"opt\":{\"lr\":0.1,\"mom\":0.9},\"units\":1,\"act\":\"relu\",\"empty\":{}}",
        "{\"global_batch_size\":8,\"opt\":{\"lr\":0.1,\"mom\":0.9},\"units\":1,\"act\":\"tanh\",\"empty\":{}}",
        "{\"global_batch_size\":8,\"opt\":{\"lr\":0.1,\"mom\":0.9},\"units\":2,\"act\":\"relu\",\"empty\":{}}",
        "{\"global_batch_size\":8,\"opt\":{\"lr\":0.1,\"mom\":0.9},\"units\":2,\"act\":\"tanh\",\"empty\":{}}",
    };
    uint64_t n = 0;
    CHECK_OK(t2__hparam_grid_size(cfg->hparams, &n));
    CHECK(n == 8);
    t2__val *grid = NULL;
    CHECK_OK(t2__hparam_grid(cfg->hparams, 0, &grid));
    CHECK(grid && grid->kind == T2__VAL_LIST && grid->n == 8);
    for (size_t k = 0; grid && k < grid->n && k < 8; k++) {
        char *json = NULL;
        CHECK_OK(t2__val_to_json(grid->items[k], &json, NULL));
        CHECK_STR(json, want[k]);
        free(json);
    }
    t2__val_free(grid);
    grid = NULL;
    CHECK_RC(t2__hparam_grid(cfg->hparams, 7, &grid), T2_EINVAL);
    CHECK_STR(t2_errmsg(), "hparams: the grid has 8 points, more than the limit of 7");
    CHECK(grid == NULL);
    CHECK_OK(t2__hparam_grid(cfg->hparams, 8, &grid));
    t2__val_free(grid);
    t2__config_free(cfg);

    /* Loaded as a grid experiment, the quadratic example enumerates its 25 points. */
    char path[1024];
    const char *fx = getenv("T2EXP_FIXTURES");
    snprintf(path, sizeof path, "%s/../../configs/examples/quadratic_grid.yaml", fx ? fx : "tests/fixtures");
    cfg = NULL;
    CHECK_OK(t2__config_load(path, NULL, 0, &cfg));
    if (!cfg) return;
    CHECK_OK(t2__hparam_grid(cfg->hparams, 0, &grid));
    CHECK(grid && grid->n == 25);
    if (grid && grid->n == 25) {
        const t2__val *x = t2__val_lookup(grid, "6.x"), *y = t2__val_lookup(grid, "6.y");
        CHECK(x && y && x->d == -2.5 && y->d == -2.5);
        x = t2__val_lookup(grid, "24.x");
        CHECK(x && x->d == 5.0);
    }
    t2__val_free(grid);
    t2__config_free(cfg);
}

static void test_sample(void)
{
    t2__config *cfg = space("  x: {type: double, minval: -5, maxval: 5}\n"
                            "  n: {type: int, minval: 0, maxval: 2}\n"
                            "  k: keep\n"
                            "  opt:\n"
                            "    lr: {type: log, base: 10, minval: -4, maxval: -1}\n"
                            "    act: {type: categorical, vals: [relu, tanh, gelu]}\n");
    if (!cfg) return;

    /* The documented draws, in leaf order: x, n, lr, act (constants draw nothing). */
    t2_rng r, ref;
    t2_rng_seed(&r, 42);
    t2_rng_seed(&ref, 42);
    t2__val *p = NULL;
    CHECK_OK(t2__hparam_sample(cfg->hparams, &r, &p));
    double x = -5 + t2_rng_uniform_double(&ref) * 10;
    int64_t n = (int64_t)t2_rng_below(&ref, 3);
    double lr = pow(10, -4 + t2_rng_uniform_double(&ref) * 3);
    static const char *const acts[] = {"relu", "tanh", "gelu"};
    const char *act = acts[t2_rng_below(&ref, 3)];
    CHECK(t2__val_lookup(p, "x")->d == x);
    CHECK(t2__val_lookup(p, "n")->kind == T2__VAL_INT && t2__val_lookup(p, "n")->i == n);
    CHECK(t2__val_lookup(p, "opt.lr")->d == lr);
    CHECK_STR(t2__val_lookup(p, "opt.act")->s, act);
    CHECK_STR(t2__val_lookup(p, "k")->s, "keep");
    CHECK(t2__val_lookup(p, "global_batch_size")->i == 8);
    CHECK(memcmp(&r, &ref, sizeof r) == 0); /* nothing else was drawn */
    t2__val_free(p);

    /* Same seed, same sequence of points; another seed, other points. */
    t2_rng a, b, c;
    t2_rng_seed(&a, 7);
    t2_rng_seed(&b, 7);
    t2_rng_seed(&c, 8);
    int differs = 0;
    for (int k = 0; k < 20; k++) {
        t2__val *pa = NULL, *pb = NULL, *pc = NULL;
        CHECK_OK(t2__hparam_sample(cfg->hparams, &a, &pa));
        CHECK_OK(t2__hparam_sample(cfg->hparams, &b, &pb));
        CHECK_OK(t2__hparam_sample(cfg->hparams, &c, &pc));
        CHECK(t2__val_equal(pa, pb));
        differs += !t2__val_equal(pa, pc);
        t2__val_free(pa);
        t2__val_free(pb);
        t2__val_free(pc);
    }
    CHECK(differs > 0);

    /* Ranges: int reaches both ends, doubles stay inside, every category comes up. */
    int seen_n[3] = {0}, seen_act[3] = {0};
    for (int k = 0; k < 2000; k++) {
        t2__val *q = NULL;
        CHECK_OK(t2__hparam_sample(cfg->hparams, &a, &q));
        if (!q) break;
        double xv = t2__val_lookup(q, "x")->d, lv = t2__val_lookup(q, "opt.lr")->d;
        int64_t nv = t2__val_lookup(q, "n")->i;
        CHECK(xv >= -5 && xv < 5);
        CHECK(lv >= 1e-4 * (1 - 1e-12) && lv <= 0.1 * (1 + 1e-12));
        CHECK(nv >= 0 && nv <= 2);
        if (nv >= 0 && nv <= 2) seen_n[nv]++;
        for (int j = 0; j < 3; j++) seen_act[j] += strcmp(t2__val_lookup(q, "opt.act")->s, acts[j]) == 0;
        t2__val_free(q);
    }
    for (int j = 0; j < 3; j++) CHECK(seen_n[j] > 500 && seen_act[j] > 500);
    t2__config_free(cfg);

    /* The quadratic random example: 100 reproducible points within [-5, 5]. */
    char path[1024];
    const char *fx = getenv("T2EXP_FIXTURES");
    snprintf(path, sizeof path, "%s/../../configs/examples/quadratic_random.yaml", fx ? fx : "tests/fixtures");
    cfg = NULL;
    CHECK_OK(t2__config_load(path, NULL, 0, &cfg));
    if (cfg) {
        CHECK(cfg->experiment_seed_set && cfg->experiment_seed == 42 && cfg->searcher.max_trials == 100);
        t2_rng_seed(&a, cfg->experiment_seed);
        for (int k = 0; k < 100; k++) {
            t2__val *q = NULL;
            CHECK_OK(t2__hparam_sample(cfg->hparams, &a, &q));
            CHECK(q && fabs(t2__val_lookup(q, "x")->d) <= 5 && fabs(t2__val_lookup(q, "y")->d) <= 5);
            t2__val_free(q);
        }
        t2__config_free(cfg);
    }
}

static void test_build(void)
{
    t2__config *cfg = space("  opt:\n    lr: {type: double, minval: 0, maxval: 1}\n    mom: 0.9\n"
                            "  n: {type: int, minval: 1, maxval: 4}\n");
    if (!cfg) return;
    const t2__hparam *lv[8];
    size_t n = t2__hparam_leaves(cfg->hparams, lv, 8);
    CHECK(n == 4);
    CHECK(t2__hparam_leaves(cfg->hparams, NULL, 0) == 4);
    CHECK(n == 4 && strcmp(lv[1]->path, "opt.lr") == 0 && strcmp(lv[3]->path, "n") == 0);
    CHECK(!t2__hparam_searchable(lv[0]) && t2__hparam_searchable(lv[1]) && !t2__hparam_searchable(lv[2]));
    CHECK(!t2__hparam_searchable(cfg->hparams));

    t2__val *lr = t2__val_double(0.25), *units = t2__val_int(3);
    const t2__val *vals[4] = {NULL, lr, NULL, units};
    t2__val *hp = NULL;
    CHECK_OK(t2__hparam_build(cfg->hparams, vals, &hp));
    char *json = NULL;
    CHECK_OK(t2__val_to_json(hp, &json, NULL));
    CHECK_STR(json, "{\"global_batch_size\":8,\"opt\":{\"lr\":0.25,\"mom\":0.9},\"n\":3}");
    free(json);
    t2__val_free(hp);
    hp = NULL;
    vals[1] = NULL;
    CHECK_RC(t2__hparam_build(cfg->hparams, vals, &hp), T2_EINVAL);
    CHECK_STR(t2_errmsg(), "hparams: no value given for the double hyperparameter 'opt.lr'");
    CHECK(hp == NULL);
    CHECK_RC(t2__hparam_build(cfg->hparams, NULL, &hp), T2_EINVAL);
    t2__val_free(lr);
    t2__val_free(units);
    CHECK(strcmp(t2__hp_kind_name(T2__HP_LOG), "log") == 0);
    t2__config_free(cfg);
    t2__hparam_free(NULL);
}

/* The load must fail with T2_EINVAL and exactly msg. */
static void expect_err(int line, const char *text, const char *ov, const char *msg)
{
    t2__config *cfg = (t2__config *)1;
    const char *ovs[1] = {ov};
    int rc = t2__config_load_string(text, "nan.yaml", ovs, ov ? 1 : 0, &cfg);
    if (rc != T2_EINVAL || cfg != NULL || strcmp(t2_errmsg(), msg) != 0) {
        fprintf(stderr, "test_config_hparams.c:%d: rc %d\n  got  \"%s\"\n  want \"%s\"\n", line, rc, t2_errmsg(), msg);
        check_failures++;
    }
    if (rc == T2_OK) t2__config_free(cfg);
}
#define EXPECT_ERR(text, ov, msg) expect_err(__LINE__, text, ov, msg)

#define SINGLE "searcher: {name: single, metric: loss, max_length: {batches: 1}}\nhyperparameters:\n  global_batch_size: 8\n"
#define FINITE_WHY " (hyperparameters are stored as JSON, which has no NaN or infinity)"

/* Hyperparameters are stored and sent as JSON, which has no NaN or infinity: every number in a
 * constant or categorical value must be finite, wherever it sits, and the error says where. */
static void test_not_finite(void)
{
    EXPECT_ERR(SINGLE "  z: .nan\n", NULL, "nan.yaml:4:6: hyperparameters.z: expected a finite number, got .nan" FINITE_WHY);
    EXPECT_ERR(SINGLE "  z: -.Inf\n", NULL, "nan.yaml:4:6: hyperparameters.z: expected a finite number, got -.Inf" FINITE_WHY);
    EXPECT_ERR(SINGLE "  z: 1e999\n", NULL, "nan.yaml:4:6: hyperparameters.z: expected a finite number, got 1e999" FINITE_WHY);
    EXPECT_ERR(SINGLE, "hyperparameters.z=.nan",
               "--config hyperparameters.z=.nan: hyperparameters.z: expected a finite number, got .nan" FINITE_WHY);
    EXPECT_ERR(SINGLE "  opt:\n    sgd:\n      lr: .inf\n", NULL,
               "nan.yaml:6:11: hyperparameters.opt.sgd.lr: expected a finite number, got .inf" FINITE_WHY);
    EXPECT_ERR(SINGLE "  z: {type: const, val: {a: [1, 2, .nan]}}\n", NULL,
               "nan.yaml:4:36: hyperparameters.z.val.a.2: expected a finite number, got .nan" FINITE_WHY);
    EXPECT_ERR(SINGLE "  z: [0.5, .inf]\n", NULL,
               "nan.yaml:4:12: hyperparameters.z.1: expected a finite number, got .inf" FINITE_WHY);
    EXPECT_ERR(SINGLE "  z: {type: categorical, vals: [1, .nan]}\n", NULL,
               "nan.yaml:4:36: hyperparameters.z.vals.1: expected a finite number, got .nan" FINITE_WHY);
    EXPECT_ERR(SINGLE "  z: {type: double, minval: .nan, maxval: 1}\n", NULL,
               "nan.yaml:4:29: hyperparameters.z.minval: expected a finite number, got .nan");
    EXPECT_ERR(SINGLE "  z: {type: log, minval: -1, maxval: .inf}\n", NULL,
               "nan.yaml:4:38: hyperparameters.z.maxval: expected a finite number, got .inf");
    EXPECT_ERR(SINGLE "  z: {type: int, minval: 0, maxval: .inf}\n", NULL,
               "nan.yaml:4:37: hyperparameters.z.maxval: expected an integer, got .inf");
    /* Quoted, it is the string ".nan", which JSON carries fine; finite doubles stay allowed. */
    t2__config *cfg = space("  z: \".nan\"\n  w: [1.5e300, -0.0]\n");
    if (cfg) {
        const t2__hparam *z = t2__hparam_find(cfg->hparams, "z");
        CHECK(z && z->kind == T2__HP_CONST && z->val->kind == T2__VAL_STRING);
        t2__val *hp = NULL;
        char *json = NULL;
        CHECK_OK(t2__hparam_build(cfg->hparams, NULL, &hp));
        CHECK_OK(t2__val_to_json(hp, &json, NULL));
        CHECK_STR(json, "{\"global_batch_size\":8,\"z\":\".nan\",\"w\":[1.5e+300,-0.0]}");
        free(json);
        t2__val_free(hp);
    }
    t2__config_free(cfg);
}

int main(void)
{
    test_axes();
    test_grid();
    test_sample();
    test_build();
    test_not_finite();
    return check_report("test_config_hparams");
}
