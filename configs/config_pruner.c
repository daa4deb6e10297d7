/* config_pruner.c — searcher.pruner: stop a trial early, as Optuna's pruners do (and Ray Tune's
 * MedianStoppingRule and TrialPlateauStopper, nearly). Four rules, Optuna's names and defaults:
 *
 *   pruner: median                  # against the completed trials (random, grid, tpe)
 *   pruner:
 *     name: percentile              # median | percentile: worse than this percentile of the
 *     percentile: 25                #   completed trials' values at the same step
 *     n_startup_trials: 5           # completed trials before any pruning
 *     n_min_trials: 1               # completed trials with a validation at the step
 *     warmup: {batches: 200}        # any rule: no pruning before a trial has trained this long
 *   pruner: {name: patient, patience: 3, min_delta: 0.001}   # its own curve: no better for a while
 *   pruner: {name: threshold, upper: 10}                       # its own value out of [lower, upper]
 *   pruner:                          # successive halving: rungs at min_resource * rf^k, where only
 *     name: successive_halving       #   the best 1/rf of the trials that reached a rung go on
 *     min_resource: {batches: 100}   # auto (default): max_length / 100
 *     reduction_factor: 4            # rf; min_early_stopping_rate: 0, bootstrap_count: 0
 *   pruner: {name: hyperband, min_resource: {batches: 10}}   # brackets of successive halving;
 *                                    # max_resource: auto (max_length); reduction_factor: 3
 *
 * patient and threshold judge a trial by its own values, so they also apply to a single trial.
 * warmup is a length (Optuna's n_warmup_steps counts reported steps, and a t2exp trial reports a
 * validation every min_validation_period); so are min_resource and max_resource, which the halving
 * rules take instead of a warmup (their first rung is one). */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "config_internal.h"
#include "internal.h"
#include "t2exp/error.h"

#define KEY_IS(s) (strcmp(key, (s)) == 0)

enum { MEDIAN, PERCENTILE, PATIENT, THRESHOLD, HALVING, HYPERBAND };
static const char *const PRUNER_NAMES[] = {"median",    "percentile", "patient", "threshold", "successive_halving",
                                           "hyperband", NULL};
const char *const t2__cfg_pruner_keys[] = {"name",          "percentile",         "n_startup_trials",
                                          "n_min_trials",  "patience",           "min_delta",
                                          "lower",         "upper",              "warmup",
                                          "min_resource",  "max_resource",       "reduction_factor",
                                          "min_early_stopping_rate", "bootstrap_count", "wrapped_pruner", NULL};
#define NAMES_TEXT "median, percentile, patient, threshold, successive_halving or hyperband"

static int absent(const t2__ynode *v) { return !v || t2__ynull(v); }

/* Which names take each key (bits of 1 << name); name: all. */
static unsigned takers(const char *key)
{
    if (KEY_IS("percentile")) return 1u << PERCENTILE;
    if (KEY_IS("n_startup_trials") || KEY_IS("n_min_trials")) return 1u << MEDIAN | 1u << PERCENTILE;
    if (KEY_IS("patience") || KEY_IS("min_delta") || KEY_IS("wrapped_pruner")) return 1u << PATIENT;
    if (KEY_IS("lower") || KEY_IS("upper")) return 1u << THRESHOLD;
    if (KEY_IS("min_resource") || KEY_IS("reduction_factor") || KEY_IS("bootstrap_count"))
        return 1u << HALVING | 1u << HYPERBAND;
    if (KEY_IS("min_early_stopping_rate")) return 1u << HALVING;
    if (KEY_IS("max_resource")) return 1u << HYPERBAND;
    if (KEY_IS("warmup")) return ~(1u << HALVING | 1u << HYPERBAND); /* their first rung is one */
    return ~0u;
}

static int pruner_name(const t2__ynode *v, const char *path, int *out)
{
    char buf[96];
    if (v->kind != T2__Y_SCALAR || t2__ynull(v))
        return t2__cfg_err(&v->mark, path, "expected " NAMES_TEXT ", got %s", t2__ydesc(v, buf, sizeof buf));
    for (int k = 0; PRUNER_NAMES[k]; k++)
        if (!strcmp(v->text, PRUNER_NAMES[k])) return *out = k, T2_OK;
    const char *near = t2__cfg_closest(v->text, PRUNER_NAMES);
    return t2__cfg_err(&v->mark, path, "expected " NAMES_TEXT ", got %s%s%s%s",
                       t2__ydesc(v, buf, sizeof buf), near ? " (did you mean '" : "", near ? near : "",
                       near ? "'?)" : "");
}

