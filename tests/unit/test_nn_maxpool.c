/* Max pooling's outputs and input gradient, bit for bit, against a plain reference written here:
 * the maximum of each window with the first maximum winning ties (strict >, so a NaN never
 * replaces a value but one that comes first stays), and backward giving each window's dy to that
 * argmax and +0 to the rest of the window and to what no window covers. The inputs are full of
 * ties (a relu's zeros), with -0, NaN and infinities among them, and dy holds -0s. The geometries
 * cover 2 x 2 / 2 (the layer's unrolled path) with even and odd sides, output rows shorter and
 * longer than a 16-lane vector and not a multiple of it, and a 3 x 3 / 2 window. (Written for an
 * AVX-512 path that was measured and not kept; it pins down what any faster path must keep.) */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "t2exp.h"

typedef struct {
    int c, h, w, k, s, n;
} geometry;

static float input_value(size_t i)
{
    static const float pool[] = {0.0f, 0.0f, 0.5f, -0.0f, 0.25f, 0.5f, -1.0f, 0.0f, 2.0f, 0.25f, 0.0f, -3.0f};
    if (i % 97 == 13) return NAN;
    if (i % 89 == 7) return INFINITY;
    if (i % 83 == 5) return -INFINITY;
    return pool[(i * 7 + i / 5) % (sizeof pool / sizeof pool[0])];
}

/* The reference: y and dx for every plane of x. */
static void reference(const geometry *g, const float *x, const float *dy, float *y, float *dx)
{
    int oh = (g->h - g->k) / g->s + 1, ow = (g->w - g->k) / g->s + 1;
    size_t planes = (size_t)g->n * g->c;
    memset(dx, 0, planes * g->h * g->w * sizeof *dx);
    for (size_t p = 0; p < planes; p++) {
        const float *xp = x + p * g->h * g->w;
        float *dxp = dx + p * g->h * g->w;
        for (int r = 0; r < oh; r++)
            for (int c = 0; c < ow; c++) {
                int best = r * g->s * g->w + c * g->s;
                float m = xp[best];
                for (int ki = 0; ki < g->k; ki++)
                    for (int kj = 0; kj < g->k; kj++) {
                        int at = (r * g->s + ki) * g->w + c * g->s + kj;
                        if (xp[at] > m) m = xp[at], best = at;
                    }
                size_t o = (p * oh + r) * ow + c;
                y[o] = m;
                dxp[best] += dy[o];
            }
    }
}

static void run(const geometry *g)
{
    t2_net *net = NULL;
    t2_rng r;
    t2_rng_seed(&r, 3);
    CHECK_OK(t2_net_create(&net, 3, (int[]){g->c, g->h, g->w}));
    CHECK_OK(t2_net_maxpool2d(net, g->k, g->s));
    CHECK_OK(t2_net_init(net, &r));
    size_t nin = (size_t)g->n * g->c * g->h * g->w;
    float *xv = malloc(nin * sizeof *xv), *dx_ref = malloc(nin * sizeof *dx_ref);
    CHECK(xv && dx_ref);
    if (!xv || !dx_ref) return;
    for (size_t i = 0; i < nin; i++) xv[i] = input_value(i);
    t2_tensor x = t2_tensor_view(xv, 4, (int[]){g->n, g->c, g->h, g->w});
    const t2_tensor *y = NULL, *dx = NULL;
    CHECK_OK(t2_net_forward(net, &x, T2_TRAIN, &r, &y));
    size_t nout = y ? t2_tensor_numel(y) : 0;
    float *dyv = malloc((nout ? nout : 1) * sizeof *dyv), *y_ref = malloc((nout ? nout : 1) * sizeof *y_ref);
    CHECK(dyv && y_ref);
    if (y && dyv && y_ref) {
        for (size_t i = 0; i < nout; i++) dyv[i] = i % 5 == 2 ? -0.0f : (float)((i * 53 + 5) % 97) / 48.0f - 1.0f;
        reference(g, xv, dyv, y_ref, dx_ref);
        if (memcmp(y->data, y_ref, nout * sizeof *y_ref) != 0) {
            fprintf(stderr, "forward differs: c=%d %dx%d k=%d s=%d n=%d\n", g->c, g->h, g->w, g->k, g->s, g->n);
            check_failures++;
        }
        t2_tensor dyt = *y;
        dyt.data = dyv;
        CHECK_OK(t2_net_backward(net, &dyt, &dx));
        /* Again over a gradient buffer full of another value (the net reuses it, as its layers
         * share it in a real net): every input's gradient must be written, covered or not. */
        for (size_t i = 0; dx && i < nin; i++) ((float *)dx->data)[i] = 12345.0f;
        CHECK_OK(t2_net_forward(net, &x, T2_TRAIN, &r, &y));
        CHECK_OK(t2_net_backward(net, &dyt, &dx));
        if (dx && memcmp(dx->data, dx_ref, nin * sizeof *dx_ref) != 0) {
            fprintf(stderr, "input gradient differs: c=%d %dx%d k=%d s=%d n=%d\n", g->c, g->h, g->w, g->k, g->s,
                    g->n);
            check_failures++;
        }
    }
    free(dyv);
    free(y_ref);
    free(dx_ref);
    free(xv);
    t2_net_free(net);
}

int main(void)
{
    static const geometry cases[] = {
        {64, 24, 24, 2, 2, 3}, /* the seeds' CNN's pooling */
        {3, 5, 7, 2, 2, 4},    /* odd sides: a last row and column no window covers */
        {2, 2, 2, 2, 2, 5},    {2, 4, 66, 2, 2, 3}, /* 33 outputs a row: two vectors and one lane */
        {1, 6, 64, 2, 2, 2},   /* 32: two whole vectors */
        {3, 9, 35, 2, 2, 3},   /* 17 */
        {2, 9, 11, 3, 2, 3},   /* another window: the scalar path everywhere */
    };
    CHECK_OK(t2_set_num_threads(2));
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) run(&cases[i]);
    return check_report("test_nn_maxpool");
}
