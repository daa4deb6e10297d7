/* test_importance.c — fANOVA over a random forest (framework/analysis): the variance decomposition
 * of hand-built trees against their numbers worked by hand, then forests fit to functions whose
 * importances are known (additive: each feature's share of the variance). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "analysis/importance.h"
#include "check.h"
#include "t2exp/rng.h"

static const t2__imp_opts OPTS = {.ntrees = 64, .max_depth = 64, .seed = 11};

/* A tree from a preorder list of nodes. */
static t2__rtree tree_of(const t2__rtree_node *v, size_t n)
{
    t2__rtree t = {.v = malloc(n * sizeof *v), .n = n, .cap = n};
    memcpy(t.v, v, n * sizeof *v);
    return t;
}

static void test_decomposition(void)
{
    double lo[2] = {0, 0}, hi[2] = {1, 2}, total, part[2];
    t2__imp_data d = {.n = 0, .d = 2, .lo = lo, .hi = hi};
    /* x0 <= 0.5 -> 0, else 1: half the box each, variance 1/4, all of it x0's. */
    const t2__rtree_node one[] = {{0, 0.5, 0, 1, 2}, {-1, 0, 0, -1, -1}, {-1, 0, 1, -1, -1}};
    t2__rtree t = tree_of(one, 3);
    CHECK_OK(t2__rtree_variances(&t, &d, &total, part));
    CHECK_NEAR(total, 0.25, 1e-12);
    CHECK_NEAR(part[0], 0.25, 1e-12);
    CHECK_NEAR(part[1], 0.0, 1e-12);
    t2__rtree_free(&t);
    /* Additive: 2 [x0 > 0.5] + [x1 > 1.5], as a tree that splits x1 under each side of x0. Box
     * [0,1]x[0,2]: x0's half is 1/2 each way (variance 1), x1 > 1.5 a quarter (variance 3/16). */
    const t2__rtree_node add[] = {{0, 0.5, 0, 1, 4},        {1, 1.5, 0, 2, 3}, {-1, 0, 0, -1, -1},
                                  {-1, 0, 1, -1, -1},       {1, 1.5, 0, 5, 6}, {-1, 0, 2, -1, -1},
                                  {-1, 0, 3, -1, -1}};
    t = tree_of(add, 7);
    CHECK_OK(t2__rtree_variances(&t, &d, &total, part));
    CHECK_NEAR(part[0], 1.0, 1e-12);
    CHECK_NEAR(part[1], 3.0 / 16.0, 1e-12);
    CHECK_NEAR(total, 1.0 + 3.0 / 16.0, 1e-12); /* no interaction: the parts sum to the whole */
    t2__rtree_free(&t);
    /* An interaction only: x0 xor (x1 > 1): each marginal is flat, the whole variance is 1/4. */
    const t2__rtree_node x[] = {{0, 0.5, 0, 1, 4},  {1, 1.0, 0, 2, 3}, {-1, 0, 0, -1, -1}, {-1, 0, 1, -1, -1},
                                {1, 1.0, 0, 5, 6},  {-1, 0, 1, -1, -1}, {-1, 0, 0, -1, -1}};
    t = tree_of(x, 7);
    CHECK_OK(t2__rtree_variances(&t, &d, &total, part));
    CHECK_NEAR(total, 0.25, 1e-12);
    CHECK_NEAR(part[0], 0.0, 1e-12);
    CHECK_NEAR(part[1], 0.0, 1e-12);
    t2__rtree_free(&t);
    /* A threshold outside the domain: the side beyond it has no volume. */
    const t2__rtree_node out[] = {{0, 7.0, 0, 1, 2}, {-1, 0, 5, -1, -1}, {-1, 0, 9, -1, -1}};
    t = tree_of(out, 3);
    CHECK_OK(t2__rtree_variances(&t, &d, &total, part));
    CHECK_NEAR(total, 0.0, 1e-12);
    t2__rtree_free(&t);
}

