/* graph.c — the joins that close a block: residual add (with a projection when f changes the
 * shape) and channel/feature concatenation. The net keeps the block's input alive (its layers
 * never write into an earlier layer's output) and routes the skip gradient (net.c). */
#include <cblas.h>
#include <math.h>
#include <string.h>
#include "net.h"

int t2_net_residual_begin(t2_net *net) { return t2__net_block_open(net, T2__BLOCK_RESIDUAL, "t2_net_residual_begin"); }
int t2_net_concat_begin(t2_net *net) { return t2__net_block_open(net, T2__BLOCK_CONCAT, "t2_net_concat_begin"); }

static const char *shape_str(int ndim, const int *s, char *buf, size_t len)
{
    if (ndim == 3) snprintf(buf, len, "[%d, %d, %d]", s[0], s[1], s[2]);
    else snprintf(buf, len, "[%d]", s[0]);
    return buf;
}

int t2_net_residual_end(t2_net *net)
{
    static const char who[] = "t2_net_residual_end";
    t2__layer l = {.ops = &t2__residual_ops};
    int rc = t2__net_block_close(net, T2__BLOCK_RESIDUAL, who, &l);
    if (rc) return rc;
    l.out_ndim = l.in_ndim;
    memcpy(l.out_shape, l.in_shape, sizeof l.in_shape);
    int same = l.skip_ndim == l.in_ndim && !memcmp(l.skip_shape, l.in_shape, (size_t)l.in_ndim * sizeof(int));
    if (!same) {
        char a[48], b[48];
        if (l.skip_ndim != l.in_ndim)
            return t2_seterr(T2_ESHAPE, "%s: the block maps %s to %s; a projection needs both images or both vectors",
                             who, shape_str(l.skip_ndim, l.skip_shape, a, sizeof a),
                             shape_str(l.in_ndim, l.in_shape, b, sizeof b));
        l.kernel = 1;
        l.stride = 1;
        if (l.in_ndim == 3) {
            /* The 1x1 convolution's stride: the one that maps H and W onto f's. */
            int s = 1;
            while (s <= l.skip_shape[1] &&
                   ((l.skip_shape[1] - 1) / s + 1 != l.in_shape[1] || (l.skip_shape[2] - 1) / s + 1 != l.in_shape[2]))
                s++;
            if (s > l.skip_shape[1])
                return t2_seterr(T2_ESHAPE, "%s: no 1x1 strided projection maps the block's input %s onto its output %s",
                                 who, shape_str(3, l.skip_shape, a, sizeof a), shape_str(3, l.in_shape, b, sizeof b));
            l.stride = s;
            l.nweight = (size_t)l.in_shape[0] * (size_t)l.skip_shape[0];
        } else {
            l.nweight = (size_t)l.in_shape[0] * l.skip_size;
        }
        l.nbias = (size_t)l.out_shape[0];
    }
    if ((rc = t2__net_append(net, &l))) return rc;
    t2__net_block_done(net);
    return T2_OK;
}

int t2_net_concat_end(t2_net *net)
{
    static const char who[] = "t2_net_concat_end";
    t2__layer l = {.ops = &t2__concat_ops};
    int rc = t2__net_block_close(net, T2__BLOCK_CONCAT, who, &l);
    if (rc) return rc;
    char a[48], b[48];
    if (l.skip_ndim != l.in_ndim || (l.in_ndim == 3 && (l.skip_shape[1] != l.in_shape[1] || l.skip_shape[2] != l.in_shape[2])))
        return t2_seterr(T2_ESHAPE, "%s: cannot concatenate the block's input %s with its output %s (%s)", who,
                         shape_str(l.skip_ndim, l.skip_shape, a, sizeof a), shape_str(l.in_ndim, l.in_shape, b, sizeof b),
                         l.skip_ndim != l.in_ndim ? "both must be images or both vectors" : "H and W must agree");
    l.out_ndim = l.in_ndim;
    memcpy(l.out_shape, l.in_shape, sizeof l.in_shape);
    l.out_shape[0] = l.skip_shape[0] + l.in_shape[0];
    if ((rc = t2__net_append(net, &l))) return rc;
    t2__net_block_done(net);
    return T2_OK;
}

/* ---- residual ---- */

static int projected(const t2__layer *l) { return l->nweight > 0; }

/* Image projection: pixels per output channel plane, and the strided gather of one sample's skip
 * input into a [C, P] matrix (a plain pointer when the stride is 1). */
static const float *gather(const t2__layer *l, const float *skip, float *buf)
{
    if (l->stride == 1) return skip;
    int c = l->skip_shape[0], h = l->skip_shape[1], w = l->skip_shape[2], oh = l->out_shape[1], ow = l->out_shape[2];
    for (int ch = 0; ch < c; ch++)
        for (int i = 0; i < oh; i++)
            for (int j = 0; j < ow; j++)
                *buf++ = skip[((size_t)ch * h + (size_t)i * l->stride) * w + (size_t)j * l->stride];
    return buf - (size_t)c * oh * ow;
}

static size_t residual_scratch(const t2__layer *l, int n)
{
    (void)n;
    if (!projected(l) || l->in_ndim != 3) return 0;
    /* The gathered skip input and its gradient, for one sample at a time. */
    return 2 * (size_t)l->skip_shape[0] * (size_t)(l->out_shape[1] * l->out_shape[2]) * sizeof(float);
}

