/* raw_mlp_model.h — a one-hidden-layer MLP written with plain arrays, no t2_net: y = W2 relu(W1 x
 * + b1) + b2, forward and backward by hand. Its four parameter arrays are separate allocations,
 * handed to the framework with t2_wrap_params. Shared by trials/raw_mlp.c and the 2-rank
 * equivalence test (tests/unit/test_dist_mpi_raw_equiv.c). Public API only. */
#ifndef T2_TRIALS_RAW_MLP_MODEL_H
#define T2_TRIALS_RAW_MLP_MODEL_H

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <t2exp.h>

enum { RMLP_W1, RMLP_B1, RMLP_W2, RMLP_B2, RMLP_NBUF };
static const char *const rmlp_names[RMLP_NBUF] = {"fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"};

typedef struct rmlp {
    int in, hidden, out;
    float *p[RMLP_NBUF], *g[RMLP_NBUF]; /* W1 [hidden, in], b1 [hidden], W2 [out, hidden], b2 [out] */
    size_t n[RMLP_NBUF];
    int cap;                            /* rows the activations below have room for */
    float *h, *y, *dy, *dh;             /* [cap, hidden], [cap, out], [cap, out], [cap, hidden] */
} rmlp;

static inline void rmlp_free(rmlp *m)
{
    for (int k = 0; k < RMLP_NBUF; k++) {
        free(m->p[k]);
        free(m->g[k]);
    }
    free(m->h);
    free(m->y);
    free(m->dy);
    free(m->dh);
    memset(m, 0, sizeof *m);
}

/* Allocates the parameters, initialised as torch.nn.Linear does (uniform in +-1/sqrt(fan_in) for
 * weights and biases), and activations for batches of up to cap rows. */
static inline int rmlp_init(rmlp *m, int in, int hidden, int out, int cap, t2_rng *rng)
{
    memset(m, 0, sizeof *m);
    if (in < 1 || hidden < 1 || out < 1 || cap < 1)
        return t2_seterr(T2_EINVAL, "raw_mlp: in=%d hidden=%d out=%d batch=%d must all be >= 1", in, hidden, out, cap);
    m->in = in, m->hidden = hidden, m->out = out, m->cap = cap;
    m->n[RMLP_W1] = (size_t)hidden * in;
    m->n[RMLP_B1] = (size_t)hidden;
    m->n[RMLP_W2] = (size_t)out * hidden;
    m->n[RMLP_B2] = (size_t)out;
    int ok = 1;
    for (int k = 0; k < RMLP_NBUF; k++) {
        m->p[k] = malloc(m->n[k] * sizeof(float));
        m->g[k] = calloc(m->n[k], sizeof(float));
        ok &= m->p[k] && m->g[k];
    }
    m->h = malloc((size_t)cap * hidden * sizeof(float));
    m->dh = malloc((size_t)cap * hidden * sizeof(float));
    m->y = malloc((size_t)cap * out * sizeof(float));
    m->dy = malloc((size_t)cap * out * sizeof(float));
    if (!ok || !m->h || !m->dh || !m->y || !m->dy) {
        rmlp_free(m);
        return t2_seterr(T2_ENOMEM, "raw_mlp: out of memory");
    }
    for (int k = 0; k < RMLP_NBUF; k++) {
        float bound = 1.0f / sqrtf((float)(k < RMLP_W2 ? in : hidden));
        for (size_t i = 0; i < m->n[k]; i++) m->p[k][i] = (2.0f * t2_rng_uniform(rng) - 1.0f) * bound;
    }
    return T2_OK;
}

/* Room in the activations for batches of n rows (the validation batch may be larger). */
static inline int rmlp_reserve(rmlp *m, int n)
{
    if (n <= m->cap) return T2_OK;
    float **bufs[4] = {&m->h, &m->dh, &m->y, &m->dy};
    for (int k = 0; k < 4; k++) {
        float *b = realloc(*bufs[k], (size_t)n * (k < 2 ? m->hidden : m->out) * sizeof(float));
        if (!b) return t2_seterr(T2_ENOMEM, "raw_mlp: out of memory for a batch of %d rows", n);
        *bufs[k] = b;
    }
    m->cap = n;
    return T2_OK;
}

/* x [n, in] -> m->y [n, out] (and the hidden activations m->h, kept for backward). */
static inline int rmlp_forward(rmlp *m, const float *x, int n)
{
    int rc = rmlp_reserve(m, n);
    if (rc) return rc;
    const float *w1 = m->p[RMLP_W1], *b1 = m->p[RMLP_B1], *w2 = m->p[RMLP_W2], *b2 = m->p[RMLP_B2];
    for (int r = 0; r < n; r++) {
        const float *xr = x + (size_t)r * m->in;
        float *hr = m->h + (size_t)r * m->hidden;
        for (int j = 0; j < m->hidden; j++) {
            float s = b1[j];
            const float *wj = w1 + (size_t)j * m->in;
            for (int i = 0; i < m->in; i++) s += wj[i] * xr[i];
            hr[j] = s > 0.0f ? s : 0.0f;
        }
        float *yr = m->y + (size_t)r * m->out;
        for (int o = 0; o < m->out; o++) {
            float s = b2[o];
            const float *wo = w2 + (size_t)o * m->hidden;
            for (int j = 0; j < m->hidden; j++) s += wo[j] * hr[j];
            yr[o] = s;
        }
    }
    return T2_OK;
}

/* Adds the gradients of the loss to m->g given dL/dy in m->dy (after rmlp_forward on the same x). */
static inline void rmlp_backward(rmlp *m, const float *x, int n)
{
    const float *w2 = m->p[RMLP_W2];
    float *gw1 = m->g[RMLP_W1], *gb1 = m->g[RMLP_B1], *gw2 = m->g[RMLP_W2], *gb2 = m->g[RMLP_B2];
    for (int r = 0; r < n; r++) {
        const float *xr = x + (size_t)r * m->in, *hr = m->h + (size_t)r * m->hidden;
        const float *dyr = m->dy + (size_t)r * m->out;
        float *dhr = m->dh + (size_t)r * m->hidden;
        for (int j = 0; j < m->hidden; j++) dhr[j] = 0.0f;
        for (int o = 0; o < m->out; o++) {
            float d = dyr[o];
            gb2[o] += d;
            for (int j = 0; j < m->hidden; j++) {
                gw2[(size_t)o * m->hidden + j] += d * hr[j];
                dhr[j] += d * w2[(size_t)o * m->hidden + j];
            }
        }
        for (int j = 0; j < m->hidden; j++) {
            float d = hr[j] > 0.0f ? dhr[j] : 0.0f; /* relu */
            gb1[j] += d;
            float *gw = gw1 + (size_t)j * m->in;
            for (int i = 0; i < m->in; i++) gw[i] += d * xr[i];
        }
    }
}

/* Hands the four arrays to the framework. */
static inline int rmlp_wrap(t2_ctx *ctx, rmlp *m)
{
    for (int k = 0; k < RMLP_NBUF; k++) {
        int rc = t2_wrap_params(ctx, rmlp_names[k], m->p[k], m->g[k], m->n[k]);
        if (rc) return rc;
    }
    return T2_OK;
}

#endif
