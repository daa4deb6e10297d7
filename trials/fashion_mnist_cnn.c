/* fashion_mnist_cnn.c — the seeds' CNN as a t2exp trial.
 * hparams: global_batch_size, learning_rate, momentum, dropout1, dropout2, n_hidden. */
#include "fashion_mnist_cnn_model.h"
#include "fashion_mnist_common.h"

static int build_model(t2_ctx *ctx, void **state)
{
    double d1, d2;
    int64_t hidden;
    int rc;
    if ((rc = t2_hp_double(ctx, "dropout1", &d1)) || (rc = t2_hp_double(ctx, "dropout2", &d2)) ||
        (rc = t2_hp_int(ctx, "n_hidden", &hidden)))
        return rc;
    fm_state *s = calloc(1, sizeof *s);
    if (!s) return t2_seterr(T2_ENOMEM, "fashion_mnist_cnn: out of memory");
    *state = s;
    if ((rc = fashion_mnist_cnn(&s->net, (float)d1, (float)d2, (int)hidden)) ||
        (rc = t2_net_init(s->net, t2_ctx_rng(ctx))))
        return rc;
    return fm_finish_model(ctx, s);
}

T2_TRIAL(.name = "fashion_mnist_cnn", .prepare_data = fm_prepare_data, .build_model = build_model,
         .build_training_loader = fm_build_training_loader, .build_validation_loader = fm_build_validation_loader,
         .train_batch = fm_train_batch, .evaluate_batch = fm_evaluate_batch, .destroy = fm_destroy);