/* A key's value for the rule it belongs to (takers() said it does). */
static int pruner_value(t2__pruner_config *p, const char *key, const t2__ynode *v, const char *path)
{
    int rc;
    if (KEY_IS("percentile")) {
        if (!(rc = t2__get_number(v, path, &p->percentile)) && !(p->percentile > 0 && p->percentile <= 100))
            rc = t2__cfg_err(&v->mark, path, "expected a number in (0, 100], got %s", v->text);
        return rc;
    }
    if (KEY_IS("n_startup_trials") || KEY_IS("n_min_trials") || KEY_IS("patience")) {
        int64_t *dst = KEY_IS("n_startup_trials") ? &p->n_startup_trials
                       : KEY_IS("patience")       ? &p->patience
                                                  : &p->n_min_trials;
        rc = t2__get_int(v, path, KEY_IS("n_min_trials") ? 1 : 0, dst);
        if (!rc && *dst > T2__MAX_TRIALS)
            rc = t2__cfg_err(&v->mark, path, "expected at most %d, got %lld", T2__MAX_TRIALS, (long long)*dst);
        return rc;
    }
    if (KEY_IS("min_delta")) {
        if (!(rc = t2__get_number(v, path, &p->min_delta)) && p->min_delta < 0)
            rc = t2__cfg_err(&v->mark, path, "expected a number >= 0, got %s", v->text);
        return rc;
    }
    if (KEY_IS("lower")) return t2__get_number(v, path, &p->lower);
    if (KEY_IS("upper")) return t2__get_number(v, path, &p->upper);
    if (KEY_IS("reduction_factor") || KEY_IS("min_early_stopping_rate") || KEY_IS("bootstrap_count")) {
        int64_t *dst = KEY_IS("reduction_factor")          ? &p->reduction_factor
                       : KEY_IS("min_early_stopping_rate") ? &p->min_early_stopping_rate
                                                           : &p->bootstrap_count;
        /* A rate past 62 reaches no rung (2^63 batches); a factor past a million promotes nobody. */
        int64_t max = KEY_IS("bootstrap_count") ? T2__MAX_TRIALS : KEY_IS("reduction_factor") ? 1000000 : 62;
        int64_t min = KEY_IS("reduction_factor") ? 2 : 0; /* a factor of 1 never halves */
        rc = t2__get_int(v, path, 0, dst);
        if (!rc && (*dst < min || *dst > max))
            rc = t2__cfg_err(&v->mark, path, "expected an integer in [%lld, %lld], got %lld", (long long)min,
                             (long long)max, (long long)*dst);
        return rc;
    }
    if (KEY_IS("min_resource") || KEY_IS("max_resource")) {
        /* auto: resolved by t2__cfg_pruner_check from max_length (hyperband's min_resource has no
         * auto in Optuna either: its default is 1). */
        t2__length *dst = KEY_IS("min_resource") ? &p->min_resource : &p->max_resource;
        int can_auto = KEY_IS("max_resource") || !p->hyperband;
        if (can_auto && v->kind == T2__Y_SCALAR && !strcmp(v->text, "auto")) return *dst = (t2__length){0}, T2_OK;
        if (v->kind == T2__Y_SCALAR && !t2__ynull(v))
            return t2__cfg_err(&v->mark, path, "expected %sa length such as {batches: 100}, got %s",
                               can_auto ? "auto or " : "", v->text);
        return t2__get_length(v, path, 0, dst);
    }
    return t2__get_length(v, path, 1, &p->warmup); /* warmup */
}

/* What a rule needs beyond its name, once its keys are read. */
static int pruner_required(const t2__config *cfg, const t2__pruner_config *p, const t2__ynode *n,
                           const t2__ymark *kmark, const char *path, int name)
{
    int map = n->kind == T2__Y_MAP; /* else a bare name, median */
    /* What the rule needs is missing because of its name: at the name when an override set it. */
    if (map) kmark = t2__cfg_blame_path(kmark, n, "name");
    const t2__ynode *lo = map ? t2__ymap_get(n, "lower", NULL) : NULL, *hi = map ? t2__ymap_get(n, "upper", NULL) : NULL;
    if (name == PERCENTILE && absent(t2__ymap_get(n, "percentile", NULL)))
        return t2__cfg_missing_in(n, kmark, path, "percentile", ", e.g. percentile: 25");
    if (name == PATIENT && absent(t2__ymap_get(n, "patience", NULL)))
        return t2__cfg_missing_in(n, kmark, path, "patience", ", e.g. patience: 3 (validations without improvement)");
    if (name == THRESHOLD && absent(lo) && absent(hi))
        return t2__cfg_err(kmark, path, "a threshold pruner needs lower, upper or both");
    if (name == THRESHOLD && p->lower > p->upper)
        return t2__cfg_err(hi && lo ? t2__cfg_blame(&hi->mark, &lo->mark) : hi ? &hi->mark : kmark, path,
                           "lower %g is above upper %g", p->lower, p->upper);
    if (name != PATIENT && name != THRESHOLD && cfg->searcher.name == T2__SEARCH_SINGLE && !cfg->searcher.unnamed)
        return t2__cfg_err(kmark, path, "a single trial has no others to be compared with; the patient and "
                                        "threshold pruners judge a trial by its own values");
    return T2_OK;
}

