/* pruner.h — Optuna's PercentilePruner (MedianPruner at percentile 50) as a pure object: the
 * controller reports each validation of each running trial and asks whether to stop it; the object
 * does no I/O and keeps no globals, so a resumed controller rebuilds it by replaying the store.
 *
 * The rule (optuna/pruners/_percentile.py, step = batches trained): no pruning until
 * max(1, n_startup_trials) trials completed; a trial whose every value so far is NaN is pruned
 * (diverged); otherwise its best value so far (not its latest: a noisy curve is not punished for one
 * bad validation) is compared with the percentile, numpy's linear interpolation over the non-NaN
 * values, of the completed trials' values at exactly this step, and pruned when strictly worse.
 * Only completed trials are the reference: a pruned trial's short curve says nothing about how
 * good a full run is, and counting it would drag the threshold toward the pruned ones.
 *
 * Trials are keyed by their number in the experiment (the searcher's request id): a hyperband
 * bracket is a hash of it, known before the trial's hparams are drawn, so tpe can sample each trial
 * from its bracket's trials alone (t2__pruner_bracket), as Optuna's TPESampler does under a
 * HyperbandPruner. Memory: per step, the completed trials' values
 * (kept sorted, so a verdict reads the percentile directly); per running trial, its own values;
 * per trial ever seen, a few bytes saying how it ended. */
#ifndef T2_SEARCHERS_PRUNER_H
#define T2_SEARCHERS_PRUNER_H

#include <stdint.h>
#include "halving.h"

typedef struct t2__pruner t2__pruner;

/* The rule. PERCENTILE compares a trial with the completed ones (above); the other two judge a
 * trial by its own values alone, so they need no other trial (a single trial's early stop):
 * PATIENT is Optuna's PatientPruner with no wrapped pruner: with more than patience + 1 values,
 * the trial is pruned when the best of its last patience + 1 values is not better than the best
 * before them by more than min_delta (nanmin(before) + min_delta < nanmin(after), minimising;
 * nanmax(before) - min_delta > nanmax(after), maximising). THRESHOLD is Optuna's ThresholdPruner:
 * pruned when the value at this step is NaN, below lower or above upper. HALVING is Optuna's
 * SuccessiveHalvingPruner (n_brackets 1) and HyperbandPruner (more), halving.h: rungs at
 * min_resource * reduction_factor^k, where each report says the trial's min_resource (halving.h's
 * t2__halving_unit). */
typedef enum { T2__PRUNE_PERCENTILE = 0, T2__PRUNE_PATIENT, T2__PRUNE_THRESHOLD, T2__PRUNE_HALVING } t2__prune_rule;

typedef struct t2__pruner_params {
    double percentile;        /* in (0, 100]; 50 is the median pruner */
    int64_t n_startup_trials; /* >= 0: no pruning until this many trials completed */
    int64_t n_min_trials;     /* >= 1: completed trials with a value at the step needed to compare */
    int smaller_is_better;    /* the metric's direction */
    t2__prune_rule rule;      /* 0: PERCENTILE, which alone reads the three fields above but the last */
    int64_t patience;         /* PATIENT: >= 0 */
    double min_delta;         /* PATIENT: >= 0 */
    double lower, upper;      /* THRESHOLD: -inf / +inf for no bound; lower <= upper, neither NaN */
    int64_t reduction_factor, min_early_stopping_rate, bootstrap_count, n_brackets; /* HALVING (halving.h) */
    int patient_wrap; /* PatientPruner around `rule` (not PATIENT): the rule is asked only when PATIENT
                         (patience, min_delta) would prune; HALVING records at its rungs regardless */
} t2__pruner_params;

typedef struct t2__prune_verdict {
    int prune;        /* 1: stop the trial */
    double best;      /* the trial's best value so far (its direction), this one included; NaN if
                         every value so far is NaN */
    double threshold; /* what it was compared with (NaN when there was no comparison): the
                         percentile; PATIENT: the best before the last patience + 1 values (best
                         is then the best of those); THRESHOLD: the bound it crossed (best is then
                         the value at the step) */
    int64_t compared; /* how many completed trials had a value at this step (NaN values included,
                         as Optuna counts them for n_min_trials; the percentile skips them);
                         HALVING: the values at the rung judged, the trial's own included */
    /* HALVING only: the rung judged last (the one that pruned, if any; -1: none reached), the batch
     * that reaches it, how many of `compared` go on, the trial's bracket, and whether the verdict
     * is bootstrap_count's (threshold then NaN). best is the value judged. */
    int64_t rung, rung_batches, keep, bracket;
    int bootstrap;
    /* patient_wrap: 1 when the wrapped rule was asked (the trial stopped improving), with the
     * patient rule's best of the last patience + 1 values and best before them. */
    int patient;
    double patient_best, patient_before;
} t2__prune_verdict;

/* T2_EINVAL for a NULL argument or params out of range (a NaN percentile included), T2_ENOMEM. */
int t2__pruner_create(const t2__pruner_params *p, t2__pruner **out);
void t2__pruner_free(t2__pruner *p);

/* The pruner searcher.pruner describes (a config t2__config_load accepted; its direction apart). */
struct t2__pruner_config;
int t2__pruner_from_config(const struct t2__pruner_config *pc, int smaller_is_better, t2__pruner **out);

/* Records the trial's value at step `batches` (unit: min_resource for this trial, which only
 * HALVING reads; NULL there: the trial reaches no rung); a step already recorded for that trial keeps its
 * first value (a restarted trial validates the same step again; the store keeps the first too). When decide is nonzero, judges
 * the trial at that step into *out. decide = 0 only records (the controller passes 0 for a warmup
 * step, for the trial's final validation, and when rebuilding from the store on resume); out may
 * be NULL then, else it gets prune 0, the best so far, threshold NaN, compared 0.
 * A report about a trial that already completed or was forgotten is ignored (out: prune 0, the
 * rest NaN / 0): the trial has ended, nothing it says counts.
 * T2_EINVAL (NULL p, or decide with NULL out), T2_ENOMEM (nothing recorded, or, when the
 * failure is in judging, the value stays recorded). */
int t2__pruner_report(t2__pruner *p, int64_t trial, int64_t batches, const t2__halving_unit *unit, double value,
                      int decide, t2__prune_verdict *out);

/* The trial completed normally: its recorded values become the reference at their steps and its
 * own record is freed. An unknown trial (one with no validation) still counts as completed for
 * n_startup_trials, as in Optuna. Completing twice, or completing a forgotten trial: no effect.
 * T2_EINVAL (NULL p), T2_ENOMEM (nothing changed). */
int t2__pruner_completed(t2__pruner *p, int64_t trial);

/* The trial ended otherwise (pruned, failed, killed): its values are dropped and never count (but
 * for HALVING, whose rungs keep every trial's, as Optuna's do), and a
 * later t2__pruner_completed for it has no effect. Needs no memory for a trial that reported; for
 * one that never did, remembering it needs a few bytes, and if even that fails it is simply not
 * remembered (it has no values to drop). */
void t2__pruner_forget(t2__pruner *p, int64_t trial);

/* The bracket of trial (its number in the experiment) under a hyperband rule; -1 for any other rule
 * (successive halving's one bracket included), whose trials all compete together. */
int64_t t2__pruner_bracket(const t2__pruner *p, int64_t trial);

/* Trials completed so far (each counted once). */
int64_t t2__pruner_completed_count(const t2__pruner *p);

#endif
