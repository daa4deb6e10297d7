/* Finite-difference gradient checks for every layer and loss: the analytic input and parameter
 * gradients from t2_net_backward against central differences of L = sum(y * r), through the
 * public checker t2_net_gradcheck (framework/nn/gradcheck.c). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "t2exp.h"

#define EPS 1e-2f

/* Perturbation for the parameter/input sweeps; the whole-CNN check uses a smaller one because a
 * weight change moves many activations at once and 1e-2 would push some across relu/max kinks. */
static float eps = EPS;

static t2_tensor make_input(int n, int ndim, const int *shape, uint64_t seed, float gap)
{
    int s[T2_MAX_DIMS] = {n, 1, 1, 1};
    for (int i = 0; i < ndim; i++) s[i + 1] = shape[i];
    t2_tensor x;
    if (t2_tensor_alloc(&x, ndim + 1, s) != T2_OK) abort();
    t2_rng r;
    t2_rng_seed(&r, seed);
    size_t cnt = t2_tensor_numel(&x);
    for (size_t i = 0; i < cnt; i++) {
        float v = t2_rng_normal(&r);
        /* Keep values away from kinks (relu at 0) and ties (max pooling) by more than EPS. */
        if (gap > 0) v = (v >= 0 ? 1.0f : -1.0f) * (fabsf(v) + gap) + (float)(i % 97) * 3 * EPS;
        x.data[i] = v;
    }
    return x;
}

/* Initialises net, nudges its parameters, and checks its input and parameter gradients with the
 * library's checker (t2_net_gradcheck: central differences of L = sum(y * r)). */
static void run(const char *layer, t2_net *net, int n, int ndim, const int *shape, float gap)
{
    t2_rng r;
    t2_rng_seed(&r, 7);
    CHECK_OK(t2_net_init(net, &r));
    size_t np;
    float *params = t2_net_params(net, &np);
    /* Non-trivial parameters (batchnorm starts at weight 1 bias 0). */
    for (size_t i = 0; i < np; i++) params[i] += 0.1f * t2_rng_normal(&r);
    t2_tensor x = make_input(n, ndim, shape, 11, gap);
    t2_gradcheck_report rep;
    CHECK_OK(t2_net_gradcheck(net, &x, 99, eps, &rep));
    CHECK(rep.nchecked > 0);
    if (!(rep.max_rel_err <= 2e-2)) {
        fprintf(stderr, "gradcheck %s %s: analytic %.6g numeric %.6g\n", layer, rep.worst, rep.analytic, rep.numeric);
        check_failures++;
    }
    t2_tensor_free(&x);
    t2_net_free(net);
}

static t2_net *net_of(int ndim, const int *shape)
{
    t2_net *net = NULL;
    if (t2_net_create(&net, ndim, shape) != T2_OK) abort();
    return net;
}

/* Loss gradients: compare against central differences of the loss itself. */
static void loss_check(void)
{
    int s[2] = {5, 7};
    t2_tensor x, d, t;
    t2_tensor_alloc(&x, 2, s);
    t2_tensor_alloc(&d, 2, s);
    t2_tensor_alloc(&t, 2, s);
    t2_rng r;
    t2_rng_seed(&r, 3);
    for (int i = 0; i < 35; i++) x.data[i] = t2_rng_normal(&r), t.data[i] = t2_rng_normal(&r);
    int32_t labels[5] = {0, 6, 3, 3, 1};
    for (int kind = 0; kind < 4; kind++) {
        float loss, up, down;
        const char *name = kind == 0 ? "softmax_xent" : kind == 1 ? "softmax_xent_ls" : kind == 2 ? "nll" : "mse";
#define LOSS(out, grad)                                                                   \
    (kind == 0   ? t2_loss_softmax_xent(&x, labels, 0.0f, out, grad)                     \
     : kind == 1 ? t2_loss_softmax_xent(&x, labels, 0.2f, out, grad)                     \
     : kind == 2 ? t2_loss_nll(&x, labels, out, grad)                                    \
                 : t2_loss_mse(&x, &t, out, grad))
        CHECK_OK(LOSS(&loss, &d));
        for (int i = 0; i < 35; i++) {
            float keep = x.data[i];
            x.data[i] = keep + EPS;
            LOSS(&up, NULL);
            x.data[i] = keep - EPS;
            LOSS(&down, NULL);
            x.data[i] = keep;
            double num = ((double)up - down) / (2.0 * EPS);
            if (fabs(num - d.data[i]) > 2e-3 + 2e-2 * fabs(num)) {
                fprintf(stderr, "gradcheck loss %s[%d]: analytic %.6g numeric %.6g\n", name, i, d.data[i], num);
                check_failures++;
            }
        }
#undef LOSS
    }
    t2_tensor_free(&x);
    t2_tensor_free(&d);
    t2_tensor_free(&t);
}

