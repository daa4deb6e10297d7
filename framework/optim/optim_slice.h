/* optim_slice.h — stepping an optimizer over parameters that are not one contiguous buffer
 * (internal; the runner's t2_step_optimizer uses it for raw parameter buffers).
 *
 * An optimizer created for n parameters may cover several buffers laid end to end in its own
 * numbering: buffer k covers [off_k, off_k + len_k). One step is then one t2__optim_step_slice per
 * buffer followed by one t2__optim_advance: the kernels do per element exactly what a contiguous
 * t2_optim_step does (PyTorch's rules, the same state layout), and the step count, which Adam's
 * bias correction and SGD's first momentum step read, advances once per step. */
#ifndef T2_OPTIM_SLICE_H
#define T2_OPTIM_SLICE_H

#include <stddef.h>
#include "t2exp/optim.h"

/* Updates params[0..n) from grads[0..n) as the optimizer's parameters [off, off + n), without
 * advancing the step count. T2_ESHAPE for a slice outside the optimizer's size, T2_EINVAL as
 * t2_optim_step. */
int t2__optim_step_slice(t2_optim *opt, size_t off, float *params, const float *grads, size_t n);

/* Counts one step done (after all of its slices). Accepts NULL. */
void t2__optim_advance(t2_optim *opt);

/* t2_clip_grad_norm over k buffers taken as one vector (g[i] of n[i] floats): one global norm,
 * every buffer scaled by the same coefficient. With k == 1 it is exactly t2_clip_grad_norm.
 * Errors as t2_clip_grad_norm (T2_EINVAL also for k < 1 or a NULL/empty buffer). */
int t2__clip_grad_norm_multi(float *const *g, const size_t *n, int k, double max_norm, double *total_norm);

#endif
