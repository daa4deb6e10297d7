/* t2exp/trial.h — the trial API: what a user's mytrial.so exports and what the runner gives it.
 *
 * A trial is a vtable of callbacks (t2_trial_def) exported with T2_TRIAL(...). The runner loads
 * the shared object, checks its ABI version, and calls:
 *
 *   prepare_data            once per experiment, in the controller, before any trial (optional)
 *   build_model             once per trial process: build nets/optimizers, return user state
 *   build_training_loader   the training stream (repeat = 1); the runner owns it afterwards
 *   build_validation_loader one pass per validation (repeat = 0); the runner owns it afterwards
 *   train_batch             per batch: forward, loss, backward, t2_step_optimizer, report metrics
 *   evaluate_batch          per validation batch: forward, report metrics
 *   evaluate_end            after a validation pass: metrics of the whole pass (optional)
 *   save_state/load_state   extra user state for checkpoints (optional)
 *   destroy                 frees the user state
 *
 * Every callback returns 0 or a negative T2_E… code; a failure fails the trial (not the
 * experiment) with the callback's name and t2_errmsg() as the reason. */
#ifndef T2EXP_TRIAL_H
#define T2EXP_TRIAL_H

#include <stddef.h>
#include <stdint.h>
#include "t2exp/data.h"
#include "t2exp/error.h"
#include "t2exp/lr_schedule.h"
#include "t2exp/nn.h"
#include "t2exp/optim.h"
#include "t2exp/rng.h"
#include "t2exp/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped whenever t2_trial_def changes. Version 2 added evaluate_end at its end; the runner still
 * loads version 1 objects (without it). */
#define T2_TRIAL_ABI_VERSION 2

typedef struct t2_ctx t2_ctx;         /* the trial's context, owned by the runner */
typedef struct t2_metrics t2_metrics; /* where a batch reports its metrics */

typedef struct t2_trial_def {
    int abi_version; /* T2_TRIAL_ABI_VERSION, set by T2_TRIAL */
    const char *name;
    int (*prepare_data)(t2_ctx *ctx);
    int (*build_model)(t2_ctx *ctx, void **state);
    int (*build_training_loader)(t2_ctx *ctx, void *state, t2_loader **out);
    int (*build_validation_loader)(t2_ctx *ctx, void *state, t2_loader **out);
    int (*train_batch)(t2_ctx *ctx, void *state, const t2_batch *b, t2_metrics *m);
    int (*evaluate_batch)(t2_ctx *ctx, void *state, const t2_batch *b, t2_metrics *m);
    /* Optional user state for checkpoints: save_state fills *buf (malloc'd; the runner frees it)
     * and *len; load_state gets back exactly those bytes. */
    int (*save_state)(t2_ctx *ctx, void *state, void **buf, size_t *len);
    int (*load_state)(t2_ctx *ctx, void *state, const void *buf, size_t len);
    void (*destroy)(void *state);
    /* Optional (ABI 2): called once per validation pass, after its last batch, when the metrics
     * evaluate_batch reported are reduced over the pass and every rank (so every rank gets the
     * same values): reads them with t2_metrics_get and adds metrics computed from them with
     * t2_metric (new names only). For what is not a mean over samples: an RMSE from a summed
     * squared error and count, an F1 or precision from summed tp/fp/fn, an AUC from a summed
     * histogram. The searcher metric may be one of them. Determined's custom reducers. */
    int (*evaluate_end)(t2_ctx *ctx, void *state, t2_metrics *m);
} t2_trial_def;

/* Exports the trial: T2_TRIAL(.name = "mnist", .build_model = build_model, ...). Defines the one
 * symbol the runner looks up, `t2_trial`. */
#define T2_TRIAL(...)                                                                            \
    __attribute__((visibility("default"))) const t2_trial_def t2_trial = {                      \
        .abi_version = T2_TRIAL_ABI_VERSION, __VA_ARGS__}

/* ---- hyperparameters and config --------------------------------------------------------------
 * Keys are dotted paths into the trial's hyperparameters ("optimizer.lr" for nested maps). A
 * missing key is T2_ENOTFOUND and a value of another type T2_EINVAL; both name the key (and, for
 * a missing one, the keys that exist). Integers read as doubles; doubles with no fraction read as
 * integers. The string stays valid for the trial's lifetime. */
int t2_hp_int(t2_ctx *ctx, const char *key, int64_t *out);
int t2_hp_double(t2_ctx *ctx, const char *key, double *out);
int t2_hp_bool(t2_ctx *ctx, const char *key, int *out);
int t2_hp_str(t2_ctx *ctx, const char *key, const char **out);

/* The same getters over the config's `data:` section. */
int t2_data_int(t2_ctx *ctx, const char *key, int64_t *out);
int t2_data_double(t2_ctx *ctx, const char *key, double *out);
int t2_data_bool(t2_ctx *ctx, const char *key, int *out);
int t2_data_str(t2_ctx *ctx, const char *key, const char **out);

