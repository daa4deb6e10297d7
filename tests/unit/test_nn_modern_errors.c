/* Bad use of layer norm, embedding and global average pooling: shape mistakes are refused at the
 * append with T2_ESHAPE naming the function and the layer index, bad settings with T2_EINVAL, and
 * a bad id fails the forward naming the layer, sample and position, leaving the net usable. */
#include <math.h>
#include <string.h>
#include "check.h"
#include "t2exp.h"

static void expect_msg(const char *needle)
{
    if (!strstr(t2_errmsg(), needle)) {
        fprintf(stderr, "message \"%s\" lacks \"%s\"\n", t2_errmsg(), needle);
        check_failures++;
    }
}

static void appenders(void)
{
    int img[3] = {2, 4, 4}, flat[1] = {5};
    t2_net *net = NULL;

    /* embedding after a 3-D sample (here the conv's output, layer 1) */
    CHECK_OK(t2_net_create(&net, 3, img));
    CHECK_OK(t2_net_conv2d(net, 3, 3, 1, 1));
    CHECK_RC(t2_net_embedding(net, 10, 4), T2_ESHAPE);
    expect_msg("t2_net_embedding: layer 1: input is [3, 4, 4]");
    /* global pooling is fine here; layer norm goes over W = 4 */
    CHECK_OK(t2_net_layernorm(net, 1e-5f));
    CHECK_OK(t2_net_global_avgpool(net));
    /* ... and refused after a flat layer: layer 3 would be the second pooling */
    CHECK_RC(t2_net_global_avgpool(net), T2_ESHAPE);
    expect_msg("t2_net_global_avgpool: layer 3: input is [3]");
    CHECK(t2_net_num_layers(net) == 3);
    t2_net_free(net);

    CHECK_OK(t2_net_create(&net, 1, flat));
    CHECK_RC(t2_net_global_avgpool(net), T2_ESHAPE);
    expect_msg("layer 0: input is [5]");
    CHECK_RC(t2_net_layernorm(net, 0.0f), T2_EINVAL);
    expect_msg("eps 0");
    CHECK_RC(t2_net_layernorm(net, NAN), T2_EINVAL);
    CHECK_RC(t2_net_embedding(net, 0, 4), T2_EINVAL);
    expect_msg("num_embeddings 0");
    CHECK_RC(t2_net_embedding(net, 10, -1), T2_EINVAL);
    CHECK_RC(t2_net_embedding(net, 1 << 20, 1 << 20), T2_EINVAL); /* 2^40 weights */
    CHECK(t2_net_num_layers(net) == 0);
    CHECK_OK(t2_net_embedding(net, 10, 4));
    /* the embedding's output is [1, T, dim]: a dense needs a flatten first */
    CHECK_RC(t2_net_dense(net, 3), T2_ESHAPE);
    int nd, shape[T2_MAX_DIMS];
    CHECK_OK(t2_net_output_shape(net, &nd, shape));
    CHECK(nd == 3 && shape[0] == 1 && shape[1] == 5 && shape[2] == 4);
    t2_rng r;
    t2_rng_seed(&r, 1);
    CHECK_OK(t2_net_init(net, &r));
    CHECK_RC(t2_net_layernorm(net, 1e-5f), T2_ESTATE); /* after init */
    CHECK_RC(t2_net_embedding(net, 10, 4), T2_ESTATE);
    CHECK_RC(t2_net_global_avgpool(net), T2_ESTATE);
    t2_net_free(net);
}

/* Every kind of bad id: fraction, negative, equal to num_embeddings, huge, NaN, infinity. */
static void bad_ids(void)
{
    int T[1] = {4};
    t2_net *net = NULL;
    CHECK_OK(t2_net_create(&net, 1, T));
    CHECK_OK(t2_net_embedding(net, 10, 3));
    CHECK_OK(t2_net_flatten(net));
    CHECK_OK(t2_net_dense(net, 2));
    t2_rng r;
    t2_rng_seed(&r, 1);
    CHECK_OK(t2_net_init(net, &r));
    float ids[12] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 9};
    int s[2] = {3, 4};
    t2_tensor x = t2_tensor_view(ids, 2, s);
    const t2_tensor *y, *dx;
    const float bad[] = {2.5f, -1.0f, 10.0f, 1e30f, NAN, INFINITY, -0.5f};
    const char *shown[] = {"id 2.5 ", "id -1 ", "id 10 ", "id 1e+30 ", "id nan ", "id inf ", "id -0.5 "};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        ids[6] = bad[k]; /* sample 1, position 2 */
        CHECK_RC(t2_net_forward(net, &x, T2_TRAIN, &r, &y), T2_EINVAL);
        expect_msg("t2_net_forward: layer 0 (embedding) failed: sample 1, position 2: ");
        expect_msg(shown[k]);
        expect_msg("is not an integer in [0, 10)");
        /* the failed forward left nothing to back-propagate */
        CHECK_RC(t2_net_backward(net, &x, &dx), T2_ESTATE);
    }
    /* the net is still usable, and -0 is id 0 */
    ids[6] = -0.0f;
    CHECK_OK(t2_net_forward(net, &x, T2_TRAIN, &r, &y));
    float dyv[6] = {1, 2, 3, 4, 5, 6};
    int ys[2] = {3, 2};
    t2_tensor dy = t2_tensor_view(dyv, 2, ys);
    CHECK_OK(t2_net_backward(net, &dy, &dx));
    for (int i = 0; i < 12; i++) CHECK(dx->data[i] == 0.0f);
    /* a bad id in the last position of the last sample is found too */
    ids[11] = 10.0f;
    CHECK_RC(t2_net_forward(net, &x, T2_EVAL, NULL, &y), T2_EINVAL);
    expect_msg("sample 2, position 3: id 10 ");
    t2_net_free(net);
}

int main(void)
{
    appenders();
    bad_ids();
    return check_report("test_nn_modern_errors");
}
