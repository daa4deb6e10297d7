/* resnet_fashion_mnist_model.h — a small ResNet for 1x28x28 images, shared by the example trial
 * and the benchmark (bench/cnn.c --model resnet). Uses only the public header.
 *
 *   stem    conv 3x3 1->w, batchnorm, relu                                  [w, 28, 28]
 *   stage 1 residual: conv 3x3 w->w, bn, relu, conv 3x3, bn; + x; relu     [w, 28, 28]
 *   stage 2 residual: conv 3x3 stride 2 w->2w, bn, relu, conv 3x3, bn;
 *           + 1x1 stride-2 projection of x; relu                            [2w, 14, 14]
 *   stage 3 as stage 2, 2w->4w                                              [4w, 7, 7]
 *   global average pooling [4w], dense 10, log-softmax (NLL) */
#ifndef RESNET_FASHION_MNIST_MODEL_H
#define RESNET_FASHION_MNIST_MODEL_H

#include <t2exp.h>

/* conv 3x3 (stride) + batchnorm + relu, then conv 3x3 + batchnorm, inside a residual block. */
static inline int resnet_block(t2_net *net, int channels, int stride)
{
    int rc;
    if ((rc = t2_net_residual_begin(net)) || (rc = t2_net_conv2d(net, channels, 3, stride, 1)) ||
        (rc = t2_net_batchnorm(net, 1e-5f, 0.1f)) || (rc = t2_net_relu(net)) ||
        (rc = t2_net_conv2d(net, channels, 3, 1, 1)) || (rc = t2_net_batchnorm(net, 1e-5f, 0.1f)) ||
        (rc = t2_net_residual_end(net)) || (rc = t2_net_relu(net)))
        return rc;
    return T2_OK;
}

/* Builds the net (not initialised) into *out; width is the stem's channel count (16 by default). */
static inline int resnet_fashion_mnist(t2_net **out, int width)
{
    int shape[3] = {1, 28, 28}, rc;
    if (width < 1 || width > 256) return t2_seterr(T2_EHPARAM, "resnet_fashion_mnist: width %d not in 1..256", width);
    t2_net *net = NULL;
    if ((rc = t2_net_create(&net, 3, shape))) return rc;
    if ((rc = t2_net_conv2d(net, width, 3, 1, 1)) || (rc = t2_net_batchnorm(net, 1e-5f, 0.1f)) ||
        (rc = t2_net_relu(net)) || (rc = resnet_block(net, width, 1)) || (rc = resnet_block(net, 2 * width, 2)) ||
        (rc = resnet_block(net, 4 * width, 2)) || (rc = t2_net_global_avgpool(net)) ||
        (rc = t2_net_dense(net, 10)) || (rc = t2_net_log_softmax(net))) {
        t2_net_free(net);
        return rc;
    }
    *out = net;
    return T2_OK;
}

#endif