/* What the name alone sets: hyperband's reduction_factor default is 3 where successive halving's
 * is 4 (Optuna's defaults differ). */
static void name_defaults(t2__pruner_config *p, int name)
{
    if (name == HYPERBAND) p->hyperband = 1, p->reduction_factor = 3;
}

/* One rule's map (or bare name) at n into *p; nested: it is a patient pruner's wrapped_pruner,
 * which may not be patient itself nor take warmup (the outer one's counts). */
static int parse_rule(t2__config *cfg, t2__pruner_config *p, const t2__ynode *n, const t2__ymark *kmark,
                      const char *path, int nested)
{
    *p = (t2__pruner_config){.percentile = 50, .n_startup_trials = 5, .n_min_trials = 1, .lower = -INFINITY,
                             .upper = INFINITY, .reduction_factor = 4};
    t2__pruner_config wrapped;
    int name = MEDIAN, rc, have_wrapped = 0;
    if (n->kind == T2__Y_SCALAR) { /* a bare name: the rules whose keys all have defaults */
        if ((rc = pruner_name(n, path, &name))) return rc;
        name_defaults(p, name);
        if (name != MEDIAN && name != HALVING && name != HYPERBAND)
            return t2__cfg_err(&n->mark, path, "a %s pruner needs its settings, e.g. %s", PRUNER_NAMES[name],
                               name == PERCENTILE ? "{name: percentile, percentile: 25}"
                               : name == PATIENT  ? "{name: patient, patience: 3}"
                                                  : "{name: threshold, upper: 10}");
    } else if (n->kind != T2__Y_MAP) {
        return t2__cfg_err(&n->mark, path, "expected a pruner's name (" NAMES_TEXT "), or a map such as {name: median}");
    } else {
        char kpath[T2__PATH_MAX];
        const t2__ynode *nv = t2__ymap_get(n, "name", NULL);
        if (absent(nv))
            return t2__cfg_missing_in(n, kmark, path, "name", " (" NAMES_TEXT ")");
        t2__path_join(kpath, sizeof kpath, path, "name");
        if ((rc = pruner_name(nv, kpath, &name))) return rc;
        name_defaults(p, name);
        for (size_t k = 0; k < n->n; k++) {
            const char *key = n->keys[k];
            const t2__ynode *v = n->items[k];
            t2__path_join(kpath, sizeof kpath, path, key);
            int known = 0;
            for (size_t j = 0; t2__cfg_pruner_keys[j]; j++) known |= KEY_IS(t2__cfg_pruner_keys[j]);
            if (KEY_IS("name")) continue;
            if (!known) rc = t2__cfg_unknown(cfg, &n->key_marks[k], kpath, t2__cfg_pruner_keys);
            else if (nested && KEY_IS("warmup"))
                rc = t2__cfg_err(&n->key_marks[k], kpath, "give warmup to the patient pruner that wraps this one");
            else if (!(takers(key) & 1u << name)) {
                char who[64] = ""; /* the rules that take it, from takers() */
                for (int r = 0; PRUNER_NAMES[r]; r++)
                    if (takers(key) & 1u << r)
                        snprintf(who + strlen(who), sizeof who - strlen(who), "%s%s", who[0] ? " or " : "",
                                 PRUNER_NAMES[r]);
                rc = t2__cfg_err(&n->key_marks[k], kpath, "the %s pruner does not take it (%s does)",
                                 PRUNER_NAMES[name], who);
            } else if (KEY_IS("wrapped_pruner")) {
                if (nested) rc = t2__cfg_err(&n->key_marks[k], kpath, "a wrapped pruner cannot wrap another");
                else if (!t2__ynull(v) && !(rc = parse_rule(cfg, &wrapped, v, &n->key_marks[k], kpath, 1)))
                    have_wrapped = 1;
            } else {
                rc = pruner_value(p, key, v, kpath);
            }
            if ((rc = t2__cfg_collect(cfg, rc))) return rc;
        }
    }
    if (nested && name == PATIENT)
        return t2__cfg_err(kmark, path, "a patient pruner cannot wrap another patient pruner (one patience is enough)");
    if ((rc = t2__cfg_collect(cfg, pruner_required(cfg, p, n, kmark, path, name)))) return rc;
    p->rule = name == PATIENT ? 1 : name == THRESHOLD ? 2 : name == HALVING || name == HYPERBAND ? 3 : 0;
    p->on = 1;
    if (have_wrapped) { /* the wrapped rule, asked once the patient one would prune */
        t2__pruner_config outer = *p;
        *p = wrapped;
        p->patient_wrap = 1;
        p->patience = outer.patience;
        p->min_delta = outer.min_delta;
        p->warmup = outer.warmup;
    }
    return T2_OK;
}

