/* config.h — experiment configs (`const.yaml`): loading, validation, the parsed struct (internal).
 *
 * The names and meanings follow Determined's experiment configuration so that a Determined user's
 * file reads naturally; docs/config-reference.md lists every key, its default and what differs.
 *
 * Errors (t2_errmsg) always look like `FILE:LINE:COLUMN: KEY.PATH: problem`, e.g.
 *   const.yaml:14:18: searcher.max_length.batches: expected a positive integer, got "ten"
 * YAML syntax errors are T2_EFORMAT with libyaml's position and problem; everything the schema
 * rejects (wrong type, out of range, missing required key, inconsistent values) is T2_EINVAL. A
 * value that came from a --config override is placed as `--config KEY=VALUE` instead of
 * FILE:LINE:COLUMN. A load goes on after a schema problem and reports every one it finds (up to
 * T2__CONFIG_MAX_ERRORS; t2__config_errors lists them, t2_errmsg holds the first). An unknown key is
 * one of them, naming the closest known key at that place:
 *   const.yaml:7:3: searcher.max_trails: unknown key (did you mean 'max_trials'?)
 * unless t2__config_set_lenient(1) made unknown keys warnings (t2__config_warnings). Keys that only
 * make sense in Determined's cluster (containers, Kubernetes, Python) are always warnings. */
#ifndef T2_CONFIGS_CONFIG_H
#define T2_CONFIGS_CONFIG_H

#include <stddef.h>
#include <stdint.h>
#include "hparams.h"
#include "value.h"

/* Plans stop at stated maxima, checked when a config is loaded (with the key's position) and again
 * by the searchers before they build a plan: a typo such as max_trials: 9223372036854775807 is
 * refused instead of filling memory. */
#define T2__MAX_TRIALS 1000000 /* searcher.max_trials, grid points, ASHA's trials over all brackets */
/* Lengths (searcher.max_length, the periods) and records_per_epoch: small enough that a length in
 * epochs times batches per epoch, or in records plus a batch, stays far inside int64. */
#define T2__MAX_LENGTH INT64_C(1000000000000) /* batches or records */
#define T2__MAX_EPOCHS INT64_C(1000000)
/* hyperparameters.global_batch_size, wherever it comes from (a constant, a range's maxval, a
 * categorical's values; t2__config_batch_sizes checks a trial's hparams again): the trial API hands
 * it out as an int (t2_ctx_global_batch_size, t2_ctx_batch_size, t2_loader_params.batch_size), so
 * INT_MAX; a length in records or records_per_epoch (at most T2__MAX_LENGTH) plus a batch stays far
 * inside int64. */
#define T2__MAX_BATCH INT64_C(2147483647)
/* A load reports at most this many problems; past it, the count of the rest. */
#define T2__CONFIG_MAX_ERRORS 50

/* Training lengths. `n == 0` means "not set" (only allowed for the periods, where it means never). */
typedef enum t2__unit { T2__UNIT_BATCHES, T2__UNIT_RECORDS, T2__UNIT_EPOCHS } t2__unit;

typedef struct t2__length {
    t2__unit unit;
    int64_t n;
} t2__length;

typedef enum t2__searcher_kind {
    T2__SEARCH_SINGLE,
    T2__SEARCH_GRID,
    T2__SEARCH_RANDOM,
    T2__SEARCH_ADAPTIVE_ASHA,
    T2__SEARCH_TPE,
    T2__SEARCH_PBT,
    T2__SEARCH_CUSTOM, /* the user's own, from searcher.library (t2exp/searcher.h) */
} t2__searcher_kind;

typedef enum t2__asha_mode { T2__ASHA_AGGRESSIVE, T2__ASHA_STANDARD, T2__ASHA_CONSERVATIVE } t2__asha_mode;

/* adaptive_asha's sampler: where each new trial's hparams come from. */
typedef enum t2__sampler_kind { T2__SAMPLER_RANDOM, T2__SAMPLER_TPE } t2__sampler_kind;

