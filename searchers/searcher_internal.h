/* searcher_internal.h — what the searcher implementations share: the vtable, the searcher struct,
 * trial creation (request ids, seeds, sampled hparams) and small helpers for state snapshots.
 *
 * searcher.c owns everything common to all searchers: request ids, the set of trials that ended,
 * rejecting events about unknown trials, ignoring events about ended ones, and the SHUTDOWN op
 * (emitted once, by the event after which every requested trial has ended — Determined's rule
 * "trials requested == trials closed"). An implementation only decides what to create, train and
 * close. */
#ifndef T2_SEARCHERS_SEARCHER_INTERNAL_H
#define T2_SEARCHERS_SEARCHER_INTERNAL_H

#include "searcher.h"

/* A set of request ids kept as a watermark plus the ids above it: every id < low is in the set,
 * and the ones above are bits of a window that starts at base. Trials end roughly in creation order,
 * so the window stays about as wide as the trials running at once and a snapshot stays small even
 * after 100,000 trials. Every operation is O(1) (amortized): a sorted list of the ids above low made
 * each add O(n) where trials end far out of order (ASHA's rungs: previewing 300,000 trials took 44 s,
 * probe_K). */
typedef struct t2__idset {
    int64_t low;
    int64_t base;   /* a multiple of 64, <= low: bit k of bits[w] is id base + 64 w + k */
    uint64_t *bits;
    size_t nwords;
    size_t n;       /* ids >= low in the set */
} t2__idset;

/* 1 if added, 0 if already present, T2_ENOMEM. */
int t2__idset_add(t2__idset *set, int64_t id);
int t2__idset_has(const t2__idset *set, int64_t id);
int64_t t2__idset_count(const t2__idset *set);
void t2__idset_free(t2__idset *set);
/* {"low": L, "ids": [...]} */
int t2__idset_to_val(const t2__idset *set, t2__val **out);
/* Every id must be in [0, limit). T2_EFORMAT naming `what` otherwise. */
int t2__idset_from_val(const t2__val *v, int64_t limit, const char *what, t2__idset *out);

typedef struct t2__searcher_vt {
    const char *name;
    int (*init)(t2__searcher *s);
    void (*destroy)(t2__searcher *s);
    int (*start)(t2__searcher *s, t2__ops *ops);
    /* The wrappers in searcher.c have checked request_id and that the trial has not ended. */
    int (*validation)(t2__searcher *s, int64_t request_id, double metric, int64_t length, t2__ops *ops);
    /* NULL: the searcher does not take a pruner, and the wrapper refuses the event. */
    int (*pruned)(t2__searcher *s, int64_t request_id, double metric, int64_t length, t2__ops *ops);
    int (*exited)(t2__searcher *s, int64_t request_id, t2__ops *ops);
    int (*failed)(t2__searcher *s, int64_t request_id, int invalid_hparams, t2__ops *ops);
    double (*progress)(const t2__searcher *s);
    int64_t (*total)(const t2__searcher *s);
    /* The implementation's own state as a new map, and back (replacing the current state). */
    int (*snapshot)(const t2__searcher *s, t2__val **out);
    int (*restore)(t2__searcher *s, const t2__val *state);
    /* 1: an event that fails puts the searcher back as it was before it (searcher.c), since its
     * failures are a user's library's, to be fixed and resumed (custom); the others' are out of
     * memory, after which the run ends anyway, and a snapshot per event would slow them. */
    int rollback;
} t2__searcher_vt;

struct t2__searcher {
    const t2__config *cfg;
    uint64_t seed;
    const t2__searcher_vt *vt;
    void *impl;
    int64_t next_request; /* request ids handed out so far */
    t2__idset ended;      /* trials that exited or failed */
    int started, shutdown;
    int rolled_back; /* the latest event failed and the searcher is as it was before it */
    int64_t invalid_streak; /* replacements in a row for trials that called their hparams invalid */
};

extern const t2__searcher_vt t2__single_vt, t2__grid_vt, t2__random_vt, t2__asha_vt, t2__tpe_vt, t2__pbt_vt,
    t2__custom_vt;

/* The seed a trial gets: a hash of the experiment seed and its request id, so that a trial's
 * seed does not depend on when it was created or on which other trials failed. */
uint64_t t2__trial_seed(uint64_t experiment_seed, int64_t request_id);

/* A random point of the search space for a request id. The draws come from an rng seeded from
 * the trial seed (not from one stream shared by all trials), so the hparams of request R are the
 * same whatever order events arrived in, and a restored searcher needs no rng state. */
