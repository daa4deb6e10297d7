/* split.c — deterministic train/validation splits as borrowed views, and per-element input
 * statistics for standardising features (computed on the training part only). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "data_internal.h"
#include "internal.h"

static void view_destroy(t2_dataset *ds) { free(ds->impl); /* the map */ }

/* Never called: the loader and t2__dataset_read resolve a view to its parent first. */
static int view_get(const t2_dataset *ds, uint32_t i, float *x, float *target, int32_t *label)
{
    return t2__dataset_read(ds->parent, ds->map[i], x, target, label);
}

static const struct t2__dataset_ops view_ops = {"split", view_get, view_destroy};

static int make_view(t2_dataset **out, const t2_dataset *root, uint32_t *map, uint32_t n)
{
    int rc = t2__dataset_new(out, &view_ops, n, root->ndim, root->shape);
    if (rc) {
        free(map);
        return rc;
    }
    t2_dataset *v = *out;
    v->num_classes = root->num_classes;
    v->target_width = root->target_width;
    v->parent = root;
    v->map = map;
    v->impl = map;
    return T2_OK;
}

int t2_dataset_split(t2_dataset *ds, double fraction, uint64_t seed, t2_dataset **first, t2_dataset **second)
{
    if (first) *first = NULL;
    if (second) *second = NULL;
    if (!ds || !first || !second) return t2_seterr(T2_EINVAL, "t2_dataset_split: NULL argument");
    if (!(fraction >= 0.0 && fraction <= 1.0))
        return t2_seterr(T2_EINVAL, "t2_dataset_split: fraction %g (must be in [0, 1])", fraction);
    uint32_t n = ds->n, k = (uint32_t)llround(fraction * (double)n);
    if (k == 0 || k == n)
        return t2_seterr(T2_EINVAL, "t2_dataset_split: %u of %u samples at fraction %g leaves a part empty", k, n,
                         fraction);
    /* A view of a view maps straight to the root, so reads never chain. */
    const t2_dataset *root = ds->map ? ds->parent : ds;
    uint32_t *perm = malloc((size_t)n * sizeof *perm);
    uint8_t *in_first = calloc(n, 1);
    uint32_t *m1 = malloc((size_t)k * sizeof *m1), *m2 = malloc((size_t)(n - k) * sizeof *m2);
    if (!perm || !in_first || !m1 || !m2) {
        free(perm);
        free(in_first);
        free(m1);
        free(m2);
        return t2_seterr(T2_ENOMEM, "t2_dataset_split: out of memory for %u samples", n);
    }
    for (uint32_t i = 0; i < n; i++) perm[i] = i;
    t2_rng r;
    t2_rng_seed(&r, seed);
    t2_rng_shuffle_u32(&r, perm, n);
    for (uint32_t i = 0; i < k; i++) in_first[perm[i]] = 1;
    /* Each part keeps ds's order: an unshuffled loader reads it as the file is laid out. */
    uint32_t a = 0, b = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t src = ds->map ? ds->map[i] : i;
        if (in_first[i]) m1[a++] = src;
        else m2[b++] = src;
    }
    free(perm);
    free(in_first);
    int rc = make_view(first, root, m1, k);
    if (rc) {
        free(m2);
        return rc;
    }
    if ((rc = make_view(second, root, m2, n - k)) != 0) {
        t2_dataset_free(*first);
        *first = NULL;
    }
    return rc;
}

int t2_dataset_feature_stats(const t2_dataset *ds, float *mean, float *std)
{
    if (!ds || !mean || !std) return t2_seterr(T2_EINVAL, "t2_dataset_feature_stats: NULL argument");
    size_t m = ds->numel;
    double *sum = calloc(m, sizeof *sum), *sq = calloc(m, sizeof *sq);
    float *x = malloc(m * sizeof *x);
    int rc = T2_OK;
    if (!sum || !sq || !x) {
        rc = t2_seterr(T2_ENOMEM, "t2_dataset_feature_stats: out of memory");
        goto done;
    }
    /* Two passes (mean, then squared deviations): no cancellation for features far from 0. */
    for (uint32_t i = 0; i < ds->n; i++) {
        if ((rc = t2__dataset_read(ds, i, x, NULL, NULL)) != 0) goto done;
        for (size_t j = 0; j < m; j++) sum[j] += x[j];
    }
    for (size_t j = 0; j < m; j++) sum[j] /= ds->n;
    for (uint32_t i = 0; i < ds->n; i++) {
        if ((rc = t2__dataset_read(ds, i, x, NULL, NULL)) != 0) goto done;
        for (size_t j = 0; j < m; j++) {
            double d = x[j] - sum[j];
            sq[j] += d * d;
        }
    }
    for (size_t j = 0; j < m; j++) {
        mean[j] = (float)sum[j];
        std[j] = (float)sqrt(sq[j] / ds->n);
    }
done:
    free(sum);
    free(sq);
    free(x);
    return rc;
}