typedef enum t2__clip_kind { T2__CLIP_NONE, T2__CLIP_NORM, T2__CLIP_VALUE } t2__clip_kind;

typedef enum t2__ckpt_policy { T2__CKPT_BEST, T2__CKPT_ALL, T2__CKPT_NONE } t2__ckpt_policy;

/* searcher.pruner: Optuna's MedianPruner / PercentilePruner (config_pruner.c). */
typedef struct t2__pruner_config {
    int on;                    /* searcher.pruner given (and the searcher takes one) */
    int rule;                  /* 0 median or percentile, 1 patient, 2 threshold, 3 successive_halving or
                                  hyperband (searchers/pruner.h's) */
    double percentile;         /* (0, 100]; 50 for name: median */
    int64_t n_startup_trials;  /* >= 0, default 5: completed trials before any pruning */
    int64_t n_min_trials;      /* >= 1, default 1: completed trials with a validation at the step */
    int64_t patience;          /* patient: >= 0, required */
    double min_delta;          /* patient: >= 0, default 0 */
    double lower, upper;       /* threshold: -inf / +inf when not given; at least one is */
    t2__length warmup;         /* n == 0: none; no pruning before a trial has trained this long */
    /* successive_halving and hyperband (rule 3): resolved by t2__cfg_pruner_check, in one unit */
    int hyperband;                    /* 1: hyperband, brackets of min early stopping rate 0 .. n-1 */
    int64_t reduction_factor;         /* >= 2; default 4 (successive_halving), 3 (hyperband) */
    int64_t min_early_stopping_rate;  /* successive_halving: >= 0, default 0 */
    int64_t bootstrap_count;          /* >= 0, default 0 */
    t2__length min_resource;          /* the first rung; n == 0 until resolved (auto) */
    t2__length max_resource;          /* hyperband: n == 0 until resolved (auto: max_length) */
    int64_t n_brackets;               /* hyperband: from min/max_resource; successive_halving: 1 */
    int patient_wrap;                 /* patient with wrapped_pruner: rule and its keys are the wrapped
                                         one's; patience, min_delta and warmup the patient one's */
} t2__pruner_config;

typedef struct t2__searcher_config {
    t2__searcher_kind name;
    int unnamed;                   /* the name is missing or not a searcher (an error already): the
                                      other keys are checked as every searcher's, what only some
                                      searchers need is not asked for */
    char *metric;                  /* required */
    int smaller_is_better;         /* default 1 */
    t2__length max_length;         /* required, n > 0 */
    int64_t max_trials;            /* random, adaptive_asha: required, >= 1; else 0 */
    int64_t max_concurrent_trials; /* default 16 (Determined's); 0: as many as the slot pool allows */
    t2__asha_mode mode;            /* adaptive_asha; default standard */
    double divisor;                /* adaptive_asha; > 1, default 4 */
    int64_t max_rungs;             /* adaptive_asha; >= 1, default 5 */
    int stop_once;                 /* adaptive_asha; default 1; 0: pause and promote */
    t2__sampler_kind sampler;      /* adaptive_asha; default random; tpe also takes the tpe keys */
    int64_t *bracket_rungs;        /* adaptive_asha; optional list of positive ints (NULL, 0 if absent) */
    size_t nbracket_rungs;
    char *source_checkpoint;       /* warm start: a checkpoint path/uuid (source_checkpoint_uuid too), or NULL */
    int source_checkpoint_uuid;    /* it was given as source_checkpoint_uuid (errors name that key) */
    int64_t source_trial_id;       /* warm start from a trial's latest checkpoint; 0 = none */
    int source_checkpoint_optimizer; /* the warm start also takes the optimizer state; default 0 */
    t2__val *points;               /* points_to_evaluate: a LIST of hparams maps (partial), the first
                                      trials' settings (config_points.c); NULL: none */
    t2__pruner_config pruner;      /* pruner: random, grid and tpe (config_pruner.c) */
    char *library;                 /* custom: the searcher's shared object (required) */
    t2__val *options;              /* custom: searcher.options, a map handed to it (NULL: none) */
    struct {                       /* tpe, and adaptive_asha with sampler tpe (Optuna's TPESampler defaults) */
        int64_t n_startup_trials;  /* >= 1, default 10: random draws until this many results */
        int64_t n_ei_candidates;   /* >= 1, default 24 */
        double gamma;              /* (0, 1], default 0.1: n_below = min(ceil(gamma * n), 25) */
        double prior_weight;       /* > 0, default 1 */
        int multivariate;          /* default 0: one estimator per hyperparameter */
    } tpe;
    struct {                       /* pbt (population-based training; max_length is derived from it) */
        int64_t population_size;   /* >= 2, required */
        int64_t num_rounds;        /* >= 1, required */
        t2__length length_per_round; /* required; max_length = num_rounds x this, same unit */
        double *perturb_factors;   /* > 0 each; default {0.8, 1.2} */
        size_t nperturb_factors;
        double resample_probability; /* [0, 1], default 0.25 */
        double quantile_fraction;  /* (0, 0.5], default 0.25 */
    } pbt;
} t2__searcher_config;

