/* t2exp/searcher.h — a searcher of your own: `searcher: {name: custom, library: ./mine.so, ...}`
 * (Determined's custom searcher, in C).
 *
 * t2exp's own searchers are "events in, operations out", and so is a custom one: a vtable of
 * callbacks exported with T2_SEARCHER(...), which the controller loads (in its own process) and
 * calls with each event of the search. A callback answers by issuing operations through the
 * search handle s:
 *
 *   t2_search_create   a new trial with a point of the search space; its request id back
 *   t2_search_train    train a trial to a total length (in searcher.max_length's unit, at most
 *                      max_length), then validate it: on_validation follows
 *   t2_search_close    the trial gets no more work (it exits; on_trial_exited follows)
 *
 * The events:
 *
 *   init             makes the state, for a fresh search and for a resumed one alike
 *   start            a fresh search's first operations (a resumed one gets load instead)
 *   on_validation    a trial reached the length of its latest train op and validated: metric is
 *                    the searcher metric as the trial reported it (smaller_is_better is yours to
 *                    apply; NaN when it reported NaN). Until its next train or close the trial
 *                    waits, holding no slot (it continues from its checkpoint).
 *   on_trial_exited  a trial ended after its close
 *   on_trial_failed  a trial failed for good (its restarts spent), or the user killed it;
 *                    invalid_hparams: the trial called its hyperparameters unusable
 *   progress         (optional) how far the search is, 0..1
 *   save, load       the state as text (malloc'd, NUL-terminated; any bytes but NUL), and back: saved after the
 *                    events, so that `t2exp resume` continues the same search, and before each
 *                    event, whose failure is undone by a load into the live state (so load
 *                    replaces all the state holds)
 *   destroy          frees the state; called once init was, also when init failed (with
 *                    whatever it left in *state, NULL if nothing)
 *
 * Request ids are 0, 1, 2, ... in creation order. The search ends after the event at which every
 * trial it created has ended and that created none. Every callback returns 0 or a negative T2_E…
 * code (t2exp/error.h; set the message with t2_seterr); an operation that is not allowed (an
 * unknown request id, a length past max_length or below the trial's last, work for a closed
 * trial) returns T2_EINVAL with the reason. A failing callback ends the experiment ERRORED with
 * the library's name and the message; the store stays consistent, and after a fix `t2exp resume`
 * continues from the last saved state. The library runs in the controller's process, so a crash in
 * it ends the controller as a crash of t2exp would (resume continues likewise). */
#ifndef T2EXP_SEARCHER_H
#define T2EXP_SEARCHER_H

#include <stddef.h>
#include <stdint.h>
#include "t2exp/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped whenever t2_searcher_def or the meaning of a callback changes incompatibly. */
#define T2_SEARCHER_ABI_VERSION 1

typedef struct t2_search t2_search; /* the controller's side of the search */
typedef struct t2_point t2_point;   /* a value for every hyperparameter of the space */

typedef struct t2_searcher_def {
    int abi_version; /* T2_SEARCHER_ABI_VERSION, set by T2_SEARCHER */
    const char *name;
    int (*init)(t2_search *s, void **state);
    int (*start)(t2_search *s, void *state);
    int (*on_validation)(t2_search *s, void *state, int64_t request_id, double metric, int64_t length);
    int (*on_trial_exited)(t2_search *s, void *state, int64_t request_id);
    int (*on_trial_failed)(t2_search *s, void *state, int64_t request_id, int invalid_hparams);
    double (*progress)(t2_search *s, void *state); /* optional: trials ended / created without it */
    int (*save)(t2_search *s, void *state, char **text);
    int (*load)(t2_search *s, void *state, const char *text);
    void (*destroy)(void *state);
} t2_searcher_def;

/* Exports the searcher: T2_SEARCHER(.name = "hill", .init = init, ...). Defines the one symbol the
 * controller looks up, `t2_searcher`. Every callback but progress is required. */
#define T2_SEARCHER(...)                                                                        \
    __attribute__((visibility("default"))) const t2_searcher_def t2_searcher = {                \
        .abi_version = T2_SEARCHER_ABI_VERSION, __VA_ARGS__}

/* ---- operations (only inside a callback) ---- */

/* A new trial with point p (taken, also on failure; NULL: a random draw of the space for the new
 * request, as the random searcher's). Its request id to *request_id (may be NULL). It trains only
 * once a t2_search_train gives it a length. */
int t2_search_create(t2_search *s, t2_point *p, int64_t *request_id);
/* Train request_id to `length` in total (max_length's unit), then validate. */
int t2_search_train(t2_search *s, int64_t request_id, int64_t length);
int t2_search_close(t2_search *s, int64_t request_id);

/* ---- the search's settings ---- */

uint64_t t2_search_seed(const t2_search *s); /* the experiment seed: derive every random choice from it */
int t2_search_smaller_is_better(const t2_search *s);
int64_t t2_search_max_length(const t2_search *s);
int64_t t2_search_max_trials(const t2_search *s); /* searcher.max_trials, 0 when not given */
/* searcher.options.NAME: a number into *value, or a string into *text (it lives as long as the
 * search; quote a value that YAML would read as a number or a bool). T2_ENOTFOUND: absent;
 * T2_EINVAL: another kind of value. */
int t2_search_option(const t2_search *s, const char *name, double *value);
int t2_search_option_text(const t2_search *s, const char *name, const char **text);

/* ---- the space ---- */

typedef enum { T2_PARAM_CONST, T2_PARAM_INT, T2_PARAM_DOUBLE, T2_PARAM_LOG, T2_PARAM_CATEGORICAL } t2_param_kind;

typedef struct t2_param {
    const char *name;      /* dotted from the root for nested hyperparameters ("optimizer.lr") */
    t2_param_kind kind;
    double minval, maxval; /* INT, DOUBLE; LOG: the exponents (values are base^minval..base^maxval) */
    double base;           /* LOG */
    size_t nchoices;       /* CATEGORICAL: how many vals */
} t2_param;

/* The hyperparameters (leaves, in the order of the file), global_batch_size and consts included. */
size_t t2_search_nparams(const t2_search *s);
int t2_search_param(const t2_search *s, size_t i, t2_param *out); /* T2_EINVAL past the end */

/* ---- points ---- */

/* A point belongs to its search: hand it to t2_search_create, or t2_point_free it, before the
 * search ends. */

/* A random draw of the space from seed (the same seed, the same draw). */
int t2_search_sample(const t2_search *s, uint64_t seed, t2_point **out);
void t2_point_free(t2_point *p);
/* Readers by name: a number (int, double or log hyperparameters; a categorical's numeric value),
 * a categorical's string, or a categorical's index in its vals. T2_ENOTFOUND (no such
 * hyperparameter), T2_EINVAL (another kind of value). */
int t2_point_double(const t2_point *p, const char *name, double *value);
int t2_point_string(const t2_point *p, const char *name, const char **value);
int t2_point_choice(const t2_point *p, const char *name, size_t *index);
/* Setters, checked against the space: T2_EINVAL naming the hyperparameter and what it allows (a
 * number outside its range, a fraction for an int, a value that is none of a categorical's vals, a
 * const changed). A double for an int hyperparameter must be a whole number. */
int t2_point_set_double(t2_point *p, const char *name, double value);
int t2_point_set_string(t2_point *p, const char *name, const char *value);
int t2_point_set_choice(t2_point *p, const char *name, size_t index);

#ifdef __cplusplus
}
#endif

#endif
