/* batchnorm.c — batch normalisation over [F] (1d) or [C, H, W] (2d) samples. Statistics are per
 * feature/channel c over the n*S values x[i][c][s] (S = H*W, or 1). Training normalises with the
 * biased batch variance and folds the unbiased one into the running variance, as PyTorch does.
 * Sums run in double: the batch*spatial counts are large enough for float drift to show. */
#include <math.h>
#include <string.h>
#include "net.h"

int t2_net_batchnorm(t2_net *net, float eps, float momentum)
{
    t2__layer l = {.ops = &t2__batchnorm_ops, .p = eps, .momentum = momentum};
    if (!(eps > 0.0f) || !(momentum >= 0.0f && momentum <= 1.0f))
        return t2_seterr(T2_EINVAL, "t2_net_batchnorm: eps %g must be > 0 and momentum %g in [0, 1]", eps, momentum);
    int rc = t2__net_tail(net, &l.in_ndim, l.in_shape);
    if (rc) return rc;
    l.out_ndim = l.in_ndim;
    memcpy(l.out_shape, l.in_shape, sizeof l.in_shape);
    l.nweight = l.nbias = (size_t)l.in_shape[0];
    l.nbuffer = 2 * (size_t)l.in_shape[0];
    return t2__net_append(net, &l);
}

/* Per-channel batch mean and inverse standard deviation from the last training forward. */
static size_t scratch_bytes(const t2__layer *l, int n)
{
    (void)n;
    return 2 * (size_t)l->in_shape[0] * sizeof(float);
}

static void init(t2__layer *l, t2_rng *rng)
{
    (void)rng;
    int C = l->in_shape[0];
    for (int c = 0; c < C; c++) {
        l->w[c] = 1.0f;
        l->b[c] = 0.0f;
        l->buf[c] = 0.0f;
        l->buf[C + c] = 1.0f;
    }
}

static void forward(t2__layer *l, const float *x, float *y, int n, t2_mode mode, t2_rng *rng)
{
    (void)rng;
    int C = l->in_shape[0];
    size_t S = l->in_size / (size_t)C, cnt = (size_t)n * S;
    float *mean = l->scratch, *istd = mean + C, *rmean = l->buf, *rvar = l->buf + C;
    /* One value a channel has no spread: the output would be the bias alone and the running
     * variance pulled towards 0 (PyTorch refuses it too: "Expected more than 1 value per channel
     * when training"). */
    if (mode == T2_TRAIN && cnt <= 1) {
        l->rc = t2_seterr(T2_EINVAL, "training on a batch of %d sample(s) with %zu value(s) a channel: batchnorm needs "
                          "more than 1 value a channel (a last batch of 1? drop_last)", n, S);
        return;
    }
    for (int c = 0; c < C; c++) {
        float m, is;
        if (mode == T2_TRAIN) {
            double s = 0.0, ss = 0.0;
            for (int i = 0; i < n; i++) {
                const float *xc = x + (size_t)i * l->in_size + (size_t)c * S;
                for (size_t j = 0; j < S; j++) s += xc[j];
            }
            double mu = s / (double)cnt;
            for (int i = 0; i < n; i++) {
                const float *xc = x + (size_t)i * l->in_size + (size_t)c * S;
                for (size_t j = 0; j < S; j++) ss += (xc[j] - mu) * (xc[j] - mu);
            }
            double var = ss / (double)cnt, unbiased = cnt > 1 ? ss / (double)(cnt - 1) : var;
            m = (float)mu;
            is = (float)(1.0 / sqrt(var + l->p));
            rmean[c] = (1.0f - l->momentum) * rmean[c] + l->momentum * m;
            rvar[c] = (1.0f - l->momentum) * rvar[c] + l->momentum * (float)unbiased;
            mean[c] = m;
            istd[c] = is;
        } else {
            m = rmean[c];
            is = 1.0f / sqrtf(rvar[c] + l->p);
        }
        float a = is * l->w[c], b = l->b[c] - m * a;
        for (int i = 0; i < n; i++) {
            const float *xc = x + (size_t)i * l->in_size + (size_t)c * S;
            float *yc = y + (size_t)i * l->in_size + (size_t)c * S;
            for (size_t j = 0; j < S; j++) yc[j] = xc[j] * a + b;
        }
    }
}

static void backward(t2__layer *l, const float *x, const float *y, const float *dy, float *dx, int n)
{
    (void)y;
    int C = l->in_shape[0];
    size_t S = l->in_size / (size_t)C, cnt = (size_t)n * S;
    const float *mean = l->scratch, *istd = mean + C;
    for (int c = 0; c < C; c++) {
        double sdy = 0.0, sdyx = 0.0;
        for (int i = 0; i < n; i++) {
            const float *xc = x + (size_t)i * l->in_size + (size_t)c * S;
            const float *gc = dy + (size_t)i * l->in_size + (size_t)c * S;
            for (size_t j = 0; j < S; j++) {
                sdy += gc[j];
                sdyx += gc[j] * (xc[j] - mean[c]);
            }
        }
        float is = istd[c];
        l->db[c] += (float)sdy;
        l->dw[c] += (float)(sdyx * is);
        if (!dx) continue;
        /* dx = gamma*istd/cnt * (cnt*dy - sum(dy) - xhat*sum(dy*xhat)) */
        float k = l->w[c] * is, mdy = (float)(sdy / (double)cnt), mdyx = (float)(sdyx * is * is / (double)cnt);
        for (int i = 0; i < n; i++) {
            const float *xc = x + (size_t)i * l->in_size + (size_t)c * S;
            const float *gc = dy + (size_t)i * l->in_size + (size_t)c * S;
            float *dc = dx + (size_t)i * l->in_size + (size_t)c * S;
            for (size_t j = 0; j < S; j++) dc[j] = k * (gc[j] - mdy - (xc[j] - mean[c]) * mdyx);
        }
    }
}

const t2__layer_ops t2__batchnorm_ops = {"batchnorm", scratch_bytes, init, forward, backward};