int t2__searcher_sample(const t2__searcher *s, int64_t request_id, t2__val **out);
/* Whether searcher.points_to_evaluate gives request request_id's values (the first requests): then
 * t2__searcher_sample returns them (drawing only what the point leaves out), and a model-based
 * searcher (tpe) takes that sample instead of proposing. */
int t2__searcher_point_given(const t2__searcher *s, int64_t request_id);

/* Appends CREATE alone for the next request id (hparams taken over, also on failure; NULL: sampled
 * for the new id), which *request_id (may be NULL) receives: a custom searcher trains it later. */
int t2__searcher_new_request(t2__searcher *s, t2__val *hparams, t2__ops *ops, int64_t *request_id);
/* Appends CREATE (with hparams, taken over also on failure; NULL: sampled for the new id) and
 * TRAIN to `length` for the next request id, which *request_id (may be NULL) receives. */
int t2__searcher_new_trial(t2__searcher *s, t2__val *hparams, int64_t length, t2__ops *ops, int64_t *request_id);
/* The same for a trial that starts from the latest checkpoint of request `parent` (pbt). */
int t2__searcher_new_child(t2__searcher *s, t2__val *hparams, int64_t parent, int64_t length, t2__ops *ops,
                           int64_t *request_id);

int t2__ops_train(t2__ops *ops, int64_t request_id, int64_t length);
int t2__ops_close(t2__ops *ops, int64_t request_id);

/* Sets and returns the error for a pruned event this searcher does not take: T2_EINVAL. */
int t2__searcher_no_pruner(const t2__searcher *s);

/* Snapshot helpers: map[key] as an integer in [min, max] / a list / a map, else T2_EFORMAT
 * naming `what` and the key. */
int t2__state_int(const t2__val *map, const char *key, int64_t min, int64_t max, const char *what, int64_t *out);
int t2__state_list(const t2__val *map, const char *key, const char *what, const t2__val **out);
int t2__state_num(const t2__val *v, const char *what, double *out);

/* The "flat" searchers (single, grid, random) train every trial to max_length and then close
 * it; they differ only in how many trials there are, where the hparams come from and whether a
 * trial with invalid hparams is replaced. A pruned trial (grid, random) is closed the same way. */
typedef struct t2__flat {
    int64_t total;        /* trials in the plan */
    int replace_invalid;  /* random: draw a new trial for one that reported invalid hparams */
    int64_t invalid;      /* trials that reported invalid hparams (replaced or not) */
    int64_t *closing;     /* trials sent CLOSE that have not ended yet, sorted */
    size_t nclosing, capclosing;
    /* hparams of the i-th trial of the plan (request id i: flat searchers create the plan first) */
    int (*point)(const t2__searcher *s, int64_t i, t2__val **out);
    void *data;           /* the point function's own data (grid axes) */
    void (*data_free)(void *data);
} t2__flat;

int t2__flat_init(t2__searcher *s, int64_t total, int replace_invalid,
                  int (*point)(const t2__searcher *, int64_t, t2__val **));
void t2__flat_destroy(t2__searcher *s);
int t2__flat_start(t2__searcher *s, t2__ops *ops);
int t2__flat_validation(t2__searcher *s, int64_t request_id, double metric, int64_t length, t2__ops *ops);
int t2__flat_pruned(t2__searcher *s, int64_t request_id, double metric, int64_t length, t2__ops *ops);
int t2__flat_exited(t2__searcher *s, int64_t request_id, t2__ops *ops);
int t2__flat_failed(t2__searcher *s, int64_t request_id, int invalid_hparams, t2__ops *ops);
double t2__flat_progress(const t2__searcher *s);
int64_t t2__flat_total(const t2__searcher *s);
int t2__flat_snapshot(const t2__searcher *s, t2__val **out);
int t2__flat_restore(t2__searcher *s, const t2__val *state);

#define T2__FLAT_VT(NAME, INIT)                                                                   \
    {                                                                                            \
        .name = NAME, .init = INIT, .destroy = t2__flat_destroy, .start = t2__flat_start,        \
        .validation = t2__flat_validation, .pruned = t2__flat_pruned, .exited = t2__flat_exited, \
        .failed = t2__flat_failed, .progress = t2__flat_progress, .total = t2__flat_total,       \
        .snapshot = t2__flat_snapshot, .restore = t2__flat_restore,                              \
    }

#endif
