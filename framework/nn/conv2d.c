/* conv2d.c — 2-d convolution as batched im2col + one large sgemm per pass.
 *
 * Chunks of g samples are unfolded into one column matrix col [C*k*k, g*P] (P = output pixels
 * per image), so forward is one W[OC, K] x col GEMM per chunk and backward two (dW and dcol): no
 * small per-sample GEMMs. The GEMM result is [OC, g*P]; turning it into NCHW [g, OC, P] is a copy
 * of contiguous P-float blocks (fused with the bias add). */
#include <cblas.h>
#include <math.h>
#include <string.h>
#include "im2col.h"
#include "net.h"
#include "parallel.h"

static t2__conv_geom geom(const t2__layer *l)
{
    t2__conv_geom g = {l->in_shape[0], l->in_shape[1], l->in_shape[2], l->kernel, l->stride,
                       l->padding, l->out_shape[1], l->out_shape[2]};
    return g;
}

int t2_net_conv2d(t2_net *net, int out_channels, int kernel, int stride, int padding)
{
    t2__layer l = {.ops = &t2__conv2d_ops, .kernel = kernel, .stride = stride, .padding = padding};
    int rc = t2__net_tail(net, &l.in_ndim, l.in_shape);
    if (rc) return rc;
    if (l.in_ndim != 3)
        return t2_seterr(T2_ESHAPE, "t2_net_conv2d: input is [%d]; conv2d needs [C, H, W]", l.in_shape[0]);
    if (out_channels <= 0 || out_channels > 65536 || kernel <= 0 || kernel > 64 || stride <= 0 ||
        stride > 64 || padding < 0 || padding >= kernel)
        return t2_seterr(T2_EINVAL,
                         "t2_net_conv2d: out_channels=%d kernel=%d stride=%d padding=%d (need out_channels "
                         "1..65536, kernel 1..64, stride 1..64, 0 <= padding < kernel)",
                         out_channels, kernel, stride, padding);
    int h = l.in_shape[1] + 2 * padding - kernel, w = l.in_shape[2] + 2 * padding - kernel;
    if (h < 0 || w < 0)
        return t2_seterr(T2_ESHAPE, "t2_net_conv2d: kernel %d with padding %d does not fit the %dx%d input",
                         kernel, padding, l.in_shape[1], l.in_shape[2]);
    l.out_ndim = 3;
    l.out_shape[0] = out_channels;
    l.out_shape[1] = h / stride + 1;
    l.out_shape[2] = w / stride + 1;
    l.nweight = (size_t)out_channels * (size_t)l.in_shape[0] * (size_t)(kernel * kernel);
    l.nbias = (size_t)out_channels;
    return t2__net_append(net, &l);
}

/* Samples per GEMM chunk: enough columns for an efficient GEMM, few enough that the column
 * matrix (about 4 MB) stays in cache between im2col, the GEMM and col2im. */
static int chunk_samples(const t2__layer *l, int n)
{
    size_t per = (size_t)l->in_shape[0] * (size_t)(l->kernel * l->kernel) * (size_t)(l->out_shape[1] * l->out_shape[2]);
    size_t g = ((size_t)1 << 20) / (per ? per : 1);
    if (g < 1) g = 1;
    return g < (size_t)n ? (int)g : n;
}

/* Scratch: the column matrix and the [OC, g*P] GEMM output for one chunk of g samples. */
static size_t scratch_bytes(const t2__layer *l, int n)
{
    size_t g = (size_t)chunk_samples(l, n), P = (size_t)(l->out_shape[1] * l->out_shape[2]);
    size_t K = (size_t)l->in_shape[0] * (size_t)(l->kernel * l->kernel);
    return g * P * (K + (size_t)l->out_shape[0]) * sizeof(float);
}

static void init(t2__layer *l, t2_rng *rng)
{
    float fan_in = (float)(l->in_shape[0] * l->kernel * l->kernel);
    float bound = 1.0f / sqrtf(fan_in);
    t2__fill_uniform(l->w, l->nweight, bound, rng);
    t2__fill_uniform(l->b, l->nbias, bound, rng);
}

/* One chunk's work, shared by the parallel ranges below. */
typedef struct {
    const t2__layer *l;
    t2__conv_geom g;
    const float *x, *dy;
    float *y, *dx, *col, *tmp;
    int i0, cnt, OC, P;
} chunk;

/* Samples [b, e) of the chunk: unfold into their columns of col [K, cnt*P]. */
static void unfold_range(void *ctx, size_t b, size_t e)
{
    const chunk *c = ctx;
    long ld = (long)c->cnt * c->P;
    for (size_t i = b; i < e; i++)
        t2__im2col(&c->g, c->x + (size_t)(c->i0 + (int)i) * c->l->in_size, c->col + (long)i * c->P, ld);
}

