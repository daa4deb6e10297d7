/* hparams.h — the hyperparameter search space of an experiment config (internal).
 *
 * `hyperparameters:` parses into a tree of t2__hparam nodes: the root is a NESTED node with an empty
 * path, every map without a `type` key is a NESTED node, every other entry a leaf. Leaves are
 * visited depth-first in the order of the YAML file; that order defines the leaf index used by
 * t2__hparam_build, the nesting of t2__hparam_grid's Cartesian product (the first leaf varies
 * slowest, as in Determined) and the order of t2__hparam_sample's random draws.
 *
 * A chosen assignment is always handed around as the hparams map the trial sees: a t2__val MAP,
 * nested like the config (`{"global_batch_size": 64, "optimizer": {"lr": 0.01}}`); the store keeps it
 * as JSON (t2__val_to_json). int hyperparameters produce INT values, double and log DOUBLE values,
 * const and categorical exactly the value written in the config. */
#ifndef T2_CONFIGS_HPARAMS_H
#define T2_CONFIGS_HPARAMS_H

#include <stddef.h>
#include <stdint.h>
#include "t2exp/rng.h"
#include "value.h"

typedef enum t2__hp_kind {
    T2__HP_CONST,       /* val */
    T2__HP_INT,         /* imin..imax inclusive, count (0 = not given) */
    T2__HP_DOUBLE,      /* minval..maxval, count */
    T2__HP_LOG,         /* base^e for e in minval..maxval (exponents, as in Determined), count */
    T2__HP_CATEGORICAL, /* vals: a non-empty LIST */
    T2__HP_NESTED,      /* children */
} t2__hp_kind;

typedef struct t2__hparam {
    t2__hp_kind kind;
    char *name;         /* key within its parent ("lr"); "" for the root */
    char *path;         /* dotted from the root ("optimizer.lr"); "" for the root */
    int64_t imin, imax; /* INT */
    double minval, maxval; /* INT (as doubles), DOUBLE, LOG */
    int64_t count;      /* INT/DOUBLE/LOG: grid points; 0 when not given */
    double base;        /* LOG: default 10 */
    t2__val *val;       /* CONST */
    t2__val *vals;      /* CATEGORICAL */
    struct t2__hparam *children; /* NESTED: nchildren nodes */
    size_t nchildren;
} t2__hparam;

/* Frees a tree built by the config loader (the root node and everything below). NULL is fine. */
void t2__hparam_free(t2__hparam *root);

const char *t2__hp_kind_name(t2__hp_kind k); /* "const", "int", "double", "log", "categorical", "nested" */

/* 1 for INT, DOUBLE, LOG and CATEGORICAL (the kinds a searcher chooses), 0 otherwise. */
int t2__hparam_searchable(const t2__hparam *h);

/* A searchable leaf's value v as one number, the scale a search draws it on: an int or double as it
 * is, a log one as its exponent (log base of v), a categorical one as the index of v in vals.
 * Returns 1 and sets *x when v is such a value (finite; positive for log; one of vals), else 0.
 * Ranges are not checked. Shared by tpe's points and importance's features. */
int t2__hparam_coordinate(const t2__hparam *leaf, const t2__val *v, double *x);

/* Whether leaf h takes *v (an int or double in its range, a log one's exponent in its range to
 * rounding, one of a categorical's vals, a const's own value): 1, with *v made the value the trial
 * sees (an int for a double or log leaf becomes a double; a categorical's matching val itself);
 * 0, with what h takes written to want (*v untouched). T2_ENOMEM (< 0). Shared by
 * searcher.points_to_evaluate and a custom searcher's points. */
int t2__hparam_allows(const t2__hparam *h, t2__val **v, char *want, size_t size);

/* The node at a dotted path ("" is the root), or NULL. */
const t2__hparam *t2__hparam_find(const t2__hparam *root, const char *path);

/* The leaves (everything but NESTED) depth-first in file order: writes at most max pointers to out
 * (out may be NULL when max is 0) and returns how many leaves there are. */
size_t t2__hparam_leaves(const t2__hparam *root, const t2__hparam **out, size_t max);

/* Builds the nested hparams map from one value per leaf (leaf order above): values[i] is copied;
 * a NULL values[i] takes a CONST leaf's own value and is T2_EINVAL for any other kind. An empty
 * nested map in the config stays an empty map. */
int t2__hparam_build(const t2__hparam *root, const t2__val *const *values, t2__val **out);

/* The grid values of one leaf as a LIST, following Determined: const -> [val]; categorical -> vals;
 * double -> count points minval + i*(maxval-minval)/(count-1) (count 1 -> the midpoint);
 * log -> base^(those points over the exponents); int -> count clamped to the number of integers in
 * [imin, imax], points round(imin + i*(imax-imin)/(count-1)) (count 1 -> the rounded midpoint),
 * so a count larger than the range gives every integer once. T2_EINVAL (naming the path) for an
 * INT/DOUBLE/LOG leaf without count or a NESTED node. */
int t2__hparam_axis(const t2__hparam *leaf, t2__val **out);

/* Number of grid points (product of the axis lengths; 1 for a space with no searchable leaves).
 * Saturates at UINT64_MAX. T2_EINVAL as t2__hparam_axis. */
int t2__hparam_grid_size(const t2__hparam *root, uint64_t *n);

/* Every grid point as a LIST of hparams maps, the first leaf varying slowest. T2_EINVAL when the
 * grid has more than max_points points (0 means no limit) or as t2__hparam_axis; T2_ENOMEM. */
int t2__hparam_grid(const t2__hparam *root, uint64_t max_points, t2__val **out);

/* lo + u * (hi - lo) for u in [0, 1]: a draw from a double range (or a log range's exponents).
 * Where hi - lo overflows (a range wider than DBL_MAX, such as -1.7e308 to 1.7e308) the same point
 * is taken as lo * (1 - u) + hi * u, kept in [lo, hi], so every finite range gives finite values. */
double t2__hparam_lerp(double lo, double hi, double u);

/* One random point: int uniform on [imin, imax] (both ends; Determined's own sampler never draws
 * maxval), double uniform on [minval, maxval), log base^uniform(minval, maxval), categorical a
 * uniformly chosen element of vals, const its value. The searchable leaves draw from rng in leaf
 * order (const leaves draw nothing), so the same rng state always gives the same point. T2_ENOMEM. */
int t2__hparam_sample(const t2__hparam *root, t2_rng *rng, t2__val **out);

#endif
