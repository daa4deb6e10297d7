/* tiny_loader.h — the loaders of a trial whose loop needs batches but no data (the quadratic, the
 * test functions, the test suite's own trials): TINY_LOADER_SAMPLES in-memory samples (values
 * 0, 1, ...; label 0; at most 4, default 4), batch 1, the training loader repeating. Defines the
 * trial's build_training_loader and build_validation_loader. Public header only, like any trial. */
#ifndef T2_TRIALS_TINY_LOADER_H
#define T2_TRIALS_TINY_LOADER_H

#include <stdint.h>
#include <t2exp.h>

#ifndef TINY_LOADER_SAMPLES
#define TINY_LOADER_SAMPLES 4
#endif

static int tiny_loader(t2_ctx *ctx, int train, t2_loader **out)
{
    float x[4] = {0, 1, 2, 3};
    int32_t labels[4] = {0, 0, 0, 0};
    t2_tensor t = t2_tensor_view(x, 2, (int[]){TINY_LOADER_SAMPLES, 1});
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
