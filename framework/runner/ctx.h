/* ctx.h — the trial context behind the public t2_ctx handle (internal). */
#ifndef T2_RUNNER_CTX_H
#define T2_RUNNER_CTX_H

#include <stdint.h>
#include "configs/config.h"
#include "configs/value.h"
#include "dist/comm.h"
#include "t2exp/trial.h"
#include "checkpoints/ckpt.h"

#define T2__MAX_RAW 64 /* raw parameter buffers per trial */

/* A raw parameter buffer (t2_wrap_params). */
typedef struct t2__raw_buf {
    char name[48];
    float *p, *g;
    size_t n;
} t2__raw_buf;

/* What one optimizer covers, in its own numbering: segments in order, -1 being the wrapped net's
 * flat parameters and k >= 0 the raw buffer raw[k]. */
typedef struct t2__opt_bind {
    t2_optim *opt;
    int nseg;
    int seg[T2__MAX_RAW + 1];
} t2__opt_bind;

enum { T2__PHASE_NONE = 0, T2__PHASE_TRAIN, T2__PHASE_OTHER };

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
    /* Where the runner is: T2__PHASE_TRAIN inside train_batch, T2__PHASE_OTHER in the other
     * callbacks (t2_step_optimizer refuses there: it would change the model outside training);
     * 0 in a context no runner drives (tests), where nothing is checked. */
    int phase;

    t2_net *net;
    t2_optim *opt;          /* the first wrapped optimizer */
    t2__raw_buf raw[T2__MAX_RAW];
    int nraw;
    t2__opt_bind bind[T2__CKPT_MAX_OPTS];
    int nbind;
    int bind_all;           /* t2_wrap_optimizer: bind[0] covers everything, resolved by t2__ctx_bind */
    int bound;              /* t2__ctx_bind succeeded: the set of wrapped things is fixed */
    t2_optim *opts[T2__CKPT_MAX_OPTS]; /* bind[i].opt, for checkpoints */
    t2__ckpt_raw ckraw[T2__MAX_RAW];   /* raw[], for checkpoints */
    t2_lr_schedule *sched;
    t2__clip_kind clip;
    double clip_max;
    int64_t optimizer_steps;
};

/* 1 for a reduce-on-plateau schedule: it steps on validation metrics only, never on batches or
 * epochs. */
int t2__is_plateau(const t2_lr_schedule *s);

/* Fixes what the wrapped optimizers cover, once build_model has wrapped everything: a
 * t2_wrap_optimizer optimizer covers the net then every raw buffer (its size must be their total);
 * with t2_wrap_optimizer_for every net/raw buffer must be covered by one. T2_EINVAL naming the
 * uncovered buffer or the sizes otherwise. Called by the runner after build_model and by
 * t2_step_optimizer; idempotent. */
int t2__ctx_bind(t2_ctx *ctx);

/* 1 when the trial wrapped something to checkpoint (a net or raw buffers). */
int t2__ctx_has_model(const t2_ctx *ctx);

/* The wrapped model, optimizers included or not, as the checkpoint code takes it. */
t2__ckpt_model t2__ctx_ckpt_model(t2_ctx *ctx, int with_opts);

/* Wrapped parameters in all: the net's plus the raw buffers'. */
size_t t2__ctx_num_params(const t2_ctx *ctx);

/* Fills ctx for one trial (borrowing hparams and data), seeding its RNG from seed. */
void t2__ctx_init(t2_ctx *ctx, const t2__config *cfg, const t2__val *hparams, int64_t global_batch,
                  int64_t batch_size, int64_t trial_id, uint64_t seed, int threads);

#endif
