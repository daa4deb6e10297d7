/* Dropout's counter-based mask (dropout.c): the same seed gives the same mask on 1 and 3 threads
 * (the pool splits the elements, the mask must not notice); about p of the elements are dropped and
 * the rest scaled by 1/(1-p); successive forwards draw new masks; backward multiplies by the mask;
 * evaluation and p = 0 are the identity. */
#include <stdlib.h>
#include "check.h"
#include "t2exp.h"

enum { F = 40000, N = 3 };
static const float P = 0.3f;

static t2_net *dropout_net(float p)
{
    t2_net *net = NULL;
    t2_rng r;
    t2_rng_seed(&r, 1);
    CHECK_OK(t2_net_create(&net, 1, (int[]){F}));
    CHECK_OK(t2_net_dropout(net, p));
    CHECK_OK(t2_net_init(net, &r));
    return net;
}

/* Forward of x in `mode` with a fresh rng seeded 7 on `threads` threads; copies the output to out. */
static void forward(t2_net *net, const t2_tensor *x, t2_mode mode, int threads, float *out, t2_rng *r)
{
    const t2_tensor *y = NULL;
    CHECK_OK(t2_set_num_threads(threads));
    CHECK_OK(t2_net_forward(net, x, mode, r, &y));
    if (y) memcpy(out, y->data, sizeof(float) * N * F);
}

int main(void)
{
    t2_tensor x = {0}, dy = {0};
    CHECK_OK(t2_tensor_alloc(&x, 2, (int[]){N, F}));
    CHECK_OK(t2_tensor_alloc(&dy, 2, (int[]){N, F}));
    for (int i = 0; i < N * F; i++) {
        x.data[i] = 1.0f + (float)(i % 97);
        dy.data[i] = 0.5f + (float)(i % 13);
    }
    float *a = malloc(sizeof(float) * N * F), *b = malloc(sizeof(float) * N * F),
          *c = malloc(sizeof(float) * N * F);
    CHECK(a && b && c);
    if (!a || !b || !c) return check_report("test_nn_dropout");

    t2_net *net = dropout_net(P);
    t2_rng r1, r3;
    t2_rng_seed(&r1, 7);
    t2_rng_seed(&r3, 7);
    forward(net, &x, T2_TRAIN, 1, a, &r1);
    forward(net, &x, T2_TRAIN, 3, b, &r3);
    CHECK(memcmp(a, b, sizeof(float) * N * F) == 0);

    int dropped = 0, bad = 0;
    for (int i = 0; i < N * F; i++) {
        if (a[i] == 0.0f) dropped++;
        else if (fabsf(a[i] - x.data[i] / (1.0f - P)) > 1e-4f * a[i]) bad++;
    }
    CHECK(bad == 0);
    /* 120000 draws: the dropped fraction's standard deviation is 0.0013. */
    CHECK_NEAR((double)dropped / (N * F), P, 0.01);

    /* Backward with the mask of the last forward (b's): dx = dy * b / x. */
    const t2_tensor *dx = NULL;
    CHECK_OK(t2_net_backward(net, &dy, &dx));
    int wrong = 0;
    for (int i = 0; dx && i < N * F; i++)
        if (fabsf(dx->data[i] - dy.data[i] * (b[i] / x.data[i])) > 1e-4f * (1.0f + dx->data[i])) wrong++;
    CHECK(dx && wrong == 0);

    /* The next forward (same rng, advanced) draws another mask. */
    forward(net, &x, T2_TRAIN, 3, c, &r3);
    CHECK(memcmp(b, c, sizeof(float) * N * F) != 0);

    /* Evaluation is the identity. */
    forward(net, &x, T2_EVAL, 3, c, NULL);
    CHECK(memcmp(c, x.data, sizeof(float) * N * F) == 0);
    t2_net_free(net);

    /* p = 0 in training: identity forward, dy passed through backward. */
    net = dropout_net(0.0f);
    forward(net, &x, T2_TRAIN, 2, c, &r1);
    CHECK(memcmp(c, x.data, sizeof(float) * N * F) == 0);
    CHECK_OK(t2_net_backward(net, &dy, &dx));
    CHECK(dx && memcmp(dx->data, dy.data, sizeof(float) * N * F) == 0);
    t2_net_free(net);

    free(a);
    free(b);
    free(c);
    t2_tensor_free(&x);
    t2_tensor_free(&dy);
    return check_report("test_nn_dropout");
}
