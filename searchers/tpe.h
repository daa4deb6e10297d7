/* tpe.h — the Tree-structured Parzen Estimator's model (internal): given the points of the good
 * ("below") and the other ("above") trials, choose the next point. tpe.c is the searcher around it
 * (trials, observations, constant liar, snapshots); tpe_parzen.c is the arithmetic.
 *
 * A point is one double per searchable hyperparameter, in leaf order: int the integer itself,
 * double the value, log the exponent (Optuna fits log parameters in log space), categorical the
 * index into vals. Semantics follow Optuna's TPESampler with its defaults (consider_prior,
 * consider_magic_clip, no consider_endpoints, default_weights); see docs/config-reference.md. */
#ifndef T2_SEARCHERS_TPE_H
#define T2_SEARCHERS_TPE_H

#include <stddef.h>
#include <stdint.h>
#include "configs/hparams.h"
#include "t2exp/rng.h"

typedef struct t2__tpe_param {
    t2__hp_kind kind;  /* INT, DOUBLE, LOG or CATEGORICAL */
    double low, high;  /* the fitting range: INT widened by 1/2 on each side, LOG in exponents */
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

#endif
