/* conv2d.c — 2-d convolution as batched im2col + one large sgemm per pass.
 *
 * The whole batch is unfolded into one column matrix col [C*k*k, n*P] (P = output pixels per
 * image), so forward is a single W[OC, K] x col GEMM and backward two (dW and dcol): no small
 * per-sample GEMMs. The GEMM result is [OC, n*P]; turning it into NCHW [n, OC, P] is a copy of
 * contiguous P-float blocks (fused with the bias add). col is kept from forward for dW, then
 * reused as the dcol buffer. */
#include <cblas.h>
#include <math.h>
#include <string.h>
#include "im2col.h"
#include "net.h"

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

static size_t col_floats(const t2__layer *l, int n)
{
    size_t K = (size_t)l->in_shape[0] * (size_t)(l->kernel * l->kernel);
    return K * (size_t)n * (size_t)(l->out_shape[1] * l->out_shape[2]);
}

/* Scratch: the column matrix, then the [OC, n*P] GEMM output. */
static size_t scratch_bytes(const t2__layer *l, int n)
{
    return (col_floats(l, n) + (size_t)n * l->out_size) * sizeof(float);
}

static void init(t2__layer *l, t2_rng *rng)
{
    float fan_in = (float)(l->in_shape[0] * l->kernel * l->kernel);
    float bound = 1.0f / sqrtf(fan_in);
    t2__fill_uniform(l->w, l->nweight, bound, rng);
    t2__fill_uniform(l->b, l->nbias, bound, rng);
}

static void forward(t2__layer *l, const float *x, float *y, int n, t2_mode mode, t2_rng *rng)
{
    (void)mode;
    (void)rng;
    t2__conv_geom g = geom(l);
    int OC = l->out_shape[0], K = g.c * g.k * g.k, P = g.oh * g.ow;
    long NP = (long)n * P;
    float *col = l->scratch, *tmp = col + col_floats(l, n);
    for (int i = 0; i < n; i++) t2__im2col(&g, x + (size_t)i * l->in_size, col + (long)i * P, NP);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, OC, (int)NP, K, 1.0f, l->w, K, col, (int)NP,
                0.0f, tmp, (int)NP);
    for (int i = 0; i < n; i++)
        for (int oc = 0; oc < OC; oc++) {
            const float *src = tmp + (long)oc * NP + (long)i * P;
            float *dst = y + ((long)i * OC + oc) * P, bias = l->b[oc];
            for (int p = 0; p < P; p++) dst[p] = src[p] + bias;
        }
}

static void backward(t2__layer *l, const float *x, const float *y, const float *dy, float *dx, int n)
{
    (void)x;
    (void)y;
    t2__conv_geom g = geom(l);
    int OC = l->out_shape[0], K = g.c * g.k * g.k, P = g.oh * g.ow;
    long NP = (long)n * P;
    float *col = l->scratch, *dyt = col + col_floats(l, n);
    /* dy [n, OC, P] -> dyt [OC, n*P], summing the bias gradient on the way. */
    for (int i = 0; i < n; i++)
        for (int oc = 0; oc < OC; oc++) {
            const float *src = dy + ((long)i * OC + oc) * P;
            float *dst = dyt + (long)oc * NP + (long)i * P, s = 0.0f;
            for (int p = 0; p < P; p++) {
                dst[p] = src[p];
                s += src[p];
            }
            l->db[oc] += s;
        }
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, OC, K, (int)NP, 1.0f, dyt, (int)NP, col, (int)NP,
                1.0f, l->dw, K);
    if (!dx) return;
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, K, (int)NP, OC, 1.0f, l->w, K, dyt, (int)NP, 0.0f,
                col, (int)NP);
    memset(dx, 0, (size_t)n * l->in_size * sizeof(float));
    for (int i = 0; i < n; i++) t2__col2im(&g, col + (long)i * P, NP, dx + (size_t)i * l->in_size);
}

const t2__layer_ops t2__conv2d_ops = {"conv2d", scratch_bytes, init, forward, backward};