/* ---- the trial's situation ---- */
int t2_ctx_global_batch_size(const t2_ctx *ctx);  /* hyperparameters.global_batch_size */
int t2_ctx_batch_size(const t2_ctx *ctx);         /* per slot: global / slots */
int t2_ctx_rank(const t2_ctx *ctx);               /* 0..size-1 */
int t2_ctx_size(const t2_ctx *ctx);               /* ranks (slots) of this trial */
int64_t t2_ctx_trial_id(const t2_ctx *ctx);       /* store id (0 outside an experiment) */
uint64_t t2_ctx_seed(const t2_ctx *ctx);          /* the trial's seed (from experiment seed + trial) */
t2_rng *t2_ctx_rng(t2_ctx *ctx);                  /* seeded from the trial seed; saved in checkpoints */
int64_t t2_ctx_batches_trained(const t2_ctx *ctx);/* batches completed before the current one */
int64_t t2_ctx_epoch(const t2_ctx *ctx);          /* epoch of the current training batch */
int t2_ctx_threads(const t2_ctx *ctx);            /* BLAS/pool threads this rank may use now
                                                     (may change between batches) */

/* ---- wrapping: hand the framework the objects it must manage ----
 * A wrapped net's gradients are averaged across ranks, its parameters broadcast from rank 0 at
 * start and saved in checkpoints; a wrapped optimizer's state is checkpointed; a wrapped schedule
 * is stepped by the framework per its step mode (batch: after every t2_step_optimizer; epoch: at
 * every epoch end; manual: never) and checkpointed. One net and one schedule per trial; one
 * optimizer, or several with raw buffers (below). */
int t2_wrap_model(t2_ctx *ctx, t2_net *net);
int t2_wrap_optimizer(t2_ctx *ctx, t2_optim *opt);
int t2_wrap_lr_schedule(t2_ctx *ctx, t2_lr_schedule *sched);

/* Raw parameter buffers: a model written with plain arrays hands the framework its parameters
 * (and their gradients, n floats each, owned by the trial and alive until destroy) under a name,
 * and gets everything a wrapped net gets: broadcast from rank 0 now, gradients averaged across
 * ranks, clipped and stepped in t2_step_optimizer (then zeroed; they are zeroed here too), saved
 * in checkpoints as the params tensor `name` (shape [n]) and restored, exported by name. Call it
 * in build_model, any number of times. name: 1..47 letters, digits, '.', '_', '-', unique, not
 * "model" and not a tensor name of the wrapped net (T2_EINVAL naming it); n >= 1; params and
 * grads must not overlap each other or another wrapped buffer. A trial may wrap raw buffers only.
 *
 * Optimizers: one wrapped with t2_wrap_optimizer covers everything wrapped, laid end to end: the
 * net's parameters first, then the raw buffers in wrap order (its size must be that total). To
 * give buffers optimizers of their own, wrap each with t2_wrap_optimizer_for instead, naming what
 * it covers ("model" for the wrapped net, else raw buffer names, wrapped before; its size must be
 * their total in that order); every wrapped buffer must then be covered by exactly one (checked
 * when build_model returns, naming the uncovered buffer). The wrapped LR schedule sets the rate
 * of every optimizer. Gradient clipping takes one norm over all wrapped gradients. */
int t2_wrap_params(t2_ctx *ctx, const char *name, float *params, float *grads, size_t n);
int t2_wrap_optimizer_for(t2_ctx *ctx, t2_optim *opt, const char *const *names, int nnames);

/* Called by train_batch after the backward pass: averages the gradients across ranks, applies the
 * config's `optimizations.gradient_clipping` (one norm over the net's and the raw buffers'
 * gradients), sets every optimizer's lr from the wrapped schedule, steps the optimizers, zeroes
 * the gradients, and steps a batch-mode schedule. T2_ENUMERIC if the gradient norm is not finite
 * (the trial fails with that reason). */
int t2_step_optimizer(t2_ctx *ctx);

/* ---- metrics ----
 * A batch reports named scalars; the runner combines them over the reporting window (training)
 * or the whole validation pass with the metric's reducer: MEAN is weighted by the batch's sample
 * count (default), SUM, MIN, MAX are plain. A non-finite value fails the trial (T2_ENUMERIC). */
typedef enum t2_reducer { T2_REDUCE_MEAN = 0, T2_REDUCE_SUM, T2_REDUCE_MIN, T2_REDUCE_MAX } t2_reducer;

int t2_metric(t2_metrics *m, const char *name, double value);
int t2_metric_reduce(t2_metrics *m, const char *name, double value, t2_reducer reducer);

/* In evaluate_end: metric `name` of the pass, reduced (its mean, sum, min or max), into *out.
 * T2_ENOTFOUND (naming the metrics there are) when the pass did not report it. */
int t2_metrics_get(const t2_metrics *m, const char *name, double *out);

#ifdef __cplusplus
}
#endif
#endif
