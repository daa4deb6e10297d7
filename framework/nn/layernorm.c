/* layernorm.c — layer normalisation over the LAST dimension of a sample (PyTorch nn.LayerNorm(D)
 * with D = F for [F] samples, D = W for [C, H, W], i.e. per (c, h) row): each row of D values is
 * normalised with its own mean and biased variance, then scaled and shifted by a weight and bias
 * of size D. Rows are independent, so forward and dx split by rows; dW and db split by feature,
 * so no two parts write the same value and the sums run in the same order for any thread count. */
#include <math.h>
#include <string.h>
#include "net.h"
#include "parallel.h"

int t2_net_layernorm(t2_net *net, float eps)
{
    t2__layer l = {.ops = &t2__layernorm_ops, .p = eps};
    if (!(eps > 0.0f) || !isfinite(eps))
        return t2_seterr(T2_EINVAL, "t2_net_layernorm: eps %g must be finite and > 0", eps);
    int rc = t2__net_tail(net, &l.in_ndim, l.in_shape);
    if (rc) return rc;
    l.out_ndim = l.in_ndim;
    memcpy(l.out_shape, l.in_shape, sizeof l.in_shape);
    l.nweight = l.nbias = (size_t)l.in_shape[l.in_ndim - 1];
    return t2__net_append(net, &l);
}

/* Floats per row (D) and rows per sample. */
static size_t row_len(const t2__layer *l) { return (size_t)l->in_shape[l->in_ndim - 1]; }
static size_t rows_per_sample(const t2__layer *l) { return l->in_size / row_len(l); }

/* Each row's mean and inverse standard deviation (floats), then D doubles for each of the dW and
 * db sums of one backward. */
static size_t stats_floats(const t2__layer *l, int n) { return 2 * (size_t)n * rows_per_sample(l); }
static size_t scratch_bytes(const t2__layer *l, int n)
{
    size_t f = stats_floats(l, n);
    f += f & 1; /* keep the doubles 8-byte aligned */
    return f * sizeof(float) + 2 * row_len(l) * sizeof(double);
}
static double *sums_of(const t2__layer *l, int n)
{
    size_t f = stats_floats(l, n);
    return (double *)((float *)l->scratch + f + (f & 1));
}

static void init(t2__layer *l, t2_rng *rng)
{
    (void)rng;
    for (size_t j = 0; j < l->nweight; j++) {
        l->w[j] = 1.0f;
        l->b[j] = 0.0f;
    }
}

typedef struct {
    t2__layer *l;
    const float *x, *dy;
    float *y, *dx;
    size_t rows;   /* n * rows_per_sample */
    int parts;
    int n;
} ln_job;

/* Part t's share [b, e) of count items. */
static void part_range(size_t count, size_t t, int parts, size_t *b, size_t *e)
{
    *b = count * t / (size_t)parts;
    *e = count * (t + 1) / (size_t)parts;
}

static void forward_part(void *ctx, size_t tb, size_t te)
{
    const ln_job *j = ctx;
    const t2__layer *l = j->l;
    size_t D = row_len(l);
    float *mean = l->scratch, *istd = mean + j->rows;
    for (size_t t = tb; t < te; t++) {
        size_t r0, r1;
        part_range(j->rows, t, j->parts, &r0, &r1);
        for (size_t r = r0; r < r1; r++) {
            const float *x = j->x + r * D;
            float *y = j->y + r * D;
            /* Two passes in double: the mean first, then the centred squares (no cancellation). */
            double s = 0.0, ss = 0.0;
            for (size_t k = 0; k < D; k++) s += x[k];
            double mu = s / (double)D;
            for (size_t k = 0; k < D; k++) ss += (x[k] - mu) * (x[k] - mu);
            float m = (float)mu, is = (float)(1.0 / sqrt(ss / (double)D + l->p));
            mean[r] = m;
            istd[r] = is;
            for (size_t k = 0; k < D; k++) y[k] = (x[k] - m) * is * l->w[k] + l->b[k];
        }
    }
}

static void forward(t2__layer *l, const float *x, float *y, int n, t2_mode mode, t2_rng *rng)
{
    (void)mode;
    (void)rng;
    ln_job j = {.l = l, .x = x, .y = y, .n = n, .rows = (size_t)n * rows_per_sample(l)};
    j.parts = l->nparts < 1 ? 1 : (size_t)l->nparts > j.rows ? (int)j.rows : l->nparts;
    t2__parallel_for((size_t)j.parts, 1, forward_part, &j);
}

/* Part t: features [k0, k1) of dW and db (summed over every row, in row order, in double) and
 * rows [r0, r1) of dx = istd * (g - mean(g) - xhat * mean(g * xhat)), g = dy * weight. */
static void backward_part(void *ctx, size_t tb, size_t te)
{
    const ln_job *j = ctx;
    const t2__layer *l = j->l;
    size_t D = row_len(l);
    const float *mean = l->scratch, *istd = mean + j->rows;
    double *sw = sums_of(l, j->n), *sb = sw + D;
    for (size_t t = tb; t < te; t++) {
        size_t k0, k1, r0, r1;
        part_range(D, t, j->parts, &k0, &k1);
        for (size_t k = k0; k < k1; k++) sw[k] = sb[k] = 0.0;
        for (size_t r = 0; r < j->rows && k1 > k0; r++) {
            const float *x = j->x + r * D, *dy = j->dy + r * D;
            for (size_t k = k0; k < k1; k++) {
                sw[k] += (double)dy[k] * ((x[k] - mean[r]) * istd[r]);
                sb[k] += dy[k];
            }
        }
        for (size_t k = k0; k < k1; k++) {
            l->dw[k] += (float)sw[k];
            l->db[k] += (float)sb[k];
        }
        if (!j->dx) continue;
        part_range(j->rows, t, j->parts, &r0, &r1);
        for (size_t r = r0; r < r1; r++) {
            const float *x = j->x + r * D, *dy = j->dy + r * D;
            float *dx = j->dx + r * D;
            double sg = 0.0, sgx = 0.0;
            for (size_t k = 0; k < D; k++) {
                double g = (double)dy[k] * l->w[k];
                sg += g;
                sgx += g * ((x[k] - mean[r]) * istd[r]);
            }
            float mg = (float)(sg / (double)D), mgx = (float)(sgx / (double)D), is = istd[r];
            for (size_t k = 0; k < D; k++) {
                float xhat = (x[k] - mean[r]) * is;
                dx[k] = is * (dy[k] * l->w[k] - mg - xhat * mgx);
            }
        }
    }
}

static void backward(t2__layer *l, const float *x, const float *y, const float *dy, float *dx, int n)
{
    (void)y;
    ln_job j = {.l = l, .x = x, .dy = dy, .dx = dx, .n = n, .rows = (size_t)n * rows_per_sample(l)};
    /* Enough parts for both splits: the feature split leaves parts beyond D idle. */
    j.parts = l->nparts < 1 ? 1 : l->nparts;
    t2__parallel_for((size_t)j.parts, 1, backward_part, &j);
}

const t2__layer_ops t2__layernorm_ops = {"layernorm", scratch_bytes, init, forward, backward};
