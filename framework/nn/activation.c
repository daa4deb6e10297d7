/* activation.c — elementwise activations: relu, leaky relu, tanh, sigmoid, gelu (erf form), and
 * flatten (a reshape that copies, so every layer owns its output). */
#include <math.h>
#include <string.h>
#include "net.h"

static int add_elementwise(t2_net *net, const t2__layer_ops *ops, float p)
{
    t2__layer l = {.ops = ops, .p = p};
    int rc = t2__net_tail(net, &l.in_ndim, l.in_shape);
    if (rc) return rc;
    l.out_ndim = l.in_ndim;
    memcpy(l.out_shape, l.in_shape, sizeof l.in_shape);
    return t2__net_append(net, &l);
}

int t2_net_relu(t2_net *net) { return add_elementwise(net, &t2__relu_ops, 0.0f); }
int t2_net_tanh(t2_net *net) { return add_elementwise(net, &t2__tanh_ops, 0.0f); }
int t2_net_sigmoid(t2_net *net) { return add_elementwise(net, &t2__sigmoid_ops, 0.0f); }
int t2_net_gelu(t2_net *net) { return add_elementwise(net, &t2__gelu_ops, 0.0f); }

int t2_net_leaky_relu(t2_net *net, float negative_slope)
{
    if (!(negative_slope >= 0.0f && negative_slope < 1.0f))
        return t2_seterr(T2_EINVAL, "t2_net_leaky_relu: negative_slope %g must be in [0, 1)", negative_slope);
    return add_elementwise(net, &t2__leaky_relu_ops, negative_slope);
}

int t2_net_flatten(t2_net *net)
{
    t2__layer l = {.ops = &t2__flatten_ops};
    int rc = t2__net_tail(net, &l.in_ndim, l.in_shape);
    if (rc) return rc;
    l.out_ndim = 1;
    l.out_shape[0] = l.in_ndim == 3 ? l.in_shape[0] * l.in_shape[1] * l.in_shape[2] : l.in_shape[0];
    return t2__net_append(net, &l);
}

#define COUNT(l, n) ((size_t)(n) * (l)->in_size)

static void relu_fwd(t2__layer *l, const float *x, float *y, int n, t2_mode m, t2_rng *r)
{
    (void)m, (void)r;
    for (size_t i = 0, c = COUNT(l, n); i < c; i++) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}
static void relu_bwd(t2__layer *l, const float *x, const float *y, const float *dy, float *dx, int n)
{
    (void)x;
    if (dx)
        for (size_t i = 0, c = COUNT(l, n); i < c; i++) dx[i] = y[i] > 0.0f ? dy[i] : 0.0f;
}

static void leaky_fwd(t2__layer *l, const float *x, float *y, int n, t2_mode m, t2_rng *r)
{
    (void)m, (void)r;
    float a = l->p;
    for (size_t i = 0, c = COUNT(l, n); i < c; i++) y[i] = x[i] > 0.0f ? x[i] : a * x[i];
}
static void leaky_bwd(t2__layer *l, const float *x, const float *y, const float *dy, float *dx, int n)
{
    (void)y;
    float a = l->p;
    if (dx)
        for (size_t i = 0, c = COUNT(l, n); i < c; i++) dx[i] = x[i] > 0.0f ? dy[i] : a * dy[i];
}

static void tanh_fwd(t2__layer *l, const float *x, float *y, int n, t2_mode m, t2_rng *r)
{
    (void)m, (void)r;
    for (size_t i = 0, c = COUNT(l, n); i < c; i++) y[i] = tanhf(x[i]);
}
static void tanh_bwd(t2__layer *l, const float *x, const float *y, const float *dy, float *dx, int n)
{
    (void)x;
    if (dx)
        for (size_t i = 0, c = COUNT(l, n); i < c; i++) dx[i] = dy[i] * (1.0f - y[i] * y[i]);
}

static void sigmoid_fwd(t2__layer *l, const float *x, float *y, int n, t2_mode m, t2_rng *r)
{
    (void)m, (void)r;
    for (size_t i = 0, c = COUNT(l, n); i < c; i++) y[i] = 1.0f / (1.0f + expf(-x[i]));
}
static void sigmoid_bwd(t2__layer *l, const float *x, const float *y, const float *dy, float *dx, int n)
{
    (void)x;
    if (dx)
        for (size_t i = 0, c = COUNT(l, n); i < c; i++) dx[i] = dy[i] * y[i] * (1.0f - y[i]);
}

static void gelu_fwd(t2__layer *l, const float *x, float *y, int n, t2_mode m, t2_rng *r)
{
    (void)m, (void)r;
    for (size_t i = 0, c = COUNT(l, n); i < c; i++) y[i] = 0.5f * x[i] * (1.0f + erff(x[i] * 0.70710678118654752f));
}
static void gelu_bwd(t2__layer *l, const float *x, const float *y, const float *dy, float *dx, int n)
{
    (void)y;
    const float inv_sqrt_2pi = 0.3989422804014327f;
    if (dx)
        for (size_t i = 0, c = COUNT(l, n); i < c; i++) {
            float cdf = 0.5f * (1.0f + erff(x[i] * 0.70710678118654752f));
            float pdf = inv_sqrt_2pi * expf(-0.5f * x[i] * x[i]);
            dx[i] = dy[i] * (cdf + x[i] * pdf);
        }
}

static void copy_fwd(t2__layer *l, const float *x, float *y, int n, t2_mode m, t2_rng *r)
{
    (void)m, (void)r;
    memcpy(y, x, COUNT(l, n) * sizeof(float));
}
static void copy_bwd(t2__layer *l, const float *x, const float *y, const float *dy, float *dx, int n)
{
    (void)x, (void)y;
    if (dx) memcpy(dx, dy, COUNT(l, n) * sizeof(float));
}

const t2__layer_ops t2__relu_ops = {"relu", NULL, NULL, relu_fwd, relu_bwd};
const t2__layer_ops t2__leaky_relu_ops = {"leaky_relu", NULL, NULL, leaky_fwd, leaky_bwd};
const t2__layer_ops t2__tanh_ops = {"tanh", NULL, NULL, tanh_fwd, tanh_bwd};
const t2__layer_ops t2__sigmoid_ops = {"sigmoid", NULL, NULL, sigmoid_fwd, sigmoid_bwd};
const t2__layer_ops t2__gelu_ops = {"gelu", NULL, NULL, gelu_fwd, gelu_bwd};
const t2__layer_ops t2__flatten_ops = {"flatten", NULL, NULL, copy_fwd, copy_bwd};
