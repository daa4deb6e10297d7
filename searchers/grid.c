/* grid.c — every point of the Cartesian product of the hyperparameter axes, each trained to
 * max_length (Determined's grid.go; the axis values come from t2__hparam_axis). The trials come
 * in Determined's order: the product is taken over the leaves sorted by name (at every level of
 * nesting, byte order, as Go's sort.Strings), the first sorted leaf varying slowest, and trials
 * are created from the end of that list, so request 0 has every axis at its last value.
 * Points are built on demand from the axes, not stored: a million-point grid costs no memory
 * until its trials are requested. A grid point with invalid hparams is simply done. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "searcher_internal.h"
#include "t2exp/error.h"

typedef struct grid {
    size_t nleaves;
    t2__val **axes;   /* one LIST per leaf, in leaf (file) order */
    size_t *order;    /* leaf indices sorted by name: order[0] varies slowest */
    uint64_t total;
} grid;

static void grid_free(void *data)
{
    grid *g = data;
    if (!g) return;
    for (size_t k = 0; g->axes && k < g->nleaves; k++) t2__val_free(g->axes[k]);
    free(g->axes);
    free(g->order);
    free(g);
}

static int point(const t2__searcher *s, int64_t i, t2__val **out)
{
    const grid *g = ((const t2__flat *)s->impl)->data;
    const t2__val **vals = calloc(g->nleaves + 1, sizeof *vals);
    if (!vals) return t2_seterr(T2_ENOMEM, "searcher: out of memory");
    /* Point total-1-i of the product, mixed radix with the last sorted leaf as the lowest digit. */
    uint64_t rest = g->total - 1 - (uint64_t)i;
    for (size_t k = g->nleaves; k-- > 0;) {
        size_t leaf = g->order[k], n = g->axes[leaf]->n;
        vals[leaf] = g->axes[leaf]->items[rest % n];
        rest /= n;
    }
    int rc = t2__hparam_build(s->cfg->hparams, vals, out);
    free(vals);
    return rc;
}

/* Dotted paths compared name by name (a.x before a-b: the nested group "a" sorts as "a"). */
static int path_cmp(const char *a, const char *b)
{
    for (;;) {
        size_t la = strcspn(a, "."), lb = strcspn(b, ".");
        int c = memcmp(a, b, la < lb ? la : lb);
        if (c || la != lb) return c ? c : la < lb ? -1 : 1;
        if (!a[la] || !b[lb]) return (a[la] != 0) - (b[lb] != 0);
        a += la + 1;
        b += lb + 1;
    }
}

/* Insertion sort of leaf indices by path (a grid has few leaves). */
static void sort_leaves(const t2__hparam **lv, size_t *order, size_t n)
{
    for (size_t k = 0; k < n; k++) order[k] = k;
    for (size_t k = 1; k < n; k++)
        for (size_t j = k; j > 0 && path_cmp(lv[order[j - 1]]->path, lv[order[j]]->path) > 0; j--) {
            size_t t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
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
    g->order = calloc(g->nleaves + 1, sizeof *g->order);
    g->total = total;
    rc = lv && g->axes && g->order ? T2_OK : t2_seterr(T2_ENOMEM, "searcher: out of memory");
    if (!rc) {
        t2__hparam_leaves(s->cfg->hparams, lv, g->nleaves);
        sort_leaves(lv, g->order, g->nleaves);
    }
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
