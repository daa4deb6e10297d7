/* custom.h — searcher.name: custom (internal): the adapter between the searcher interface
 * (searcher_internal.h) and a user's t2exp/searcher.h library (custom.c), and its points and
 * space (custom_point.c). */
#ifndef T2_SEARCHERS_CUSTOM_H
#define T2_SEARCHERS_CUSTOM_H

#include <stddef.h>
#include "configs/hparams.h"
#include "configs/value.h"
#include "t2exp/searcher.h"

/* The search's hyperparameter space (custom.c). */
const t2__hparam *t2__custom_space(const t2_search *s);

/* The leaves of root in file order (nested groups walked), malloc'd. T2_ENOMEM. */
int t2__custom_leaves(const t2__hparam *root, const t2__hparam ***out, size_t *n);
/* A point of root's space holding v (taken, also on failure). T2_ENOMEM. */
int t2__custom_point_new(const t2__hparam *root, t2__val *v, t2_point **out);
/* The hparams map of p, p freed; NULL (p kept) when p is NULL or of another space. */
t2__val *t2__custom_point_take(t2_point *p, const t2__hparam *root);

#endif
