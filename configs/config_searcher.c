/* config_searcher.c — the searcher section: which keys each searcher takes, the length forms
 * (max_length, time_metric + max_time, pbt's rounds), and each searcher's own settings. It walks
 * its map in file order so that warnings come out in the order a user reads the file. */
#define _POSIX_C_SOURCE 200809L /* strdup */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "config_internal.h"
#include "internal.h"
#include "searchers/asha.h"
#include "t2exp/error.h"

#define KEY_IS(s) (strcmp(key, (s)) == 0)

enum {
    APPLIES_SINGLE = 1, APPLIES_GRID = 2, APPLIES_RANDOM = 4, APPLIES_ASHA = 8, APPLIES_TPE = 16, APPLIES_PBT = 32,
    APPLIES_CUSTOM = 64, APPLIES_ALL = 127,
    /* pbt's max_length is num_rounds x length_per_round: a max_length beside them would be a second truth */
    APPLIES_LENGTH = APPLIES_ALL & ~APPLIES_PBT,
};

/* Every searcher key and the searchers it applies to: one list for the table below and for the
 * names other sections' "did you mean" looks through (t2__cfg_searcher_keys). */
#define SEARCHER_KEY_LIST(X) \
    X("name", APPLIES_ALL) \
    X("metric", APPLIES_ALL) \
    X("smaller_is_better", APPLIES_ALL) \
    X("max_length", APPLIES_LENGTH) \
    X("source_checkpoint", APPLIES_ALL) \
    X("source_checkpoint_uuid", APPLIES_ALL) \
    X("source_trial_id", APPLIES_ALL) \
    X("source_checkpoint_optimizer", APPLIES_ALL) \
    X("max_trials", APPLIES_RANDOM | APPLIES_ASHA | APPLIES_TPE | APPLIES_CUSTOM) \
    X("max_concurrent_trials", APPLIES_GRID | APPLIES_RANDOM | APPLIES_ASHA | APPLIES_TPE | APPLIES_PBT | APPLIES_CUSTOM) \
    X("library", APPLIES_CUSTOM) \
    X("options", APPLIES_CUSTOM) \
    X("mode", APPLIES_ASHA) \
    X("sampler", APPLIES_ALL) /* checked below: only adaptive_asha takes one, and another is an error */ \
    X("divisor", APPLIES_ASHA) \
    X("max_rungs", APPLIES_ASHA) \
    X("stop_once", APPLIES_ASHA) \
    X("bracket_rungs", APPLIES_ASHA) \
    X("n_startup_trials", APPLIES_TPE) \
    X("n_ei_candidates", APPLIES_TPE) \
    X("gamma", APPLIES_TPE) \
    X("prior_weight", APPLIES_TPE) \
    X("multivariate", APPLIES_TPE) \
    X("time_metric", APPLIES_LENGTH) \
    X("max_time", APPLIES_LENGTH) \
    X("population_size", APPLIES_PBT) \
    X("num_rounds", APPLIES_PBT) \
    X("length_per_round", APPLIES_PBT) \
    X("perturb_factors", APPLIES_PBT) \
    X("resample_probability", APPLIES_PBT) \
    X("quantile_fraction", APPLIES_PBT) \
    /* a grid runs every point of its grid already; a custom searcher makes its own */ \
    X("points_to_evaluate", APPLIES_ALL & ~APPLIES_GRID & ~APPLIES_CUSTOM) \
    /* asha and pbt stop and replace trials themselves (single: the rules that need no other trial) */ \
    X("pruner", APPLIES_SINGLE | APPLIES_GRID | APPLIES_RANDOM | APPLIES_TPE)

#define AS_ENTRY(key, applies) {key, applies},
#define AS_NAME(key, applies) key,
static const struct {
    const char *key;
    int applies;
} SEARCHER_KEYS[] = {SEARCHER_KEY_LIST(AS_ENTRY)};
const char *const t2__cfg_searcher_keys[] = {SEARCHER_KEY_LIST(AS_NAME) NULL};

