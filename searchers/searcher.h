/* searcher.h — the searcher interface (internal): events in, operations out.
 *
 * Every searcher (single, grid, random, adaptive_asha, tpe, pbt) is driven the same way by the controller:
 * it is told that the experiment started, that a trial it asked for exists, that a trial finished
 * a validation (metric, length trained), that the controller's pruner stopped a trial early, and
 * that a trial exited or failed; it answers each event by appending operations to an op list:
 * create a trial with these hparams and seed, train trial R to total length L, close trial R, shut
 * the experiment down. Trials are named by the searcher's own request ids (0, 1, 2, … in creation
 * order); the controller maps them to store ids.
 *
 * Lengths are in the unit of searcher.max_length (batches, records or epochs); the runner turns
 * them into batches. A TRAIN op's length is the trial's total target, not an increment; after a
 * trial reaches it, the runner validates and the controller reports on_validation with that length.
 *
 * The searcher's whole state serialises to a t2__val (JSON in the store) after every event, so that
 * `t2exp resume` can rebuild it with t2__searcher_restore and continue the same search. */
#ifndef T2_SEARCHERS_SEARCHER_H
#define T2_SEARCHERS_SEARCHER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "configs/config.h"
#include "configs/value.h"

typedef enum t2__op_kind {
    T2__OP_CREATE,   /* request_id, hparams, seed, parent_request_id */
    T2__OP_TRAIN,    /* request_id, length */
    T2__OP_CLOSE,    /* request_id: the trial will get no more work; the controller stops it */
    T2__OP_SHUTDOWN, /* the search is over (after every trial is closed) */
} t2__op_kind;

typedef struct t2__search_op {
    t2__op_kind kind;
    int64_t request_id;
    t2__val *hparams; /* CREATE: the nested hparams map (owned by the op list) */
    uint64_t seed;    /* CREATE: the trial's seed, derived from the experiment seed and request id */
    /* CREATE: -1, or the request whose latest checkpoint the new trial starts from as a full
     * restore (pbt's exploit: it continues at the parent's length with its own hparams). */
    int64_t parent_request_id;
    int64_t length;   /* TRAIN: total length in max_length units */
} t2__search_op;

typedef struct t2__ops {
    t2__search_op *v;
    size_t n, cap;
} t2__ops;

/* Appends an op (taking ownership of hparams, also on failure). T2_ENOMEM. */
int t2__ops_push(t2__ops *ops, t2__search_op op);
/* Frees the hparams of every op and empties the list (keeps the allocation). */
void t2__ops_clear(t2__ops *ops);
void t2__ops_free(t2__ops *ops);

typedef struct t2__searcher t2__searcher;

/* Creates the searcher the config names (cfg must outlive it), with the experiment seed every
 * random choice derives from. T2_EINVAL for an unusable config (with the key path). */
int t2__searcher_create(const t2__config *cfg, uint64_t experiment_seed, t2__searcher **out);
void t2__searcher_free(t2__searcher *s);

/* Events. Each appends the resulting operations to ops. Events before t2__searcher_start are
 * T2_ESTATE; a request id the searcher never created is T2_EINVAL; events about a trial that
 * already exited or failed are ignored (T2_OK, no ops). SHUTDOWN is appended by the event after
 * which every trial requested so far has ended, exactly once. If an event fails (T2_ENOMEM), the
 * ops it appended are removed again but the searcher's state is unspecified: rebuild it from
 * the last snapshot. */
int t2__searcher_start(t2__searcher *s, t2__ops *ops);
int t2__searcher_on_trial_created(t2__searcher *s, int64_t request_id, t2__ops *ops);
/* metric is the searcher metric as the trial reported it (smaller_is_better is applied inside;
 * NaN counts as the worst value). Only the validation at or past the trial's current TRAIN
 * target carries a decision; earlier ones (min_validation_period) and repeats get no ops, so the
 * controller may report every validation. An ASHA trial that got no further op after its
 * validation is paused: the controller may free its slot, and a later TRAIN op (a promotion)
 * continues it from its checkpoint. */
