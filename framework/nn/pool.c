/* pool.c — max and average pooling over k×k windows. Max pooling remembers each output's argmax
 * so backward is a scatter; average pooling counts padding in the divisor (PyTorch's default,
 * count_include_pad=True). */
#include <float.h>
#include <stdint.h>
#include <string.h>
#include "net.h"
#include "parallel.h"

static int add_pool(t2_net *net, const t2__layer_ops *ops, const char *who, int kernel, int stride, int padding)
{
    t2__layer l = {.ops = ops, .kernel = kernel, .stride = stride, .padding = padding};
    int rc = t2__net_tail(net, &l.in_ndim, l.in_shape);
    if (rc) return rc;
    if (l.in_ndim != 3)
        return t2_seterr(T2_ESHAPE, "%s: input is [%d]; pooling needs [C, H, W]", who, l.in_shape[0]);
    if (kernel <= 0 || kernel > 64 || stride <= 0 || stride > 64 || padding < 0 || 2 * padding > kernel)
        return t2_seterr(T2_EINVAL, "%s: kernel=%d stride=%d padding=%d (need kernel 1..64, stride 1..64, "
                         "0 <= padding <= kernel/2)", who, kernel, stride, padding);
    int h = l.in_shape[1] + 2 * padding - kernel, w = l.in_shape[2] + 2 * padding - kernel;
    if (h < 0 || w < 0)
        return t2_seterr(T2_ESHAPE, "%s: kernel %d does not fit the %dx%d input", who, kernel,
                         l.in_shape[1], l.in_shape[2]);
    l.out_ndim = 3;
    l.out_shape[0] = l.in_shape[0];
    l.out_shape[1] = h / stride + 1;
    l.out_shape[2] = w / stride + 1;
    return t2__net_append(net, &l);
}

int t2_net_maxpool2d(t2_net *net, int kernel, int stride)
{
    return add_pool(net, &t2__maxpool2d_ops, "t2_net_maxpool2d", kernel, stride, 0);
}

int t2_net_avgpool2d(t2_net *net, int kernel, int stride, int padding)
{
    return add_pool(net, &t2__avgpool2d_ops, "t2_net_avgpool2d", kernel, stride, padding);
}

/* Argmax per output element, as an offset within its input plane. */
static size_t max_scratch(const t2__layer *l, int n) { return (size_t)n * l->out_size * sizeof(int32_t); }

typedef struct {
    t2__layer *l;
    const float *x, *dy;
    float *y, *dx;
} pool_args;

/* Planes [b, e) of a max pooling forward. */
static void max_forward_range(void *ctx, size_t pb, size_t pe)
{
    const pool_args *A = ctx;
    const t2__layer *l = A->l;
    const float *x = A->x;
    float *y = A->y;
    int H = l->in_shape[1], W = l->in_shape[2], OH = l->out_shape[1], OW = l->out_shape[2];
    int k = l->kernel, s = l->stride;
    int32_t *arg = l->scratch;
    if (k == 2 && s == 2) { /* the common case, unrolled: four candidates, first maximum wins */
        for (long p = (long)pb; p < (long)pe; p++) {
            const float *xp = x + p * H * W;
            float *yp = y + p * OH * OW;
            int32_t *ap = arg + p * OH * OW;
            for (int oh = 0; oh < OH; oh++) {
                const float *r0 = xp + (long)(2 * oh) * W, *r1 = r0 + W;
                for (int ow = 0; ow < OW; ow++) {
                    int base = 2 * oh * W + 2 * ow, best = base;
                    float m = r0[2 * ow];
                    if (r0[2 * ow + 1] > m) m = r0[2 * ow + 1], best = base + 1;
                    if (r1[2 * ow] > m) m = r1[2 * ow], best = base + W;
                    if (r1[2 * ow + 1] > m) m = r1[2 * ow + 1], best = base + W + 1;
                    yp[oh * OW + ow] = m;
                    ap[oh * OW + ow] = best;
                }
            }
        }
        return;
    }
    for (long p = (long)pb; p < (long)pe; p++) {
        const float *xp = x + p * H * W;
        float *yp = y + p * OH * OW;
        int32_t *ap = arg + p * OH * OW;
        for (int oh = 0; oh < OH; oh++)
            for (int ow = 0; ow < OW; ow++) {
                int best = (oh * s) * W + ow * s;
                float m = xp[best];
                for (int ki = 0; ki < k; ki++) {
                    const float *row = xp + (long)(oh * s + ki) * W + ow * s;
                    for (int kj = 0; kj < k; kj++)
                        if (row[kj] > m) {
                            m = row[kj];
                            best = (oh * s + ki) * W + ow * s + kj;
                        }
                }
                yp[oh * OW + ow] = m;
                ap[oh * OW + ow] = best;
            }
    }
}

