/* t2exp/optim.h — optimizers (SGD, Adam, AdamW) and gradient clipping.
 *
 * Optimizers work on the model's flat buffers (design §4): one contiguous float array of
 * parameters, one of gradients, both of length n, fixed when the optimizer is created. The
 * optimizer's own state (SGD momentum buffer; Adam's first and second moments) is likewise one
 * contiguous float buffer that the caller may read and overwrite, so a checkpoint writes it in one
 * piece and a restore puts it back (together with the step count) and training continues exactly.
 *
 * The update rules are PyTorch's (torch.optim.SGD, Adam, AdamW, non-foreach, maximize=False,
 * amsgrad=False) computed in float32; hyper-parameters are doubles like PyTorch's Python floats.
 * The learning rate is not owned by the optimizer's schedule: a t2_lr_schedule computes it and the
 * caller passes it on with t2_optim_set_lr() before each step. */
#ifndef T2EXP_OPTIM_H
#define T2EXP_OPTIM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct t2_optim t2_optim;

typedef enum t2_optim_kind {
    T2_OPTIM_SGD = 1,
    T2_OPTIM_ADAM = 2,
    T2_OPTIM_ADAMW = 3,
} t2_optim_kind;

/* torch.optim.SGD's hyper-parameters. With momentum m > 0 the buffer b starts as the first
 * (weight-decayed) gradient and then follows b = m*b + (1-dampening)*g; Nesterov uses g + m*b. */
typedef struct t2_sgd_params {
    double lr;            /* >= 0 */
    double momentum;      /* in [0, 1) */
    double dampening;     /* in [0, 1]; must be 0 with Nesterov */
    double weight_decay;  /* >= 0, L2 added to the gradient: g += weight_decay * p */
    int nesterov;         /* 0 or 1; needs momentum > 0 and dampening 0 */
} t2_sgd_params;

/* torch.optim.Adam / AdamW hyper-parameters. For Adam, weight_decay is an L2 term added to the
 * gradient; for AdamW it is decoupled: p *= 1 - lr*weight_decay before the Adam update. */
typedef struct t2_adam_params {
    double lr;            /* >= 0 */
    double beta1, beta2;  /* each in [0, 1) */
    double eps;           /* >= 0 */
    double weight_decay;  /* >= 0 */
} t2_adam_params;

/* PyTorch's SGD defaults: lr 1e-3 (the default of PyTorch >= 2.0; older versions required it),
 * momentum 0, dampening 0, weight_decay 0, nesterov off. */
t2_sgd_params t2_sgd_default(void);

/* PyTorch's Adam defaults: lr 1e-3, betas (0.9, 0.999), eps 1e-8, weight_decay 0. */
t2_adam_params t2_adam_default(void);

/* PyTorch's AdamW defaults: as Adam but weight_decay 0.01. */
t2_adam_params t2_adamw_default(void);

/* Creates an SGD optimizer for a flat parameter buffer of n floats and stores it in *out (set to
 * NULL on failure). The state buffer holds the momentum buffer (n floats) when momentum > 0 and is
 * empty otherwise. T2_EINVAL for NULL arguments, n == 0 or an invalid hyper-parameter (the message
 * names it and its value); T2_ENOMEM if the state cannot be allocated. */
int t2_sgd_create(t2_optim **out, const t2_sgd_params *p, size_t n);

/* Creates an Adam optimizer (L2 weight decay) for n parameters. State: first moments m[0..n)
 * followed by second moments v[0..n), 2n floats, zero at creation. Errors as t2_sgd_create. */
int t2_adam_create(t2_optim **out, const t2_adam_params *p, size_t n);

/* Creates an AdamW optimizer (decoupled weight decay) for n parameters; state layout as Adam.
 * Errors as t2_sgd_create. */
int t2_adamw_create(t2_optim **out, const t2_adam_params *p, size_t n);

/* Frees the optimizer and its state. Accepts NULL. */
void t2_optim_free(t2_optim *opt);

/* One update of params[0..n) from grads[0..n) with the current learning rate, and increments the
 * step count. grads is not modified. n must equal the size given at creation (T2_ESHAPE
 * otherwise): a mismatch means the optimizer belongs to another model. The two buffers must not
 * overlap (T2_EINVAL), which lets the loops vectorise. T2_EINVAL for NULL arguments. */
int t2_optim_step(t2_optim *opt, float *params, const float *grads, size_t n);

/* Sets the learning rate used by the following steps (typically the schedule's value, once per
 * step). T2_EINVAL for a NULL handle or an lr that is negative or not finite. */
int t2_optim_set_lr(t2_optim *opt, double lr);

/* The current learning rate; 0 for NULL. */
double t2_optim_lr(const t2_optim *opt);

/* Which optimizer this is; 0 for NULL. */
t2_optim_kind t2_optim_get_kind(const t2_optim *opt);

/* The number of parameters the optimizer was created for; 0 for NULL. */
size_t t2_optim_size(const t2_optim *opt);

/* The optimizer's state buffer and its length in floats (*n may be NULL). The caller may read it
 * (checkpoints) and overwrite its contents (restore) but not free it; it stays valid until
 * t2_optim_free. Returns NULL with *n = 0 for an optimizer without state (SGD without momentum)
 * or a NULL handle. Layout: SGD [momentum n]; Adam/AdamW [m n][v n]. */
float *t2_optim_state(t2_optim *opt, size_t *n);

/* Steps taken so far (0 for NULL). Part of the checkpoint: Adam's bias correction uses it and SGD
 * treats step 0 as "momentum buffer not yet initialised". */
int64_t t2_optim_step_count(const t2_optim *opt);

/* Restores the step count (together with the state buffer) so training continues exactly.
 * T2_EINVAL for NULL or a negative count. */
int t2_optim_set_step_count(t2_optim *opt, int64_t step);

/* Clips gradients by their global L2 norm like torch.nn.utils.clip_grad_norm_: the norm of
 * g[0..n) is computed in double; if max_norm / (norm + 1e-6) < 1 every gradient is multiplied by
 * that coefficient. The unclipped norm is stored in *total_norm (may be NULL). T2_EINVAL for NULL
 * g, n == 0 or a max_norm that is negative or not finite. If the norm is NaN or infinite the
 * gradients are left unchanged, *total_norm gets the norm and T2_ENUMERIC is returned (PyTorch's
 * default would silently fill the gradients with NaN), so the caller can skip the step. */
int t2_clip_grad_norm(float *g, size_t n, double max_norm, double *total_norm);

/* Clamps every gradient to [-clip, clip] like torch.nn.utils.clip_grad_value_ (NaN stays NaN).
 * T2_EINVAL for NULL g, n == 0 or a clip that is negative or not finite. */
int t2_clip_grad_value(float *g, size_t n, double clip);

#ifdef __cplusplus
}
#endif
#endif