int t2__searcher_on_validation(t2__searcher *s, int64_t request_id, double metric, int64_t length, t2__ops *ops);
/* The controller stopped the trial early (searcher.pruner) after its validation at `length` (in
 * max_length units, below its TRAIN target) with `metric` (as on_validation takes it: the trial's
 * metric there, smaller_is_better applied inside, NaN the worst). The searcher answers with CLOSE,
 * as for a trial that reached its target, and counts the trial as done: no replacement is drawn.
 * random and grid need nothing else; tpe keeps (metric, length) as a pruned observation, ranked
 * after every completed trial as Optuna's TPESampler does. The controller then lets the trial exit
 * and reports on_trial_exited as usual, which ends it. A trial that already has its result (CLOSE
 * sent) gets no second one. A searcher that does not take a pruner (adaptive_asha, pbt)
 * refuses the event with T2_EINVAL, as it does a negative length. */
int t2__searcher_on_trial_pruned(t2__searcher *s, int64_t request_id, double metric, int64_t length, t2__ops *ops);
/* The trial ended after a CLOSE (or it stopped early by itself: ASHA then ranks it as the worst
 * result of its rung, like a failure). */
int t2__searcher_on_trial_exited(t2__searcher *s, int64_t request_id, t2__ops *ops);
/* The trial failed for good (restarts exhausted). invalid_hparams: the trial said its hparams are
 * unusable, so random/ASHA/TPE draw a replacement; a failed trial never stalls the search. */
int t2__searcher_on_trial_failed(t2__searcher *s, int64_t request_id, int invalid_hparams, t2__ops *ops);

/* 1 when the latest event failed and the searcher is back as it was before it (a custom
 * searcher's library failed): its snapshot then goes with the ops applied so far, and a resume
 * after the fix continues from there. 0 otherwise (a built-in searcher's state after a failed
 * event is unspecified). */
int t2__searcher_rolled_back(const t2__searcher *s);
/* Says so again after later events cleared it: the controller applied the ops of an event whose
 * inner event (a closed trial's exit) was undone, and the state matches the trials it made. */
void t2__searcher_mark_rolled_back(t2__searcher *s);
/* 1 once t2__searcher_start succeeded (also in a restored searcher). */
int t2__searcher_started(const t2__searcher *s);

/* 1 if the trial exited or failed (an event told the searcher), else 0. */
int t2__searcher_has_ended(const t2__searcher *s, int64_t request_id);

/* Fraction of the search done, 0..1 (for progress bars and the store). */
double t2__searcher_progress(const t2__searcher *s);

/* Total trials the search will create if nothing fails (for "trials done / total"). Trials
 * drawn to replace invalid-hparams ones are not counted (they do not count against max_trials);
 * for ASHA it is the sum of the brackets' trials, which can exceed max_trials when there are
 * more brackets than trials (each bracket gets at least one, as in Determined). */
int64_t t2__searcher_total_trials(const t2__searcher *s);

/* State snapshot and restore (same config). Restoring then replaying nothing continues exactly. */
int t2__searcher_snapshot(const t2__searcher *s, t2__val **state);
int t2__searcher_restore(t2__searcher *s, const t2__val *state);

/* `t2exp preview`: runs the search against a pretend controller that answers every TRAIN op at
 * once with a validation whose metric is a fixed pseudo-random number per request id (so ASHA's
 * promotions and stops show), and closes trials when told. *out is a LIST with one map per
 * trial, in request order: {"request_id": R, "hparams": {...}, "lengths": [L1, L2, ...]} (the
 * successive TRAIN targets). Deterministic for a config and seed. T2_EINVAL as
 * t2__searcher_create, T2_ENOMEM. */
int t2__searcher_preview(const t2__config *cfg, uint64_t experiment_seed, t2__val **out);

/* Prints a preview as a table (one line per trial: request id, lengths, hparams as JSON) and a
 * summary line. T2_EINVAL for a value that is not a preview, T2_EIO when writing fails. */
int t2__preview_print(const t2__val *preview, FILE *f);

#endif
