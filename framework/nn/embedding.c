/* embedding.c — a lookup table (PyTorch nn.Embedding(num, dim)): a sample is T integer ids stored
 * as floats (a batch of tokens comes through the same float tensors as everything else), and its
 * output is the T rows of the weight [num, dim] they pick, shaped {1, T, dim} so that layer norm
 * (over dim), flatten, dense and global average pooling apply after it. Ids are checked before
 * any row is read, on the calling thread, so a bad one fails the forward with its sample and
 * position. The ids get no gradient: dx, if asked for, is zero. */
#include <math.h>
#include <string.h>
#include "net.h"
#include "parallel.h"

int t2_net_embedding(t2_net *net, int num_embeddings, int dim)
{
    t2__layer l = {.ops = &t2__embedding_ops, .channels = num_embeddings};
    int rc = t2__net_tail(net, &l.in_ndim, l.in_shape);
    if (rc) return rc;
    int at = t2_net_num_layers(net);
    if (num_embeddings <= 0 || num_embeddings > (1 << 24) || dim <= 0 || dim > (1 << 24) ||
        (size_t)num_embeddings * (size_t)dim > ((size_t)1 << 31))
        return t2_seterr(T2_EINVAL, "t2_net_embedding: layer %d: num_embeddings %d and dim %d must be in 1..2^24 "
                         "with at most 2^31 weights", at, num_embeddings, dim);
    if (l.in_ndim != 1)
        return t2_seterr(T2_ESHAPE, "t2_net_embedding: layer %d: input is [%d, %d, %d]; an embedding needs [T] "
                         "ids (use it first, on [T] samples)", at, l.in_shape[0], l.in_shape[1], l.in_shape[2]);
    if ((size_t)l.in_shape[0] * (size_t)dim > (1 << 24))
        return t2_seterr(T2_ESHAPE, "t2_net_embedding: layer %d: %d ids x dim %d exceed 2^24 floats per sample", at,
                         l.in_shape[0], dim);
    l.out_ndim = 3;
    l.out_shape[0] = 1;
    l.out_shape[1] = l.in_shape[0];
    l.out_shape[2] = dim;
    l.nweight = (size_t)num_embeddings * (size_t)dim;
    return t2__net_append(net, &l);
}

/* PyTorch's default: N(0, 1). */
static void init(t2__layer *l, t2_rng *rng)
{
    for (size_t i = 0; i < l->nweight; i++) l->w[i] = t2_rng_normal(rng);
}

typedef struct {
    t2__layer *l;
    const float *x, *dy;
    float *y;
    size_t count;  /* ids in the batch */
    int parts;
} emb_job;

/* Part t copies the rows for ids [b, e) of the batch. */
static void forward_part(void *ctx, size_t tb, size_t te)
{
    const emb_job *j = ctx;
    size_t dim = (size_t)j->l->out_shape[2];
    for (size_t t = tb; t < te; t++) {
        size_t b = j->count * t / (size_t)j->parts, e = j->count * (t + 1) / (size_t)j->parts;
        for (size_t i = b; i < e; i++) memcpy(j->y + i * dim, j->l->w + (size_t)j->x[i] * dim, dim * sizeof(float));
    }
}

static void forward(t2__layer *l, const float *x, float *y, int n, t2_mode mode, t2_rng *rng)
{
    (void)mode;
    (void)rng;
    size_t T = (size_t)l->in_shape[0], count = (size_t)n * T;
    float num = (float)l->channels;
    for (size_t i = 0; i < count; i++) {
        float v = x[i];
        /* In range first: the integer test converts, and converting an out-of-range float is UB. */
        if (!(v >= 0.0f && v < num) || v != (float)(int)v) {
            l->rc = t2_seterr(T2_EINVAL, "sample %zu, position %zu: id %g is not an integer in [0, %d)", i / T, i % T,
                              (double)v, l->channels);
            return;
        }
    }
    emb_job j = {.l = l, .x = x, .y = y, .count = count};
    j.parts = l->nparts < 1 ? 1 : (size_t)l->nparts > count ? (int)count : l->nparts;
    t2__parallel_for((size_t)j.parts, 1, forward_part, &j);
}

/* Part t owns the weight rows of ids [v0, v1): it scans every position in batch order and adds
 * the gradient of those that picked one of its rows, so the sums (a repeated id adds several
 * times) do not depend on the thread count and no two parts write the same row. */
static void backward_part(void *ctx, size_t tb, size_t te)
{
    const emb_job *j = ctx;
    const t2__layer *l = j->l;
    size_t dim = (size_t)l->out_shape[2], num = (size_t)l->channels;
    for (size_t t = tb; t < te; t++) {
        size_t v0 = num * t / (size_t)j->parts, v1 = num * (t + 1) / (size_t)j->parts;
        for (size_t i = 0; i < j->count && v1 > v0; i++) {
            size_t id = (size_t)j->x[i];
            if (id < v0 || id >= v1) continue;
            float *dw = l->dw + id * dim;
            const float *g = j->dy + i * dim;
            for (size_t k = 0; k < dim; k++) dw[k] += g[k];
        }
    }
}

static void backward(t2__layer *l, const float *x, const float *y, const float *dy, float *dx, int n)
{
    (void)y;
    size_t count = (size_t)n * (size_t)l->in_shape[0];
    if (dx) memset(dx, 0, count * sizeof(float));
    emb_job j = {.l = l, .x = x, .dy = dy, .count = count};
    j.parts = l->nparts < 1 ? 1 : l->nparts > l->channels ? l->channels : l->nparts;
    t2__parallel_for((size_t)j.parts, 1, backward_part, &j);
}

const t2__layer_ops t2__embedding_ops = {"embedding", NULL, init, forward, backward};
