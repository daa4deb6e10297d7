/* config_pruner.c — searcher.pruner: stop a random, grid or tpe trial early when its validation is
 * worse than the median (or another percentile) of the completed trials' at the same step, as
 * Optuna's MedianPruner and PercentilePruner do (and Ray Tune's MedianStoppingRule, nearly).
 *
 *   pruner: median                  # the defaults below
 *   pruner:
 *     name: percentile              # median | percentile
 *     percentile: 25                # percentile only: (0, 100]
 *     n_startup_trials: 5           # completed trials before any pruning (Optuna's default)
 *     n_min_trials: 1               # completed trials with a validation at the step
 *     warmup: {batches: 200}        # no pruning before a trial has trained this long
 *
 * The keys are Optuna's names; warmup is a length (Optuna's n_warmup_steps counts reported steps,
 * and a t2exp trial reports a validation every min_validation_period). */
#include <stdio.h>
#include <string.h>
#include "config_internal.h"
#include "internal.h"
#include "t2exp/error.h"

#define KEY_IS(s) (strcmp(key, (s)) == 0)

static const char *const PRUNER_KEYS[] = {"name", "percentile", "n_startup_trials", "n_min_trials", "warmup", NULL};
static const char *const PRUNER_NAMES[] = {"median", "percentile", NULL};

/* The name, from a bare scalar or the map's name key: 0 median, 1 percentile. */
static int pruner_name(const t2__ynode *v, const char *path, int *out)
{
    if (v->kind == T2__Y_SCALAR && !t2__ynull(v)) {
        const char *near = t2__cfg_closest(v->text, PRUNER_NAMES);
        for (int k = 0; PRUNER_NAMES[k]; k++)
            if (!strcmp(v->text, PRUNER_NAMES[k])) return *out = k, T2_OK;
        char buf[96];
        return t2__cfg_err(&v->mark, path, "expected median or percentile, got %s%s%s%s", t2__ydesc(v, buf, sizeof buf),
                           near ? " (did you mean '" : "", near ? near : "", near ? "'?)" : "");
    }
    return t2__cfg_err(&v->mark, path, "expected median or percentile");
}

int t2__cfg_pruner_parse(t2__config *cfg, const t2__ynode *n, const t2__ymark *kmark, const char *path)
{
    t2__pruner_config *p = &cfg->searcher.pruner;
    if (t2__ynull(n)) return T2_OK; /* absent, as everywhere */
    *p = (t2__pruner_config){.percentile = 50, .n_startup_trials = 5, .n_min_trials = 1};
    int name = 0, rc;
    if (n->kind == T2__Y_SCALAR) {
        if ((rc = pruner_name(n, path, &name))) return rc;
        if (name == 1)
            return t2__cfg_err(&n->mark, path, "a percentile pruner needs its percentile: "
                                               "{name: percentile, percentile: 25}");
        p->on = 1;
        return T2_OK;
    }
    if (n->kind != T2__Y_MAP) return t2__cfg_err(&n->mark, path, "expected median, or a map such as {name: median}");
    char kpath[T2__PATH_MAX];
    const t2__ynode *nv = t2__ymap_get(n, "name", NULL), *pv = t2__ymap_get(n, "percentile", NULL);
    if (!nv || t2__ynull(nv)) return t2__cfg_missing_in(n, kmark, path, "name", " (median or percentile)");
    t2__path_join(kpath, sizeof kpath, path, "name");
    if ((rc = pruner_name(nv, kpath, &name))) return rc;
    if (name == 1 && (!pv || t2__ynull(pv)))
        return t2__cfg_missing_in(n, kmark, path, "percentile", ", e.g. percentile: 25");
    for (size_t k = 0; k < n->n; k++) {
        const char *key = n->keys[k];
        const t2__ynode *v = n->items[k];
        t2__path_join(kpath, sizeof kpath, path, key);
        rc = T2_OK;
        if (KEY_IS("name")) {
            continue;
        } else if (KEY_IS("percentile")) {
            if (name == 0 && !t2__ynull(v))
                rc = t2__cfg_err(&v->mark, kpath, "the median pruner is the 50th percentile; for another, "
                                                  "use name: percentile");
            else if (!(rc = t2__get_number(v, kpath, &p->percentile)) && !(p->percentile > 0 && p->percentile <= 100))
                rc = t2__cfg_err(&v->mark, kpath, "expected a number in (0, 100], got %s", v->text);
        } else if (KEY_IS("n_startup_trials")) {
            rc = t2__get_int(v, kpath, 0, &p->n_startup_trials);
            if (!rc && p->n_startup_trials > T2__MAX_TRIALS)
                rc = t2__cfg_err(&v->mark, kpath, "expected at most %d, got %lld", T2__MAX_TRIALS,
                                 (long long)p->n_startup_trials);
        } else if (KEY_IS("n_min_trials")) {
            rc = t2__get_int(v, kpath, 1, &p->n_min_trials);
            if (!rc && p->n_min_trials > T2__MAX_TRIALS)
                rc = t2__cfg_err(&v->mark, kpath, "expected at most %d, got %lld", T2__MAX_TRIALS,
                                 (long long)p->n_min_trials);
        } else if (KEY_IS("warmup")) {
            rc = t2__get_length(v, kpath, 1, &p->warmup);
        } else {
            rc = t2__cfg_unknown(cfg, &n->key_marks[k], kpath, PRUNER_KEYS);
        }
        if ((rc = t2__cfg_collect(cfg, rc))) return rc;
    }
    p->on = 1;
    return T2_OK;
}

int t2__cfg_pruner_check(t2__config *cfg, const t2__ynode *searcher)
{
    if (!cfg->searcher.pruner.on || cfg->min_validation_period.n > 0) return T2_OK;
    size_t at = 0;
    if (!searcher || !t2__ymap_get(searcher, "pruner", &at)) return T2_OK;
    return t2__cfg_err(&searcher->key_marks[at], "searcher.pruner",
                       "needs min_validation_period (e.g. min_validation_period: {batches: 100}): a pruner compares "
                       "trials at the validations they report before max_length");
}
