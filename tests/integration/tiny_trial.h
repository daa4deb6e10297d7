/* tiny_trial.h — what the test-built trials (hostile_trial.c, scripted_trial.c) share: a
 * one-layer model on four in-memory samples (trials/tiny_loader.h), so that the runner really
 * trains, validates and checkpoints it, in microseconds. Public header only, like any trial. */
#ifndef T2_TEST_TINY_TRIAL_H
#define T2_TEST_TINY_TRIAL_H

#include <stdint.h>
#include <stdlib.h>
#include <t2exp.h>
#include "../../trials/tiny_loader.h" /* four samples, batch 1 */

/* A 1 -> 1 dense net, initialised from the context's generator and wrapped. */
static int tiny_net(t2_ctx *ctx, t2_net **net)
{
    int rc;
    if ((rc = t2_net_create(net, 1, (int[]){1})) || (rc = t2_net_dense(*net, 1)) ||
        (rc = t2_net_init(*net, t2_ctx_rng(ctx))) || (rc = t2_wrap_model(ctx, *net)))
        return rc;
    return T2_OK;
}

/* For a trial whose state is that net alone (a test's inline trial that only scripts train_batch):
 * its build_model, destroy, and an evaluate_batch reporting loss 1. Inline, so an includer that
 * uses none of them is not warned. */
static inline int tiny_net_state(t2_ctx *ctx, void **state)
{
    t2_net **net = calloc(1, sizeof *net);
    if (!net) return T2_ENOMEM;
    *state = net;
    return tiny_net(ctx, net);
}

static inline void tiny_net_state_free(void *state)
{
    t2_net **net = state;
    if (net) t2_net_free(*net);
    free(net);
}

static inline int tiny_validate_loss(t2_ctx *ctx, void *state, const t2_batch *b, t2_metrics *m)
{
    (void)ctx, (void)state, (void)b;
    return t2_metric(m, "loss", 1.0);
}

#endif
