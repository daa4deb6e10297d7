/* tensor.c — the tensor view and its owning allocation. */
#include <stdio.h>
#include <string.h>
#include "internal.h"
#include "t2exp/tensor.h"

size_t t2_tensor_numel(const t2_tensor *t)
{
    if (!t || t->ndim < 1 || t->ndim > T2_MAX_DIMS) return 0;
    size_t n = 1;
    for (int i = 0; i < t->ndim; i++) {
        if (t->shape[i] <= 0) return 0;
        n *= (size_t)t->shape[i];
    }
    return n;
}

t2_tensor t2_tensor_view(float *data, int ndim, const int *shape)
{
    t2_tensor t = {.data = data, .ndim = ndim, .shape = {1, 1, 1, 1}};
    for (int i = 0; i < ndim && i < T2_MAX_DIMS; i++) t.shape[i] = shape[i];
    return t;
}

int t2_tensor_alloc(t2_tensor *t, int ndim, const int *shape)
{
    if (!t || !shape) return t2_seterr(T2_EINVAL, "t2_tensor_alloc: NULL argument");
    memset(t, 0, sizeof *t);
    if (ndim < 1 || ndim > T2_MAX_DIMS)
        return t2_seterr(T2_EINVAL, "t2_tensor_alloc: ndim %d is not in 1..%d", ndim, T2_MAX_DIMS);
    size_t n = 1;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] <= 0)
            return t2_seterr(T2_EINVAL, "t2_tensor_alloc: dimension %d is %d (must be > 0)", i, shape[i]);
        if (t2__mul_size(n, (size_t)shape[i], &n) != 0)
            return t2_seterr(T2_EINVAL, "t2_tensor_alloc: shape overflows size_t");
    }
    float *d = t2__alloc_aligned(n, sizeof(float));
    if (!d) return t2_seterr(T2_ENOMEM, "t2_tensor_alloc: cannot allocate %zu floats", n);
    *t = t2_tensor_view(d, ndim, shape);
    return T2_OK;
}

void t2_tensor_free(t2_tensor *t)
{
    if (!t) return;
    t2__free_aligned(t->data);
    memset(t, 0, sizeof *t);
}

int t2_tensor_same_shape(const t2_tensor *a, const t2_tensor *b)
{
    if (a->ndim != b->ndim) return 0;
    for (int i = 0; i < a->ndim; i++)
        if (a->shape[i] != b->shape[i]) return 0;
    return 1;
}

const char *t2_tensor_shape_str(const t2_tensor *t, char *buf, size_t len)
{
    if (!buf || len == 0) return buf;
    size_t off = 0;
    int w = snprintf(buf, len, "[");
    off = w > 0 ? (size_t)w : 0;
    for (int i = 0; t && i < t->ndim && off < len; i++) {
        w = snprintf(buf + off, len - off, i ? ", %d" : "%d", t->shape[i]);
        if (w < 0) break;
        off += (size_t)w;
    }
    if (off < len) snprintf(buf + off, len - off, "]");
    return buf;
}
