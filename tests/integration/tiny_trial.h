/* tiny_trial.h — what the test-built trials (hostile_trial.c, scripted_trial.c) share: a
 * one-layer model on four in-memory samples, so that the runner really trains, validates and
 * checkpoints it, in microseconds. Public header only, like any user trial. */
#ifndef T2_TEST_TINY_TRIAL_H
#define T2_TEST_TINY_TRIAL_H

#include <stdint.h>
#include <t2exp.h>

/* A 1 -> 1 dense net, initialised from the context's generator and wrapped. */
static int tiny_net(t2_ctx *ctx, t2_net **net)
{
    int rc;
    if ((rc = t2_net_create(net, 1, (int[]){1})) || (rc = t2_net_dense(*net, 1)) ||
        (rc = t2_net_init(*net, t2_ctx_rng(ctx))) || (rc = t2_wrap_model(ctx, *net)))
        return rc;
    return T2_OK;
}

/* Four samples, batch 1; the training loader repeats. */
static int tiny_loader(t2_ctx *ctx, int train, t2_loader **out)
{
    float x[4] = {0, 1, 2, 3};
    int32_t labels[4] = {0, 0, 0, 0};
    t2_tensor t = t2_tensor_view(x, 2, (int[]){4, 1});
    t2_dataset *ds = NULL;
    int rc = t2_dataset_from_tensor(&ds, &t, labels, 1);
    if (rc) return rc;
    t2_loader_params p = t2_loader_params_default();
    p.batch_size = 1;
    p.repeat = train;
    p.own_dataset = 1;
    p.seed = t2_ctx_seed(ctx);
    return t2_loader_create(out, ds, &p);
}

static int build_training_loader(t2_ctx *ctx, void *state, t2_loader **out)
{
    (void)state;
    return tiny_loader(ctx, 1, out);
}

static int build_validation_loader(t2_ctx *ctx, void *state, t2_loader **out)
{
    (void)state;
    return tiny_loader(ctx, 0, out);
}

#endif