/* Items [b, e) of (sample, channel): GEMM output [OC, cnt*P] -> y [n, OC, P] plus bias. */
static void scatter_range(void *ctx, size_t b, size_t e)
{
    const chunk *c = ctx;
    long NP = (long)c->cnt * c->P;
    for (size_t it = b; it < e; it++) {
        int i = (int)(it / (size_t)c->OC), oc = (int)(it % (size_t)c->OC);
        const float *restrict src = c->tmp + (long)oc * NP + (long)i * c->P;
        float *restrict dst = c->y + ((long)(c->i0 + i) * c->OC + oc) * c->P, bias = c->l->b[oc];
        if (c->l->fuse_relu)
            for (int p = 0; p < c->P; p++) dst[p] = src[p] + bias > 0.0f ? src[p] + bias : 0.0f;
        else
            for (int p = 0; p < c->P; p++) dst[p] = src[p] + bias;
    }
}

/* Channels [b, e): dy [n, OC, P] -> tmp [OC, cnt*P], adding each channel's bias gradient. With a
 * fused relu, dy is the gradient at the relu's output and is masked by y > 0 on the way. */
static void gather_range(void *ctx, size_t b, size_t e)
{
    const chunk *c = ctx;
    long NP = (long)c->cnt * c->P;
    for (size_t oc = b; oc < e; oc++) {
        float s = 0.0f;
        for (int i = 0; i < c->cnt; i++) {
            long off = ((long)(c->i0 + i) * c->OC + (long)oc) * c->P;
            const float *restrict src = c->dy + off, *restrict y = c->y + off;
            float *restrict dst = c->tmp + (long)oc * NP + (long)i * c->P;
            if (c->l->fuse_relu)
                for (int p = 0; p < c->P; p++) {
                    dst[p] = y[p] > 0.0f ? src[p] : 0.0f;
                    s += dst[p];
                }
            else
                for (int p = 0; p < c->P; p++) {
                    dst[p] = src[p];
                    s += src[p];
                }
        }
        c->l->db[oc] += s;
    }
}

/* Samples [b, e): fold dcol (in col) back into dx. */
static void fold_range(void *ctx, size_t b, size_t e)
{
    const chunk *c = ctx;
    long ld = (long)c->cnt * c->P;
    for (size_t i = b; i < e; i++)
        t2__col2im(&c->g, c->col + (long)i * c->P, ld, c->dx + (size_t)(c->i0 + (int)i) * c->l->in_size);
}

static void forward(t2__layer *l, const float *x, float *y, int n, t2_mode mode, t2_rng *rng)
{
    (void)mode;
    (void)rng;
    chunk c = {.l = l, .g = geom(l), .x = x, .y = y, .OC = l->out_shape[0]};
    int K = c.g.c * c.g.k * c.g.k, G = chunk_samples(l, n);
    c.P = c.g.oh * c.g.ow;
    c.col = l->scratch;
    c.tmp = c.col + (size_t)K * G * c.P;
    for (c.i0 = 0; c.i0 < n; c.i0 += G) {
        c.cnt = n - c.i0 < G ? n - c.i0 : G;
        long NP = (long)c.cnt * c.P;
        t2__parallel_for((size_t)c.cnt, 1, unfold_range, &c);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, c.OC, (int)NP, K, 1.0f, l->w, K, c.col, (int)NP,
                    0.0f, c.tmp, (int)NP);
        t2__parallel_for((size_t)c.cnt * (size_t)c.OC, 4, scatter_range, &c);
    }
}

/* Per chunk: columns are recomputed rather than kept from forward (cheap while they are cache
 * resident, and memory no longer grows with the batch), dy is regrouped to [OC, g*P], then
 * dW += dy·colᵀ and dcol = Wᵀ·dy folded back into dx. */
static void backward(t2__layer *l, const float *x, const float *y, const float *dy, float *dx, int n)
{
    chunk c = {.l = l, .g = geom(l), .x = x, .y = (float *)y, .dy = dy, .dx = dx, .OC = l->out_shape[0]};
    int K = c.g.c * c.g.k * c.g.k, G = chunk_samples(l, n);
    c.P = c.g.oh * c.g.ow;
    c.col = l->scratch;
    c.tmp = c.col + (size_t)K * G * c.P;
    if (dx) memset(dx, 0, (size_t)n * l->in_size * sizeof(float));
    for (c.i0 = 0; c.i0 < n; c.i0 += G) {
        c.cnt = n - c.i0 < G ? n - c.i0 : G;
        long NP = (long)c.cnt * c.P;
        t2__parallel_for((size_t)c.OC, 1, gather_range, &c);
        t2__parallel_for((size_t)c.cnt, 1, unfold_range, &c);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, c.OC, K, (int)NP, 1.0f, c.tmp, (int)NP, c.col,
                    (int)NP, 1.0f, l->dw, K);
        if (!dx) continue;
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, K, (int)NP, c.OC, 1.0f, l->w, K, c.tmp, (int)NP,
                    0.0f, c.col, (int)NP);
        t2__parallel_for((size_t)c.cnt, 1, fold_range, &c);
    }
}

const t2__layer_ops t2__conv2d_ops = {"conv2d", scratch_bytes, init, forward, backward};
