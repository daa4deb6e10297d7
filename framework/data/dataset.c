/* dataset.c — the dataset handle's common functions and the in-memory tensor dataset. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "data_internal.h"
#include "internal.h"
#include "vector_clones.h"

int t2__dataset_new(t2_dataset **out, const struct t2__dataset_ops *ops, int64_t n, int ndim,
                    const int *shape)
{
    *out = NULL;
    if (n <= 0 || n > T2__MAX_SAMPLES)
        return t2_seterr(T2_EINVAL, "dataset: %lld samples (must be 1..%lld)", (long long)n,
                         (long long)T2__MAX_SAMPLES);
    if (ndim != 1 && ndim != 3)
        return t2_seterr(T2_EINVAL, "dataset: sample ndim %d (must be 1 or 3)", ndim);
    size_t numel = 1;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] <= 0)
            return t2_seterr(T2_EINVAL, "dataset: sample dimension %d is %d", i, shape[i]);
        if (t2__mul_size(numel, (size_t)shape[i], &numel) != 0)
            return t2_seterr(T2_EINVAL, "dataset: sample size overflows");
    }
    /* Whole-dataset byte counts (n * numel * 4) are computed in size_t elsewhere; keep them sane. */
    size_t total;
    if (t2__mul_size(numel, (size_t)n, &total) != 0 || t2__mul_size(total, sizeof(float), &total) != 0)
        return t2_seterr(T2_EINVAL, "dataset: %lld samples of %zu values overflow", (long long)n, numel);
    t2_dataset *ds = calloc(1, sizeof *ds);
    if (!ds) return t2_seterr(T2_ENOMEM, "dataset: out of memory");
    ds->ops = ops;
    ds->n = (uint32_t)n;
    ds->ndim = ndim;
    ds->shape[0] = ds->shape[1] = ds->shape[2] = 1;
    for (int i = 0; i < ndim; i++) ds->shape[i] = shape[i];
    ds->numel = numel;
    *out = ds;
    return T2_OK;
}

/* A true division (v * (1/255.0f) differs in the last bit for half the values), which is what
 * bounds a pass over a u8 dataset; the widest vector unit the CPU has divides 16 at a time
 * (AVX-512) instead of the baseline's 4, so the function is compiled once per unit and picked at
 * load time. The results are the same bits on every path. */
T2__VECTOR_CLONES
void t2__u8_to_unit(float *dst, const uint8_t *src, size_t n)
{
    for (size_t j = 0; j < n; j++) dst[j] = (float)src[j] / 255.0f;
}

int64_t t2_dataset_len(const t2_dataset *ds) { return ds ? (int64_t)ds->n : 0; }

int t2_dataset_num_classes(const t2_dataset *ds) { return ds ? ds->num_classes : 0; }

int t2_dataset_target_width(const t2_dataset *ds) { return ds ? ds->target_width : 0; }

int t2_dataset_sample_shape(const t2_dataset *ds, int *ndim, int shape[3])
{
    if (!ds || !ndim || !shape) return t2_seterr(T2_EINVAL, "t2_dataset_sample_shape: NULL argument");
    *ndim = ds->ndim;
    for (int i = 0; i < 3; i++) shape[i] = ds->shape[i];
    return T2_OK;
}

int t2__dataset_read(const t2_dataset *ds, uint32_t i, float *x, float *target, int32_t *label)
{
    ds = t2__dataset_resolve(ds, &i);
    if (ds->pix_type == T2__PIX_U8) {
        t2__u8_to_unit(x, (const uint8_t *)ds->pixels + (size_t)i * ds->numel, ds->numel);
    } else if (ds->pix_type == T2__PIX_F32) {
        memcpy(x, (const float *)ds->pixels + (size_t)i * ds->numel, ds->numel * sizeof(float));
    } else {
        return ds->ops->get(ds, i, x, ds->target_width > 0 ? target : NULL, label);
    }
    if (label) *label = t2__dataset_label(ds, i);
    if (target && ds->target_width > 0)
        memcpy(target, ds->targets + (size_t)i * ds->target_width, (size_t)ds->target_width * sizeof(float));
    return T2_OK;
}

int t2_dataset_get_sample(const t2_dataset *ds, int64_t i, float *x, float *target, int32_t *label)
{
    if (!ds || !x) return t2_seterr(T2_EINVAL, "t2_dataset_get: NULL argument");
    if (i < 0 || i >= (int64_t)ds->n)
        return t2_seterr(T2_EINVAL, "t2_dataset_get: index %lld out of range 0..%u", (long long)i,
                         ds->n - 1);
    return t2__dataset_read(ds, (uint32_t)i, x, target, label);
}

int t2_dataset_get(const t2_dataset *ds, int64_t i, float *x, int32_t *label)
{
    return t2_dataset_get_sample(ds, i, x, NULL, label);
}