/* resources.isolation: a long-lived worker process per local slot that runs trial after trial
 * (the default), or a fresh process per trial. */
enum { T2__ISOLATION_WORKER = 0, T2__ISOLATION_PROCESS_PER_TRIAL = 1 };

typedef struct t2__config {
    char *source;      /* the path or name errors are reported against */
    char *yaml_text;   /* the file exactly as read, for the store */
    t2__val *tree;     /* the whole document after overrides, before defaults (for the store/describe) */

    char *name;        /* default: the file name without directory and extension */
    char *description; /* NULL if absent */
    char **labels;
    size_t nlabels;
    t2__val *data;     /* the `data:` map, passed to the trial untouched (empty map if absent) */
    t2__hparam *hparams; /* the search space; root is NESTED; global_batch_size is always present */
    t2__searcher_config searcher;

    int64_t records_per_epoch;      /* 0: an epoch is one pass of the training loader */
    t2__length min_validation_period; /* n == 0: validate only at the end of each searcher op */
    t2__length min_checkpoint_period; /* n == 0: checkpoint only at the end of each searcher op */
    int perform_initial_validation; /* default 0 */
    int64_t scheduling_unit;        /* batches per training-metrics report; default 100 */
    t2__ckpt_policy checkpoint_policy; /* default best */

    struct {
        int64_t slots_per_trial; /* default 1 */
        char *slots_per_trial_at; /* where it was set ("FILE:LINE:COL", or the --config); NULL: default */
        int64_t max_slots;       /* 0: every core of this machine (plus the hostfile's) */
        int64_t max_threads_per_trial; /* 0: no cap (a trial may get every slot of the pool) */
        char *hostfile;          /* NULL: this machine only */
        char *controller_address; /* NULL: the interface that routes to the hostfile's hosts */
        int slurm_off;           /* resources.slurm: 0 auto (default: a Slurm allocation is the pool
                                    when there is no hostfile), 1 off */
        int isolation;           /* T2__ISOLATION_*: how local single-slot trials get a process */
    } resources;

    struct {
        char *host_path;    /* shared_fs base directory; NULL: under the t2exp home */
        char *storage_path; /* relative to host_path (or the home) unless absolute; NULL if absent */
        int64_t save_experiment_best; /* default 0 */
        int64_t save_trial_best;      /* default 1 */
        int64_t save_trial_latest;    /* default 1 */
        int compression;              /* 0 none (default), 1 gzip, 2 zstd: t2__ckpt_compression's values */
    } checkpoint_storage;

    int64_t max_restarts; /* default 5 */

    uint64_t experiment_seed;
    int experiment_seed_set; /* 0: the config has no seed; the caller picks one and records it */

    /* environment.environment_variables: "NAME=value" strings set in every trial process (and
     * forwarded to mpirun's ranks with -x NAME). */
    struct {
        char **vars;
        size_t nvars;
    } environment;

    struct {
        t2__clip_kind clip;      /* gradient_clipping.type; default none */
        double clip_max;         /* gradient_clipping.max (> 0) */
        int64_t aggregation_frequency;     /* default 1 */
        int average_aggregated_gradients;  /* default 1 */
        int average_training_metrics;      /* default 1 (t2exp reduces metrics across ranks anyway) */
    } optimizations;

    char **warnings;
    size_t nwarnings;

    /* While loading: the problems found so far (see t2__config_errors), how many more there were,
     * and whether unknown keys are warnings. Empty in a loaded config. */
    char **errors;
    size_t nerrors, nerrors_more;
    int lenient;
    int lenient_text; /* t2__config_load_stored: unknown keys of the text itself (not overrides) warn */
    char *const *stored_srcs; /* ...and of these overrides' sources (the stored ones) */
    int nstored_srcs;
} t2__config;

