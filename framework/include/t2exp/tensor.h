/* t2exp/tensor.h — float32 tensors (NCHW) and batches.
 *
 * A t2_tensor is a plain view: a data pointer plus a shape. It does not own its memory unless it
 * was made by t2_tensor_alloc (then free it with t2_tensor_free). Shapes are row-major, outermost
 * first: images are [N, C, H, W], dense activations [N, F]. */
#ifndef T2EXP_TENSOR_H
#define T2EXP_TENSOR_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define T2_MAX_DIMS 4

typedef struct t2_tensor {
    float *data;
    int ndim;                 /* 1..T2_MAX_DIMS */
    int shape[T2_MAX_DIMS];   /* unused trailing entries are 1 */
} t2_tensor;

/* Number of elements (product of the shape); 0 for an empty/zero tensor. */
size_t t2_tensor_numel(const t2_tensor *t);

/* Fills *t with a shape and a freshly allocated, zeroed buffer (64-byte aligned).
 * T2_EINVAL for ndim out of 1..4 or a non-positive dimension; T2_ENOMEM on allocation failure. */
int t2_tensor_alloc(t2_tensor *t, int ndim, const int *shape);

/* Frees a buffer made by t2_tensor_alloc and zeroes *t. Accepts NULL and zeroed tensors. */
void t2_tensor_free(t2_tensor *t);

/* A view of `data` with the given shape (no allocation). */
t2_tensor t2_tensor_view(float *data, int ndim, const int *shape);

/* 1 if a and b have the same ndim and shape. */
int t2_tensor_same_shape(const t2_tensor *a, const t2_tensor *b);

/* Formats the shape as "[64, 1, 28, 28]" into buf (always NUL-terminated); returns buf. */
const char *t2_tensor_shape_str(const t2_tensor *t, char *buf, size_t len);

/* One batch of samples as a loader delivers it: inputs x with shape [n, ...sample shape],
 * integer class labels (or NULL for unlabelled data), the dataset indices the samples came from
 * (useful to check shuffling/sharding), and float targets (or NULL for a dataset without them).
 * The loader owns all the buffers. */
typedef struct t2_batch {
    t2_tensor x;
    int32_t *labels;
    const uint32_t *indices;
    int n;                    /* samples in this batch (= x.shape[0]) */
    int64_t epoch;            /* epoch the batch belongs to */
    int64_t index;            /* batch index within the epoch */
    float *targets;           /* [n, target_width] float targets, or NULL when the dataset has none */
    int target_width;         /* floats per sample in targets (0 when none) */
} t2_batch;

#ifdef __cplusplus
}
#endif
#endif
