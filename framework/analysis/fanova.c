/* fanova.c — importance.h's variance decomposition of a tree, and the forest around it.
 *
 * A tree's leaves tile the search box: leaf l covers a box B_l (its ancestors' splits clipped to the
 * domain) with the constant v_l, and a fraction f_l of the box's volume. The tree's mean is
 * mu = sum f_l v_l and its variance V = sum f_l (v_l - mu)^2. Its marginal over feature c, the tree
 * averaged over the other features, is piecewise constant between the leaves' bounds on c: on an
 * interval of c, the sum over the leaves whose box spans it of v_l times the fraction of the other
 * features' volume the leaf covers. A sweep over the sorted bounds (add a leaf's share where its
 * interval starts, take it off where it ends) gives every piece; the marginal's variance V_c is
 * then a weighted sum over the pieces. Optuna's _FanovaTree computes the same numbers by
 * traversing the tree once per piece. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "analysis/importance.h"
#include "internal.h"
#include "t2exp/rng.h"

typedef struct leaves {
    double *lo, *hi; /* n boxes of d bounds each */
    double *value, *frac;
    size_t n, cap, d;
} leaves;

static int add_leaf(leaves *l, const double *lo, const double *hi, double value, double frac)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 64;
        double *a = realloc(l->lo, cap * l->d * sizeof *a);
        if (a) l->lo = a;
        double *b = a ? realloc(l->hi, cap * l->d * sizeof *b) : NULL;
        if (b) l->hi = b;
        double *c = b ? realloc(l->value, cap * sizeof *c) : NULL;
        if (c) l->value = c;
        double *e = c ? realloc(l->frac, cap * sizeof *e) : NULL;
        if (!e) return t2_seterr(T2_ENOMEM, "importance: out of memory");
        l->frac = e;
        l->cap = cap;
    }
    memcpy(l->lo + l->n * l->d, lo, l->d * sizeof *lo);
    memcpy(l->hi + l->n * l->d, hi, l->d * sizeof *hi);
    l->value[l->n] = value;
    l->frac[l->n++] = frac;
    return T2_OK;
}

/* Walks the subtree at node with box [lo, hi) (scratch, restored on return), collecting leaves. */
static int walk(const t2__rtree *t, int node, const t2__imp_data *dt, double *lo, double *hi, leaves *out)
{
    const t2__rtree_node *n = &t->v[node];
    if (n->feature < 0) {
        double frac = 1.0;
        for (size_t k = 0; k < dt->d; k++) frac *= (hi[k] - lo[k]) / (dt->hi[k] - dt->lo[k]);
        return frac > 0 ? add_leaf(out, lo, hi, n->value, frac) : T2_OK; /* a box outside the domain: none */
    }
    size_t f = (size_t)n->feature;
    double a = lo[f], b = hi[f], cut = fmin(fmax(n->threshold, a), b);
    hi[f] = cut;
    int rc = walk(t, n->left, dt, lo, hi, out);
    hi[f] = b;
    lo[f] = cut;
    if (!rc) rc = walk(t, n->right, dt, lo, hi, out);
    lo[f] = a;
    return rc;
}

static int cmp_double(const void *a, const void *b)
{
    double u = *(const double *)a, v = *(const double *)b;
    return (u > v) - (u < v);
}

/* Index of x among the sorted distinct values s[0..n) (x is one of them). */
static size_t position(const double *s, size_t n, double x)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s[mid] < x) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* The variance of the tree's marginal over feature c (mean mu). s, delta: scratch of 2n + 2. */
static double marginal_variance(const leaves *l, const t2__imp_data *dt, size_t c, double mu, double *s, double *delta)
{
    size_t ns = 0;
    for (size_t i = 0; i < l->n; i++) {
        s[ns++] = l->lo[i * l->d + c];
        s[ns++] = l->hi[i * l->d + c];
    }
    qsort(s, ns, sizeof *s, cmp_double);
    size_t k = 0;
    for (size_t i = 0; i < ns; i++)
        if (k == 0 || s[i] != s[k - 1]) s[k++] = s[i];
    ns = k;
    memset(delta, 0, ns * sizeof *delta);
    double width = dt->hi[c] - dt->lo[c];
    for (size_t i = 0; i < l->n; i++) {
        double a = l->lo[i * l->d + c], b = l->hi[i * l->d + c], fc = (b - a) / width;
        double share = l->value[i] * l->frac[i] / fc; /* v_l times its fraction of the other features */
        delta[position(s, ns, a)] += share;
        delta[position(s, ns, b)] -= share;
    }
    double m = 0, var = 0;
    for (size_t j = 0; j + 1 < ns; j++) {
        m += delta[j];
        double w = (s[j + 1] - s[j]) / width;
        var += w * (m - mu) * (m - mu);
    }
    return var;
}

