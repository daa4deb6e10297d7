/* test_hparams_range.c — ranges at the edges of the numbers: every value a searcher draws from a
 * finite double range is finite and inside it (a range wider than DBL_MAX included), int grid
 * points are exact over the whole int64 range, and a log range whose ends are not doubles is
 * refused at load time at the key. Each searcher that computes values (grid, random, tpe,
 * adaptive_asha with tpe, pbt) is run to its end on such ranges. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "../../configs/config.h"
#include "../../searchers/searcher.h"
#include "../../searchers/tpe.h"

#define HEAD "searcher: {name: single, metric: loss, max_length: {batches: 1}}\nhyperparameters:\n  global_batch_size: 8\n"

static t2__config *load(const char *text, const char *ov)
{
    const char *ovs[1] = {ov};
    t2__config *cfg = NULL;
    if (t2__config_load_string(text, "range.yaml", ovs, ov ? 1 : 0, &cfg)) {
        fprintf(stderr, "load: %s\n", t2_errmsg());
        check_failures++;
    }
    return cfg;
}

static void expect_err(int line, const char *text, const char *ov, const char *msg)
{
    const char *ovs[1] = {ov};
    t2__config *cfg = NULL;
    int rc = t2__config_load_string(text, "range.yaml", ovs, ov ? 1 : 0, &cfg);
    if (rc != T2_EINVAL || strcmp(t2_errmsg(), msg) != 0) {
        fprintf(stderr, "test_hparams_range.c:%d: rc %d\n  got  \"%s\"\n  want \"%s\"\n", line, rc, t2_errmsg(), msg);
        check_failures++;
    }
    t2__config_free(cfg);
}
#define EXPECT_ERR(text, ov, msg) expect_err(__LINE__, text, ov, msg)

static void check_axis(int line, const t2__config *cfg, const char *path, const char *want)
{
    t2__val *axis = NULL;
    char *json = NULL;
    const t2__hparam *h = cfg ? t2__hparam_find(cfg->hparams, path) : NULL;
    if (!h || t2__hparam_axis(h, &axis) || t2__val_to_json(axis, &json, NULL) || strcmp(json, want) != 0) {
        fprintf(stderr, "test_hparams_range.c:%d: axis %s\n  got  %s (%s)\n  want %s\n", line, path,
                json ? json : "-", t2_errmsg(), want);
        check_failures++;
    }
    free(json);
    t2__val_free(axis);
}
#define CHECK_AXIS(cfg, path, want) check_axis(__LINE__, cfg, path, want)

/* Grid points of int ranges computed exactly: the double formula wrapped the whole int64 range to
 * min, 0, min and could not tell neighbours apart near 2^63. */
static void test_int_grid(void)
{
    t2__config *cfg = load(HEAD "  all: {type: int, minval: -9223372036854775808, maxval: 9223372036854775807, count: 3}\n"
                                "  all5: {type: int, minval: -9223372036854775808, maxval: 9223372036854775807, count: 5}\n"
                                "  all1: {type: int, minval: -9223372036854775808, maxval: 9223372036854775807, count: 1}\n"
                                "  top: {type: int, minval: 9223372036854775803, maxval: 9223372036854775807, count: 3}\n"
                                "  bottom: {type: int, minval: -9223372036854775808, maxval: -9223372036854775806, count: 2}\n"
                                "  odd: {type: int, minval: 0, maxval: 9007199254740993, count: 2}\n"
                                "  half: {type: int, minval: -3, maxval: 2, count: 2}\n"
                                "  halfneg: {type: int, minval: -3, maxval: 0, count: 3}\n"
                                "  mid: {type: int, minval: -4, maxval: 1, count: 1}\n",
                           NULL);
    if (!cfg) return;
    CHECK_AXIS(cfg, "all", "[-9223372036854775808,-1,9223372036854775807]"); /* -0.5 rounds away from 0 */
    CHECK_AXIS(cfg, "all5", "[-9223372036854775808,-4611686018427387904,-1,4611686018427387903,9223372036854775807]");
    CHECK_AXIS(cfg, "all1", "[-1]");
    CHECK_AXIS(cfg, "top", "[9223372036854775803,9223372036854775805,9223372036854775807]");
    CHECK_AXIS(cfg, "bottom", "[-9223372036854775808,-9223372036854775806]");
    CHECK_AXIS(cfg, "odd", "[0,9007199254740993]"); /* 2^53 + 1 is no double */
    /* Halves round away from zero, as C's round() and Go's math.Round. */
    CHECK_AXIS(cfg, "half", "[-3,2]");
    CHECK_AXIS(cfg, "halfneg", "[-3,-2,0]"); /* -1.5 -> -2 */
    CHECK_AXIS(cfg, "mid", "[-2]");          /* -1.5 -> -2 */
    t2__config_free(cfg);
}

