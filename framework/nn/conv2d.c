/* conv2d.c — 2-d convolution as batched im2col + one large sgemm per pass.
 *
 * Chunks of g samples are unfolded into one column matrix col [C*k*k, g*P] (P = output pixels
 * per image), so forward is one W[OC, K] x col GEMM per chunk and backward two (dW and dcol): no
 * small per-sample GEMMs. The GEMM result is [OC, g*P]; turning it into NCHW [g, OC, P] is a copy
 * of contiguous P-float blocks (fused with the bias add). */
#include <cblas.h>
#include <math.h>
#include <string.h>
#include "conv_direct.h"
#include "im2col.h"
#include "net.h"
#include "parallel.h"
#include "vector_clones.h"

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
 * matrix (about 4 MB) stays in cache between im2col, the GEMM and col2im. Never more than a part
 * holds (ceil(n / parts)): a part's chunks are then the same as without the cap (one chunk for
 * the whole part), and the scratch, one chunk per part, does not grow with the part count (a
 * trial's parts are the most threads it could get, often more than it runs on). */
static int chunk_samples(const t2__layer *l, int n)
{
    size_t per = (size_t)l->in_shape[0] * (size_t)(l->kernel * l->kernel) * (size_t)(l->out_shape[1] * l->out_shape[2]);
    size_t g = ((size_t)1 << 20) / (per ? per : 1);
    if (g < 1) g = 1;
    int parts = l->nparts < 1 ? 1 : l->nparts < n ? l->nparts : n;
    size_t part = n > 0 ? ((size_t)n + (size_t)parts - 1) / (size_t)parts : 1;
    if (g > part) g = part;
    return g < (size_t)n ? (int)g : n;
}

/* The stride-1 path (conv_direct.h) needs no im2col for forward and the input gradient, only a
 * zero-padded copy of the image (forward, padding > 0) or of dy (input gradient), and the two
 * packed weights, which the parts share at the front of the scratch. */
static int direct_fits(const t2__layer *l) { return l->stride == 1; }

static size_t round16(size_t f) { return (f + 15) & ~(size_t)15; } /* keeps every region 64-byte aligned */

/* Floats of the padded image ([C, H + 2 pad, W + 2 pad]) or padded dy ([OC, OH + 2 (k - 1),
 * OW + k - 1] and k - 1 floats: t2__conv_direct_pad_dy). */
static size_t padded_floats(const t2__layer *l)
{
    if (!direct_fits(l)) return 0;
    size_t k1 = (size_t)(l->kernel - 1), p2 = 2 * (size_t)l->padding;
    size_t img = (size_t)l->in_shape[0] * ((size_t)l->in_shape[1] + p2) * ((size_t)l->in_shape[2] + p2);
    size_t dy = (size_t)l->out_shape[0] * ((size_t)l->out_shape[1] + 2 * k1) * ((size_t)l->out_shape[2] + k1) + k1;
    return round16(img > dy ? img : dy);
}

static size_t shared_floats(const t2__layer *l)
{
    if (!direct_fits(l)) return 0;
    int kk = l->kernel * l->kernel;
    return round16(t2__conv_direct_packed_floats(l->out_shape[0], l->in_shape[0] * kk)) +
           round16(t2__conv_direct_packed_floats(l->in_shape[0], l->out_shape[0] * kk));
}

/* Floats of one part's scratch. The im2col path: the column matrix and the [OC, g*P] GEMM output
 * of a chunk, the part's private weight and bias gradients. The direct path: the private weight
 * gradient transposed ([K][lanes]) and bias gradient, one sample's transposed dy ([P][lanes]) and
 * the padded copy. A layer that fits the direct path may still take the other one (a CPU without
 * AVX-512, a test that switches it off): room for both, not at once. */
static size_t im2col_floats(const t2__layer *l, int n)
{
    size_t g = (size_t)chunk_samples(l, n), P = (size_t)(l->out_shape[1] * l->out_shape[2]);
    size_t K = (size_t)l->in_shape[0] * (size_t)(l->kernel * l->kernel), OC = (size_t)l->out_shape[0];
    return round16(g * P * (K + OC) + OC * K + OC);
}

static size_t direct_grads_floats(const t2__layer *l)
{
    size_t K = (size_t)l->in_shape[0] * (size_t)(l->kernel * l->kernel);
    return round16((K + 1) * (size_t)t2__conv_direct_lanes(l->out_shape[0]));
}

static size_t direct_dyt_floats(const t2__layer *l)
{
    return round16((size_t)(l->out_shape[1] * l->out_shape[2]) * (size_t)t2__conv_direct_lanes(l->out_shape[0]));
}

static size_t part_floats(const t2__layer *l, int n)
{
    size_t a = im2col_floats(l, n);
    size_t d = direct_fits(l) ? direct_grads_floats(l) + direct_dyt_floats(l) + padded_floats(l) : 0;
    return a > d ? a : d;
}

static size_t scratch_bytes(const t2__layer *l, int n)
{
    return (shared_floats(l) + (size_t)(l->nparts > 0 ? l->nparts : 1) * part_floats(l, n)) * sizeof(float);
}

static void init(t2__layer *l, t2_rng *rng)
{
    float fan_in = (float)(l->in_shape[0] * l->kernel * l->kernel);
    float bound = 1.0f / sqrtf(fan_in);
    t2__fill_uniform(l->w, l->nweight, bound, rng);
    t2__fill_uniform(l->b, l->nbias, bound, rng);
}

/* One pass over the batch, split into parts of contiguous samples; each part runs on one pool
 * thread with its own scratch and single-threaded GEMMs, so threads never wait on each other
 * inside the layer. */
typedef struct {
    t2__layer *l;
    t2__conv_geom g;
    const float *x, *y, *dy;
    float *out, *dx;
    int n, parts, G, OC, P, K;
    int direct;             /* stride-1 path of conv_direct.h */
    const float *wp, *wq;   /* its packed weights: forward, flipped for the input gradient */
} conv_job;

/* The GEMM's [OC, cnt*P] result to NCHW [cnt, OC, P] at out, adding the bias (and the fused
 * relu): contiguous P-float blocks. */
T2__VECTOR_CLONES
static void to_nchw(const float *tmp, const float *bias, float *out, int cnt, int OC, int P, int relu)
{
    long NP = (long)cnt * P;
    for (int i = 0; i < cnt; i++)
        for (int oc = 0; oc < OC; oc++) {
            const float *restrict src = tmp + (long)oc * NP + (long)i * P;
            float *restrict dst = out + ((long)i * OC + oc) * P, b = bias[oc];
            if (relu)
                for (int p = 0; p < P; p++) dst[p] = src[p] + b > 0.0f ? src[p] + b : 0.0f;
            else
                for (int p = 0; p < P; p++) dst[p] = src[p] + b;
        }
}

/* The other way for backward: dy (NCHW, masked by y > 0 with a fused relu) to dyt [OC, cnt*P],
 * adding each channel's sum into db. The sum runs in 16 lanes, added up at the end, so that it
 * vectorizes; the order of the additions depends only on the shapes. */
T2__VECTOR_CLONES
static void from_nchw(const float *dy, const float *y, float *dyt, float *db, int cnt, int OC, int P, int relu)
{
    long NP = (long)cnt * P;
    for (int oc = 0; oc < OC; oc++) {
        float lane[16] = {0};
        for (int i = 0; i < cnt; i++) {
            long off = ((long)i * OC + oc) * P;
            const float *restrict src = dy + off, *restrict yy = y + off;
            float *restrict dst = dyt + (long)oc * NP + (long)i * P;
            int p = 0;
            for (; p + 16 <= P; p += 16)
                for (int q = 0; q < 16; q++) {
                    float v = relu ? (yy[p + q] > 0.0f ? src[p + q] : 0.0f) : src[p + q];
                    dst[p + q] = v;
                    lane[q] += v;
                }
            for (int q = 0; p < P; p++, q++) {
                float v = relu ? (yy[p] > 0.0f ? src[p] : 0.0f) : src[p];
                dst[p] = v;
                lane[q] += v;
            }
        }
        float s = 0.0f;
        for (int q = 0; q < 16; q++) s += lane[q];
        db[oc] += s;
    }
}

static float *part_scratch(const conv_job *j, size_t t)
{
    return (float *)j->l->scratch + shared_floats(j->l) + t * part_floats(j->l, j->n);
}

/* The im2col path's private weight gradient of a part (its bias gradient follows). */
static float *part_dw(const conv_job *j, size_t t)
{
    return part_scratch(j, t) + (size_t)j->K * j->G * j->P + (size_t)j->OC * j->G * j->P;
}

/* The direct path's padded copy (image or dy) of a part. */
static float *part_padded(const conv_job *j, size_t t)
{
    return part_scratch(j, t) + direct_grads_floats(j->l) + direct_dyt_floats(j->l);
}

/* One sample's forward on the direct path. */
static void forward_direct(const conv_job *j, size_t t, int i)
{
    const t2__layer *l = j->l;
    const float *x = j->x + (size_t)i * l->in_size;
    int pad = j->g.pad, hp = j->g.h + 2 * pad, wp = j->g.w + 2 * pad;
    if (pad > 0) {
        float *xp = part_padded(j, t);
        t2__conv_direct_pad(x, NULL, j->g.c, j->g.h, j->g.w, pad, xp);
        x = xp;
    }
    t2__conv_direct(x, j->g.c, hp, wp, j->g.k, pad, pad + j->g.h, j->wp, j->OC, l->b, l->fuse_relu, 0, j->g.oh, 0,
                    j->g.ow, j->out + (size_t)i * j->OC * j->P, j->g.ow, j->P);
}

/* One sample's gradients on the direct path (see conv_direct.h): dy (masked by y > 0 with a fused
 * relu) transposed adds the sample's share into the part's dwt and db; the input gradient is a
 * forward pass over dy padded by k - 1 (on the left, top and bottom: t2__conv_direct_pad_dy) with
 * the flipped kernel, whose outputs at the image's pixels (the padded grid's interior) are dx. */
static void backward_direct(const conv_job *j, size_t t, int i, float *dwt, float *db)
{
    const t2__layer *l = j->l;
    int k = j->g.k, k1 = k - 1, pad = j->g.pad, hp = j->g.h + 2 * pad, wp = j->g.w + 2 * pad;
    const float *dy = j->dy + (size_t)i * j->OC * j->P, *y = l->fuse_relu ? j->y + (size_t)i * j->OC * j->P : NULL;
    const float *x = j->x + (size_t)i * l->in_size;
    float *padded = part_padded(j, t), *dyt = part_scratch(j, t) + direct_grads_floats(l);
    if (pad > 0) {
        t2__conv_direct_pad(x, NULL, j->g.c, j->g.h, j->g.w, pad, padded);
        x = padded;
    }
    t2__conv_direct_transpose_dy(dy, y, j->OC, j->P, dyt, db);
    t2__conv_direct_weight_grad(x, j->g.c, hp, wp, k, dyt, j->OC, j->g.oh, j->g.ow, dwt);
    if (!j->dx) return;
    t2__conv_direct_pad_dy(dy, y, j->OC, j->g.oh, j->g.ow, k1, padded);
    t2__conv_direct(padded, j->OC, j->g.oh + 2 * k1, j->g.ow + k1, k, k1, k1 + j->g.oh, j->wq, j->g.c, NULL, 0, pad,
                    pad + j->g.h, pad, pad + j->g.w, j->dx + (size_t)i * l->in_size, j->g.w, (long)j->g.h * j->g.w);
}

static void forward_part(void *ctx, size_t tb, size_t te)
{
    const conv_job *j = ctx;
    const t2__layer *l = j->l;
    for (size_t t = tb; t < te; t++) {
        int s0 = (int)((size_t)j->n * t / (size_t)j->parts), s1 = (int)((size_t)j->n * (t + 1) / (size_t)j->parts);
        if (j->direct) {
            for (int i = s0; i < s1; i++) forward_direct(j, t, i);
            continue;
        }
        float *col = part_scratch(j, t), *tmp = col + (size_t)j->K * j->G * j->P;
        for (int i0 = s0; i0 < s1; i0 += j->G) {
            int cnt = s1 - i0 < j->G ? s1 - i0 : j->G;
            long NP = (long)cnt * j->P;
            for (int i = 0; i < cnt; i++)
                t2__im2col(&j->g, j->x + (size_t)(i0 + i) * l->in_size, col + (long)i * j->P, NP);
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, j->OC, (int)NP, j->K, 1.0f, l->w, j->K, col,
                        (int)NP, 0.0f, tmp, (int)NP);
            to_nchw(tmp, l->b, j->out + (size_t)i0 * j->OC * j->P, cnt, j->OC, j->P, l->fuse_relu);
        }
    }
}

