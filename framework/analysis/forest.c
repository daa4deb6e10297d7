/* forest.c — a regression tree fit by least squares (CART, as scikit-learn's DecisionTreeRegressor
 * with its defaults) for importance.h's forest.
 *
 * Each node tries every feature: its samples sorted by that feature, every boundary between two
 * distinct neighbouring values is a candidate, and the one that leaves the least squared error in
 * the two halves (prefix sums of y and y^2) wins, its threshold the midpoint. A node is a leaf when
 * it has fewer than two samples, its targets are all equal, no boundary exists, or depth runs out. */
#define _GNU_SOURCE /* qsort_r */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "analysis/importance.h"
#include "internal.h"

typedef struct fit {
    t2__rtree *t;
    const t2__imp_data *data;
    int max_depth;
    double *sum, *sq; /* prefix sums for a node's scan, m + 1 each */
} fit;

typedef struct by_feature {
    const double *x;
    size_t d, f;
} by_feature;

static int cmp_feature(const void *a, const void *b, void *ctx)
{
    const by_feature *k = ctx;
    double u = k->x[*(const uint32_t *)a * k->d + k->f], v = k->x[*(const uint32_t *)b * k->d + k->f];
    return (u > v) - (u < v);
}

static int new_node(t2__rtree *t, int *at)
{
    t2__rtree_node *v = t2__grow_array(t->v, &t->cap, t->n, sizeof *t->v, 64);
    if (!v) return t2_seterr(T2_ENOMEM, "importance: out of memory");
    t->v = v;
    *at = (int)t->n++;
    t->v[*at] = (t2__rtree_node){.feature = -1, .left = -1, .right = -1};
    return T2_OK;
}

/* The best split of idx[0..m): its feature (-1: none better than the node's own error) and threshold. */
static void best_split(fit *f, uint32_t *idx, size_t m, double node_sse, int *feature, double *threshold)
{
    const t2__imp_data *dt = f->data;
    double best = node_sse - 1e-12 * (1.0 + node_sse); /* a split must lower the error */
    *feature = -1;
    for (size_t k = 0; k < dt->d; k++) {
        by_feature key = {dt->x, dt->d, k};
        qsort_r(idx, m, sizeof *idx, cmp_feature, &key);
        f->sum[0] = f->sq[0] = 0;
        for (size_t i = 0; i < m; i++) {
            double y = dt->y[idx[i]];
            f->sum[i + 1] = f->sum[i] + y;
            f->sq[i + 1] = f->sq[i] + y * y;
        }
        for (size_t i = 1; i < m; i++) {
            double a = dt->x[idx[i - 1] * dt->d + k], b = dt->x[idx[i] * dt->d + k];
            if (!(a < b)) continue; /* equal values stay together */
            double ls = f->sum[i], rs = f->sum[m] - ls;
            double sse = (f->sq[i] - ls * ls / (double)i) + (f->sq[m] - f->sq[i] - rs * rs / (double)(m - i));
            if (sse < best) {
                best = sse;
                *feature = (int)k;
                *threshold = a + (b - a) / 2; /* no overflow, and strictly below b */
            }
        }
    }
}

static int grow(fit *f, uint32_t *idx, size_t m, int depth, int *at)
{
    int rc = new_node(f->t, at);
    if (rc) return rc;
    const t2__imp_data *dt = f->data;
    double s = 0, sq = 0;
    for (size_t i = 0; i < m; i++) {
        s += dt->y[idx[i]];
        sq += dt->y[idx[i]] * dt->y[idx[i]];
    }
    double mean = m ? s / (double)m : 0.0, sse = sq - s * mean;
    f->t->v[*at].value = mean;
    if (m < 2 || depth >= f->max_depth || !(sse > 0)) return T2_OK;
    int feature;
    double threshold = 0;
    best_split(f, idx, m, sse, &feature, &threshold);
    if (feature < 0) return T2_OK;
    size_t nl = 0; /* idx[0..nl) go left */
    for (size_t i = 0; i < m; i++)
        if (dt->x[idx[i] * dt->d + (size_t)feature] <= threshold) {
            uint32_t tmp = idx[nl];
            idx[nl++] = idx[i];
            idx[i] = tmp;
        }
    int left, right;
    if ((rc = grow(f, idx, nl, depth + 1, &left)) || (rc = grow(f, idx + nl, m - nl, depth + 1, &right))) return rc;
    t2__rtree_node *node = &f->t->v[*at]; /* the array may have moved */
    node->feature = feature;
    node->threshold = threshold;
    node->left = left;
    node->right = right;
    return T2_OK;
}

int t2__rtree_fit(t2__rtree *t, const t2__imp_data *data, uint32_t *idx, size_t m, int max_depth)
{
    fit f = {.t = t, .data = data, .max_depth = max_depth};
    f.sum = malloc((m + 1) * sizeof *f.sum);
    f.sq = malloc((m + 1) * sizeof *f.sq);
    int at, rc = f.sum && f.sq ? grow(&f, idx, m, 0, &at) : t2_seterr(T2_ENOMEM, "importance: out of memory");
    free(f.sum);
    free(f.sq);
    return rc;
}

void t2__rtree_free(t2__rtree *t)
{
    free(t->v);
    memset(t, 0, sizeof *t);
}
