/* dropout.c — inverted dropout: in training each value is kept with probability 1-p and scaled by
 * 1/(1-p), so evaluation is the identity. The mask comes from the caller's seeded RNG, which makes
 * a run (and a resumed run) reproducible. */
#include <string.h>
#include "net.h"

int t2_net_dropout(t2_net *net, float p)
{
    t2__layer l = {.ops = &t2__dropout_ops, .p = p};
    if (!(p >= 0.0f && p < 1.0f)) return t2_seterr(T2_EINVAL, "t2_net_dropout: p %g must be in [0, 1)", p);
    int rc = t2__net_tail(net, &l.in_ndim, l.in_shape);
    if (rc) return rc;
    l.out_ndim = l.in_ndim;
    memcpy(l.out_shape, l.in_shape, sizeof l.in_shape);
    return t2__net_append(net, &l);
}

/* The mask as the scale each element was multiplied by (0 or 1/(1-p)). */
static size_t scratch_bytes(const t2__layer *l, int n) { return (size_t)n * l->in_size * sizeof(float); }

static void forward(t2__layer *l, const float *x, float *y, int n, t2_mode mode, t2_rng *rng)
{
    size_t c = (size_t)n * l->in_size;
    float *mask = l->scratch;
    if (mode != T2_TRAIN || l->p == 0.0f) {
        memcpy(y, x, c * sizeof(float));
        for (size_t i = 0; i < c; i++) mask[i] = 1.0f;
        return;
    }
    /* Keep when a 24-bit uniform integer is >= p * 2^24: one RNG call serves two elements. */
    uint32_t thresh = (uint32_t)((double)l->p * 16777216.0);
    float scale = 1.0f / (1.0f - l->p);
    size_t i = 0;
    for (; i + 1 < c; i += 2) {
        uint64_t r = t2_rng_u64(rng);
        mask[i] = ((uint32_t)(r >> 40) >= thresh) ? scale : 0.0f;
        mask[i + 1] = ((uint32_t)(r >> 16 & 0xffffff) >= thresh) ? scale : 0.0f;
    }
    if (i < c) mask[i] = ((uint32_t)(t2_rng_u64(rng) >> 40) >= thresh) ? scale : 0.0f;
    for (i = 0; i < c; i++) y[i] = x[i] * mask[i];
}

static void backward(t2__layer *l, const float *x, const float *y, const float *dy, float *dx, int n)
{
    (void)x, (void)y;
    const float *mask = l->scratch;
    if (dx)
        for (size_t i = 0, c = (size_t)n * l->in_size; i < c; i++) dx[i] = dy[i] * mask[i];
}

const t2__layer_ops t2__dropout_ops = {"dropout", scratch_bytes, NULL, forward, backward};