/* Per chunk: columns are recomputed rather than kept from forward (cheap while cache resident,
 * and memory does not grow with the batch); dy is regrouped to [OC, g*P] (masked by y > 0 with a
 * fused relu); the part's private dW += dy·colᵀ; dcol = Wᵀ·dy is folded back into dx. */
static void backward_part(void *ctx, size_t tb, size_t te)
{
    const conv_job *j = ctx;
    const t2__layer *l = j->l;
    for (size_t t = tb; t < te; t++) {
        int s0 = (int)((size_t)j->n * t / (size_t)j->parts), s1 = (int)((size_t)j->n * (t + 1) / (size_t)j->parts);
        if (j->direct) {
            float *dwt = part_scratch(j, t), *db = dwt + (size_t)j->K * t2__conv_direct_lanes(j->OC);
            memset(dwt, 0, direct_grads_floats(l) * sizeof(float));
            for (int i = s0; i < s1; i++) backward_direct(j, t, i, dwt, db);
            continue;
        }
        float *col = part_scratch(j, t), *dyt = col + (size_t)j->K * j->G * j->P;
        float *dw = part_dw(j, t), *db = dw + (size_t)j->OC * j->K;
        memset(dw, 0, ((size_t)j->OC * j->K + (size_t)j->OC) * sizeof(float));
        if (j->dx) memset(j->dx + (size_t)s0 * l->in_size, 0, (size_t)(s1 - s0) * l->in_size * sizeof(float));
        for (int i0 = s0; i0 < s1; i0 += j->G) {
            int cnt = s1 - i0 < j->G ? s1 - i0 : j->G;
            long NP = (long)cnt * j->P;
            from_nchw(j->dy + (size_t)i0 * j->OC * j->P, j->y + (size_t)i0 * j->OC * j->P, dyt, db, cnt, j->OC,
                      j->P, l->fuse_relu);
            for (int i = 0; i < cnt; i++)
                t2__im2col(&j->g, j->x + (size_t)(i0 + i) * l->in_size, col + (long)i * j->P, NP);
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, j->OC, j->K, (int)NP, 1.0f, dyt, (int)NP, col,
                        (int)NP, 1.0f, dw, j->K);
            if (!j->dx) continue;
            cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, j->K, (int)NP, j->OC, 1.0f, l->w, j->K, dyt,
                        (int)NP, 0.0f, col, (int)NP);
            for (int i = 0; i < cnt; i++)
                t2__col2im(&j->g, col + (long)i * j->P, NP, j->dx + (size_t)(i0 + i) * l->in_size);
        }
    }
}