/* Why t2exp needs a key that Determined's Core API leaves to the training script. */
#define CORE_API_NOTE(what)                                                                         \
    " (Determined's Core API leaves " what " to the training script; t2exp runs the training loop "   \
    "and needs it)"

/* Determined's current form of max_length: `time_metric: batches` + `max_time: N`. Determined
 * follows any validation metric; t2exp counts only batches, records and epochs, so those three are
 * the time metrics it accepts (as max_length {UNIT: N}); another name is an error saying so. Each
 * problem is its own error (a bad time_metric and a missing max_time are two); one of the pair
 * missing is placed at the other when an override set that (the override made the pair). */
static int time_length(t2__config *cfg, const t2__ynode *map, const t2__ynode *tm, const t2__ymark *tm_key,
                       const t2__ynode *mt, const t2__ymark *kmark, int have_length)
{
    static const char *const units[] = {"batches", "records", "epochs", NULL};
    t2__searcher_config *s = &cfg->searcher;
    int rc, u = -1;
    int64_t n = 0;
    if (tm && tm->kind == T2__Y_SCALAR)
        for (int k = 0; units[k]; k++)
            if (strcmp(tm->text, units[k]) == 0) u = k;
    if (tm && u < 0) {
        char buf[128], hint[96];
        rc = t2__cfg_err(&tm->mark, "searcher.time_metric",
                         "t2exp measures training in batches, records or epochs, got %s%s (Determined follows a "
                         "metric the script reports; here use time_metric: batches, records or epochs)",
                         t2__ydesc(tm, buf, sizeof buf), t2__cfg_value_hint(tm, units, hint, sizeof hint));
        if (mt) return rc;
        if ((rc = t2__cfg_collect(cfg, rc))) return rc;
    }
    if (!tm)
        return t2__cfg_missing_in(map, mt ? t2__cfg_blame(kmark, t2__cfg_where(mt)) : kmark, "searcher",
                                  "time_metric", NULL);
    if (!mt) return t2__cfg_missing_in(map, t2__cfg_blame(kmark, t2__cfg_where(tm)), "searcher", "max_time", NULL);
    if (have_length) {
        /* Placed at time_metric, or at max_length when an override set that. */
        const t2__ynode *ml = t2__ymap_get(map, "max_length", NULL);
        const t2__ymark *at = ml ? t2__cfg_blame(tm_key, t2__cfg_where(ml)) : tm_key;
        return t2__cfg_err(at, at == tm_key ? "searcher.time_metric" : "searcher.max_length",
                           "give either max_length or time_metric with max_time, not both");
    }
    if ((rc = t2__get_int(mt, "searcher.max_time", 1, &n))) return rc;
    int64_t max = u == T2__UNIT_EPOCHS ? T2__MAX_EPOCHS : T2__MAX_LENGTH;
    if (n > max)
        return t2__cfg_err(&mt->mark, "searcher.max_time", "expected at most %lld %s, got %lld", (long long)max,
                           units[u], (long long)n);
    s->max_length.unit = (t2__unit)u;
    s->max_length.n = n;
    return T2_OK;
}

/* Determined searchers t2exp does not implement: a clear refusal instead of "expected one of". */
static const char *const UNSUPPORTED_SEARCHERS[] = {"adaptive", "adaptive_simple",
                                                    "async_halving", "sync_halving", "manual", NULL};

static int searcher_name(t2__config *cfg, const t2__ynode *n, const t2__ymark *kmark)
{
    static const char *const names[] = {"single", "grid", "random", "adaptive_asha", "tpe", "pbt", "custom", NULL};
    const t2__ynode *v = t2__ymap_get(n, "name", NULL);
    if (!v) return t2__cfg_missing_in(n, kmark, "searcher", "name", NULL);
    if (t2__ynull(v)) return t2__cfg_err(&v->mark, "searcher.name", "expected one of single, grid, random, adaptive_asha, tpe, pbt or custom, got null");
    if (v->kind == T2__Y_SCALAR)
        for (int k = 0; UNSUPPORTED_SEARCHERS[k]; k++)
            if (strcmp(v->text, UNSUPPORTED_SEARCHERS[k]) == 0)
                return t2__cfg_err(&v->mark, "searcher.name",
                                   "the \"%s\" searcher is not supported by t2exp (use single, grid, random, "
                                   "adaptive_asha, tpe, pbt, or custom with a searcher of your own)",
                                   v->text);
    int kind = 0;
    int rc = t2__get_enum(v, "searcher.name", names, &kind);
    cfg->searcher.name = (t2__searcher_kind)kind;
    return rc;
}