/* n points drawn uniformly in the box, y = fn(x). */
static void sample(size_t n, size_t dim, const double *lo, const double *hi, double (*fn)(const double *), double *x,
                   double *y, uint64_t seed)
{
    t2_rng r;
    t2_rng_seed(&r, seed);
    for (size_t i = 0; i < n; i++) {
        for (size_t k = 0; k < dim; k++) x[i * dim + k] = lo[k] + (hi[k] - lo[k]) * t2_rng_uniform_double(&r);
        y[i] = fn(x + i * dim);
    }
}

static double f_first(const double *x) { return (x[0] - 0.3) * (x[0] - 0.3); }
static double f_weighted(const double *x) { return 3 * x[0] + x[1]; }             /* shares 9 : 1 : 0 */
static double f_choice(const double *x) { return (x[1] < 0.5 ? 0.0 : x[1] < 1.5 ? 4.0 : 1.0) + 0.1 * x[0]; }
static double f_flat(const double *x) { return x[0] * 0 + 2.5; }

static void importances(size_t n, size_t dim, const double *lo, const double *hi, double (*fn)(const double *),
                        double *out)
{
    double *x = malloc(n * dim * sizeof *x), *y = malloc(n * sizeof *y);
    sample(n, dim, lo, hi, fn, x, y, 3);
    t2__imp_data d = {.x = x, .y = y, .n = n, .d = dim, .lo = lo, .hi = hi};
    CHECK_OK(t2__importance(&d, &OPTS, out));
    free(x);
    free(y);
}

static void test_forests(void)
{
    double lo[3] = {0, 0, 0}, hi[3] = {1, 1, 1}, out[3];
    importances(200, 3, lo, hi, f_first, out);
    CHECK(out[0] > 0.95);
    CHECK_NEAR(out[0] + out[1] + out[2], 1.0, 1e-9);
    importances(400, 3, lo, hi, f_weighted, out);
    CHECK_NEAR(out[0], 0.9, 0.05);
    CHECK_NEAR(out[1], 0.1, 0.05);
    CHECK(out[2] < 0.03);
    /* A categorical as its index over [-0.5, k - 0.5]: three choices, the middle one far off. */
    double clo[2] = {0, -0.5}, chi[2] = {1, 2.5};
    double *x = malloc(300 * 2 * sizeof *x), *y = malloc(300 * sizeof *y);
    t2_rng r;
    t2_rng_seed(&r, 5);
    for (size_t i = 0; i < 300; i++) {
        x[i * 2] = t2_rng_uniform_double(&r);
        x[i * 2 + 1] = (double)t2_rng_below(&r, 3);
        y[i] = f_choice(x + i * 2);
    }
    t2__imp_data d = {.x = x, .y = y, .n = 300, .d = 2, .lo = clo, .hi = chi};
    double c[2], again[2];
    CHECK_OK(t2__importance(&d, &OPTS, c));
    CHECK(c[1] > 0.99);
    /* The same seed, the same numbers; the targets all equal: nothing matters. */
    CHECK_OK(t2__importance(&d, &OPTS, again));
    CHECK(memcmp(c, again, sizeof c) == 0);
    for (size_t i = 0; i < 300; i++) y[i] = f_flat(x + i * 2);
    CHECK_OK(t2__importance(&d, &OPTS, c));
    CHECK(c[0] == 0 && c[1] == 0);
    /* What it refuses. */
    d.n = 1;
    CHECK_RC(t2__importance(&d, &OPTS, c), T2_EINVAL);
    d.n = 300;
    y[7] = NAN;
    CHECK_RC(t2__importance(&d, &OPTS, c), T2_EINVAL);
    y[7] = 0;
    chi[0] = 0;
    CHECK_RC(t2__importance(&d, &OPTS, c), T2_EINVAL);
    free(x);
    free(y);
}

int main(void)
{
    test_decomposition();
    test_forests();
    return check_report("test_importance");
}