/* Double ranges whose width (or a multiple of it) overflows still give finite points in range. */
static void test_double_grid(void)
{
    t2__config *cfg = load(HEAD "  w3: {type: double, minval: -1.7e308, maxval: 1.7e308, count: 3}\n"
                                "  w1: {type: double, minval: 1e308, maxval: 1.7e308, count: 1}\n"
                                "  big: {type: double, minval: 0, maxval: 1e308, count: 3}\n"
                                "  max: {type: double, minval: -1.7976931348623157e308, maxval: 1.7976931348623157e308, count: 2}\n",
                           NULL);
    if (!cfg) return;
    CHECK_AXIS(cfg, "w3", "[-1.7e+308,0.0,1.7e+308]");
    CHECK_AXIS(cfg, "w1", "[1.35e+308]");
    CHECK_AXIS(cfg, "big", "[0.0,5e+307,1e+308]");
    CHECK_AXIS(cfg, "max", "[-1.7976931348623157e+308,1.7976931348623157e+308]");
    t2__config_free(cfg);
}

/* Random draws from a range wider than DBL_MAX: finite, inside, on both sides of 0. */
static void test_double_sample(void)
{
    t2__config *cfg = load(HEAD "  x: {type: double, minval: -1.7e308, maxval: 1.7e308}\n", NULL);
    if (!cfg) return;
    t2_rng rng;
    t2_rng_seed(&rng, 3);
    int neg = 0, pos = 0;
    for (int k = 0; k < 1000; k++) {
        t2__val *p = NULL;
        CHECK_OK(t2__hparam_sample(cfg->hparams, &rng, &p));
        double x = p ? t2__val_lookup(p, "x")->d : NAN;
        CHECK(isfinite(x) && x >= -1.7e308 && x <= 1.7e308);
        neg += x < -1e307;
        pos += x > 1e307;
        t2__val_free(p);
    }
    CHECK(neg > 300 && pos > 300);
    CHECK(t2__hparam_lerp(-1.7e308, 1.7e308, 0.5) == 0.0);
    CHECK(t2__hparam_lerp(-5, 5, 0.25) == -5 + 0.25 * 10); /* ordinary ranges: the usual formula */
    t2__config_free(cfg);
}

/* 1 when hp's name is a finite double in [lo, hi] (or an int, or absent). */
static int in_range(const t2__val *hp, const char *name, double lo, double hi)
{
    const t2__val *v = t2__val_lookup(hp, name);
    if (!v) return 1; /* not in this space */
    if (v->kind == T2__VAL_INT) return 1; /* n spans the whole int64 range: every int64 is in it */
    return v->kind == T2__VAL_DOUBLE && isfinite(v->d) && v->d >= lo && v->d <= hi;
}

/* Runs a searcher to its end, answering every TRAIN with a validation whose metric favours
 * small |x|, and checks every created trial's hparams: finite and inside the ranges below. */
static void run_search(const char *searcher)
{
    char text[4096];
    snprintf(text, sizeof text,
             "searcher: {%s}\nhyperparameters:\n  global_batch_size: 8\n"
             "  x: {type: double, minval: -1.7e308, maxval: 1.7e308, count: 3}\n"
             "  n: {type: int, minval: -9223372036854775808, maxval: 9223372036854775807, count: 3}\n"
             "  lr: {type: log, minval: -307, maxval: 308, count: 3}\n",
             searcher);
    t2__config *cfg = load(text, NULL);
    t2__searcher *s = NULL;
    if (!cfg || t2__searcher_create(cfg, 11, &s)) {
        fprintf(stderr, "run_search(%s): %s\n", searcher, t2_errmsg());
        check_failures++;
        t2__config_free(cfg);
        return;
    }
    t2__ops q = {0};
    double metric[512] = {0};
    int created = 0, bad = 0, done = 0;
    CHECK_OK(t2__searcher_start(s, &q));
    for (size_t head = 0; !done && head < q.n && head < 100000; head++) {
        t2__search_op op = q.v[head];
        int rc = T2_OK;
        if (op.kind == T2__OP_CREATE) {
            created++;
            bad += !in_range(op.hparams, "x", -1.7e308, 1.7e308) || !in_range(op.hparams, "lr", 1e-307, 1e308);
            const t2__val *x = t2__val_lookup(op.hparams, "x");
            metric[op.request_id % 512] = x && isfinite(x->d) ? fabs(x->d) / 1e308 : 10;
            rc = t2__searcher_on_trial_created(s, op.request_id, &q);
        } else if (op.kind == T2__OP_TRAIN) {
            rc = t2__searcher_on_validation(s, op.request_id, metric[op.request_id % 512], op.length, &q);
        } else if (op.kind == T2__OP_CLOSE) {
            rc = t2__searcher_on_trial_exited(s, op.request_id, &q);
        } else {
            done = 1;
        }
        if (rc) {
            fprintf(stderr, "run_search(%s): %s\n", searcher, t2_errmsg());
            check_failures++;
            break;
        }
    }
    if (!done || bad || created < 3) {
        fprintf(stderr, "run_search(%s): done %d, %d of %d trials out of range\n", searcher, done, bad, created);
        check_failures++;
    }
    t2__ops_free(&q);
    t2__searcher_free(s);
    t2__config_free(cfg);
}

