/* global_avgpool.c — global average pooling, [C, H, W] -> [C]: each channel's mean over its H*W
 * plane (PyTorch nn.AdaptiveAvgPool2d(1) followed by flatten). Planes are independent, so both
 * passes split the batch's n*C planes across the pool. */
#include "net.h"
#include "parallel.h"

int t2_net_global_avgpool(t2_net *net)
{
    t2__layer l = {.ops = &t2__global_avgpool_ops};
    int rc = t2__net_tail(net, &l.in_ndim, l.in_shape);
    if (rc) return rc;
    if (l.in_ndim != 3)
        return t2_seterr(T2_ESHAPE, "t2_net_global_avgpool: layer %d: input is [%d]; global average pooling needs "
                         "[C, H, W]", t2_net_num_layers(net), l.in_shape[0]);
    l.out_ndim = 1;
    l.out_shape[0] = l.in_shape[0];
    return t2__net_append(net, &l);
}

typedef struct {
    const float *x, *dy;
    float *y, *dx;
    size_t plane;  /* H*W */
    size_t count;  /* planes in the batch */
    int parts;
} gap_job;

static void forward_part(void *ctx, size_t tb, size_t te)
{
    const gap_job *j = ctx;
    for (size_t t = tb; t < te; t++) {
        size_t b = j->count * t / (size_t)j->parts, e = j->count * (t + 1) / (size_t)j->parts;
        for (size_t p = b; p < e; p++) {
            const float *x = j->x + p * j->plane;
            double s = 0.0;  /* a 1/HW mean of large planes: summed in double */
            for (size_t k = 0; k < j->plane; k++) s += x[k];
            j->y[p] = (float)(s / (double)j->plane);
        }
    }
}

static void backward_part(void *ctx, size_t tb, size_t te)
{
    const gap_job *j = ctx;
    for (size_t t = tb; t < te; t++) {
        size_t b = j->count * t / (size_t)j->parts, e = j->count * (t + 1) / (size_t)j->parts;
        for (size_t p = b; p < e; p++) {
            float g = (float)((double)j->dy[p] / (double)j->plane), *dx = j->dx + p * j->plane;
            for (size_t k = 0; k < j->plane; k++) dx[k] = g;
        }
    }
}

static gap_job job_of(const t2__layer *l, int n)
{
    gap_job j = {.plane = (size_t)l->in_shape[1] * (size_t)l->in_shape[2],
                 .count = (size_t)n * (size_t)l->in_shape[0]};
    j.parts = l->nparts < 1 ? 1 : (size_t)l->nparts > j.count ? (int)j.count : l->nparts;
    return j;
}

static void forward(t2__layer *l, const float *x, float *y, int n, t2_mode mode, t2_rng *rng)
{
    (void)mode;
    (void)rng;
    gap_job j = job_of(l, n);
    j.x = x;
    j.y = y;
    t2__parallel_for((size_t)j.parts, 1, forward_part, &j);
}

static void backward(t2__layer *l, const float *x, const float *y, const float *dy, float *dx, int n)
{
    (void)x;
    (void)y;
    if (!dx) return;
    gap_job j = job_of(l, n);
    j.dy = dy;
    j.dx = dx;
    t2__parallel_for((size_t)j.parts, 1, backward_part, &j);
}

const t2__layer_ops t2__global_avgpool_ops = {"global_avgpool", NULL, NULL, forward, backward};
