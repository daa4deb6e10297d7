/* fashion_mnist_mlp.c — a two-hidden-layer MLP on Fashion-MNIST, a quick model to try the tool.
 * hparams: global_batch_size, learning_rate, momentum, hidden1, hidden2, dropout. */
#include "fashion_mnist_common.h"

static int build_model(t2_ctx *ctx, void **state)
{
    int64_t h1, h2;
    double p;
    int rc;
    if ((rc = t2_hp_int(ctx, "hidden1", &h1)) || (rc = t2_hp_int(ctx, "hidden2", &h2)) ||
        (rc = t2_hp_double(ctx, "dropout", &p)))
        return rc;
    fm_state *s = calloc(1, sizeof *s);
    if (!s) return t2_seterr(T2_ENOMEM, "fashion_mnist_mlp: out of memory");
    *state = s;
    int shape[3] = {1, 28, 28};
    if ((rc = t2_net_create(&s->net, 3, shape)) || (rc = t2_net_flatten(s->net)) ||
        (rc = t2_net_dense(s->net, (int)h1)) || (rc = t2_net_relu(s->net)) ||
        (rc = t2_net_dropout(s->net, (float)p)) || (rc = t2_net_dense(s->net, (int)h2)) ||
        (rc = t2_net_relu(s->net)) || (rc = t2_net_dense(s->net, 10)) || (rc = t2_net_log_softmax(s->net)) ||
        (rc = t2_net_init(s->net, t2_ctx_rng(ctx))))
        return rc;
    return fm_finish_model(ctx, s);
}

T2_TRIAL(.name = "fashion_mnist_mlp", .prepare_data = fm_prepare_data, .build_model = build_model,
         .build_training_loader = fm_build_training_loader, .build_validation_loader = fm_build_validation_loader,
         .train_batch = fm_train_batch, .evaluate_batch = fm_evaluate_batch, .destroy = fm_destroy);