static conv_job job_for(t2__layer *l, int n)
{
    conv_job j = {.l = l, .g = geom(l), .n = n, .OC = l->out_shape[0]};
    j.K = j.g.c * j.g.k * j.g.k;
    j.P = j.g.oh * j.g.ow;
    j.G = chunk_samples(l, n);
    j.parts = l->nparts < n ? l->nparts : n;
    if (j.parts < 1) j.parts = 1;
    j.direct = direct_fits(l) && t2__conv_direct_available();
    return j;
}

static void forward(t2__layer *l, const float *x, float *y, int n, t2_mode mode, t2_rng *rng)
{
    (void)mode;
    (void)rng;
    conv_job j = job_for(l, n);
    j.x = x;
    j.out = y;
    if (j.direct) {
        float *wp = l->scratch;
        t2__conv_direct_pack(l->w, j.OC, j.g.c, j.g.k, wp);
        j.wp = wp;
    }
    t2__parallel_for((size_t)j.parts, 1, forward_part, &j);
}

/* Taps [tb, te) of the parts' transposed weight gradients (tap K: their bias gradients) into the
 * layer's, in part order. */
static void sum_direct_grads(void *ctx, size_t tb, size_t te)
{
    const conv_job *j = ctx;
    t2__layer *l = j->l;
    size_t ld = (size_t)t2__conv_direct_lanes(j->OC), K = (size_t)j->K, stride = part_floats(l, j->n);
    const float *first = part_scratch(j, 0);
    for (size_t k = tb; k < te; k++)
        for (int oc = 0; oc < j->OC; oc++) {
            float *to = k < K ? &l->dw[(size_t)oc * K + k] : &l->db[oc];
            float s = *to;
            for (int t = 0; t < j->parts; t++) s += first[(size_t)t * stride + k * ld + (size_t)oc];
            *to = s;
        }
}

