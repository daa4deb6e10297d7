/* optim_internal.h — the optimizer object shared by optim.c (lifecycle, dispatch), sgd.c and adam.c. */
#ifndef T2_OPTIM_INTERNAL_H
#define T2_OPTIM_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include "t2exp/error.h"
#include "t2exp/optim.h"

struct t2_optim {
    t2_optim_kind kind;
    size_t n;          /* parameters, fixed at creation */
    double lr;
    int64_t step;      /* completed steps */
    union {
        t2_sgd_params sgd;
        t2_adam_params adam;
    } p;
    float *state;      /* one aligned buffer: SGD momentum, or Adam m then v */
    size_t state_n;
};

/* Allocates an optimizer with a zeroed state of state_n floats (none if 0). */
int t2__optim_alloc(t2_optim_kind kind, size_t n, size_t state_n, t2_optim **out);

/* 1 if v is a finite number >= lo (and <= hi / < hi when hi_open). Rejects NaN. */
int t2__optim_in_range(double v, double lo, double hi, int hi_open);

/* The update kernels over params[0..len) and the state for parameters [off, off+len) of the
 * optimizer's n; arguments are already validated. The step count is not advanced here. */
void t2__sgd_step(t2_optim *opt, size_t off, size_t len, float *params, const float *grads);
void t2__adam_step(t2_optim *opt, size_t off, size_t len, float *params, const float *grads);

#endif
