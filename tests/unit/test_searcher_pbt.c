/* test_searcher_pbt.c — searcher.name: pbt: config errors, one round by hand (the bottom quantile
 * is closed and replaced by children of the top quantile, whose hparams are the parent's perturbed
 * within their ranges), failures, determinism per seed, snapshot/restore replay, and preview. */
#define _POSIX_C_SOURCE 200809L /* strdup in the searcher test helpers */
#include <math.h>
#include "test_searcher_util.h"

static const char HP[] = "  lr: {type: log, minval: -4, maxval: -1}\n"
                         "  units: {type: int, minval: 4, maxval: 64}\n"
                         "  drop: {type: double, minval: 0.0, maxval: 0.5}\n"
                         "  act: {type: categorical, vals: [relu, tanh, gelu]}\n"
                         "  fixed: 3\n";

static const char BASE[] = "name: pbt, metric: loss, population_size: 4, num_rounds: 3, length_per_round: {batches: 10}";

static void test_config(void)
{
    char buf[512];
    check_bad(BASE, "  opt:\n    lr: {type: double, minval: 0, maxval: 1}\n",
              "search.yaml:5:5: hyperparameters.opt: pbt does not support nested hyperparameters yet");
    check_bad("name: pbt, metric: loss, population_size: 1, num_rounds: 3, length_per_round: {batches: 10}", HP,
              "search.yaml:1:");
    check_bad("name: pbt, metric: loss, population_size: 1, num_rounds: 3, length_per_round: {batches: 10}", HP,
              "searcher.population_size: pbt needs a population of at least 2 (one to learn from), got 1");
    check_bad("name: pbt, metric: loss, population_size: 4, num_rounds: 0, length_per_round: {batches: 10}", HP,
              "searcher.num_rounds: ");
    check_bad("name: pbt, metric: loss, population_size: 4, num_rounds: 3", HP,
              "searcher.length_per_round: missing required key");
    check_bad("name: pbt, metric: loss, num_rounds: 3, length_per_round: {batches: 10}", HP,
              "searcher.population_size: missing required key");
    snprintf(buf, sizeof buf, "%s, populaton_size: 4", BASE);
    check_bad(buf, HP, "did you mean 'population_size'");
    snprintf(buf, sizeof buf, "%s, perturb_factors: []", BASE);
    check_bad(buf, HP, "searcher.perturb_factors: expected a non-empty list");
    snprintf(buf, sizeof buf, "%s, perturb_factors: [0.8, -1]", BASE);
    check_bad(buf, HP, "searcher.perturb_factors.1: expected a positive factor");
    snprintf(buf, sizeof buf, "%s, quantile_fraction: 0.6", BASE);
    check_bad(buf, HP, "searcher.quantile_fraction: expected a number in (0, 0.5], got 0.6");
    snprintf(buf, sizeof buf, "%s, resample_probability: 1.5", BASE);
    check_bad(buf, HP, "searcher.resample_probability: expected a number in [0, 1], got 1.5");

    /* Defaults (Ray Tune's), max_length derived; max_length beside the rounds is ignored with a warning. */
    snprintf(buf, sizeof buf, "%s, max_length: {batches: 7}", BASE);
    t2__config *cfg = load_cfg(buf, HP);
    if (cfg) {
        CHECK(cfg->searcher.name == T2__SEARCH_PBT);
        CHECK(cfg->searcher.pbt.population_size == 4 && cfg->searcher.pbt.num_rounds == 3);
        CHECK(cfg->searcher.pbt.resample_probability == 0.25 && cfg->searcher.pbt.quantile_fraction == 0.25);
        CHECK(cfg->searcher.pbt.nperturb_factors == 0); /* the searcher's default, {0.8, 1.2} */
        CHECK(cfg->searcher.max_length.unit == T2__UNIT_BATCHES && cfg->searcher.max_length.n == 30);
        size_t n = 0;
        const char *const *w = t2__config_warnings(cfg, &n);
        CHECK(n == 1);
        if (n) CHECK_CONTAINS(w[0], "does not apply to the pbt searcher");
        /* A config changed by a caller is checked by the searcher itself. */
        t2__searcher *s = NULL;
        cfg->searcher.pbt.population_size = 1;
        CHECK_RC(t2__searcher_create(cfg, 1, &s), T2_EINVAL);
        CHECK(s == NULL);
        CHECK_CONTAINS(t2_errmsg(), "searcher.population_size");
    }
    t2__config_free(cfg);
}

/* ---------- one round by hand ---------- */

static const t2__search_op *find_op(const t2__ops *ops, int kind, int64_t rid)
{
    for (size_t k = 0; k < ops->n; k++)
        if ((int)ops->v[k].kind == kind && ops->v[k].request_id == rid) return &ops->v[k];
    return NULL;
}

static double num(const t2__val *hp, const char *key)
{
    double v = NAN;
    t2__val_as_double(t2__val_map_get(hp, key), &v);
    return v;
}

