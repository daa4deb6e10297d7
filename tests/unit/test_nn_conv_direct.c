/* conv2d's stride-1 direct path (conv_direct.h) against its im2col + sgemm path: on every geometry
 * below, one forward and backward of the same net gives the same outputs, input gradient and
 * weight and bias gradients with the direct kernel on and off, within float rounding (the sums
 * run in another order). The geometries cover padding 0-2, kernels 1-5, channel counts that are
 * and are not multiples of the kernel's 8-channel blocks, rows wider than a tile (48 positions),
 * a 1x1 image, the fused relu, and a batch split unevenly over two parts. Skips (77) where the CPU
 * has no AVX-512, as the direct kernel is then never used. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "nn/conv_direct.h"
#include "t2exp.h"

typedef struct {
    int c, h, w, oc, k, pad, relu, n;
} geometry;

typedef struct {
    float *out, *dx, *grads;
    size_t nout, ndx, ngrads;
} result;

static float *copy(const float *src, size_t n)
{
    float *d = malloc(n * sizeof *d);
    CHECK(d != NULL);
    if (d) memcpy(d, src, n * sizeof *d);
    return d;
}

/* A second conv2d in front makes the tested layer's input gradient part of backward. */
static void run(const geometry *g, int direct, result *res)
{
    t2__conv_direct_set(direct);
    t2_net *net = NULL;
    t2_rng r;
    t2_rng_seed(&r, 7);
    CHECK_OK(t2_net_create(&net, 3, (int[]){g->c, g->h, g->w}));
    CHECK_OK(t2_net_conv2d(net, g->c, 1, 1, 0));
    CHECK_OK(t2_net_conv2d(net, g->oc, g->k, 1, g->pad));
    if (g->relu) CHECK_OK(t2_net_relu(net));
    CHECK_OK(t2_net_init(net, &r));
    size_t nin = (size_t)g->n * g->c * g->h * g->w;
    float *xv = malloc(nin * sizeof *xv);
    CHECK(xv != NULL);
    for (size_t i = 0; i < nin; i++) xv[i] = (float)((i * 37 + 11) % 101) / 50.0f - 1.0f;
    t2_tensor x = t2_tensor_view(xv, 4, (int[]){g->n, g->c, g->h, g->w});
    const t2_tensor *y = NULL, *dx = NULL;
    CHECK_OK(t2_net_forward(net, &x, T2_TRAIN, &r, &y));
    res->nout = t2_tensor_numel(y);
    res->out = copy(y->data, res->nout);
    float *dyv = malloc(res->nout * sizeof *dyv);
    CHECK(dyv != NULL);
    for (size_t i = 0; i < res->nout; i++) dyv[i] = (float)((i * 53 + 5) % 97) / 48.0f - 1.0f;
    t2_tensor dy = *y;
    dy.data = dyv;
    t2_net_zero_grad(net);
    CHECK_OK(t2_net_backward(net, &dy, &dx));
    res->ndx = nin;
    res->dx = copy(dx->data, nin);
    const float *gr = t2_net_grads(net, &res->ngrads);
    res->grads = copy(gr, res->ngrads);
    free(dyv);
    free(xv);
    t2_net_free(net);
}

/* Largest difference relative to the larger magnitude in a (float sums in another order). */
static double rel_diff(const float *a, const float *b, size_t n)
{
    double top = 1e-6, worst = 0.0;
    for (size_t i = 0; i < n; i++) top = fmax(top, fabs((double)a[i]));
    for (size_t i = 0; i < n; i++) worst = fmax(worst, fabs((double)a[i] - (double)b[i]) / top);
    return worst;
}

int main(void)
{
    if (!t2__conv_direct_available()) {
        fprintf(stderr, "SKIP: this CPU has no AVX-512F; conv2d never takes the direct path here\n");
        return 77;
    }
    static const geometry cases[] = {
        {1, 28, 28, 32, 3, 0, 1, 3},  /* the seeds' CNN's first conv */
        {32, 26, 26, 64, 3, 0, 1, 3}, /* and its second */
        {3, 7, 9, 5, 3, 1, 0, 5},     {2, 5, 5, 17, 5, 2, 1, 4}, {4, 6, 11, 9, 1, 0, 0, 3},
        {3, 8, 8, 8, 2, 0, 1, 2},     {5, 4, 4, 3, 3, 2, 0, 3},  {2, 3, 70, 4, 3, 1, 1, 3},
        {1, 1, 1, 2, 1, 0, 0, 2},     {9, 12, 5, 16, 3, 1, 1, 5}, {3, 9, 9, 70, 3, 1, 1, 2},
    };
    CHECK_OK(t2_set_num_threads(2));
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const geometry *g = &cases[i];
        result a = {0}, b = {0};
        run(g, 1, &a);
        run(g, 0, &b);
        CHECK(a.nout == b.nout && a.ndx == b.ndx && a.ngrads == b.ngrads);
        if (a.nout == b.nout && a.ndx == b.ndx && a.ngrads == b.ngrads && a.out && b.out && a.dx && b.dx &&
            a.grads && b.grads) {
            double dout = rel_diff(b.out, a.out, a.nout), ddx = rel_diff(b.dx, a.dx, a.ndx),
                   dg = rel_diff(b.grads, a.grads, a.ngrads);
            if (dout > 1e-5 || ddx > 1e-5 || dg > 1e-5) {
                fprintf(stderr, "case %zu (c=%d %dx%d oc=%d k=%d pad=%d relu=%d n=%d): out %.2g dx %.2g grads %.2g\n", i,
                        g->c, g->h, g->w, g->oc, g->k, g->pad, g->relu, g->n, dout, ddx, dg);
                check_failures++;
            }
        }
        free(a.out), free(a.dx), free(a.grads), free(b.out), free(b.dx), free(b.grads);
    }
    t2__conv_direct_set(1);
    return check_report("test_nn_conv_direct");
}