/* Every layer at the current thread count. */
static void all_layers(void)
{
    int img[3] = {2, 6, 5}, flat[1] = {6};
    t2_net *net;

    net = net_of(1, flat);
    CHECK_OK(t2_net_dense(net, 4));
    run("dense", net, 3, 1, flat, 0);
    net = net_of(3, img);
    CHECK_OK(t2_net_conv2d(net, 3, 3, 1, 0));
    run("conv2d", net, 2, 3, img, 0);
    net = net_of(3, img);
    CHECK_OK(t2_net_conv2d(net, 2, 3, 2, 1));
    run("conv2d_s2p1", net, 2, 3, img, 0);
    net = net_of(3, img);
    CHECK_OK(t2_net_maxpool2d(net, 2, 2));
    run("maxpool2d", net, 2, 3, img, 0.05f);
    net = net_of(3, img);
    CHECK_OK(t2_net_avgpool2d(net, 3, 1, 1));
    run("avgpool2d", net, 2, 3, img, 0);
    net = net_of(3, img);
    CHECK_OK(t2_net_relu(net));
    run("relu", net, 2, 3, img, 0.05f);
    net = net_of(1, flat);
    CHECK_OK(t2_net_leaky_relu(net, 0.1f));
    run("leaky_relu", net, 3, 1, flat, 0.05f);
    net = net_of(1, flat);
    CHECK_OK(t2_net_tanh(net));
    run("tanh", net, 3, 1, flat, 0);
    net = net_of(1, flat);
    CHECK_OK(t2_net_sigmoid(net));
    run("sigmoid", net, 3, 1, flat, 0);
    net = net_of(1, flat);
    CHECK_OK(t2_net_gelu(net));
    run("gelu", net, 3, 1, flat, 0);
    net = net_of(3, img);
    CHECK_OK(t2_net_dropout(net, 0.4f));
    run("dropout", net, 2, 3, img, 0);
    net = net_of(3, img);
    CHECK_OK(t2_net_flatten(net));
    run("flatten", net, 2, 3, img, 0);
    net = net_of(1, flat);
    CHECK_OK(t2_net_batchnorm(net, 1e-5f, 0.1f));
    run("batchnorm1d", net, 5, 1, flat, 0);
    net = net_of(3, img);
    CHECK_OK(t2_net_batchnorm(net, 1e-5f, 0.1f));
    run("batchnorm2d", net, 3, 3, img, 0);
    net = net_of(1, flat);
    CHECK_OK(t2_net_log_softmax(net));
    run("log_softmax", net, 3, 1, flat, 0);

    /* A whole small CNN in the seeds' shape, gradients flowing through every kind at once. */
    net = net_of(3, img);
    CHECK_OK(t2_net_conv2d(net, 3, 3, 1, 1));
    CHECK_OK(t2_net_relu(net));
    CHECK_OK(t2_net_maxpool2d(net, 2, 2));
    CHECK_OK(t2_net_dropout(net, 0.25f));
    CHECK_OK(t2_net_flatten(net));
    CHECK_OK(t2_net_dense(net, 5));
    CHECK_OK(t2_net_log_softmax(net));
    eps = 3e-4f;
    run("small_cnn", net, 2, 3, img, 0.05f);
    eps = EPS;

    /* Dense followed by relu (fused) and a batch large enough to split across threads. */
    net = net_of(1, flat);
    CHECK_OK(t2_net_dense(net, 5));
    CHECK_OK(t2_net_relu(net));
    CHECK_OK(t2_net_dense(net, 3));
    run("dense_relu_dense", net, 7, 1, flat, 0);

}

int main(void)
{
    /* One thread, then a pool of three: the layers split batches into parts per thread, and each
     * split must give the same gradients. */
    all_layers();
    CHECK_OK(t2_set_num_threads(3));
    all_layers();
    CHECK_OK(t2_set_num_threads(1));
    loss_check();
    return check_report("test_nn_gradcheck");
}