/* searcher.bracket_rungs: a non-empty list of at most max_items rung counts, each 1 to max_value
 * (the ASHA searcher's own bounds, checked here where the file's line and column are known). An
 * empty list is refused: it read as no list at all, the default brackets, which its writer cannot
 * have meant (null is how to ask for those). */
static int int_list(const t2__ynode *v, const char *path, size_t max_items, int64_t max_value, int64_t **out,
                    size_t *n)
{
    char sub[T2__PATH_MAX], idx[24];
    if (t2__ynull(v)) return T2_OK;
    if (v->kind != T2__Y_SEQ || v->n == 0) {
        char buf[128];
        return t2__cfg_err(&v->mark, path, "expected a non-empty list of positive integers (one rung count a "
                           "bracket), got %s", v->kind == T2__Y_SEQ ? "an empty list" : t2__ydesc(v, buf, sizeof buf));
    }
    if (v->n > max_items) return t2__cfg_err(&v->mark, path, "at most %zu brackets, got %zu", max_items, v->n);
    int64_t *a = calloc(v->n ? v->n : 1, sizeof *a);
    if (!a) return t2_seterr(T2_ENOMEM, "config: out of memory");
    for (size_t k = 0; k < v->n; k++) {
        snprintf(idx, sizeof idx, "%zu", k);
        t2__path_join(sub, sizeof sub, path, idx);
        a[k] = 0;
        int rc = t2__ynull(v->items[k]) ? t2__cfg_err(&v->items[k]->mark, sub, "expected a positive integer, got null")
                                         : t2__get_int(v->items[k], sub, 1, &a[k]);
        if (!rc && a[k] > max_value)
            rc = t2__cfg_err(&v->items[k]->mark, sub, "expected 1 to %lld rungs, got %lld", (long long)max_value,
                             (long long)a[k]);
        if (rc) {
            free(a);
            return rc;
        }
    }
    free(*out);
    *out = a;
    *n = v->n;
    return T2_OK;
}

/* searcher.perturb_factors: a non-empty list of positive numbers (the factors an exploited
 * trial's numeric hparams are multiplied by, one chosen at random per hparam). */
static int factor_list(const t2__ynode *v, const char *path, double **out, size_t *n)
{
    char sub[T2__PATH_MAX], idx[24], buf[128];
    if (t2__ynull(v)) return T2_OK;
    if (v->kind != T2__Y_SEQ || v->n == 0)
        return t2__cfg_err(&v->mark, path, "expected a non-empty list of positive numbers such as [0.8, 1.2], got %s",
                           t2__ydesc(v, buf, sizeof buf));
    double *a = calloc(v->n, sizeof *a);
    if (!a) return t2_seterr(T2_ENOMEM, "config: out of memory");
    for (size_t k = 0; k < v->n; k++) {
        snprintf(idx, sizeof idx, "%zu", k);
        t2__path_join(sub, sizeof sub, path, idx);
        int rc = t2__get_number(v->items[k], sub, &a[k]);
        if (!rc && !(a[k] > 0 && isfinite(a[k])))
            rc = t2__cfg_err(&v->items[k]->mark, sub, "expected a positive factor, got %s",
                             t2__ydesc(v->items[k], buf, sizeof buf));
        if (rc) {
            free(a);
            return rc;
        }
    }
    free(*out);
    *out = a;
    *n = v->n;
    return T2_OK;
}

/* pbt: the required keys, and max_length derived from the rounds (the controller, the progress
 * and the checkpoint periods all read max_length). */