static void max_forward(t2__layer *l, const float *x, float *y, int n, t2_mode mode, t2_rng *rng)
{
    (void)mode;
    (void)rng;
    pool_args A = {l, x, NULL, y, NULL};
    t2__parallel_for((size_t)n * (size_t)l->in_shape[0], 8, max_forward_range, &A);
}

/* Planes [b, e) of a max pooling backward: zero the plane, scatter dy to the argmaxes. */
static void max_backward_range(void *ctx, size_t pb, size_t pe)
{
    const pool_args *A = ctx;
    const t2__layer *l = A->l;
    const float *dy = A->dy;
    size_t plane_in = (size_t)l->in_shape[1] * l->in_shape[2], plane_out = (size_t)l->out_shape[1] * l->out_shape[2];
    const int32_t *arg = l->scratch;
    memset(A->dx + pb * plane_in, 0, (pe - pb) * plane_in * sizeof(float));
    for (long p = (long)pb; p < (long)pe; p++) {
        float *dxp = A->dx + p * plane_in;
        const float *dyp = dy + p * plane_out;
        const int32_t *ap = arg + p * plane_out;
        for (size_t o = 0; o < plane_out; o++) dxp[ap[o]] += dyp[o];
    }
}

static void max_backward(t2__layer *l, const float *x, const float *y, const float *dy, float *dx, int n)
{
    (void)x;
    (void)y;
    if (!dx) return;
    pool_args A = {l, NULL, dy, NULL, dx};
    t2__parallel_for((size_t)n * (size_t)l->in_shape[0], 8, max_backward_range, &A);
}

static void avg_forward(t2__layer *l, const float *x, float *y, int n, t2_mode mode, t2_rng *rng)
{
    (void)mode;
    (void)rng;
    int H = l->in_shape[1], W = l->in_shape[2], OH = l->out_shape[1], OW = l->out_shape[2];
    int k = l->kernel, s = l->stride, pad = l->padding;
    float inv = 1.0f / (float)(k * k);
    long planes = (long)n * l->in_shape[0];
    for (long p = 0; p < planes; p++) {
        const float *xp = x + p * H * W;
        float *yp = y + p * OH * OW;
        for (int oh = 0; oh < OH; oh++)
            for (int ow = 0; ow < OW; ow++) {
                float sum = 0.0f;
                for (int ki = 0; ki < k; ki++) {
                    int ih = oh * s - pad + ki;
                    if (ih < 0 || ih >= H) continue;
                    for (int kj = 0; kj < k; kj++) {
                        int iw = ow * s - pad + kj;
                        if (iw >= 0 && iw < W) sum += xp[ih * W + iw];
                    }
                }
                yp[oh * OW + ow] = sum * inv;
            }
    }
}

static void avg_backward(t2__layer *l, const float *x, const float *y, const float *dy, float *dx, int n)
{
    (void)x;
    (void)y;
    if (!dx) return;
    int H = l->in_shape[1], W = l->in_shape[2], OH = l->out_shape[1], OW = l->out_shape[2];
    int k = l->kernel, s = l->stride, pad = l->padding;
    float inv = 1.0f / (float)(k * k);
    memset(dx, 0, (size_t)n * l->in_size * sizeof(float));
    long planes = (long)n * l->in_shape[0];
    for (long p = 0; p < planes; p++) {
        float *dxp = dx + p * H * W;
        const float *dyp = dy + p * OH * OW;
        for (int oh = 0; oh < OH; oh++)
            for (int ow = 0; ow < OW; ow++) {
                float g = dyp[oh * OW + ow] * inv;
                for (int ki = 0; ki < k; ki++) {
                    int ih = oh * s - pad + ki;
                    if (ih < 0 || ih >= H) continue;
                    for (int kj = 0; kj < k; kj++) {
                        int iw = ow * s - pad + kj;
                        if (iw >= 0 && iw < W) dxp[ih * W + iw] += g;
                    }
                }
            }
    }
}

const t2__layer_ops t2__maxpool2d_ops = {"maxpool2d", max_scratch, NULL, max_forward, max_backward};
const t2__layer_ops t2__avgpool2d_ops = {"avgpool2d", NULL, NULL, avg_forward, avg_backward};
