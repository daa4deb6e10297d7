/* halving.h — the rungs of Optuna's SuccessiveHalvingPruner and HyperbandPruner, as a pure object
 * the pruner (pruner.c) keeps: per bracket and rung, the values every trial had when it reached
 * that rung; per trial, only how many rungs it has reached (the caller keeps that count).
 *
 * The rule (optuna/pruners/_successive_halving.py): rung r of a trial of bracket b is reached at
 * step unit * rf^(mesr + b + r) (unit: min_resource in the trial's batches; rf:
 * reduction_factor; mesr: min_early_stopping_rate). A validation at or past that step records its
 * value there, and when it is judged the trial is pruned unless its value is among the best
 * max(1, floor(n / rf)) of the n values recorded at that rung so far, its own included; with
 * n <= bootstrap_count it is pruned too, and a NaN value past a rung prunes it without recording.
 * Every trial's values stay (running, completed, pruned or failed alike), as Optuna compares with
 * every trial that reached the rung.
 *
 * Hyperband (n_brackets > 1) runs one such rule per bracket b = 0 .. n_brackets - 1 (min early
 * stopping rate b, the most aggressive first); a trial's bracket is a hash of its id over the
 * brackets' budgets ceil(n_brackets * rf^s / (s + 1)), s = n_brackets - 1 - b, and it competes
 * only with its bracket's trials.
 *
 * One deliberate difference: Optuna records a validation that reaches several rungs at once at each
 * of them only while the trial survives each; here it is recorded at each of them. Recording then
 * depends on a trial's own values alone, so a resumed controller rebuilds the rungs exactly by
 * replaying the store's validations. */
#ifndef T2_SEARCHERS_HALVING_H
#define T2_SEARCHERS_HALVING_H

#include <stddef.h>
#include <stdint.h>

typedef struct t2__halving t2__halving;

typedef struct t2__halving_params {
    int64_t reduction_factor;        /* >= 2 */
    int64_t min_early_stopping_rate; /* >= 0 (successive halving; hyperband: 0) */
    int64_t bootstrap_count;         /* >= 0 */
    int64_t n_brackets;              /* >= 1: 1 is successive halving; more is hyperband */
    int smaller_is_better;
} t2__halving_params;

/* What a judged validation came to (prune 0 when no rung was reached). */
typedef struct t2__halving_verdict {
    int prune;
    int bootstrap;        /* pruned because n <= bootstrap_count */
    int64_t rung;         /* the rung judged last (the one that pruned, if any) */
    int64_t rung_batches; /* the step that reaches it */
    int64_t compared;     /* values recorded there, the trial's own included */
    int64_t keep;         /* max(1, floor(compared / rf)): how many are promoted */
    double threshold;     /* the worst value still promoted; NaN with bootstrap or a NaN value */
} t2__halving_verdict;

/* T2_EINVAL for a NULL argument or params out of range, T2_ENOMEM. */
int t2__halving_create(const t2__halving_params *p, t2__halving **out);
void t2__halving_free(t2__halving *h);

/* Trial's bracket, from its id: always 0 with one bracket. */
int64_t t2__halving_bracket(const t2__halving *h, int64_t trial);

/* A trial of `bracket` that has reached *rungs rungs reports value at step (a step it had not
 * reported before) with unit batches to min_resource (<= 0: no rung is ever reached). Records the
 * value at each rung the step reaches (advancing *rungs) and, when decide, judges those rungs into
 * *out (out may be NULL when decide is 0). T2_EINVAL, T2_ENOMEM (nothing recorded at the rung
 * that failed; *rungs counts the ones recorded). */
int t2__halving_step(t2__halving *h, int64_t bracket, int64_t *rungs, int64_t step, int64_t unit, double value,
                     int decide, t2__halving_verdict *out);

/* Puts x into v[0..n), ascending, which has room for one more: after the equal values already
 * there (a binary search and a memmove; the pruner's rules keep their values so). */
void t2__insert_sorted(double *v, size_t n, double x);

#endif
