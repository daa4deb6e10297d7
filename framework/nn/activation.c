/* activation.c — elementwise activations: relu, leaky relu, tanh, sigmoid, gelu (erf form), and
 * flatten (a reshape that copies, so every layer owns its output). */
#include <math.h>
#include <string.h>
#include "net.h"
#include "parallel.h"

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

/* Elementwise kernels run over [begin, end) ranges split across the pool. */
typedef struct {
    const float *x, *y, *dy;
    float *out;
    float a;
} ew_args;

/* Defines NAME_fwd/NAME_bwd layer callbacks from an expression over x[i] (forward) and over
 * x[i], y[i], dy[i] (backward; yields dx[i]). */
#define ELEMENTWISE(NAME, FWD, BWD)                                                            \
    static void NAME##_fwd_range(void *ctx, size_t b, size_t e)                                \
    {                                                                                          \
        const ew_args *A = ctx;                                                                \
        const float *restrict x = A->x;                                                        \
        float *restrict out = A->out, a = A->a;                                                \
        (void)a;                                                                               \
        for (size_t i = b; i < e; i++) out[i] = (FWD);                                         \
    }                                                                                          \
    static void NAME##_bwd_range(void *ctx, size_t b, size_t e)                                \
    {                                                                                          \
        const ew_args *A = ctx;                                                                \
        const float *restrict x = A->x, *restrict y = A->y, *restrict dy = A->dy;              \
        float *restrict out = A->out, a = A->a;                                                \
        (void)a, (void)x, (void)y;                                                             \
        for (size_t i = b; i < e; i++) out[i] = (BWD);                                         \
    }                                                                                          \
    static void NAME##_fwd(t2__layer *l, const float *x, float *y, int n, t2_mode m, t2_rng *r) \
    {                                                                                          \
        (void)m, (void)r;                                                                      \
        ew_args A = {x, NULL, NULL, y, l->p};                                                  \
        t2__parallel_for((size_t)n * l->in_size, 1 << 14, NAME##_fwd_range, &A);                \
    }                                                                                          \
    static void NAME##_bwd(t2__layer *l, const float *x, const float *y, const float *dy, float *dx, int n) \
    {                                                                                          \
        if (!dx) return;                                                                       \
        ew_args A = {x, y, dy, dx, l->p};                                                      \
        t2__parallel_for((size_t)n * l->in_size, 1 << 14, NAME##_bwd_range, &A);                \
    }

#define SQRT1_2 0.70710678118654752f
#define INV_SQRT_2PI 0.3989422804014327f

ELEMENTWISE(relu, x[i] > 0.0f ? x[i] : 0.0f, y[i] > 0.0f ? dy[i] : 0.0f)
ELEMENTWISE(leaky, x[i] > 0.0f ? x[i] : a * x[i], x[i] > 0.0f ? dy[i] : a * dy[i])
ELEMENTWISE(tanh, tanhf(x[i]), dy[i] * (1.0f - y[i] * y[i]))
ELEMENTWISE(sigmoid, 1.0f / (1.0f + expf(-x[i])), dy[i] * y[i] * (1.0f - y[i]))
ELEMENTWISE(gelu, 0.5f * x[i] * (1.0f + erff(x[i] * SQRT1_2)),
            dy[i] * (0.5f * (1.0f + erff(x[i] * SQRT1_2)) + x[i] * INV_SQRT_2PI * expf(-0.5f * x[i] * x[i])))
ELEMENTWISE(copy, x[i], dy[i])

const t2__layer_ops t2__relu_ops = {"relu", NULL, NULL, relu_fwd, relu_bwd};
const t2__layer_ops t2__leaky_relu_ops = {"leaky_relu", NULL, NULL, leaky_fwd, leaky_bwd};
const t2__layer_ops t2__tanh_ops = {"tanh", NULL, NULL, tanh_fwd, tanh_bwd};
const t2__layer_ops t2__sigmoid_ops = {"sigmoid", NULL, NULL, sigmoid_fwd, sigmoid_bwd};
const t2__layer_ops t2__gelu_ops = {"gelu", NULL, NULL, gelu_fwd, gelu_bwd};
const t2__layer_ops t2__flatten_ops = {"flatten", NULL, NULL, copy_fwd, copy_bwd};
