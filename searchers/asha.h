/* asha.h — adaptive ASHA (internal): the bracket layout and the state of each bracket.
 *
 * Semantics follow Determined's adaptive_asha.go (brackets), asha.go (promotion-based ASHA, used
 * when stop_once is false) and asha_stopping.go (stop_once: true). Each bracket is an independent
 * asynchronous successive-halving search over its own trials; request ids are global, and a
 * table maps each request id to its bracket, rung and flags.
 *
 * Metrics are kept "smaller is better" (negated when smaller_is_better is false); a trial that
 * failed or exited on its own counts as the worst value, DBL_MAX, so the rungs keep moving. */
#ifndef T2_SEARCHERS_ASHA_H
#define T2_SEARCHERS_ASHA_H

#include <stddef.h>
#include <stdint.h>
#include "searcher_internal.h"

/* The layout a config gives (pure function of the config, tested on its own). */
#define T2__ASHA_MAX_BRACKETS 64
typedef struct t2__asha_layout {
    int64_t max_rungs;  /* after capping by max_length and max_trials (when bracket_rungs is absent) */
    size_t nbrackets;
    int64_t rungs[T2__ASHA_MAX_BRACKETS];      /* rungs per bracket, most rungs first */
    int64_t max_trials[T2__ASHA_MAX_BRACKETS]; /* trials per bracket */
    int64_t initial[T2__ASHA_MAX_BRACKETS];    /* trials a bracket requests at start */
} t2__asha_layout;

int t2__asha_layout_of(const t2__searcher_config *sc, t2__asha_layout *out);

/* Rung r of a bracket with n rungs trains to max(floor(max_length / divisor^(n-1-r)), 1). */
int64_t t2__asha_rung_length(int64_t max_length, double divisor, int64_t nrungs, int64_t r);

enum {
    T2__AT_PENDING = 1,    /* has a TRAIN op out and owes a validation at its rung's length */
    T2__AT_EARLY_EXIT = 2, /* failed or exited without a CLOSE: counts as the worst metric */
    T2__AT_CLOSE_SENT = 4,
    T2__AT_ENDED = 8,
    T2__AT_INVALID = 16,   /* reported invalid hparams: removed from the rungs and replaced */
    T2__AT_ALL = 31,
};

typedef struct t2__asha_trial {
    int32_t bracket, rung;
    uint32_t flags;
} t2__asha_trial;

typedef struct t2__asha_entry {
    int64_t request_id;
    double metric;
    int promoted;
} t2__asha_entry;

/* A rung's results sorted by metric, best first, equal metrics in the order their inserts asked
 * (asha_rung.c): a tree by position (a treap, with subtree sizes), so an insert and its rank cost
 * O(log n). A sorted array's memmove per insert made a 300,000-trial preview take 12-45 s, three
 * quarters of it in memmove (probe_K; perf). */
typedef struct t2__asha_node {
    t2__asha_entry e;
    uint32_t left, right, size, prio; /* node indexes, 0: none */
} t2__asha_node;

typedef struct t2__asha_rung {
    int64_t length;
    int64_t outstanding;   /* trials training towards this rung */
    size_t n;              /* entries: nodes 1..n */
    t2__asha_node *node;   /* node[0] unused */
    size_t cap;            /* nodes allocated, node[0] included */
    uint32_t root;
    uint64_t gen;          /* bumped by every change: an insert, a removal, a promoted flag */
    uint64_t flat_gen;     /* the gen flat was made at (0: never) */
    t2__asha_entry *flat;  /* the entries in order, made on demand (t2__asha_rung_flat) */
    uint64_t closed_gen;   /* the gen close_out last went through this rung at */
} t2__asha_rung;

/* asha_rung.c. Inserts at the place of its metric: after equal ones (after_equal) or before
 * them. Returns the entry's index, or -1 when out of memory. */
ptrdiff_t t2__asha_rung_insert(t2__asha_rung *r, int64_t rid, double metric, int after_equal, int promoted);
/* The index an insert of metric would get, inserting nothing. */
size_t t2__asha_rung_rank(const t2__asha_rung *r, double metric, int after_equal);
/* Appends an entry after all others, whatever its metric (a restored rung, in its saved order).
 * T2_ENOMEM. */
int t2__asha_rung_append(t2__asha_rung *r, t2__asha_entry e);
/* Entry k (< n), and setting its promoted flag. */
const t2__asha_entry *t2__asha_rung_at(const t2__asha_rung *r, size_t k);
void t2__asha_rung_promote(t2__asha_rung *r, size_t k);
/* Removes request rid's entry, if there is one (O(n): invalid hparams only). T2_ENOMEM. */
int t2__asha_rung_remove(t2__asha_rung *r, int64_t rid);
/* All n entries in order, valid until the rung changes; NULL when out of memory (n > 0). */
const t2__asha_entry *t2__asha_rung_flat(t2__asha_rung *r);
void t2__asha_rung_free(t2__asha_rung *r); /* back to empty; length and outstanding stay */

typedef struct t2__asha_bracket {
    int64_t nrungs, max_trials, initial;
    t2__asha_rung *rungs;
    int64_t ntrials;   /* requested in this bracket, invalid ones included */
    int64_t invalid;
    int64_t completed; /* ended and not invalid */
} t2__asha_bracket;

struct t2__asha_tpe; /* asha_tpe.c: sampler tpe's space, model and the trials' points */

typedef struct t2__asha {
    int stop_once;
    double divisor;
    size_t nbrackets;
    t2__asha_bracket *b;
    t2__asha_trial *trials; /* indexed by request id; n == searcher's next_request */
    size_t ntrials, cap;
    struct t2__asha_tpe *tpe; /* NULL with sampler random */
} t2__asha;

/* asha.c: one bracket's decisions. */
int t2__asha_new_trial(t2__searcher *s, size_t bracket, t2__ops *ops);
int t2__asha_validation(t2__searcher *s, int64_t request_id, double metric, int64_t length, t2__ops *ops);
int t2__asha_exited(t2__searcher *s, int64_t request_id, t2__ops *ops);
int t2__asha_failed(t2__searcher *s, int64_t request_id, int invalid_hparams, t2__ops *ops);

/* asha_state.c */
int t2__asha_snapshot(const t2__searcher *s, t2__val **out);
int t2__asha_restore(t2__searcher *s, const t2__val *state);
void t2__asha_clear(t2__asha *a); /* frees the per-trial and per-rung state, keeps the layout */

/* asha_tpe.c: sampler tpe (the BOHB idea). Each new trial's hparams come from TPE fitted on the
 * results of the longest rung length that has n_startup_trials results, and from a random draw
 * (the random sampler's own) while none has. The trials' points are state (snapshot "points"). */
int t2__asha_tpe_init(t2__searcher *s);
void t2__asha_tpe_free(t2__asha *a);
/* The hparams for request rid (the next one), remembering its point. T2_ENOMEM. */
int t2__asha_tpe_hparams(t2__searcher *s, int64_t rid, t2__val **out);
/* Adds "points" to a snapshot map. */
int t2__asha_tpe_snapshot(const t2__searcher *s, t2__val *map);
/* Reads "points" (one per request id, in the space) into a new array for t2__asha_tpe_take. */
int t2__asha_tpe_read(const t2__searcher *s, const t2__val *state, double **points);
void t2__asha_tpe_take(t2__asha *a, double *points, size_t n);

#endif
