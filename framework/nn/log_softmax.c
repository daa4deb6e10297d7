/* log_softmax.c — log-softmax over the features of [F] samples, computed with the max shifted
 * out so large logits do not overflow. */
#include <math.h>
#include <string.h>
#include "net.h"

int t2_net_log_softmax(t2_net *net)
{
    t2__layer l = {.ops = &t2__log_softmax_ops};
    int rc = t2__net_tail(net, &l.in_ndim, l.in_shape);
    if (rc) return rc;
    if (l.in_ndim != 1)
        return t2_seterr(T2_ESHAPE, "t2_net_log_softmax: input is [%d, %d, %d]; flatten first",
                         l.in_shape[0], l.in_shape[1], l.in_shape[2]);
    l.out_ndim = 1;
    l.out_shape[0] = l.in_shape[0];
    return t2__net_append(net, &l);
}

static void forward(t2__layer *l, const float *x, float *y, int n, t2_mode mode, t2_rng *rng)
{
    (void)mode, (void)rng;
    int F = l->in_shape[0];
    for (int i = 0; i < n; i++) {
        const float *xr = x + (size_t)i * F;
        float *yr = y + (size_t)i * F, m = xr[0];
        for (int j = 1; j < F; j++) m = xr[j] > m ? xr[j] : m;
        double s = 0.0;
        for (int j = 0; j < F; j++) s += exp((double)(xr[j] - m));
        float lse = m + (float)log(s);
        for (int j = 0; j < F; j++) yr[j] = xr[j] - lse;
    }
}

static void backward(t2__layer *l, const float *x, const float *y, const float *dy, float *dx, int n)
{
    (void)x;
    if (!dx) return;
    int F = l->in_shape[0];
    for (int i = 0; i < n; i++) {
        const float *yr = y + (size_t)i * F, *gr = dy + (size_t)i * F;
        float *dr = dx + (size_t)i * F, s = 0.0f;
        for (int j = 0; j < F; j++) s += gr[j];
        for (int j = 0; j < F; j++) dr[j] = gr[j] - expf(yr[j]) * s;
    }
}

const t2__layer_ops t2__log_softmax_ops = {"log_softmax", NULL, NULL, forward, backward};
