/* A large evaluation batch runs through the net a chunk at a time (net.c eval_chunk): the outputs
 * must be those of the whole batch (each sample's output as when it is evaluated alone), training
 * batches must still see all their samples at once, a net with a custom layer (which may compute
 * across samples) must see the whole evaluation batch, and a training step after a chunked
 * evaluation must still work. */
#include <stdlib.h>
#include "check.h"
#include "t2exp.h"

enum { N = 300, C = 2, H = 8, W = 8, CLASSES = 5 };

static int seen_max; /* the largest n the custom layer was called with */

static int id_shape(void *user, int in_ndim, const int in_shape[3], int *out_ndim, int out_shape[3])
{
    (void)user;
    *out_ndim = in_ndim;
    for (int i = 0; i < 3; i++) out_shape[i] = in_shape[i];
    return T2_OK;
}

static int id_forward(void *user, const t2_layer_call *c, const float *x, float *y)
{
    (void)user;
    if (c->n > seen_max) seen_max = c->n;
    memcpy(y, x, (size_t)c->n * c->in_size * sizeof(float));
    return T2_OK;
}

static int id_backward(void *user, const t2_layer_call *c, const float *x, const float *y, const float *dy, float *dx)
{
    (void)user, (void)x, (void)y;
    if (dx) memcpy(dx, dy, (size_t)c->n * c->in_size * sizeof(float));
    return T2_OK;
}

static const t2_layer_def identity = {"identity", id_shape, NULL, NULL, id_forward, id_backward};

/* conv -> batchnorm -> relu -> maxpool -> dropout -> flatten -> dense [-> custom identity]. */
static t2_net *image_net(int custom)
{
    t2_net *net = NULL;
    t2_rng r;
    t2_rng_seed(&r, 5);
    CHECK_OK(t2_net_create(&net, 3, (int[]){C, H, W}));
    CHECK_OK(t2_net_conv2d(net, 4, 3, 1, 1));
    CHECK_OK(t2_net_batchnorm(net, 1e-5f, 0.1f));
    CHECK_OK(t2_net_relu(net));
    CHECK_OK(t2_net_maxpool2d(net, 2, 2));
    CHECK_OK(t2_net_dropout(net, 0.5f));
    CHECK_OK(t2_net_flatten(net));
    CHECK_OK(t2_net_dense(net, CLASSES));
    if (custom) CHECK_OK(t2_net_custom(net, &identity, NULL));
    CHECK_OK(t2_net_init(net, &r));
    return net;
}

int main(void)
{
    t2_tensor x = {0}, one = {0}, dy = {0};
    CHECK_OK(t2_tensor_alloc(&x, 4, (int[]){N, C, H, W}));
    CHECK_OK(t2_tensor_alloc(&dy, 2, (int[]){32, CLASSES}));
    t2_rng r;
    t2_rng_seed(&r, 9);
    for (size_t i = 0; i < (size_t)N * C * H * W; i++) x.data[i] = 2.0f * t2_rng_uniform(&r) - 1.0f;
    for (int i = 0; i < 32 * CLASSES; i++) dy.data[i] = 0.01f * (float)(i % 7);
    CHECK_OK(t2_set_num_threads(2));

    t2_net *net = image_net(0);
    const t2_tensor *y = NULL;
    /* A training step first (batchnorm's running statistics move off their start). */
    t2_tensor batch = x;
    batch.shape[0] = 32;
    CHECK_OK(t2_net_forward(net, &batch, T2_TRAIN, &r, &y));
    CHECK_OK(t2_net_backward(net, &dy, NULL));

    float *whole = malloc(sizeof(float) * N * CLASSES);
    CHECK(whole != NULL);
    if (!whole) return check_report("test_nn_eval_chunks");
    CHECK_OK(t2_net_forward(net, &x, T2_EVAL, NULL, &y));
    CHECK(y && y->shape[0] == N && y->shape[1] == CLASSES);
    if (y) memcpy(whole, y->data, sizeof(float) * N * CLASSES);
    /* Each sample alone gives the same output (to rounding: GEMMs of another width may round
     * differently). */
    double worst = 0;
    one = x;
    one.shape[0] = 1;
    for (int i = 0; i < N; i++) {
        one.data = x.data + (size_t)i * C * H * W;
        CHECK_OK(t2_net_forward(net, &one, T2_EVAL, NULL, &y));
        for (int k = 0; y && k < CLASSES; k++) {
            double d = fabs((double)y->data[k] - whole[i * CLASSES + k]);
            if (d > worst) worst = d;
        }
    }
    CHECK(worst < 1e-5);
    /* Training still works after (the activations are the training batch's again). */
    CHECK_OK(t2_net_forward(net, &batch, T2_TRAIN, &r, &y));
    CHECK_OK(t2_net_backward(net, &dy, NULL));
    t2_net_free(net);

    /* A custom layer sees the whole evaluation batch. */
    net = image_net(1);
    seen_max = 0;
    CHECK_OK(t2_net_forward(net, &x, T2_EVAL, NULL, &y));
    CHECK(seen_max == N);
    t2_net_free(net);

    free(whole);
    t2_tensor_free(&x);
    t2_tensor_free(&dy);
    return check_report("test_nn_eval_chunks");
}