static void test_searchers(void)
{
    run_search("name: grid, metric: loss, max_length: {batches: 1}");
    run_search("name: random, metric: loss, max_trials: 20, max_length: {batches: 1}");
    run_search("name: tpe, metric: loss, max_trials: 40, n_startup_trials: 5, max_length: {batches: 1}");
    run_search("name: tpe, metric: loss, max_trials: 30, n_startup_trials: 5, multivariate: true, "
               "max_length: {batches: 1}");
    run_search("name: adaptive_asha, sampler: tpe, metric: loss, max_trials: 30, n_startup_trials: 4, "
               "max_length: {batches: 16}");
    run_search("name: pbt, metric: loss, population_size: 6, num_rounds: 6, length_per_round: {batches: 1}, "
               "perturb_factors: [0.5, 2.0], resample_probability: 0");
}

/* pbt's explored values: an int multiplied past 2^63 is clamped to maxval (it converted
 * (double)INT64_MAX, which is 2^63, back to int64: INT64_MIN on x86), and a log range with a base
 * below 1, whose base^minval is its upper end, clamps to [base^maxval, base^minval] (every explored
 * value was pushed to an end). */
static void test_pbt_explore(void)
{
    t2__config *cfg = load("searcher: {name: pbt, metric: loss, population_size: 4, num_rounds: 8, "
                           "length_per_round: {batches: 1}, perturb_factors: [0.8, 3.0], resample_probability: 0}\n"
                           "hyperparameters:\n  global_batch_size: 8\n"
                           "  m: {type: int, minval: 0, maxval: 9223372036854775807}\n"
                           "  s: {type: log, base: 0.5, minval: -3, maxval: 3}\n",
                           NULL);
    t2__searcher *s = NULL;
    if (!cfg || t2__searcher_create(cfg, 4, &s)) {
        fprintf(stderr, "test_pbt_explore: %s\n", t2_errmsg());
        check_failures++;
        t2__config_free(cfg);
        return;
    }
    t2__ops q = {0};
    int explored = 0, interior = 0, negative = 0, top = 0, done = 0;
    CHECK_OK(t2__searcher_start(s, &q));
    for (size_t head = 0; !done && head < q.n && head < 10000; head++) {
        t2__search_op op = q.v[head];
        int rc = T2_OK;
        if (op.kind == T2__OP_CREATE) {
            const t2__val *m = t2__val_lookup(op.hparams, "m"), *sv = t2__val_lookup(op.hparams, "s");
            if (op.request_id >= 4 && m && sv) {
                explored++;
                negative += m->i < 0;
                top += m->i == INT64_MAX;
                interior += sv->d > 0.125 && sv->d < 8;
            }
            rc = t2__searcher_on_trial_created(s, op.request_id, &q);
        } else if (op.kind == T2__OP_TRAIN) {
            rc = t2__searcher_on_validation(s, op.request_id, (double)(op.request_id % 5), op.length, &q);
        } else if (op.kind == T2__OP_CLOSE) {
            rc = t2__searcher_on_trial_exited(s, op.request_id, &q);
        } else {
            done = 1;
        }
        if (rc) {
            fprintf(stderr, "test_pbt_explore: %s\n", t2_errmsg());
            check_failures++;
            break;
        }
    }
    CHECK(done && explored > 4);
    CHECK(negative == 0 && top > 0);
    CHECK(interior > 0);
    t2__ops_free(&q);
    t2__searcher_free(s);
    t2__config_free(cfg);
}