int t2__rtree_variances(const t2__rtree *t, const t2__imp_data *dt, double *total, double *part)
{
    leaves l = {.d = dt->d};
    double *lo = malloc(dt->d * sizeof *lo), *hi = malloc(dt->d * sizeof *hi);
    int rc = lo && hi ? T2_OK : t2_seterr(T2_ENOMEM, "importance: out of memory");
    if (!rc) {
        memcpy(lo, dt->lo, dt->d * sizeof *lo);
        memcpy(hi, dt->hi, dt->d * sizeof *hi);
        rc = walk(t, 0, dt, lo, hi, &l);
    }
    double *s = NULL, *delta = NULL;
    if (!rc && (!(s = malloc((2 * l.n + 2) * sizeof *s)) || !(delta = malloc((2 * l.n + 2) * sizeof *delta))))
        rc = t2_seterr(T2_ENOMEM, "importance: out of memory");
    if (!rc) {
        double mu = 0, var = 0;
        for (size_t i = 0; i < l.n; i++) mu += l.frac[i] * l.value[i];
        for (size_t i = 0; i < l.n; i++) var += l.frac[i] * (l.value[i] - mu) * (l.value[i] - mu);
        *total = var;
        for (size_t c = 0; c < dt->d; c++) part[c] = var > 0 ? marginal_variance(&l, dt, c, mu, s, delta) : 0.0;
    }
    free(s);
    free(delta);
    free(lo);
    free(hi);
    free(l.lo);
    free(l.hi);
    free(l.value);
    free(l.frac);
    return rc;
}

int t2__importance(const t2__imp_data *dt, const t2__imp_opts *o, double *out)
{
    if (dt->n < 2 || dt->d < 1 || dt->n > UINT32_MAX)
        return t2_seterr(T2_EINVAL, "importance: needs at least 2 trials and 1 hyperparameter");
    for (size_t k = 0; k < dt->d; k++)
        if (!(dt->lo[k] < dt->hi[k])) return t2_seterr(T2_EINVAL, "importance: feature %zu has an empty domain", k);
    for (size_t i = 0; i < dt->n; i++)
        if (!isfinite(dt->y[i])) return t2_seterr(T2_EINVAL, "importance: target %zu is not finite", i);
    memset(out, 0, dt->d * sizeof *out);
    uint32_t *idx = malloc(dt->n * sizeof *idx);
    double *part = malloc(dt->d * sizeof *part);
    int rc = idx && part ? T2_OK : t2_seterr(T2_ENOMEM, "importance: out of memory");
    t2_rng rng;
    t2_rng_seed(&rng, o->seed);
    for (int k = 0; !rc && k < o->ntrees; k++) {
        for (size_t i = 0; i < dt->n; i++) idx[i] = (uint32_t)t2_rng_below(&rng, dt->n); /* bootstrap */
        t2__rtree t = {0};
        double total = 0;
        rc = t2__rtree_fit(&t, dt, idx, dt->n, o->max_depth);
        if (!rc) rc = t2__rtree_variances(&t, dt, &total, part);
        t2__rtree_free(&t);
        if (rc || !(total > 0)) continue; /* a tree with no variance says nothing (as Optuna) */
        for (size_t c = 0; c < dt->d; c++) out[c] += part[c] / total;
    }
    free(idx);
    free(part);
    if (rc) return rc;
    double sum = 0;
    for (size_t c = 0; c < dt->d; c++) sum += out[c];
    for (size_t c = 0; c < dt->d; c++) out[c] = sum > 0 ? out[c] / sum : 0.0;
    return T2_OK;
}
