/* importance.h — which hyperparameters a search's results depend on (internal): Optuna's default
 * evaluator (get_param_importances with FanovaImportanceEvaluator), fANOVA over a random forest
 * (Hutter, Hoos and Leyton-Brown, "An Efficient Approach for Assessing Hyperparameter Importance",
 * ICML 2014). Pure: numbers in, numbers out, no I/O.
 *
 * A random forest of regression trees is fit to the trials (features: one number per
 * hyperparameter; target: the searcher metric). Each tree is a piecewise-constant function over
 * the search space, a box; under the uniform measure on that box its variance splits into parts,
 * and a hyperparameter's part is the variance of the tree's marginal over it (the tree averaged
 * over every other hyperparameter). A hyperparameter's importance is that part over the tree's
 * whole variance, averaged over the trees, and the importances are then scaled to sum to 1.
 *
 * As Optuna: 64 trees, depth at most 64, a bootstrap sample per tree, every feature tried at every
 * split, splits at midpoints between neighbouring values (a leaf may hold one sample). Unlike
 * Optuna (which one-hot encodes a categorical and fits log parameters in their raw values), a
 * categorical is one feature, its choice's index, over [-0.5, k - 0.5] (so the measure is uniform
 * over the choices, as the search drew them), and the caller gives log parameters as exponents,
 * the scale the search drew them in. */
#ifndef T2_ANALYSIS_IMPORTANCE_H
#define T2_ANALYSIS_IMPORTANCE_H

#include <stddef.h>
#include <stdint.h>

typedef struct t2__imp_data {
    const double *x;       /* n rows of d features, row-major */
    const double *y;       /* n targets, finite */
    size_t n, d;
    const double *lo, *hi; /* each feature's domain, lo < hi */
} t2__imp_data;

typedef struct t2__imp_opts {
    int ntrees;     /* 64 */
    int max_depth;  /* 64 */
    uint64_t seed;  /* the bootstrap draws */
} t2__imp_opts;

/* out[0..d): each feature's importance, summing to 1; all 0 when no tree varies (the targets are
 * all equal, or no split separates them). T2_EINVAL (n < 2, d < 1, a domain with lo >= hi, a
 * non-finite target), T2_ENOMEM. */
int t2__importance(const t2__imp_data *data, const t2__imp_opts *o, double *out);

/* One regression tree (forest.c), nodes in preorder from the root at 0. */
typedef struct t2__rtree_node {
    int feature;      /* -1: a leaf */
    double threshold; /* x[feature] <= threshold goes left */
    double value;     /* a leaf's mean target */
    int left, right;
} t2__rtree_node;

typedef struct t2__rtree {
    t2__rtree_node *v;
    size_t n, cap;
} t2__rtree;

/* Fits t to the m samples idx[0..m) of data (repeats allowed: a bootstrap sample; idx is
 * reordered). T2_ENOMEM. */
int t2__rtree_fit(t2__rtree *t, const t2__imp_data *data, uint32_t *idx, size_t m, int max_depth);
void t2__rtree_free(t2__rtree *t);

/* fanova.c: the tree's variance over the search box (*total) and each feature's marginal part
 * (part[0..d)). T2_ENOMEM. */
int t2__rtree_variances(const t2__rtree *t, const t2__imp_data *data, double *total, double *part);

#endif