static int pbt_finish(t2__config *cfg, const t2__ynode *n, const t2__ymark *kmark, int have_pop, int have_rounds,
                      int have_round_length)
{
    t2__searcher_config *s = &cfg->searcher;
    int rc;
    if (!have_pop && (rc = t2__cfg_collect(cfg, t2__cfg_missing_in(n, kmark, "searcher", "population_size", NULL))))
        return rc;
    if (!have_rounds && (rc = t2__cfg_collect(cfg, t2__cfg_missing_in(n, kmark, "searcher", "num_rounds", NULL))))
        return rc;
    if (!have_round_length &&
        (rc = t2__cfg_collect(cfg, t2__cfg_missing_in(n, kmark, "searcher", "length_per_round",
                                                      ", e.g. length_per_round: {batches: 100}"))))
        return rc;
    if (!have_rounds || !have_round_length || s->pbt.length_per_round.n < 1 || s->pbt.num_rounds < 1) return T2_OK;
    int64_t max = s->pbt.length_per_round.unit == T2__UNIT_EPOCHS ? T2__MAX_EPOCHS : T2__MAX_LENGTH;
    if (s->pbt.length_per_round.n > max / s->pbt.num_rounds) {
        const t2__ynode *at = t2__ymap_get(n, "num_rounds", NULL);
        const t2__ymark *m = t2__cfg_blame_path(at ? &at->mark : kmark, n, "length_per_round");
        return t2__cfg_collect(cfg, t2__cfg_err(m, "searcher.num_rounds",
                                                "num_rounds x length_per_round exceeds %lld %s", (long long)max,
                                                t2__unit_name(s->pbt.length_per_round.unit)));
    }
    s->max_length.unit = s->pbt.length_per_round.unit;
    s->max_length.n = s->pbt.length_per_round.n * s->pbt.num_rounds;
    return T2_OK;
}

/* searcher.sampler: random or tpe, for adaptive_asha only. Another searcher's sampler is an error,
 * not an ignored key: whoever wrote it expects a model to choose the hparams. */
static int sampler(const t2__searcher_config *s, const t2__ynode *map, const t2__ynode *v, const char *path,
                   t2__sampler_kind *out)
{
    static const char *const names[] = {"random", "tpe", NULL};
    char buf[128];
    if (t2__ynull(v)) return T2_OK; /* null: absent, as everywhere */
    if (s->name != T2__SEARCH_ADAPTIVE_ASHA && !s->unnamed)
        return t2__cfg_err(t2__cfg_blame_path(&v->mark, map, "name"), path, "only the adaptive_asha searcher takes a sampler (the %s searcher %s)",
                           t2__searcher_name(s->name),
                           s->name == T2__SEARCH_TPE ? "is tpe already" : "draws its own hparams");
    if (v->kind == T2__Y_SCALAR)
        for (int k = 0; names[k]; k++)
            if (strcmp(v->text, names[k]) == 0) {
                *out = (t2__sampler_kind)k;
                return T2_OK;
            }
    const char *near = v->kind == T2__Y_SCALAR ? t2__cfg_closest(v->text, names) : NULL;
    if (near)
        return t2__cfg_err(&v->mark, path, "'%s' is not a sampler (expected random or tpe; did you mean '%s'?)",
                           v->text, near);
    return t2__cfg_err(&v->mark, path, "%s is not a sampler (expected random or tpe)", t2__ydesc(v, buf, sizeof buf));
}

/* tpe's counts: at least 1, and a bound so that a typo cannot make every trial draw billions of
 * candidates. */
static int tpe_count(const t2__ynode *v, const char *path, int64_t *out)
{
    int rc = t2__get_int(v, path, 1, out);
    if (!rc && *out > T2__MAX_TRIALS)
        rc = t2__cfg_err(&v->mark, path, "expected at most %d, got %lld", T2__MAX_TRIALS, (long long)*out);
    return rc;
}

/* gamma in (0, 1]; prior_weight > 0 (finite). */
static int tpe_fraction(const t2__ynode *v, const char *path, int is_gamma, double *out)
{
    double d = *out;
    int rc = t2__get_number(v, path, &d);
    if (!rc && !(d > 0 && (is_gamma ? d <= 1 : isfinite(d))))
        rc = t2__cfg_err(&v->mark, path,
                         is_gamma ? "expected a number in (0, 1], got %s" : "expected a positive number, got %s", v->text);
    *out = d;
    return rc;
}