/* Unknown keys are errors (the default) or, with on != 0, warnings, for every load after this
 * call in this process. The CLI sets it once, from --lenient, before it loads anything; trial
 * processes that read back a config the controller accepted set it too. */
void t2__config_set_lenient(int on);

/* Every problem the latest failed load on this thread found, in file order (at most
 * T2__CONFIG_MAX_ERRORS lines of the form t2_errmsg has); *more gets how many were not kept (may be
 * NULL). Valid until the next load on this thread; empty after a load that succeeded. */
const char *const *t2__config_errors(size_t *n, size_t *more);
/* The warnings of the last load that failed on this thread (its "accepted but ignored" notes),
 * shown with its errors. */
const char *const *t2__config_error_warnings(size_t *n);

/* Reads and validates the YAML file at path. overrides[0..noverrides) are "dotted.key=value"
 * strings (the CLI's --config); each value is parsed as a YAML scalar or flow collection
 * (`searcher.max_trials=8`, `labels=[a, b]`, `hyperparameters.lr={type: log, minval: -4, maxval: -1}`)
 * and replaces or adds that key, creating maps on the way, before validation. On success *out is a
 * new config (free with t2__config_free); on failure *out is NULL and t2_errmsg() says what and
 * where. T2_ENOTFOUND / T2_EIO for the file, T2_EFORMAT, T2_EINVAL as above, T2_ENOMEM. */
int t2__config_load(const char *path, const char *const *overrides, int noverrides, t2__config **out);

/* The same for text already in memory; name is used in messages and for the default experiment
 * name (NULL -> "<string>"). */
int t2__config_load_string(const char *text, const char *name, const char *const *overrides, int noverrides,
                           t2__config **out);

/* An experiment's stored config, read back under the rule it was accepted by: the unknown keys of
 * its text and of the first nstored overrides (those stored with it) are warnings (it was accepted at create, with --lenient if it has any; without this a --lenient
 * experiment could not be resumed, activated or evaluated without --lenient again, and activate
 * takes no --lenient: probe_M), while the overrides' keys stay checked as --lenient says. */
int t2__config_load_stored(const char *text, const char *name, const char *const *overrides, int nstored,
                           int noverrides, t2__config **out);

void t2__config_free(t2__config *cfg);

/* The warnings collected while loading, in file order per section, e.g.
 * "const.yaml:7:3: unknown key 'searcher.max_epochs' (ignored)". *n gets the count. */
const char *const *t2__config_warnings(const t2__config *cfg, size_t *n);

/* Global and per-slot batch size for one hparams assignment, as Determined computes them:
 * global_batch_size must be a positive integer at least resources.slots_per_trial; each slot gets
 * global / slots records (rounded down) and *global is that times the slots (the load warned when
 * this changes the value). T2_EINVAL otherwise, naming the values. Either out pointer may be NULL. */
int t2__config_batch_sizes(const t2__config *cfg, const t2__val *hparams, int64_t *global, int64_t *per_slot);

const char *t2__unit_name(t2__unit u);                /* "batches", "records", "epochs" */
const char *t2__searcher_name(t2__searcher_kind k);   /* "single", "grid", "random", "adaptive_asha", "tpe", "pbt" */
const char *t2__asha_mode_name(t2__asha_mode m);      /* "aggressive", "standard", "conservative" */

#endif
