/* config_points.c — searcher.points_to_evaluate: hyperparameter settings the search tries first
 * (Optuna's enqueue_trial, Ray Tune's points_to_evaluate), e.g. the settings a model ships with.
 *
 * A list of maps shaped like the trial's hparams (nested maps for nested hyperparameters). The
 * i-th point gives the i-th trial the searcher makes its values; a searched hyperparameter a point
 * leaves out is drawn as usual (searchers/searcher.c). Checked here, once the space is known
 * (hyperparameters may come after searcher in the file): every key names a hyperparameter, every
 * value lies in its range or is one of its choices, a const one may only be repeated, and there are
 * no more points than the search makes trials. Values are stored as the trial will see them: int
 * hyperparameters as integers, double and log ones as doubles. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "config_internal.h"
#include "internal.h"
#include "t2exp/error.h"

/* The names of h's children, for "did you mean". */
static int child_names(const t2__hparam *h, const char ***out)
{
    const char **names = calloc(h->nchildren + 1, sizeof *names);
    if (!names) return t2_seterr(T2_ENOMEM, "config: out of memory");
    for (size_t k = 0; k < h->nchildren; k++) names[k] = h->children[k].name;
    *out = names;
    return T2_OK;
}

/* One leaf's value from the point (y at path), as the trial will see it, into *out. */
static int leaf_value(const t2__hparam *h, const t2__ynode *y, const char *path, t2__val **out)
{
    char buf[128], want[200];
    t2__val *v = NULL;
    int rc = t2__ynode_to_val(y, &v);
    if (rc) return rc;
    int ok = t2__hparam_allows(h, &v, want, sizeof want);
    if (ok <= 0) {
        t2__val_free(v);
        return ok < 0 ? ok : t2__cfg_err(&y->mark, path, "expected %s, got %s", want, t2__ydesc(y, buf, sizeof buf));
    }
    *out = v;
    return T2_OK;
}

/* The point's map y at a NESTED node h into a new map *out. */
static int nested_value(t2__config *cfg, const t2__hparam *h, const t2__ynode *y, const char *path, t2__val **out)
{
    char buf[128], sub[T2__PATH_MAX];
    if (y->kind != T2__Y_MAP)
        return t2__cfg_err(&y->mark, path, "expected a map of hyperparameter values, got %s", t2__ydesc(y, buf, sizeof buf));
    t2__val *m = t2__val_map();
    const char **names = NULL;
    int rc = m ? child_names(h, &names) : t2_seterr(T2_ENOMEM, "config: out of memory");
    for (size_t k = 0; !rc && k < y->n; k++) {
        t2__path_join(sub, sizeof sub, path, y->keys[k]);
        const t2__hparam *c = NULL;
        for (size_t j = 0; j < h->nchildren && !c; j++)
            if (!strcmp(h->children[j].name, y->keys[k])) c = &h->children[j];
        t2__val *v = NULL;
        if (!c) {
            /* Never lenient: a point with a mistyped name would silently try something else. */
            const char *near = t2__cfg_closest(y->keys[k], names);
            if (near) rc = t2__cfg_err(&y->key_marks[k], sub, "no such hyperparameter (did you mean '%s'?)", near);
            else rc = t2__cfg_err(&y->key_marks[k], sub, "no such hyperparameter");
        } else {
            rc = c->kind == T2__HP_NESTED ? nested_value(cfg, c, y->items[k], sub, &v) : leaf_value(c, y->items[k], sub, &v);
        }
        if (!rc && v) rc = t2__val_map_set(m, y->keys[k], v);
        /* Every bad value is reported, not only the first (the load fails once any was). */
        else rc = t2__cfg_collect(cfg, rc);
    }
    free(names);
    if (rc) t2__val_free(m);
    else *out = m;
    return rc;
}

/* How many trials the search makes (0: no bound known here). */
static int64_t trials_of(const t2__searcher_config *s)
{
    switch (s->name) {
    case T2__SEARCH_SINGLE: return 1;
    case T2__SEARCH_PBT: return s->pbt.population_size; /* the first generation's */
    default: return s->max_trials;
    }
}

int t2__cfg_points(t2__config *cfg, const t2__ynode *searcher)
{
    char buf[128], path[T2__PATH_MAX], idx[24];
    const t2__ynode *y = searcher && searcher->kind == T2__Y_MAP ? t2__ymap_get(searcher, "points_to_evaluate", NULL) : NULL;
    if (!y || t2__ynull(y) || cfg->searcher.name == T2__SEARCH_GRID || !cfg->hparams) return T2_OK;
    const char *base = "searcher.points_to_evaluate";
    if (y->kind != T2__Y_SEQ)
        return t2__cfg_err(&y->mark, base, "expected a list of hyperparameter maps, got %s", t2__ydesc(y, buf, sizeof buf));
    int64_t most = cfg->searcher.unnamed ? 0 : trials_of(&cfg->searcher);
    /* Too many for the trials: at the count (or the name that decides it) when an override set it. */
    const t2__ymark *m = t2__cfg_blame_path(&y->mark, searcher, "name");
    m = t2__cfg_blame_path(m, searcher, cfg->searcher.name == T2__SEARCH_PBT ? "population_size" : "max_trials");
    if (most > 0 && (int64_t)y->n > most)
        return t2__cfg_err(m, base, "%zu points, but the %s search makes %lld trial(s)%s", y->n,
                           t2__searcher_name(cfg->searcher.name), (long long)most,
                           cfg->searcher.name == T2__SEARCH_PBT ? " in its first generation" : "");
    t2__val *list = t2__val_list();
    int rc = list ? T2_OK : t2_seterr(T2_ENOMEM, "config: out of memory");
    for (size_t k = 0; !rc && k < y->n; k++) {
        snprintf(idx, sizeof idx, "%zu", k);
        t2__path_join(path, sizeof path, base, idx);
        t2__val *p = NULL;
        if (!(rc = nested_value(cfg, cfg->hparams, y->items[k], path, &p))) rc = t2__val_list_append(list, p);
    }
    if (rc) {
        t2__val_free(list);
        return rc;
    }
    t2__val_free(cfg->searcher.points);
    cfg->searcher.points = list;
    return T2_OK;
}