void t2_dataset_free(t2_dataset *ds)
{
    if (!ds) return;
    if (ds->ops && ds->ops->destroy) ds->ops->destroy(ds);
    free(ds);
}

/* ---- in-memory tensor dataset ---- */

typedef struct {
    float *x;        /* owned copies (NULL when borrowed) */
    int32_t *labels;
    float *targets;
} tensor_impl;

static void tensor_destroy(t2_dataset *ds)
{
    tensor_impl *t = ds->impl;
    if (!t) return;
    t2__free_aligned(t->x);
    free(t->labels);
    free(t->targets);
    free(t);
}

static const struct t2__dataset_ops tensor_ops = {"tensor", NULL, tensor_destroy};

int t2_dataset_from_tensor(t2_dataset **out, const t2_tensor *x, const int32_t *labels, int copy)
{
    return t2_dataset_from_tensor_targets(out, x, NULL, labels, copy);
}

int t2_dataset_from_tensor_targets(t2_dataset **out, const t2_tensor *x, const t2_tensor *targets,
                                   const int32_t *labels, int copy)
{
    if (!out) return t2_seterr(T2_EINVAL, "t2_dataset_from_tensor: NULL out");
    *out = NULL;
    char a[64], b[64];
    if (targets && (!targets->data || targets->ndim != 2 || !x || targets->shape[0] != x->shape[0] ||
                    targets->shape[1] < 1 || targets->shape[1] > T2__MAX_DIM))
        return t2_seterr(T2_EINVAL, "t2_dataset_from_tensor: targets %s must be [N, W] (W 1..%d) for inputs %s",
                         t2_tensor_shape_str(targets, a, sizeof a), T2__MAX_DIM,
                         x ? t2_tensor_shape_str(x, b, sizeof b) : "NULL");
    if (!x || !x->data) return t2_seterr(T2_EINVAL, "t2_dataset_from_tensor: NULL tensor");
    if (x->ndim != 2 && x->ndim != 4)
        return t2_seterr(T2_EINVAL, "t2_dataset_from_tensor: ndim %d (want [N, F] or [N, C, H, W])",
                         x->ndim);
    int shape[3] = {1, 1, 1};
    for (int i = 1; i < x->ndim; i++) shape[i - 1] = x->shape[i];
    t2_dataset *ds = NULL;
    tensor_impl *impl = NULL;
    int rc = t2__dataset_new(&ds, &tensor_ops, x->shape[0], x->ndim - 1, shape);
    if (rc) return rc;
    int32_t maxlab = -1;
    for (uint32_t i = 0; labels && i < ds->n; i++) {
        if (labels[i] < 0) {
            rc = t2_seterr(T2_EINVAL, "t2_dataset_from_tensor: label %u is %d (must be >= 0)", i,
                           labels[i]);
            goto fail;
        }
        if (labels[i] > maxlab) maxlab = labels[i];
    }
    if (maxlab == INT32_MAX) {
        rc = t2_seterr(T2_EINVAL, "t2_dataset_from_tensor: label %d too large", maxlab);
        goto fail;
    }
    if (targets) {
        size_t nt = (size_t)ds->n * (size_t)targets->shape[1];
        for (size_t k = 0; k < nt; k++)
            if (!isfinite(targets->data[k])) {
                rc = t2_seterr(T2_EINVAL, "t2_dataset_from_tensor: target %zu of sample %zu is %g (must be finite)",
                               k % (size_t)targets->shape[1], k / (size_t)targets->shape[1], (double)targets->data[k]);
                goto fail;
            }
        ds->target_width = targets->shape[1];
        ds->targets = targets->data;
    }
    ds->num_classes = labels ? maxlab + 1 : 0;
    ds->pix_type = T2__PIX_F32;
    ds->pixels = x->data;
    ds->labels32 = labels;
    if (copy) {
        impl = calloc(1, sizeof *impl);
        if (!impl) goto nomem;
        ds->impl = impl;
        impl->x = t2__alloc_aligned((size_t)ds->n * ds->numel, sizeof(float));
        if (!impl->x) goto nomem;
        memcpy(impl->x, x->data, (size_t)ds->n * ds->numel * sizeof(float));
        ds->pixels = impl->x;
        if (labels) {
            impl->labels = malloc((size_t)ds->n * sizeof(int32_t));
            if (!impl->labels) goto nomem;
            memcpy(impl->labels, labels, (size_t)ds->n * sizeof(int32_t));
            ds->labels32 = impl->labels;
        }
        if (targets) {
            size_t bytes = (size_t)ds->n * (size_t)ds->target_width * sizeof(float);
            if (!(impl->targets = malloc(bytes))) goto nomem;
            memcpy(impl->targets, targets->data, bytes);
            ds->targets = impl->targets;
        }
    }
    *out = ds;
    return T2_OK;
nomem:
    rc = t2_seterr(T2_ENOMEM, "t2_dataset_from_tensor: cannot copy %u samples", ds->n);
fail:
    t2_dataset_free(ds);
    return rc;
}
