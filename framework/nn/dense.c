/* dense.c — fully connected layer, y = x W^T + b, as one sgemm per pass over the whole batch. */
#include <cblas.h>
#include <math.h>
#include <string.h>
#include "net.h"
#include "parallel.h"

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

/* The GEMMs are split over the pool's threads by hand (OpenBLAS runs single-threaded under the
 * pool): forward and dx by samples, dW and db by output features, so parts never share output. */
typedef struct {
    t2__layer *l;
    const float *x, *y, *dy;
    float *out, *dx;
    int n, parts;
} dense_job;

static void forward_part(void *ctx, size_t tb, size_t te)
{
    const dense_job *j = ctx;
    const t2__layer *l = j->l;
    int in = (int)l->in_size, out = l->out_shape[0];
    for (size_t t = tb; t < te; t++) {
        int s0 = (int)((size_t)j->n * t / (size_t)j->parts), s1 = (int)((size_t)j->n * (t + 1) / (size_t)j->parts);
        float *y = j->out + (size_t)s0 * out;
        for (int i = s0; i < s1; i++) memcpy(j->out + (size_t)i * out, l->b, (size_t)out * sizeof(float));
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, s1 - s0, out, in, 1.0f, j->x + (size_t)s0 * in, in,
                    l->w, in, 1.0f, y, out);
        if (l->fuse_relu)
            for (size_t i = 0, c = (size_t)(s1 - s0) * out; i < c; i++) y[i] = y[i] > 0.0f ? y[i] : 0.0f;
    }
}

static void forward(t2__layer *l, const float *x, float *y, int n, t2_mode mode, t2_rng *rng)
{
    (void)mode;
    (void)rng;
    dense_job j = {.l = l, .x = x, .out = y, .n = n, .parts = l->nparts < n ? l->nparts : n};
    if (j.parts < 1) j.parts = 1;
    t2__parallel_for((size_t)j.parts, 1, forward_part, &j);
}

/* With a fused relu, the gradient at the relu's output masked by y > 0. */
static size_t scratch_bytes(const t2__layer *l, int n)
{
    return l->fuse_relu ? (size_t)n * (size_t)l->out_shape[0] * sizeof(float) : 0;
}

/* Part t: output features [r0, r1) of dW and db, and samples [s0, s1) of dx. */
static void backward_part(void *ctx, size_t tb, size_t te)
{
    const dense_job *j = ctx;
    const t2__layer *l = j->l;
    int in = (int)l->in_size, out = l->out_shape[0], n = j->n;
    for (size_t t = tb; t < te; t++) {
        int r0 = (int)((size_t)out * t / (size_t)j->parts), r1 = (int)((size_t)out * (t + 1) / (size_t)j->parts);
        if (r1 > r0) {
            /* dW[r0:r1, :] += dy[:, r0:r1]^T x */
            cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, r1 - r0, in, n, 1.0f, j->dy + r0, out, j->x, in,
                        1.0f, l->dw + (size_t)r0 * in, in);
            for (int i = 0; i < n; i++) {
                const float *g = j->dy + (size_t)i * out;
                for (int r = r0; r < r1; r++) l->db[r] += g[r];
            }
        }
        int s0 = (int)((size_t)n * t / (size_t)j->parts), s1 = (int)((size_t)n * (t + 1) / (size_t)j->parts);
        if (j->dx && s1 > s0)
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, s1 - s0, in, out, 1.0f, j->dy + (size_t)s0 * out,
                        out, l->w, in, 0.0f, j->dx + (size_t)s0 * in, in);
    }
}

static void backward(t2__layer *l, const float *x, const float *y, const float *dy, float *dx, int n)
{
    int out = l->out_shape[0];
    if (l->fuse_relu) {
        float *masked = l->scratch;
        for (size_t i = 0, c = (size_t)n * out; i < c; i++) masked[i] = y[i] > 0.0f ? dy[i] : 0.0f;
        dy = masked;
    }
    int parts = l->nparts < n ? l->nparts : n;
    dense_job j = {.l = l, .x = x, .dy = dy, .dx = dx, .n = n, .parts = parts < 1 ? 1 : parts};
    t2__parallel_for((size_t)j.parts, 1, backward_part, &j);
}

const t2__layer_ops t2__dense_ops = {"dense", scratch_bytes, init, forward, backward};
