/* tiny_trial.h — what the test-built trials (hostile_trial.c, scripted_trial.c) share: a
 * one-layer model on four in-memory samples (trials/tiny_loader.h), so that the runner really
 * trains, validates and checkpoints it, in microseconds. Public header only, like any trial. */
#ifndef T2_TEST_TINY_TRIAL_H
#define T2_TEST_TINY_TRIAL_H

#include <stdint.h>
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

#endif