/* v is p x 0.8 or p x 1.2 (int: rounded), clamped to [lo, hi]. */
static int perturbed(double v, double p, double lo, double hi, int is_int)
{
    for (int k = 0; k < 2; k++) {
        double w = p * (k ? 1.2 : 0.8);
        if (is_int) w = round(w);
        w = w < lo ? lo : w > hi ? hi : w;
        if (fabs(v - w) <= 1e-12 * fabs(w) + 1e-15) return 1;
    }
    return 0;
}

static void test_round(void)
{
    /* 8 members, quantile 0.25: the 2 worst are replaced by children of the 2 best. No resampling,
     * so every numeric hparam of a child is its parent's times 0.8 or 1.2. */
    char buf[512];
    snprintf(buf, sizeof buf,
             "name: pbt, metric: loss, population_size: 8, num_rounds: 3, length_per_round: {batches: 10}, "
             "resample_probability: 0");
    t2__config *cfg = load_cfg(buf, HP);
    t2__searcher *s = NULL;
    t2__ops ops = {0};
    CHECK_OK(t2__searcher_create(cfg, 7, &s));
    if (!s) goto out;
    CHECK(t2__searcher_total_trials(s) == 8 + 2 * 2);
    CHECK_OK(t2__searcher_start(s, &ops));
    CHECK(strcmp(ops_text(&ops, 0, 0), "C0 T0@10 C1 T1@10 C2 T2@10 C3 T3@10 C4 T4@10 C5 T5@10 C6 T6@10 C7 T7@10") == 0);
    t2__val *hp[8] = {0};
    for (int k = 0; k < 8; k++) {
        const t2__search_op *c = find_op(&ops, T2__OP_CREATE, k);
        CHECK(c && c->parent_request_id == -1);
        hp[k] = c ? t2__val_copy(c->hparams) : NULL;
    }
    t2__ops_clear(&ops);
    /* Losses: request 5 best, then 2; 0 and 6 worst. An earlier validation carries no decision. */
    const double loss[8] = {9, 4, 2, 5, 3, 1, 8, 6};
    CHECK_OK(t2__searcher_on_validation(s, 3, 0.5, 5, &ops));
    for (int k = 0; k < 8; k++) {
        CHECK(ops.n == 0);
        CHECK_OK(t2__searcher_on_validation(s, k, loss[k], 10, &ops));
    }
    CHECK(find_op(&ops, T2__OP_CLOSE, 0) && find_op(&ops, T2__OP_CLOSE, 6));
    for (int64_t rid = 8; rid < 10; rid++) {
        const t2__search_op *c = find_op(&ops, T2__OP_CREATE, rid), *t = find_op(&ops, T2__OP_TRAIN, rid);
        CHECK(c && t && t->length == 20);
        if (!c) continue;
        int64_t p = c->parent_request_id;
        CHECK(p == 5 || p == 2); /* the top quantile */
        if (p != 5 && p != 2) continue;
        CHECK(perturbed(num(c->hparams, "lr"), num(hp[p], "lr"), 1e-4, 1e-1, 0));
        CHECK(perturbed(num(c->hparams, "units"), num(hp[p], "units"), 4, 64, 1));
        CHECK(perturbed(num(c->hparams, "drop"), num(hp[p], "drop"), 0, 0.5, 0));
        CHECK(t2__val_equal(t2__val_map_get(c->hparams, "act"), t2__val_map_get(hp[p], "act")));
        CHECK(num(c->hparams, "fixed") == 3 && num(c->hparams, "global_batch_size") == 8);
        CHECK(t2__val_map_get(c->hparams, "units")->kind == T2__VAL_INT);
    }
    for (int k = 1; k < 6; k++) CHECK(find_op(&ops, T2__OP_TRAIN, k) && find_op(&ops, T2__OP_TRAIN, k)->length == 20);
    CHECK(find_op(&ops, T2__OP_TRAIN, 7) && !find_op(&ops, T2__OP_TRAIN, 0) && !find_op(&ops, T2__OP_TRAIN, 6));
    CHECK(fabs(t2__searcher_progress(s) - 1.0 / 3) < 1e-12);
    t2__ops_clear(&ops);
    /* The closed ones exit; a member that fails in round 2 is replaced at its end like the worst. */
    CHECK_OK(t2__searcher_on_trial_exited(s, 0, &ops));
    CHECK_OK(t2__searcher_on_trial_exited(s, 6, &ops));
    CHECK_OK(t2__searcher_on_trial_failed(s, 1, 0, &ops));
    const int64_t live[] = {2, 3, 4, 5, 7, 8, 9};
    for (size_t k = 0; k < sizeof live / sizeof *live; k++)
        CHECK_OK(t2__searcher_on_validation(s, live[k], (double)k, 20, &ops));
    /* The failed one counts as the worst: replaced are 1 (no CLOSE) and the worst of the rest, 9. */
    CHECK(!find_op(&ops, T2__OP_CLOSE, 1) && !find_op(&ops, T2__OP_CLOSE, 8) && find_op(&ops, T2__OP_CLOSE, 9));
    CHECK(find_op(&ops, T2__OP_CREATE, 10) && find_op(&ops, T2__OP_CREATE, 11));
    CHECK(!find_op(&ops, T2__OP_CREATE, 12));
    for (int64_t rid = 10; rid < 12; rid++) {
        const t2__search_op *c = find_op(&ops, T2__OP_CREATE, rid);
        CHECK(c && (c->parent_request_id == 2 || c->parent_request_id == 3));
    }
    t2__ops_clear(&ops);
    CHECK_OK(t2__searcher_on_trial_exited(s, 9, &ops));
    CHECK(ops.n == 0);
    /* Last round: everyone is closed, then SHUTDOWN after the last exit. */
    const int64_t last[] = {2, 3, 4, 5, 7, 8, 10, 11};
    for (size_t k = 0; k < 8; k++) CHECK_OK(t2__searcher_on_validation(s, last[k], 1.0, 30, &ops));
    for (size_t k = 0; k < 8; k++) CHECK(find_op(&ops, T2__OP_CLOSE, last[k]));
    CHECK(!find_op(&ops, T2__OP_CREATE, 12) && !find_op(&ops, T2__OP_SHUTDOWN, -1));
    t2__ops_clear(&ops);
    for (size_t k = 0; k < 8; k++) CHECK_OK(t2__searcher_on_trial_exited(s, last[k], &ops));
    CHECK(strcmp(ops_text(&ops, 0, 0), "S") == 0);
    CHECK(t2__searcher_progress(s) == 1.0);
    for (int k = 0; k < 8; k++) t2__val_free(hp[k]);
out:
    t2__ops_free(&ops);
    t2__searcher_free(s);
    t2__config_free(cfg);
}

