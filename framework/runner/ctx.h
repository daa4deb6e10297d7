/* ctx.h — the trial context behind the public t2_ctx handle (internal). */
#ifndef T2_RUNNER_CTX_H
#define T2_RUNNER_CTX_H

#include <stdint.h>
#include "configs/config.h"
#include "configs/value.h"
#include "dist/comm.h"
#include "t2exp/trial.h"

struct t2_ctx {
    const t2__val *hparams; /* the trial's nested hparams map */
    const t2__val *data;    /* the config's data: map */
    int64_t global_batch, batch_size;
    t2__comm comm;
    int64_t trial_id;
    uint64_t seed;
    t2_rng rng;
    int64_t batches_trained, epoch;
    int threads;

    t2_net *net;
    t2_optim *opt;
    t2_lr_schedule *sched;
    t2__clip_kind clip;
    double clip_max;
    int64_t optimizer_steps;
};

/* 1 for a reduce-on-plateau schedule: it steps on validation metrics only, never on batches or
 * epochs. */
int t2__is_plateau(const t2_lr_schedule *s);

/* Fills ctx for one trial (borrowing hparams and data), seeding its RNG from seed. */
void t2__ctx_init(t2_ctx *ctx, const t2__config *cfg, const t2__val *hparams, int64_t global_batch,
                  int64_t batch_size, int64_t trial_id, uint64_t seed, int threads);

#endif
