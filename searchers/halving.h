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
 * stopping rate b, the most aggressive first); a trial's bracket is a hash of its number in the experiment over the
 * brackets' budgets ceil(n_brackets * rf^s / (s + 1)), s = n_brackets - 1 - b, and it competes
 * only with its bracket's trials.
 *
 * Which values are recorded and judged when is the pruner's (pruner.c): this object keeps the rungs
 * and answers the promotion test. */
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

/* What a judged validation came to (prune 0 when no rung was judged). */
typedef struct t2__halving_verdict {
    int prune;
    int bootstrap;        /* pruned because n <= bootstrap_count */
    int64_t rung;         /* the rung judged last (the one that pruned, if any); -1: none */
    int64_t rung_batches; /* the step that reaches it */
    int64_t compared;     /* values recorded there, the trial's own included */
    int64_t keep;         /* max(1, floor(compared / rf)): how many are promoted */
    double threshold;     /* the worst value still promoted; NaN with bootstrap or a NaN value */
} t2__halving_verdict;

/* min_resource for one trial: rung k is reached at batch ceil(n * rf^(mesr + bracket + k) * mul /
 * div): n in the configured unit, mul / div that unit's batches (batches 1 / 1, records 1 / the
 * global batch size, epochs batches-per-epoch / 1), so rungs of a length in records or epochs sit
 * where the length says, not at a rounded first rung times rf^k. */
typedef struct t2__halving_unit {
    int64_t n, mul, div;
} t2__halving_unit;

/* T2_EINVAL for a NULL argument or params out of range, T2_ENOMEM. */
int t2__halving_create(const t2__halving_params *p, t2__halving **out);
void t2__halving_free(t2__halving *h);

/* Trial's bracket, from its number in the experiment: always 0 with one bracket. */
int64_t t2__halving_bracket(const t2__halving *h, int64_t trial);

/* The batch that reaches rung k of bracket for unit u; -1 when none does (past INT64_MAX, or u
 * NULL or not positive: an epoch's length still unknown). */
int64_t t2__halving_rung_batches(const t2__halving *h, int64_t bracket, int64_t k, const t2__halving_unit *u);

/* Adds a trial's value (not NaN) to rung k of bracket. T2_EINVAL, T2_ENOMEM (nothing added). */
int t2__halving_add(t2__halving *h, int64_t bracket, int64_t k, double value);

/* Optuna's promotion test for value, already added to rung k of bracket, into *out (rung and
 * rung_batches are the caller's to fill). */
void t2__halving_judge(const t2__halving *h, int64_t bracket, int64_t k, double value, t2__halving_verdict *out);

/* Puts x into v[0..n), ascending, which has room for one more: after the equal values already
 * there (a binary search and a memmove; the pruner's rules keep their values so). */
void t2__insert_sorted(double *v, size_t n, double x);

#endif
