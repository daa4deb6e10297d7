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
 * pool), always by the part count P and the shapes, never by the thread count, and so that no
 * two parts write the same output (each output is one GEMM's dot product over all of K):
 * - forward: a grid of a sample groups by b feature groups (a*b = P), the one that reads the
 *   least: a part reads its samples' x and its features' W, so the parts read b copies of x and
 *   a copies of W in all (splitting by samples alone, 16 parts each read all 4.7 MB of the seeds'
 *   CNN's W for 4 samples);
 * - backward: dW and dx by input features (columns), each part reading dy (small) and its
 *   columns of x and W once; db after, in one pass. */
typedef struct {
    t2__layer *l;
    const float *x, *y, *dy;
    float *out, *dx;
    int n, parts, groups; /* groups: forward's sample groups (a); parts / groups feature groups */
} dense_job;

/* Forward's grid: the divisor a of parts (sample groups) minimizing b*n + a*out, the floats of
 * x and W read per input feature, with b = parts / a. */
static int sample_groups(int parts, int n, int out)
{
    int best = 1;
    double cost = -1;
    for (int a = 1; a <= parts; a++) {
        if (parts % a || a > n || parts / a > out) continue;
        double c = (double)(parts / a) * n + (double)a * out;
        if (cost < 0 || c < cost) cost = c, best = a;
    }
    return best;
}

static void forward_part(void *ctx, size_t tb, size_t te)
{
    const dense_job *j = ctx;
    const t2__layer *l = j->l;
    int in = (int)l->in_size, out = l->out_shape[0], a = j->groups, b = j->parts / a;
    for (size_t t = tb; t < te; t++) {
        int ga = (int)t / b, gb = (int)t % b;
        int s0 = j->n * ga / a, s1 = j->n * (ga + 1) / a, r0 = out * gb / b, r1 = out * (gb + 1) / b;
        if (s1 <= s0 || r1 <= r0) continue;
        float *y = j->out + (size_t)s0 * out + r0;
        for (int i = s0; i < s1; i++) memcpy(j->out + (size_t)i * out + r0, l->b + r0, (size_t)(r1 - r0) * sizeof(float));
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, s1 - s0, r1 - r0, in, 1.0f, j->x + (size_t)s0 * in, in,
                    l->w + (size_t)r0 * in, in, 1.0f, y, out);
        if (l->fuse_relu)
            for (int i = 0; i < s1 - s0; i++)
                for (int r = 0; r < r1 - r0; r++) y[(size_t)i * out + r] = y[(size_t)i * out + r] > 0.0f ? y[(size_t)i * out + r] : 0.0f;
    }
}

/* At most parts pieces of at least MIN_COLS input features each (fewer pieces for narrow layers:
 * the 128 -> 10 layer is not worth 16 GEMMs). */
#define MIN_COLS 64
static int column_parts(int parts, int in)
{
    int c = in / MIN_COLS;
    return c < 1 ? 1 : c < parts ? c : parts;
}

static void forward(t2__layer *l, const float *x, float *y, int n, t2_mode mode, t2_rng *rng)
{
    (void)mode;
    (void)rng;
    int parts = l->nparts < 1 ? 1 : l->nparts;
    dense_job j = {.l = l, .x = x, .out = y, .n = n, .parts = parts};
    j.groups = sample_groups(parts, n, l->out_shape[0]);
    t2__parallel_for((size_t)j.parts, 1, forward_part, &j);
}

/* With a fused relu, the gradient at the relu's output masked by y > 0. */
static size_t scratch_bytes(const t2__layer *l, int n)
{
    return l->fuse_relu ? (size_t)n * (size_t)l->out_shape[0] * sizeof(float) : 0;
}

/* Part t: input features [k0, k1) of dW (dW[:, k0:k1] += dy^T x[:, k0:k1]) and of dx
 * (dx[:, k0:k1] = dy W[:, k0:k1]). */
static void backward_part(void *ctx, size_t tb, size_t te)
{
    const dense_job *j = ctx;
    const t2__layer *l = j->l;
    int in = (int)l->in_size, out = l->out_shape[0], n = j->n;
    for (size_t t = tb; t < te; t++) {
        int k0 = (int)((size_t)in * t / (size_t)j->parts), k1 = (int)((size_t)in * (t + 1) / (size_t)j->parts);
        if (k1 <= k0) continue;
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, out, k1 - k0, n, 1.0f, j->dy, out, j->x + k0, in, 1.0f,
                    l->dw + k0, in);
        if (j->dx)
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, k1 - k0, out, 1.0f, j->dy, out, l->w + k0, in,
                        0.0f, j->dx + k0, in);
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
    dense_job j = {.l = l, .x = x, .dy = dy, .dx = dx, .n = n};
    j.parts = column_parts(l->nparts < 1 ? 1 : l->nparts, (int)l->in_size);
    t2__parallel_for((size_t)j.parts, 1, backward_part, &j);
    for (int i = 0; i < n; i++) {
        const float *g = dy + (size_t)i * out;
        for (int r = 0; r < out; r++) l->db[r] += g[r];
    }
}

const t2__layer_ops t2__dense_ops = {"dense", scratch_bytes, init, forward, backward};
