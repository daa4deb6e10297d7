/* dropout.c — inverted dropout: in training each value is kept with probability 1-p and scaled by
 * 1/(1-p), so evaluation is the identity. The mask is counter-based: one draw from the caller's
 * seeded RNG per forward gives a key, and element i is kept when hash(key, i) clears the threshold.
 * A run (and a resumed run) is therefore reproducible, and the mask does not depend on how the
 * elements are split over threads, so the pool can share the work (a sequential RNG stream cost
 * 4 ms per batch of the seeds' CNN, alone on one core, while 15 others waited). */
#include <string.h>
#include "hash64.h"
#include "net.h"
#include "parallel.h"
#include "vector_clones.h"

/* Elements per pool range: below this a range is not worth waking a thread for. */
#define MIN_PER_THREAD 16384

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

typedef struct {
    const float *x, *dy;
    float *y, *mask, *dx;
    uint64_t key;
    uint32_t thresh;
    float scale;
} drop_job;

/* Element i is kept when the top 24 bits of splitmix64's output number i for the key clear
 * p * 2^24. Compiled per vector unit (64-bit multiplies are what bound it). */
T2__VECTOR_CLONES
static void mask_range(void *ctx, size_t b, size_t e)
{
    const drop_job *j = ctx;
    const float *restrict x = j->x;
    float *restrict y = j->y, *restrict mask = j->mask, scale = j->scale;
    uint64_t key = j->key;
    uint32_t thresh = j->thresh;
    for (size_t i = b; i < e; i++) {
        uint64_t h = t2__hash64(key + (uint64_t)i * 0x9e3779b97f4a7c15ull);
        float m = (uint32_t)(h >> 40) >= thresh ? scale : 0.0f;
        mask[i] = m;
        y[i] = x[i] * m;
    }
}

static void copy_range(void *ctx, size_t b, size_t e)
{
    const drop_job *j = ctx;
    memcpy(j->y + b, j->x + b, (e - b) * sizeof(float));
}

static void forward(t2__layer *l, const float *x, float *y, int n, t2_mode mode, t2_rng *rng)
{
    size_t c = (size_t)n * l->in_size;
    drop_job j = {.x = x, .y = y, .mask = l->scratch};
    if (mode != T2_TRAIN || l->p == 0.0f) { /* backward (after T2_TRAIN) passes dy through when p == 0 */
        t2__parallel_for(c, MIN_PER_THREAD, copy_range, &j);
        return;
    }
    j.key = t2_rng_u64(rng);
    j.thresh = (uint32_t)((double)l->p * 16777216.0);
    j.scale = 1.0f / (1.0f - l->p);
    t2__parallel_for(c, MIN_PER_THREAD, mask_range, &j);
}

static void backward_range(void *ctx, size_t b, size_t e)
{
    const drop_job *j = ctx;
    const float *restrict dy = j->dy, *restrict mask = j->mask;
    float *restrict dx = j->dx;
    if (!mask) memcpy(dx + b, dy + b, (e - b) * sizeof(float));
    else
        for (size_t i = b; i < e; i++) dx[i] = dy[i] * mask[i];
}

static void backward(t2__layer *l, const float *x, const float *y, const float *dy, float *dx, int n)
{
    (void)x, (void)y;
    if (!dx) return;
    drop_job j = {.dy = dy, .dx = dx, .mask = l->p == 0.0f ? NULL : l->scratch};
    t2__parallel_for((size_t)n * l->in_size, MIN_PER_THREAD, backward_range, &j);
}

const t2__layer_ops t2__dropout_ops = {"dropout", scratch_bytes, NULL, forward, backward};
