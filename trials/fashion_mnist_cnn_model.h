/* fashion_mnist_cnn_model.h — the seeds' CNN, shared by the example trial and the benchmarks:
 * conv 1->32 3x3, relu, conv 32->64 3x3, relu, maxpool 2, dropout, flatten, dense 9216->hidden,
 * relu, dropout, dense hidden->10, log-softmax (trained with NLL). Uses only the public header. */
#ifndef FASHION_MNIST_CNN_MODEL_H
#define FASHION_MNIST_CNN_MODEL_H

#include <t2exp.h>

/* Builds the net (not initialised) into *out; dropout1/dropout2 are the two dropout rates
 * (seeds: 0.25, 0.5) and hidden the width of the first dense layer (seeds: 128). */
static inline int fashion_mnist_cnn(t2_net **out, float dropout1, float dropout2, int hidden)
{
    int shape[3] = {1, 28, 28}, rc;
    t2_net *net = NULL;
    if ((rc = t2_net_create(&net, 3, shape))) return rc;
    if ((rc = t2_net_conv2d(net, 32, 3, 1, 0)) || (rc = t2_net_relu(net)) ||
        (rc = t2_net_conv2d(net, 64, 3, 1, 0)) || (rc = t2_net_relu(net)) ||
        (rc = t2_net_maxpool2d(net, 2, 2)) || (rc = t2_net_dropout(net, dropout1)) ||
        (rc = t2_net_flatten(net)) || (rc = t2_net_dense(net, hidden)) || (rc = t2_net_relu(net)) ||
        (rc = t2_net_dropout(net, dropout2)) || (rc = t2_net_dense(net, 10)) || (rc = t2_net_log_softmax(net))) {
        t2_net_free(net);
        return rc;
    }
    *out = net;
    return T2_OK;
}

#endif
