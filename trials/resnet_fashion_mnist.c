/* resnet_fashion_mnist.c — a small ResNet (trials/resnet_fashion_mnist_model.h: stem conv, three
 * residual stages with batchnorm and relu, two of them stride 2 with a 1x1 projection, global
 * average pooling, dense) on Fashion-MNIST, trained with SGD + momentum and a cosine schedule.
 * hparams: global_batch_size, learning_rate, momentum, width, cosine_epochs. */
#include "fashion_mnist_common.h"
#include "resnet_fashion_mnist_model.h"

static int build_model(t2_ctx *ctx, void **state)
{
    int64_t width;
    int rc;
    if ((rc = t2_hp_int(ctx, "width", &width))) return rc;
    if (width < 1 || width > 256) return t2_seterr(T2_EHPARAM, "resnet_fashion_mnist: hparam width %lld not in 1..256", (long long)width);
    fm_state *s = calloc(1, sizeof *s);
    if (!s) return t2_seterr(T2_ENOMEM, "resnet_fashion_mnist: out of memory");
    *state = s;
    if ((rc = resnet_fashion_mnist(&s->net, (int)width)) || (rc = t2_net_init(s->net, t2_ctx_rng(ctx))))
        return rc;
    return fm_finish_model(ctx, s);
}

T2_TRIAL(.name = "resnet_fashion_mnist", .prepare_data = fm_prepare_data, .build_model = build_model,
         .build_training_loader = fm_build_training_loader, .build_validation_loader = fm_build_validation_loader,
         .train_batch = fm_train_batch, .evaluate_batch = fm_evaluate_batch, .destroy = fm_destroy);
