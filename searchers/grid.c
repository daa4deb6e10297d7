/* grid.c — every point of the Cartesian product of the hyperparameter axes, each trained to
 * max_length (Determined's grid.go; the axis values come from t2__hparam_axis). Trials are
 * requested in grid order, the first leaf varying slowest, so request R is grid point R.
 * Points are built on demand from the axes, not stored: a million-point grid costs no memory
 * until its trials are requested. A grid point with invalid hparams is simply done. */
#include <inttypes.h>
#include <stdlib.h>
#include "searcher_internal.h"
#include "t2exp/error.h"

typedef struct grid {
    size_t nleaves;
    t2__val **axes; /* one LIST per leaf */
} grid;

static void grid_free(void *data)
{
    grid *g = data;
    if (!g) return;
    for (size_t k = 0; g->axes && k < g->nleaves; k++) t2__val_free(g->axes[k]);
    free(g->axes);
    free(g);
}

static int point(const t2__searcher *s, int64_t i, t2__val **out)
{
    const grid *g = ((const t2__flat *)s->impl)->data;
    const t2__val **vals = calloc(g->nleaves + 1, sizeof *vals);
    if (!vals) return t2_seterr(T2_ENOMEM, "searcher: out of memory");
    /* Mixed radix with the last leaf as the lowest digit. */
    uint64_t rest = (uint64_t)i;
    for (size_t k = g->nleaves; k-- > 0;) {
        size_t n = g->axes[k]->n;
        vals[k] = g->axes[k]->items[rest % n];
        rest /= n;
    }
    int rc = t2__hparam_build(s->cfg->hparams, vals, out);
    free(vals);
    return rc;
}

static int init(t2__searcher *s)
{
    uint64_t total = 0;
    int rc = t2__hparam_grid_size(s->cfg->hparams, &total);
    if (rc) return rc;
    if (total > T2__MAX_TRIALS)
        return t2_seterr(T2_EINVAL, "hyperparameters: the grid has %" PRIu64 " points, more than the %d a grid search may have",
                         total, T2__MAX_TRIALS);
    grid *g = calloc(1, sizeof *g);
    if (!g) return t2_seterr(T2_ENOMEM, "searcher: out of memory");
    g->nleaves = t2__hparam_leaves(s->cfg->hparams, NULL, 0);
    const t2__hparam **lv = calloc(g->nleaves + 1, sizeof *lv);
    g->axes = calloc(g->nleaves + 1, sizeof *g->axes);
    rc = lv && g->axes ? T2_OK : t2_seterr(T2_ENOMEM, "searcher: out of memory");
    if (!rc) t2__hparam_leaves(s->cfg->hparams, lv, g->nleaves);
    for (size_t k = 0; !rc && k < g->nleaves; k++) rc = t2__hparam_axis(lv[k], &g->axes[k]);
    free(lv);
    if (!rc) rc = t2__flat_init(s, (int64_t)total, 0, point);
    if (rc) {
        grid_free(g);
        return rc;
    }
    t2__flat *f = s->impl;
    f->data = g;
    f->data_free = grid_free;
    return T2_OK;
}

const t2__searcher_vt t2__grid_vt = T2__FLAT_VT("grid", init);
