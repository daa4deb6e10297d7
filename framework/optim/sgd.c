/* sgd.c — SGD with momentum, dampening, Nesterov and L2 weight decay (torch.optim.SGD). */
#include <math.h>
#include <stddef.h>
#include "optim_internal.h"

t2_sgd_params t2_sgd_default(void)
{
    t2_sgd_params p = {.lr = 1e-3, .momentum = 0.0, .dampening = 0.0, .weight_decay = 0.0, .nesterov = 0};
    return p;
}

static int sgd_validate(const t2_sgd_params *p)
{
    if (!t2__optim_in_range(p->lr, 0.0, INFINITY, 1))
        return t2_seterr(T2_EINVAL, "sgd: lr=%g (must be finite and >= 0)", p->lr);
    if (!t2__optim_in_range(p->momentum, 0.0, 1.0, 1))
        return t2_seterr(T2_EINVAL, "sgd: momentum=%g (must be in [0, 1))", p->momentum);
    if (!t2__optim_in_range(p->dampening, 0.0, 1.0, 0))
        return t2_seterr(T2_EINVAL, "sgd: dampening=%g (must be in [0, 1])", p->dampening);
    if (!t2__optim_in_range(p->weight_decay, 0.0, INFINITY, 1))
        return t2_seterr(T2_EINVAL, "sgd: weight_decay=%g (must be finite and >= 0)", p->weight_decay);
    if (p->nesterov != 0 && p->nesterov != 1)
        return t2_seterr(T2_EINVAL, "sgd: nesterov=%d (must be 0 or 1)", p->nesterov);
    if (p->nesterov && (p->momentum <= 0.0 || p->dampening != 0.0))
        return t2_seterr(T2_EINVAL, "sgd: nesterov needs momentum > 0 and dampening 0 (momentum=%g, dampening=%g)",
                         p->momentum, p->dampening);
    return T2_OK;
}

int t2_sgd_create(t2_optim **out, const t2_sgd_params *p, size_t n)
{
    if (out) *out = NULL;
    if (!p || !out) return t2_seterr(T2_EINVAL, "sgd_create: %s is NULL", p ? "out" : "params");
    if (n == 0) return t2_seterr(T2_EINVAL, "sgd_create: n=0 parameters");
    int rc = sgd_validate(p);
    if (rc) return rc;
    rc = t2__optim_alloc(T2_OPTIM_SGD, n, p->momentum > 0.0 ? n : 0, out);
    if (rc) return rc;
    (*out)->p.sgd = *p;
    (*out)->lr = p->lr;
    return T2_OK;
}

/* Each case is its own simple loop so that the vectoriser sees no data-dependent branches; the
 * operation order follows torch's (d = g + wd*p; b = b*m + (1-dampening)*d; p = p + (-lr)*d) so
 * float rounding matches it closely. has_wd is loop-invariant and unswitched by the compiler, and
 * skipping the term when wd == 0 keeps inf parameters from turning into NaN, as in torch. The
 * loops take restrict parameters because GCC only trusts restrict on parameters. */
static void sgd_plain(size_t n, float *restrict p, const float *restrict g, float neg_lr, int has_wd, float wd)
{
    for (size_t i = 0; i < n; i++) {
        float d = has_wd ? g[i] + wd * p[i] : g[i];
        p[i] = p[i] + neg_lr * d;
    }
}

/* First momentum step: torch creates the buffer as a copy of the (decayed) gradient, undampened. */
static void sgd_first(size_t n, float *restrict p, const float *restrict g, float *restrict buf, float neg_lr,
                      int has_wd, float wd, int nesterov, float m)
{
    for (size_t i = 0; i < n; i++) {
        float d = has_wd ? g[i] + wd * p[i] : g[i];
        buf[i] = d;
        float u = nesterov ? d + m * d : d;
        p[i] = p[i] + neg_lr * u;
    }
}

static void sgd_momentum(size_t n, float *restrict p, const float *restrict g, float *restrict buf,
                         float neg_lr, int has_wd, float wd, float m, float keep)
{
    for (size_t i = 0; i < n; i++) {
        float d = has_wd ? g[i] + wd * p[i] : g[i];
        float b = buf[i] * m + keep * d;
        buf[i] = b;
        p[i] = p[i] + neg_lr * b;
    }
}

static void sgd_nesterov(size_t n, float *restrict p, const float *restrict g, float *restrict buf,
                         float neg_lr, int has_wd, float wd, float m, float keep)
{
    for (size_t i = 0; i < n; i++) {
        float d = has_wd ? g[i] + wd * p[i] : g[i];
        float b = buf[i] * m + keep * d;
        buf[i] = b;
        p[i] = p[i] + neg_lr * (d + m * b);
    }
}

void t2__sgd_step(t2_optim *opt, size_t off, size_t n, float *params, const float *grads)
{
    const t2_sgd_params *sp = &opt->p.sgd;
    const float neg_lr = (float)-opt->lr, wd = (float)sp->weight_decay, m = (float)sp->momentum;
    const float keep = (float)(1.0 - sp->dampening);
    const int has_wd = sp->weight_decay != 0.0;

    if (sp->momentum == 0.0) sgd_plain(n, params, grads, neg_lr, has_wd, wd);
    else if (opt->step == 0) sgd_first(n, params, grads, opt->state + off, neg_lr, has_wd, wd, sp->nesterov, m);
    else if (sp->nesterov) sgd_nesterov(n, params, grads, opt->state + off, neg_lr, has_wd, wd, m, keep);
    else sgd_momentum(n, params, grads, opt->state + off, neg_lr, has_wd, wd, m, keep);
}