/* tpe fits a range wider than DBL_MAX at half scale: its proposals are finite and in range, and a
 * point maps to hparams and back unchanged. */
static void test_tpe_space(void)
{
    t2__config *cfg = load(HEAD "  x: {type: double, minval: -1.7e308, maxval: 1.7e308}\n", NULL);
    if (!cfg) return;
    t2__tpe_space sp;
    CHECK_OK(t2__tpe_space_init(cfg->hparams, &sp));
    CHECK(sp.np == 1 && isfinite(sp.params[0].high - sp.params[0].low));
    double pts[6] = {-1.7e308, -1e308, 0, 1e307, 1.6e308, 1.7e308}, x[1];
    t2__tpe_obs obs[6];
    for (int k = 0; k < 6; k++) {
        t2__val *v = t2__val_double(pts[k]), *hp = t2__val_map();
        double *px = malloc(sizeof *px);
        t2__val_map_set(hp, "x", v);
        t2__tpe_point_of(&sp, hp, px);
        obs[k] = (t2__tpe_obs){.id = k, .loss = fabs(pts[k] - 1e307), .x = px};
        t2__val *again = NULL;
        CHECK_OK(t2__tpe_hparams_of(cfg->hparams, &sp, px, &again));
        CHECK(again && t2__val_lookup(again, "x")->d == pts[k]);
        t2__val_free(again);
        t2__val_free(hp);
    }
    t2__tpe_model m = {.p = sp.params, .np = sp.np, .prior_weight = 1, .n_candidates = 24};
    t2_rng rng;
    t2_rng_seed(&rng, 5);
    for (int k = 0; k < 50; k++) {
        CHECK_OK(t2__tpe_propose(&m, 0.25, obs, 6, &rng, x));
        CHECK(t2__tpe_point_valid(&sp, x));
        t2__val *hp = NULL;
        CHECK_OK(t2__tpe_hparams_of(cfg->hparams, &sp, x, &hp));
        CHECK(hp && in_range(hp, "x", -1.7e308, 1.7e308));
        t2__val_free(hp);
    }
    for (int k = 0; k < 6; k++) free((void *)obs[k].x);
    t2__tpe_space_free(&sp);
    t2__config_free(cfg);
}

/* A log range whose end is no double is refused at that end, from the file or an override. */
static void test_log_ends(void)
{
#define WHY " a double (the values of a log hyperparameter are base^minval to base^maxval; minval and maxval are exponents)"
    EXPECT_ERR(HEAD "  x: {type: log, minval: 300, maxval: 400}\n", NULL,
               "range.yaml:4:39: hyperparameters.x.maxval: 10^400 is too large for" WHY);
    EXPECT_ERR(HEAD "  x: {type: log, minval: -400, maxval: -300}\n", NULL,
               "range.yaml:4:26: hyperparameters.x.minval: 10^-400 underflows to 0 in" WHY);
    EXPECT_ERR(HEAD "  x: {type: log, base: 0.5, minval: -2000, maxval: 1}\n", NULL,
               "range.yaml:4:37: hyperparameters.x.minval: 0.5^-2000 is too large for" WHY);
    EXPECT_ERR(HEAD "  x: {type: log, minval: 1, maxval: 2}\n", "hyperparameters.x.maxval=309",
               "--config hyperparameters.x.maxval=309: hyperparameters.x.maxval: 10^309 is too large for" WHY);
    EXPECT_ERR(HEAD "  x: {type: log, minval: 100, maxval: 200}\n", "hyperparameters.x.base=1e10",
               "--config hyperparameters.x.base=1e10: hyperparameters.x.base: 1e10^100 is too large for" WHY);
    /* The largest and smallest powers that are doubles are fine (subnormals included). */
    t2__config *cfg = load(HEAD "  x: {type: log, minval: -320, maxval: 308, count: 2}\n", NULL);
    CHECK_AXIS(cfg, "x", "[9.99988867182683e-321,1e+308]"); /* 10^-320 is subnormal: 15 digits */
    t2__config_free(cfg);
#undef WHY
}

int main(void)
{
    test_int_grid();
    test_double_grid();
    test_double_sample();
    test_searchers();
    test_pbt_explore();
    test_tpe_space();
    test_log_ends();
    return check_report("test_hparams_range");
}
