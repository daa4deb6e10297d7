/* Bad input to the numeric core: every case returns its T2_E… code with a message, nothing aborts,
 * and a failed call leaves the net usable. */
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

int main(void)
{
    t2_net *net = NULL;
    int img[3] = {1, 8, 8}, bad[3] = {1, 0, 8}, flat[1] = {4};
    t2_rng r;
    t2_rng_seed(&r, 5);

    /* NULL handles and zero sizes. */
    CHECK_RC(t2_net_create(NULL, 3, img), T2_EINVAL);
    CHECK_RC(t2_net_create(&net, 3, bad), T2_EINVAL);
    CHECK(net == NULL);
    CHECK_RC(t2_net_create(&net, 2, img), T2_EINVAL);
    CHECK_RC(t2_net_dense(NULL, 3), T2_EINVAL);
    CHECK_RC(t2_net_init(NULL, &r), T2_EINVAL);
    t2_net_free(NULL);
    t2_tensor t;
    CHECK_RC(t2_tensor_alloc(&t, 2, (int[]){3, 0}), T2_EINVAL);
    CHECK_RC(t2_tensor_alloc(&t, 5, (int[]){1, 1, 1, 1, 1}), T2_EINVAL);
    t2_tensor_free(NULL);

    /* Shape mistakes are caught at the append that makes them. */
    CHECK_OK(t2_net_create(&net, 3, img));
    CHECK_RC(t2_net_dense(net, 10), T2_ESHAPE);
    expect_msg("flatten");
    CHECK_RC(t2_net_conv2d(net, 4, 9, 1, 0), T2_ESHAPE);
    CHECK_RC(t2_net_conv2d(net, 0, 3, 1, 0), T2_EINVAL);
    expect_msg("out_channels=0");
    CHECK_RC(t2_net_conv2d(net, 4, 3, 0, 0), T2_EINVAL);
    CHECK_RC(t2_net_dropout(net, 1.0f), T2_EINVAL);
    CHECK_RC(t2_net_maxpool2d(net, 0, 1), T2_EINVAL);
    CHECK_RC(t2_net_log_softmax(net), T2_ESHAPE);
    CHECK_RC(t2_net_forward(net, &t, T2_EVAL, NULL, NULL), T2_EINVAL);
    /* After the failures the net still builds and runs. */
    CHECK_OK(t2_net_conv2d(net, 2, 3, 1, 1));
    CHECK_OK(t2_net_flatten(net));
    CHECK_OK(t2_net_dense(net, 3));
    const t2_tensor *y;
    t2_tensor x;
    CHECK_OK(t2_tensor_alloc(&x, 4, (int[]){2, 1, 8, 8}));
    CHECK_RC(t2_net_forward(net, &x, T2_EVAL, NULL, &y), T2_ESTATE); /* not initialised */
    CHECK_OK(t2_net_init(net, &r));
    CHECK_RC(t2_net_init(net, &r), T2_ESTATE);
    CHECK_RC(t2_net_relu(net), T2_ESTATE);
    CHECK_RC(t2_net_backward(net, &x, NULL), T2_ESTATE); /* no training forward yet */
    t2_tensor wrong;
    CHECK_OK(t2_tensor_alloc(&wrong, 4, (int[]){2, 1, 7, 8}));
    CHECK_RC(t2_net_forward(net, &wrong, T2_EVAL, NULL, &y), T2_ESHAPE);
    expect_msg("[2, 1, 7, 8]");
    CHECK_RC(t2_net_forward(net, &x, T2_TRAIN, NULL, &y), T2_EINVAL); /* training needs an rng */
    CHECK_OK(t2_net_forward(net, &x, T2_TRAIN, &r, &y));
    CHECK(y->ndim == 2 && y->shape[0] == 2 && y->shape[1] == 3);
    CHECK_RC(t2_net_backward(net, &x, NULL), T2_ESHAPE); /* dy must match the output */
    t2_param_info info;
    CHECK_RC(t2_net_tensor_info(net, 99, &info), T2_EINVAL);
    CHECK_OK(t2_net_tensor_info(net, 0, &info));
    CHECK(strcmp(info.name, "0.conv2d.weight") == 0 && info.ndim == 4 && info.shape[0] == 2 && info.shape[1] == 1);
    t2_net_free(net);

    /* Losses: label out of range, mismatched shapes, NaN. */
    t2_tensor logits;
    CHECK_OK(t2_tensor_alloc(&logits, 2, (int[]){2, 3}));
    int32_t labels[2] = {0, 3};
    float loss;
    CHECK_RC(t2_loss_softmax_xent(&logits, labels, 0.0f, &loss, NULL), T2_EINVAL);
    expect_msg("label 3 of sample 1");
    labels[1] = 2;
    CHECK_RC(t2_loss_softmax_xent(&logits, labels, 1.5f, &loss, NULL), T2_EINVAL);
    CHECK_RC(t2_loss_nll(&logits, labels, &loss, &x), T2_ESHAPE);
    CHECK_RC(t2_loss_mse(&logits, &x, &loss, NULL), T2_ESHAPE);
    CHECK_RC(t2_topk_correct(&logits, labels, 4, &(int64_t){0}), T2_EINVAL);
    logits.data[0] = NAN;
    CHECK_RC(t2_loss_softmax_xent(&logits, labels, 0.0f, &loss, NULL), T2_ENUMERIC);
    CHECK_RC(t2_net_create(&net, 1, flat), T2_OK);
    CHECK_RC(t2_net_init(net, &r), T2_EINVAL); /* no layers */
    t2_net_free(net);

    /* Batchnorm refuses to train on one value a channel (its variance is 0: the running variance
     * was pulled towards 0), as PyTorch does; two samples train, and one evaluates. */
    CHECK_OK(t2_net_create(&net, 1, flat));
    CHECK_OK(t2_net_dense(net, 3));
    CHECK_OK(t2_net_batchnorm(net, 1e-5f, 0.1f));
    CHECK_OK(t2_net_init(net, &r));
    t2_tensor one, two;
    CHECK_OK(t2_tensor_alloc(&one, 2, (int[]){1, 4}));
    CHECK_OK(t2_tensor_alloc(&two, 2, (int[]){2, 4}));
    two.data[0] = 1.0f;
    CHECK_RC(t2_net_forward(net, &one, T2_TRAIN, &r, &y), T2_EINVAL);
    expect_msg("batchnorm needs more than 1 value a channel");
    CHECK_OK(t2_net_forward(net, &two, T2_TRAIN, &r, &y));
    CHECK_OK(t2_net_forward(net, &one, T2_EVAL, NULL, &y));
    t2_tensor_free(&one);
    t2_tensor_free(&two);
    t2_net_free(net);

    t2_tensor_free(&x);
    t2_tensor_free(&wrong);
    t2_tensor_free(&logits);
    return check_report("test_nn_errors");
}
