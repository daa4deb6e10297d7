/* dense.c — fully connected layer, y = x W^T + b, as one sgemm per pass over the whole batch. */
#include <cblas.h>
#include <math.h>
#include <string.h>
#include "net.h"

int t2_net_dense(t2_net *net, int out_features)
{
    t2__layer l = {.ops = &t2__dense_ops};
    int rc = t2__net_tail(net, &l.in_ndim, l.in_shape);
    if (rc) return rc;
    if (out_features <= 0 || out_features > (1 << 24))
        return t2_seterr(T2_EINVAL, "t2_net_dense: out_features %d must be in 1..2^24", out_features);
    if (l.in_ndim != 1)
        return t2_seterr(T2_ESHAPE, "t2_net_dense: input is [%d, %d, %d]; add t2_net_flatten first",
                         l.in_shape[0], l.in_shape[1], l.in_shape[2]);
    l.out_ndim = 1;
    l.out_shape[0] = out_features;
    l.nweight = (size_t)out_features * (size_t)l.in_shape[0];
    l.nbias = (size_t)out_features;
    return t2__net_append(net, &l);
}

static void init(t2__layer *l, t2_rng *rng)
{
    float bound = 1.0f / sqrtf((float)l->in_size);
    t2__fill_uniform(l->w, l->nweight, bound, rng);
    t2__fill_uniform(l->b, l->nbias, bound, rng);
}

static void forward(t2__layer *l, const float *x, float *y, int n, t2_mode mode, t2_rng *rng)
{
    (void)mode;
    (void)rng;
    int in = (int)l->in_size, out = l->out_shape[0];
    for (int i = 0; i < n; i++) memcpy(y + (size_t)i * out, l->b, (size_t)out * sizeof(float));
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, out, in, 1.0f, x, in, l->w, in, 1.0f, y, out);
    if (l->fuse_relu)
        for (size_t i = 0, c = (size_t)n * out; i < c; i++) y[i] = y[i] > 0.0f ? y[i] : 0.0f;
}

/* With a fused relu, the gradient at the relu's output masked by y > 0. */
static size_t scratch_bytes(const t2__layer *l, int n)
{
    return l->fuse_relu ? (size_t)n * (size_t)l->out_shape[0] * sizeof(float) : 0;
}

static void backward(t2__layer *l, const float *x, const float *y, const float *dy, float *dx, int n)
{
    int in = (int)l->in_size, out = l->out_shape[0];
    if (l->fuse_relu) {
        float *masked = l->scratch;
        for (size_t i = 0, c = (size_t)n * out; i < c; i++) masked[i] = y[i] > 0.0f ? dy[i] : 0.0f;
        dy = masked;
    }
    /* dW[out, in] += dy^T x;  db += column sums of dy;  dx = dy W. */
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, out, in, n, 1.0f, dy, out, x, in, 1.0f, l->dw, in);
    for (int i = 0; i < n; i++) {
        const float *r = dy + (size_t)i * out;
        for (int j = 0; j < out; j++) l->db[j] += r[j];
    }
    if (dx)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, in, out, 1.0f, dy, out, l->w, in, 0.0f, dx, in);
}

const t2__layer_ops t2__dense_ops = {"dense", scratch_bytes, init, forward, backward};