int t2__cfg_searcher(t2__config *cfg, const t2__ynode *n, const t2__ymark *kmark)
{
    t2__searcher_config *s = &cfg->searcher;
    char path[T2__PATH_MAX];
    int rc, have_metric = 0, have_length = 0, have_trials = 0, have_pop = 0, have_rounds = 0, have_round_length = 0;
    int have_library = 0;
    const t2__ynode *time_metric = NULL, *max_time = NULL;
    const t2__ymark *time_key = NULL;
    if ((rc = t2__want_map(n, "searcher"))) return rc;
    /* Without a valid name the other keys are still checked (one run lists every error), each as
     * the searcher that takes it would check it. */
    rc = searcher_name(cfg, n, kmark);
    s->unnamed = rc == T2_EINVAL;
    if ((rc = t2__cfg_collect(cfg, rc))) return rc;
    int mine = s->unnamed ? APPLIES_ALL : 1 << s->name;
    /* adaptive_asha with sampler: tpe takes the tpe keys, wherever the sampler stands in the map. */
    const t2__ynode *sv = t2__ymap_get(n, "sampler", NULL);
    if (s->name == T2__SEARCH_ADAPTIVE_ASHA && sv && sv->kind == T2__Y_SCALAR && strcmp(sv->text, "tpe") == 0)
        mine |= APPLIES_TPE;
    for (size_t k = 0; k < n->n; k++) {
        const char *key = n->keys[k];
        const t2__ynode *v = n->items[k];
        const t2__ymark *km = &n->key_marks[k];
        t2__path_join(path, sizeof path, "searcher", key);
        int applies = -1;
        for (size_t j = 0; j < sizeof SEARCHER_KEYS / sizeof *SEARCHER_KEYS; j++)
            if (KEY_IS(SEARCHER_KEYS[j].key)) applies = SEARCHER_KEYS[j].applies;
        /* asha's tpe sampler takes tpe's sampling keys, not its pruner: asha stops trials itself. */
        int takes = KEY_IS("pruner") && !s->unnamed ? 1 << s->name : mine;
        if (applies < 0) {
            rc = t2__cfg_unknown(cfg, km, path, t2__cfg_searcher_keys);
        } else if (!(applies & takes)) {
            /* A tpe key under adaptive_asha applies once sampler: tpe is set: say so. */
            int asha_tpe = s->name == T2__SEARCH_ADAPTIVE_ASHA && (applies & APPLIES_TPE) && !KEY_IS("pruner");
            rc = t2__cfg_warn(cfg, km, "key '%s' does not apply to the %s searcher%s (ignored)", path,
                              t2__searcher_name(s->name), asha_tpe ? " with sampler: random (it does with sampler: tpe)" : "");
        } else if (KEY_IS("name")) {
            rc = T2_OK;
        } else if (KEY_IS("metric")) {
            rc = t2__get_string(v, path, &s->metric);
            if (!rc && s->metric && !*s->metric) rc = t2__cfg_err(&v->mark, path, "expected a metric name, got \"\"");
            have_metric = !t2__ynull(v); /* a bad value is its own error, not also a missing key */
        } else if (KEY_IS("smaller_is_better")) {
            rc = t2__get_bool(v, path, &s->smaller_is_better);
        } else if (KEY_IS("max_length")) {
            /* null: absent, as everywhere (time_metric with max_time may give the length instead;
             * with neither, the missing key is reported below, at the null). */
            if (t2__ynull(v)) rc = T2_OK;
            else if (v->kind == T2__Y_SCALAR) {
                /* Determined reads a bare number as batches (`max_length: 1`). */
                s->max_length.unit = T2__UNIT_BATCHES;
                rc = t2__get_int(v, path, 1, &s->max_length.n);
                if (!rc && s->max_length.n > T2__MAX_LENGTH)
                    rc = t2__cfg_err(&v->mark, path, "expected at most %lld batches, got %lld",
                                     (long long)T2__MAX_LENGTH, (long long)s->max_length.n);
            } else rc = t2__get_length(v, path, 0, &s->max_length);
            have_length = !t2__ynull(v); /* a bad value is its own error, not also a missing key */
        } else if (KEY_IS("time_metric")) { /* null: absent, as everywhere */
            time_metric = t2__ynull(v) ? NULL : v;
            time_key = km;
            rc = T2_OK;
        } else if (KEY_IS("max_time")) {
            max_time = t2__ynull(v) ? NULL : v;
            rc = T2_OK;
        } else if (KEY_IS("max_trials")) {
            rc = t2__get_int(v, path, 1, &s->max_trials);
            if (!rc && s->max_trials > T2__MAX_TRIALS)
                rc = t2__cfg_err(&v->mark, path, "expected at most %d trials, got %lld", T2__MAX_TRIALS,
                                 (long long)s->max_trials);
            have_trials = !t2__ynull(v);
        } else if (KEY_IS("max_concurrent_trials")) {
            rc = t2__get_int(v, path, 0, &s->max_concurrent_trials);
        } else if (KEY_IS("mode")) {
            static const char *const modes[] = {"aggressive", "standard", "conservative", NULL};
            int m = (int)s->mode;
            rc = t2__get_enum(v, path, modes, &m);
            s->mode = (t2__asha_mode)m;
        } else if (KEY_IS("sampler")) {
            rc = sampler(s, n, v, path, &s->sampler);
        } else if (KEY_IS("divisor")) {
            double d = s->divisor;
            rc = t2__get_number(v, path, &d);
            if (!rc && !(d > 1)) rc = t2__cfg_err(&v->mark, path, "expected a number greater than 1, got %s", v->text);
            s->divisor = d;
        } else if (KEY_IS("max_rungs")) {
            rc = t2__get_int(v, path, 1, &s->max_rungs);
        } else if (KEY_IS("stop_once")) {
            rc = t2__get_bool(v, path, &s->stop_once);
        } else if (KEY_IS("bracket_rungs")) {
            rc = int_list(v, path, T2__ASHA_MAX_BRACKETS, 62, &s->bracket_rungs, &s->nbracket_rungs);
        } else if (KEY_IS("n_startup_trials") || KEY_IS("n_ei_candidates")) {
            rc = tpe_count(v, path, KEY_IS("n_startup_trials") ? &s->tpe.n_startup_trials : &s->tpe.n_ei_candidates);
        } else if (KEY_IS("gamma") || KEY_IS("prior_weight")) {
            rc = tpe_fraction(v, path, KEY_IS("gamma"), KEY_IS("gamma") ? &s->tpe.gamma : &s->tpe.prior_weight);
        } else if (KEY_IS("multivariate")) {
            rc = t2__get_bool(v, path, &s->tpe.multivariate);
        } else if (KEY_IS("population_size") || KEY_IS("num_rounds")) {
            int is_pop = KEY_IS("population_size");
            int64_t *dst = is_pop ? &s->pbt.population_size : &s->pbt.num_rounds;
            rc = t2__get_int(v, path, 1, dst);
            if (!rc && is_pop && *dst < 2)
                rc = t2__cfg_err(&v->mark, path, "pbt needs a population of at least 2 (one to learn from), got %lld",
                                 (long long)*dst);
            if (!rc && *dst > (is_pop ? 10000 : 100000))
                rc = t2__cfg_err(&v->mark, path, "expected at most %d, got %lld", is_pop ? 10000 : 100000, (long long)*dst);
            if (is_pop) have_pop = !t2__ynull(v);
            else have_rounds = !t2__ynull(v);
        } else if (KEY_IS("length_per_round")) {
            rc = t2__ynull(v) ? t2__cfg_err(&v->mark, path, "expected a length such as {batches: 100}, got null")
                              : t2__get_length(v, path, 0, &s->pbt.length_per_round);
            have_round_length = !t2__ynull(v);
        } else if (KEY_IS("perturb_factors")) {
            rc = factor_list(v, path, &s->pbt.perturb_factors, &s->pbt.nperturb_factors);
        } else if (KEY_IS("resample_probability") || KEY_IS("quantile_fraction")) {
            int is_q = KEY_IS("quantile_fraction");
            double d = is_q ? s->pbt.quantile_fraction : s->pbt.resample_probability;
            rc = t2__get_number(v, path, &d);
            if (!rc && (is_q ? !(d > 0 && d <= 0.5) : !(d >= 0 && d <= 1)))
                rc = t2__cfg_err(&v->mark, path, "expected a number in %s, got %s", is_q ? "(0, 0.5]" : "[0, 1]", v->text);
            if (is_q) s->pbt.quantile_fraction = d;
            else s->pbt.resample_probability = d;
        } else if (KEY_IS("source_checkpoint") || KEY_IS("source_checkpoint_uuid")) {
            rc = t2__get_string(v, path, &s->source_checkpoint);
            s->source_checkpoint_uuid = KEY_IS("source_checkpoint_uuid");
        } else if (KEY_IS("points_to_evaluate")) {
            rc = T2_OK; /* checked against the hyperparameters once they are read (config_points.c) */
        } else if (KEY_IS("library")) {
            rc = t2__get_string(v, path, &s->library);
            if (!rc && s->library && !*s->library) rc = t2__cfg_err(&v->mark, path, "expected a path, got \"\"");
            have_library = !t2__ynull(v);
        } else if (KEY_IS("options")) {
            t2__val_free(s->options);
            s->options = NULL;
            if (!t2__ynull(v) && v->kind != T2__Y_MAP) {
                char buf[96];
                rc = t2__cfg_err(&v->mark, path, "expected a map of the searcher's own settings, got %s",
                                 t2__ydesc(v, buf, sizeof buf));
            } else if (!t2__ynull(v)) {
                rc = t2__ynode_to_val(v, &s->options);
            }
        } else if (KEY_IS("pruner")) {
            rc = t2__cfg_pruner_parse(cfg, v, km, path);
        } else if (KEY_IS("source_checkpoint_optimizer")) {
            rc = t2__get_bool(v, path, &s->source_checkpoint_optimizer);
        } else { /* source_trial_id */
            rc = t2__get_int(v, path, 1, &s->source_trial_id);
        }
        if ((rc = t2__cfg_collect(cfg, rc))) return rc;
    }
    if (!have_metric && (rc = t2__cfg_collect(cfg, t2__cfg_missing_in(n, kmark, "searcher", "metric", NULL)))) return rc;
    /* What only some searchers need is missing because of the name: at the name when an override set it. */
    const t2__ymark *by_name = t2__cfg_blame_path(kmark, n, "name");
    if (s->name == T2__SEARCH_PBT && !s->unnamed)
        return pbt_finish(cfg, n, by_name, have_pop, have_rounds, have_round_length);
    if (time_metric || max_time) {
        if ((rc = t2__cfg_collect(cfg, time_length(cfg, n, time_metric, time_key, max_time, kmark, have_length))))
            return rc;
    } else if (!have_length && !s->unnamed) { /* pbt needs none */
        rc = t2__cfg_missing_in(n, kmark, "searcher", "max_length",
                                ", e.g. max_length: {batches: 1000} or time_metric: batches with max_time: 1000, "
                                "in the file or as --config searcher.max_length.batches=1000"
                                CORE_API_NOTE("the training length"));
        if ((rc = t2__cfg_collect(cfg, rc))) return rc;
    }
    if (s->unnamed) return T2_OK;
    if (s->name == T2__SEARCH_CUSTOM && !have_library &&
        (rc = t2__cfg_collect(cfg, t2__cfg_missing_in(n, by_name, "searcher", "library",
                                                      ", the shared object of your searcher (t2exp/searcher.h)"))))
        return rc;
    if ((s->name == T2__SEARCH_RANDOM || s->name == T2__SEARCH_ADAPTIVE_ASHA || s->name == T2__SEARCH_TPE) &&
        !have_trials &&
        (rc = t2__cfg_collect(cfg, t2__cfg_missing_in(n, by_name, "searcher", "max_trials", NULL))))
        return rc;
    return T2_OK;
}
