/* Regression losses: t2_loss_huber against PyTorch's HuberLoss (tests/fixtures/loss_huber*.txt,
 * written by tests/fixtures/torch_nn.py), its quadratic/linear boundary, and the shape errors of
 * t2_loss_mse and t2_loss_huber for a target of the wrong width. */
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "fixture.h"
#include "t2exp.h"

#define RTOL 1e-5
#define ATOL 1e-7

static void huber_fixture(const char *file, float delta)
{
    fixture *f = fixture_load(file);
    CHECK(f != NULL);
    if (!f) return;
    const fixture_array *in = fixture_get(f, "input"), *tg = fixture_get(f, "target");
    t2_tensor x = t2_tensor_view(in->data, in->ndim, in->shape), t = t2_tensor_view(tg->data, tg->ndim, tg->shape), d;
    CHECK_OK(t2_tensor_alloc(&d, in->ndim, in->shape));
    float loss = -1.0f;
    CHECK_OK(t2_loss_huber(&x, &t, delta, &loss, &d));
    CHECK(fixture_compare(f, "loss", &loss, 1, RTOL, ATOL) == 0);
    CHECK(fixture_compare(f, "d_input", d.data, t2_tensor_numel(&x), RTOL, ATOL) == 0);
    /* Both branches must occur, or the fixture does not test what it claims. */
    int quad = 0, lin = 0;
    for (size_t i = 0; i < t2_tensor_numel(&x); i++) {
        float a = fabsf(x.data[i] - t.data[i]);
        quad += a < delta;
        lin += a >= delta;
    }
    CHECK(quad > 0 && lin > 0);
    /* Without a gradient buffer the loss is the same. */
    float loss2 = -1.0f;
    CHECK_OK(t2_loss_huber(&x, &t, delta, &loss2, NULL));
    CHECK(loss2 == loss);
    t2_tensor_free(&d);
    fixture_free(f);
}

static void huber_boundary(void)
{
    /* d = 2 exactly at delta 2: linear branch 2 * (2 - 1) = 2 equals 0.5 * 4 = 2, gradient delta/n. */
    float p[2] = {2.0f, -0.5f}, q[2] = {0.0f, 0.0f}, g[2];
    int shape[2] = {1, 2};
    t2_tensor P = t2_tensor_view(p, 2, shape), Q = t2_tensor_view(q, 2, shape), G = t2_tensor_view(g, 2, shape);
    float loss;
    CHECK_OK(t2_loss_huber(&P, &Q, 2.0f, &loss, &G));
    CHECK_NEAR(loss, (2.0 + 0.125) / 2, 1e-7);
    CHECK_NEAR(g[0], 1.0, 1e-7);
    CHECK_NEAR(g[1], -0.25, 1e-7);
    CHECK_RC(t2_loss_huber(&P, &Q, 0.0f, &loss, &G), T2_EINVAL);
    CHECK_STR(t2_errmsg(), "t2_loss_huber: delta 0 (must be finite and > 0)");
    CHECK_RC(t2_loss_huber(&P, &Q, NAN, &loss, &G), T2_EINVAL);
}

static void wrong_width(void)
{
    float p[4] = {0}, t[12] = {0};
    int ps[2] = {4, 1}, ts[2] = {4, 3};
    t2_tensor P = t2_tensor_view(p, 2, ps), T = t2_tensor_view(t, 2, ts);
    float loss;
    CHECK_RC(t2_loss_mse(&P, &T, &loss, NULL), T2_ESHAPE);
    CHECK_STR(t2_errmsg(), "t2_loss_mse: targets of width 3 for a prediction of width 1 (target [4, 3], prediction [4, 1])");
    CHECK_RC(t2_loss_huber(&P, &T, 1.0f, &loss, NULL), T2_ESHAPE);
    CHECK_STR(t2_errmsg(), "t2_loss_huber: targets of width 3 for a prediction of width 1 (target [4, 3], prediction [4, 1])");
    /* Different batch sizes are not a width problem: both shapes in full. */
    int ts2[2] = {3, 1};
    t2_tensor T2 = t2_tensor_view(t, 2, ts2);
    CHECK_RC(t2_loss_huber(&P, &T2, 1.0f, &loss, NULL), T2_ESHAPE);
    CHECK_STR(t2_errmsg(), "t2_loss_huber: prediction [4, 1] and target [3, 1] differ");
    /* A gradient buffer of another shape. */
    float g[3];
    int gs[2] = {3, 1};
    t2_tensor G = t2_tensor_view(g, 2, gs), T3 = t2_tensor_view(t, 2, ps);
    CHECK_RC(t2_loss_huber(&P, &T3, 1.0f, &loss, &G), T2_ESHAPE);
    CHECK_STR(t2_errmsg(), "t2_loss_huber: gradient [3, 1] does not match prediction [4, 1]");
    CHECK_RC(t2_loss_huber(NULL, &T3, 1.0f, &loss, NULL), T2_EINVAL);
}

int main(void)
{
    huber_fixture("loss_huber.txt", 1.0f);
    huber_fixture("loss_huber_d03.txt", 0.3f);
    huber_boundary();
    wrong_width();
    return check_report("test_loss_regression");
}