static void residual_init(t2__layer *l, t2_rng *rng)
{
    if (!projected(l)) return;
    float bound = 1.0f / sqrtf((float)(l->in_ndim == 3 ? l->skip_shape[0] : (int)l->skip_size));
    t2__fill_uniform(l->w, l->nweight, bound, rng);
    t2__fill_uniform(l->b, l->nbias, bound, rng);
}

static void residual_forward(t2__layer *l, const float *x, float *y, int n, t2_mode mode, t2_rng *rng)
{
    (void)mode;
    (void)rng;
    size_t total = (size_t)n * l->out_size;
    if (!projected(l)) {
        for (size_t i = 0; i < total; i++) y[i] = x[i] + l->skip_x[i];
        return;
    }
    memcpy(y, x, total * sizeof(float));
    int oc = l->out_shape[0];
    if (l->in_ndim == 1) {
        int in = (int)l->skip_size;
        for (int i = 0; i < n; i++)
            for (int r = 0; r < oc; r++) y[(size_t)i * oc + r] += l->b[r];
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, oc, in, 1.0f, l->skip_x, in, l->w, in, 1.0f, y, oc);
        return;
    }
    int c = l->skip_shape[0], p = l->out_shape[1] * l->out_shape[2];
    for (int i = 0; i < n; i++) {
        float *yi = y + (size_t)i * l->out_size;
        const float *xs = gather(l, l->skip_x + (size_t)i * l->skip_size, l->scratch);
        for (int r = 0; r < oc; r++)
            for (int k = 0; k < p; k++) yi[(size_t)r * p + k] += l->b[r];
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, oc, p, c, 1.0f, l->w, c, xs, p, 1.0f, yi, p);
    }
}

static void residual_backward(t2__layer *l, const float *x, const float *y, const float *dy, float *dx, int n)
{
    (void)x;
    (void)y;
    size_t total = (size_t)n * l->out_size;
    if (dx) memcpy(dx, dy, total * sizeof(float));
    if (!projected(l)) {
        memcpy(l->skip_dx, dy, total * sizeof(float));
        return;
    }
    int oc = l->out_shape[0];
    if (l->in_ndim == 1) {
        int in = (int)l->skip_size;
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, oc, in, n, 1.0f, dy, oc, l->skip_x, in, 1.0f, l->dw, in);
        for (int i = 0; i < n; i++)
            for (int r = 0; r < oc; r++) l->db[r] += dy[(size_t)i * oc + r];
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, in, oc, 1.0f, dy, oc, l->w, in, 0.0f, l->skip_dx, in);
        return;
    }
    int c = l->skip_shape[0], p = l->out_shape[1] * l->out_shape[2];
    int h = l->skip_shape[1], w = l->skip_shape[2], ow = l->out_shape[2];
    float *gbuf = (float *)l->scratch + (size_t)c * p;
    for (int i = 0; i < n; i++) {
        const float *dyi = dy + (size_t)i * l->out_size;
        const float *xs = gather(l, l->skip_x + (size_t)i * l->skip_size, l->scratch);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, oc, c, p, 1.0f, dyi, p, xs, p, 1.0f, l->dw, c);
        for (int r = 0; r < oc; r++) {
            float s = 0.0f;
            for (int k = 0; k < p; k++) s += dyi[(size_t)r * p + k];
            l->db[r] += s;
        }
        float *sdx = l->skip_dx + (size_t)i * l->skip_size;
        float *g = l->stride == 1 ? sdx : gbuf;
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, c, p, oc, 1.0f, l->w, c, dyi, p, 0.0f, g, p);
        if (l->stride == 1) continue;
        /* Scatter back: the skipped pixels got no gradient. */
        memset(sdx, 0, l->skip_size * sizeof(float));
        for (int ch = 0; ch < c; ch++)
            for (int k = 0; k < p; k++)
                sdx[((size_t)ch * h + (size_t)(k / ow) * l->stride) * w + (size_t)(k % ow) * l->stride] = g[(size_t)ch * p + k];
    }
}

/* ---- concat: per sample, the skip input's C1 planes (or F1 features) then f's ---- */

static void concat_forward(t2__layer *l, const float *x, float *y, int n, t2_mode mode, t2_rng *rng)
{
    (void)mode;
    (void)rng;
    for (int i = 0; i < n; i++) {
        float *yi = y + (size_t)i * l->out_size;
        memcpy(yi, l->skip_x + (size_t)i * l->skip_size, l->skip_size * sizeof(float));
        memcpy(yi + l->skip_size, x + (size_t)i * l->in_size, l->in_size * sizeof(float));
    }
}

static void concat_backward(t2__layer *l, const float *x, const float *y, const float *dy, float *dx, int n)
{
    (void)x;
    (void)y;
    for (int i = 0; i < n; i++) {
        const float *g = dy + (size_t)i * l->out_size;
        memcpy(l->skip_dx + (size_t)i * l->skip_size, g, l->skip_size * sizeof(float));
        if (dx) memcpy(dx + (size_t)i * l->in_size, g + l->skip_size, l->in_size * sizeof(float));
    }
}

const t2__layer_ops t2__residual_ops = {"residual", residual_scratch, residual_init, residual_forward, residual_backward};
const t2__layer_ops t2__concat_ops = {"concat", NULL, NULL, concat_forward, concat_backward};
