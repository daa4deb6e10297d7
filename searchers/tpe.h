/* tpe.h — the Tree-structured Parzen Estimator's model (internal): given the points of the good
 * ("below") and the other ("above") trials, choose the next point. tpe.c is the searcher around it
 * (trials, observations, constant liar, snapshots); tpe_parzen.c is the arithmetic.
 *
 * A point is one double per searchable hyperparameter, in leaf order: int the integer itself,
 * double the value (half the value when the range is wider than DBL_MAX; see low/high below), log
 * the exponent (Optuna fits log parameters in log space), categorical the index into vals.
 * Semantics follow Optuna's TPESampler with its defaults (consider_prior, consider_magic_clip, no
 * consider_endpoints, default_weights); see docs/config-reference.md. */
#ifndef T2_SEARCHERS_TPE_H
#define T2_SEARCHERS_TPE_H

#include <stddef.h>
#include <stdint.h>
#include "configs/hparams.h"
#include "t2exp/rng.h"

typedef struct t2__tpe_param {
    t2__hp_kind kind;  /* INT, DOUBLE, LOG or CATEGORICAL */
    /* The fitting range: INT widened by 1/2 on each side; LOG in exponents; DOUBLE minval..maxval,
     * or, when maxval - minval overflows (a range wider than DBL_MAX, such as -1.7e308..1.7e308),
     * both halved, the range fitted at half scale so the estimators' widths, centres and bandwidths
     * stay finite (tpe_space.c's fit_scale: the leaf's points are its values x 0.5, exact for a
     * power of two, and drawn points are doubled back and clamped to [minval, maxval]). */
    double low, high;
    int64_t imin, imax; /* INT: where rounded draws are clamped */
    int64_t nchoices;  /* CATEGORICAL */
} t2__tpe_param;

typedef struct t2__tpe_model {
    const t2__tpe_param *p;
    size_t np;
    double prior_weight;
    int64_t n_candidates;
    int multivariate;
} t2__tpe_model;

/* Fits l (from below[0..nb)) and g (from above[0..na)), each a list of points ordered by request
 * id (older points weigh less once a group has more than 25), draws m->n_candidates points from l
 * and writes the one with the largest log l(x) - log g(x) to x (per hyperparameter when not
 * multivariate, jointly otherwise). nb must be >= 1. T2_ENOMEM. */
int t2__tpe_suggest(const t2__tpe_model *m, const double *const *below, size_t nb, const double *const *above,
                    size_t na, t2_rng *rng, double *x);

/* The search space as TPE sees it: the leaves of a flat hparams tree (nested groups are refused
 * at their key), the searchable ones as parameters. tpe_space.c. */
typedef struct t2__tpe_space {
    t2__tpe_param *params;     /* np searchable leaves */
    const t2__hparam **leaves; /* all leaves (const ones too), in leaf order */
    size_t nleaves, np;
} t2__tpe_space;

/* T2_EINVAL for nested hyperparameters, T2_ENOMEM. On failure *sp needs t2__tpe_space_free. */
int t2__tpe_space_init(const t2__hparam *root, t2__tpe_space *sp);
void t2__tpe_space_free(t2__tpe_space *sp);
/* A drawn hparams map as a point (log values back to exponents, categoricals to indices). */
void t2__tpe_point_of(const t2__tpe_space *sp, const t2__val *hp, double *x);
/* The hparams map of a point. T2_ENOMEM. */
int t2__tpe_hparams_of(const t2__hparam *root, const t2__tpe_space *sp, const double *x, t2__val **out);
/* 1 when x[0..np) lies in the space (whole numbers for ints and categoricals): restore's check. */
int t2__tpe_point_valid(const t2__tpe_space *sp, const double *x);

/* One observation: a completed trial (loss: smaller is better, +inf for the worst); with pruned
 * set, a trial the controller's pruner stopped after its validation at `step` (loss: its metric
 * there); with running set, a trial still going that counts as worse than every result (the
 * constant liar). Completed and pruned trials are the finished ones. */
typedef struct t2__tpe_obs {
    int64_t id; /* request id: orders each group, older points weigh less */
    double loss;
    const double *x;
    int running;
    int pruned;
    int64_t step; /* pruned: the length it reached */
} t2__tpe_obs;

/* Optuna's split and choice: the best n_below = min(ceil(gamma * n), 25) finished observations
 * (at least 1; n counts the running ones too) fit l, the rest and the running ones fit g, and
 * t2__tpe_suggest picks x. "Best" is Optuna's order: completed by loss, then pruned ones by the
 * step they reached (deeper first) and then loss, so a pruned trial is below only when there are
 * too few completed ones; running ones last. At least one observation must be finished. Reorders
 * obs. T2_ENOMEM. */
int t2__tpe_propose(const t2__tpe_model *m, double gamma, t2__tpe_obs *obs, size_t n, t2_rng *rng, double *x);

#endif