/* ---------- whole searches ---------- */

static double metric_hash(int64_t rid, int64_t length, void *ctx)
{
    (void)ctx;
    uint64_t h = (uint64_t)rid * UINT64_C(0x9e3779b97f4a7c15) ^ (uint64_t)length * UINT64_C(0xbf58476d1ce4e5b9);
    return (double)(h >> 11) * 0x1p-53;
}

static int fate_some_fail(int64_t rid, int64_t length, void *ctx)
{
    (void)ctx;
    return rid == 2 && length == 10 ? 1 : 0;
}

static char *search_text(const t2__config *cfg, uint64_t seed, drive_run *keep)
{
    t2__searcher *s = NULL;
    drive_script sc = {.metric = metric_hash, .fate = fate_some_fail, .snapshots = keep != NULL};
    drive_run r;
    char *out = NULL;
    CHECK_OK(t2__searcher_create(cfg, seed, &s));
    if (s && !drive(s, &sc, &r)) {
        size_t len = 1;
        for (size_t k = 0; k < r.nev; k++) len += strlen(r.ev[k].ops ? r.ev[k].ops : "") + 1;
        out = calloc(1, len);
        for (size_t k = 0; out && k < r.nev; k++) {
            strcat(out, r.ev[k].ops ? r.ev[k].ops : "");
            strcat(out, "|");
        }
        if (keep) *keep = r;
        else drive_free(&r);
    }
    t2__searcher_free(s);
    return out;
}

static void test_determinism_and_resume(void)
{
    t2__config *cfg = load_cfg("name: pbt, metric: loss, population_size: 6, num_rounds: 4, "
                               "length_per_round: {batches: 10}",
                               HP);
    if (!cfg) return;
    drive_run r = {0};
    char *a = search_text(cfg, 11, &r), *b = search_text(cfg, 11, NULL), *c = search_text(cfg, 12, NULL);
    CHECK(a && b && strcmp(a, b) == 0);
    CHECK(a && c && strcmp(a, c) != 0);
    if (a) {
        CHECK(strstr(a, "X2 ") == NULL && strstr(a, "X2|") == NULL); /* failed, never closed */
        CHECK(strstr(a, "C6") != NULL);  /* children were created */
    }
    /* 6 members, 2 replaced (ceil(6 x 0.25)) after each of the first 3 rounds, one the failed one. */
    CHECK(r.created == 6 + 3 * 2);
    for (size_t k = 0; k < r.nev; k += 3) check_replay(cfg, 11, &r, k);
    if (r.nev) check_replay(cfg, 11, &r, r.nev - 1);
    drive_free(&r);
    free(a);
    free(b);
    free(c);
    t2__config_free(cfg);
}

static void test_preview(void)
{
    t2__config *cfg = load_cfg(BASE, HP);
    t2__val *pv = NULL;
    if (!cfg) return;
    CHECK_OK(t2__searcher_preview(cfg, 3, &pv));
    CHECK(pv && pv->n == 4 + 2 * 1);
    for (size_t k = 4; pv && k < pv->n; k++) {
        const t2__val *parent = t2__val_map_get(pv->items[k], "parent"), *start = t2__val_map_get(pv->items[k], "start");
        CHECK(parent && parent->kind == T2__VAL_INT && parent->i < (int64_t)k);
        CHECK(start && start->kind == T2__VAL_INT && (start->i == 10 || start->i == 20));
    }
    t2__val_free(pv);
    t2__config_free(cfg);
}

int main(void)
{
    test_config();
    test_round();
    test_determinism_and_resume();
    test_preview();
    return check_report("test_searcher_pbt");
}