int t2__cfg_pruner_parse(t2__config *cfg, const t2__ynode *n, const t2__ymark *kmark, const char *path)
{
    if (t2__ynull(n)) return T2_OK; /* absent, as everywhere */
    return parse_rule(cfg, &cfg->searcher.pruner, n, kmark, path, 0);
}

/* The key mark of pruner key `key`, in searcher.pruner or its wrapped_pruner (else of
 * searcher.pruner itself). */
static const t2__ymark *mark_of(const t2__ynode *searcher, size_t at, const char *key)
{
    const t2__ynode *pn = searcher->items[at], *w;
    size_t k = 0;
    if (pn->kind == T2__Y_MAP && t2__ymap_get(pn, key, &k)) return &pn->key_marks[k];
    if (pn->kind == T2__Y_MAP && (w = t2__ymap_get(pn, "wrapped_pruner", NULL)) && w->kind == T2__Y_MAP &&
        t2__ymap_get(w, key, &k))
        return &w->key_marks[k];
    return &searcher->key_marks[at];
}

/* successive_halving / hyperband: auto resources from max_length, and hyperband's bracket count
 * (Optuna's floor(log_rf(max / min)) + 1, in integers: its float log misses exact powers such as
 * log(1000, 10) = 2.9999999999999996). */
static int resolve_halving(t2__config *cfg, const t2__ynode *searcher, size_t at)
{
    t2__pruner_config *p = &cfg->searcher.pruner;
    const t2__length *ml = &cfg->searcher.max_length;
    if (p->min_resource.n == 0)
        p->min_resource = (t2__length){.unit = ml->unit, .n = p->hyperband ? 1 : (ml->n / 100 > 1 ? ml->n / 100 : 1)};
    p->n_brackets = 1;
    if (!p->hyperband) return T2_OK;
    if (p->max_resource.n == 0) p->max_resource = *ml;
    static const char *const units[] = {"batches", "records", "epochs"};
    const char *path = p->patient_wrap ? "searcher.pruner.wrapped_pruner.min_resource" : "searcher.pruner.min_resource";
    if (p->min_resource.unit != p->max_resource.unit)
        return t2__cfg_err(mark_of(searcher, at, "min_resource"), path,
                           "is in %s and max_resource%s in %s: give both in one unit", units[p->min_resource.unit],
                           mark_of(searcher, at, "max_resource") == &searcher->key_marks[at] ? " (max_length)" : "",
                           units[p->max_resource.unit]);
    if (p->min_resource.n > p->max_resource.n)
        return t2__cfg_err(mark_of(searcher, at, "min_resource"), path,
                           "%lld %s is above max_resource %lld", (long long)p->min_resource.n,
                           units[p->min_resource.unit], (long long)p->max_resource.n);
    int64_t r = p->min_resource.n;
    while (p->n_brackets < 64 && r <= p->max_resource.n / p->reduction_factor) {
        r *= p->reduction_factor;
        p->n_brackets++;
    }
    return T2_OK;
}

int t2__cfg_pruner_check(t2__config *cfg, const t2__ynode *searcher)
{
    size_t at = 0;
    if (!cfg->searcher.pruner.on || !searcher || !t2__ymap_get(searcher, "pruner", &at)) return T2_OK;
    if (cfg->min_validation_period.n == 0)
        return t2__cfg_err(&searcher->key_marks[at], "searcher.pruner",
                           "needs min_validation_period (e.g. min_validation_period: {batches: 100}): a pruner judges "
                           "trials at the validations they report before max_length");
    return cfg->searcher.pruner.rule == 3 ? resolve_halving(cfg, searcher, at) : T2_OK;
}