static void backward(t2__layer *l, const float *x, const float *y, const float *dy, float *dx, int n)
{
    conv_job j = job_for(l, n);
    j.x = x;
    j.y = y;
    j.dy = dy;
    j.dx = dx;
    if (j.direct && dx) {
        float *wq = (float *)l->scratch + round16(t2__conv_direct_packed_floats(j.OC, j.K));
        t2__conv_direct_pack_flipped(l->w, j.OC, j.g.c, j.g.k, wq);
        j.wq = wq;
    }
    t2__parallel_for((size_t)j.parts, 1, backward_part, &j);
    /* Sum the parts' gradients in part order, so the result depends only on the part count. */
    if (j.direct) {
        /* Rows of taps (the bias as row K) split over the pool; each element still adds the parts
         * in part order. */
        t2__parallel_for((size_t)j.K + 1, 16, sum_direct_grads, &j);
        return;
    }
    size_t nw = (size_t)j.OC * j.K;
    for (int t = 0; t < j.parts; t++) {
        const float *dw = part_dw(&j, (size_t)t);
        for (size_t i = 0; i < nw; i++) l->dw[i] += dw[i];
        for (int oc = 0; oc < j.OC; oc++) l->db[oc] += dw[nw + oc];
    }
}

const t2__layer_ops t2__conv2d_ops = {"conv2d", scratch_bytes, init, forward, backward};
