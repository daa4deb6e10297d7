/* adam.c — Adam (L2 weight decay) and AdamW (decoupled weight decay), torch.optim semantics. */
#include <math.h>
#include <stddef.h>
#include "optim_internal.h"

t2_adam_params t2_adam_default(void)
{
    t2_adam_params p = {.lr = 1e-3, .beta1 = 0.9, .beta2 = 0.999, .eps = 1e-8, .weight_decay = 0.0};
    return p;
}

t2_adam_params t2_adamw_default(void)
{
    t2_adam_params p = t2_adam_default();
    p.weight_decay = 1e-2;
    return p;
}

static int adam_validate(const char *who, const t2_adam_params *p)
{
    if (!t2__optim_in_range(p->lr, 0.0, INFINITY, 1))
        return t2_seterr(T2_EINVAL, "%s: lr=%g (must be finite and >= 0)", who, p->lr);
    if (!t2__optim_in_range(p->beta1, 0.0, 1.0, 1))
        return t2_seterr(T2_EINVAL, "%s: beta1=%g (must be in [0, 1))", who, p->beta1);
    if (!t2__optim_in_range(p->beta2, 0.0, 1.0, 1))
        return t2_seterr(T2_EINVAL, "%s: beta2=%g (must be in [0, 1))", who, p->beta2);
    if (!t2__optim_in_range(p->eps, 0.0, INFINITY, 1))
        return t2_seterr(T2_EINVAL, "%s: eps=%g (must be finite and >= 0)", who, p->eps);
    if (!t2__optim_in_range(p->weight_decay, 0.0, INFINITY, 1))
        return t2_seterr(T2_EINVAL, "%s: weight_decay=%g (must be finite and >= 0)", who, p->weight_decay);
    return T2_OK;
}

static int create(t2_optim_kind kind, const char *who, const t2_adam_params *p, size_t n, t2_optim **out)
{
    if (out) *out = NULL;
    if (!p || !out) return t2_seterr(T2_EINVAL, "%s_create: %s is NULL", who, p ? "out" : "params");
    if (n == 0) return t2_seterr(T2_EINVAL, "%s_create: n=0 parameters", who);
    int rc = adam_validate(who, p);
    if (rc) return rc;
    size_t state_n = 2 * n;
    if (state_n / 2 != n) return t2_seterr(T2_EINVAL, "%s_create: n=%zu is too large", who, n);
    rc = t2__optim_alloc(kind, n, state_n, out);
    if (rc) return rc;
    (*out)->p.adam = *p;
    (*out)->lr = p->lr;
    return T2_OK;
}

int t2_adam_create(t2_optim **out, const t2_adam_params *p, size_t n)
{
    return create(T2_OPTIM_ADAM, "adam", p, n, out);
}

int t2_adamw_create(t2_optim **out, const t2_adam_params *p, size_t n)
{
    return create(T2_OPTIM_ADAMW, "adamw", p, n, out);
}

/* Scalars are formed in double like torch's Python floats (bias corrections, lr/bc1), the
 * elementwise work in float in torch's order:
 *   m = m*b1 + (1-b1)*g;  v = v*b2 + (1-b2)*g*g;  p = p + (-step_size)*m / (sqrt(v)/sqrt(bc2) + eps).
 * AdamW first scales p by 1 - lr*wd; Adam adds wd*p to g. One fused loop: each element is read
 * and written once, which is what bounds this memory-bound update. The sqrtf in it vectorises
 * only because the build uses -fno-math-errno. */

/* Per-step scalars, rounded to float once (as torch casts its double alphas). */
typedef struct coef {
    float b1, b2, c1, c2;   /* beta and 1-beta (the latter formed in double, as torch does) */
    float neg_step, bc2_sqrt, eps;
    float wd;               /* Adam: L2 factor; AdamW: the shrink factor 1 - lr*wd */
    int has_wd;
} coef;

/* The loops live in functions with restrict parameters because GCC only trusts restrict there,
 * and m and v come from one buffer the compiler cannot otherwise prove disjoint. */
static void adam_loop(size_t n, float *restrict params, const float *restrict grads, float *restrict m,
                      float *restrict v, const coef k)
{
    for (size_t i = 0; i < n; i++) {
        float p = params[i];
        float g = k.has_wd ? grads[i] + k.wd * p : grads[i];
        float mi = m[i] * k.b1 + k.c1 * g;
        float vi = v[i] * k.b2 + k.c2 * g * g;
        m[i] = mi;
        v[i] = vi;
        params[i] = p + k.neg_step * mi / (sqrtf(vi) / k.bc2_sqrt + k.eps);
    }
}

static void adamw_loop(size_t n, float *restrict params, const float *restrict grads, float *restrict m,
                       float *restrict v, const coef k)
{
    for (size_t i = 0; i < n; i++) {
        float p = k.has_wd ? params[i] * k.wd : params[i];
        float g = grads[i];
        float mi = m[i] * k.b1 + k.c1 * g;
        float vi = v[i] * k.b2 + k.c2 * g * g;
        m[i] = mi;
        v[i] = vi;
        params[i] = p + k.neg_step * mi / (sqrtf(vi) / k.bc2_sqrt + k.eps);
    }
}

void t2__adam_step(t2_optim *opt, size_t off, size_t len, float *params, const float *grads)
{
    const size_t n = opt->n;
    const t2_adam_params *ap = &opt->p.adam;
    const double t = (double)(opt->step + 1);
    const double bc1 = 1.0 - pow(ap->beta1, t), bc2 = 1.0 - pow(ap->beta2, t);
    const int decoupled = opt->kind == T2_OPTIM_ADAMW;
    const coef k = {
        .b1 = (float)ap->beta1, .b2 = (float)ap->beta2,
        .c1 = (float)(1.0 - ap->beta1), .c2 = (float)(1.0 - ap->beta2),
        .neg_step = (float)-(opt->lr / bc1), .bc2_sqrt = (float)sqrt(bc2), .eps = (float)ap->eps,
        .wd = decoupled ? (float)(1.0 - opt->lr * ap->weight_decay) : (float)ap->weight_decay,
        .has_wd = ap->weight_decay != 0.0,
    };
    if (decoupled) adamw_loop(len, params, grads, opt->state + off, opt->state + n + off, k);
    else adam_loop(len, params, grads, opt->state + off, opt->state + n + off, k);
}
