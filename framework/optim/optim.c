/* optim.c — optimizer lifecycle, learning rate, state access and the step dispatch. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include "internal.h"
#include "optim_internal.h"
#include "optim_slice.h"
#include "parallel.h"

/* Parameters per pool range: the kernels are element-wise and memory-bound, so a range is worth
 * a thread from here on. The split never changes a result (no element reads another). */
#define STEP_MIN_PER_THREAD 32768

int t2__optim_in_range(double v, double lo, double hi, int hi_open)
{
    if (!isfinite(v) || v < lo) return 0;
    return hi_open ? v < hi : v <= hi;
}

int t2__optim_alloc(t2_optim_kind kind, size_t n, size_t state_n, t2_optim **out)
{
    t2_optim *opt = calloc(1, sizeof *opt);
    if (!opt) goto fail;
    opt->kind = kind;
    opt->n = n;
    opt->state_n = state_n;
    if (state_n) {
        opt->state = t2__alloc_aligned(state_n, sizeof(float));
        if (!opt->state) goto fail;
    }
    *out = opt;
    return T2_OK;
fail:
    free(opt);
    return t2_seterr(T2_ENOMEM, "optimizer: cannot allocate state of %zu floats", state_n);
}

void t2_optim_free(t2_optim *opt)
{
    if (!opt) return;
    t2__free_aligned(opt->state);
    free(opt);
}

/* Overlap would break the restrict promise the kernels are vectorised under. */
static int overlaps(const float *a, const float *b, size_t n)
{
    uintptr_t pa = (uintptr_t)a, pb = (uintptr_t)b, len = n * sizeof(float);
    return pa < pb + len && pb < pa + len;
}

typedef struct {
    t2_optim *opt;
    size_t off;
    float *params;
    const float *grads;
} step_job;

/* Elements [b, e) of one step: the optimizer's kernel on that slice. */
static void step_part(void *ctx, size_t b, size_t e)
{
    const step_job *j = ctx;
    if (j->opt->kind == T2_OPTIM_SGD) t2__sgd_step(j->opt, j->off + b, e - b, j->params + b, j->grads + b);
    else t2__adam_step(j->opt, j->off + b, e - b, j->params + b, j->grads + b);
}

/* The checks and the kernel dispatch shared by a whole step and a slice of one; the elements are
 * split over the thread pool (the seeds' CNN has 1.2M parameters: 1.3 ms per step on one core). */
static int step_range(t2_optim *opt, size_t off, float *params, const float *grads, size_t n, const char *who)
{
    if (!opt) return t2_seterr(T2_EINVAL, "%s: optimizer is NULL", who);
    if (!params || !grads) return t2_seterr(T2_EINVAL, "%s: %s is NULL", who, params ? "grads" : "params");
    if (overlaps(params, grads, n)) return t2_seterr(T2_EINVAL, "%s: params and grads overlap", who);
    if (opt->kind != T2_OPTIM_SGD && opt->kind != T2_OPTIM_ADAM && opt->kind != T2_OPTIM_ADAMW)
        return t2_seterr(T2_EINVAL, "%s: unknown optimizer kind %d", who, (int)opt->kind);
    step_job j = {opt, off, params, grads};
    t2__parallel_for(n, STEP_MIN_PER_THREAD, step_part, &j);
    return T2_OK;
}

int t2_optim_step(t2_optim *opt, float *params, const float *grads, size_t n)
{
    if (opt && n != opt->n)
        return t2_seterr(T2_ESHAPE, "optim_step: n=%zu but the optimizer was created for %zu parameters",
                         n, opt->n);
    int rc = step_range(opt, 0, params, grads, n, "optim_step");
    if (rc) return rc;
    opt->step++;
    return T2_OK;
}

int t2__optim_step_slice(t2_optim *opt, size_t off, float *params, const float *grads, size_t n)
{
    if (opt && (off > opt->n || n > opt->n - off))
        return t2_seterr(T2_ESHAPE, "optim_step: slice [%zu, %zu) is outside the optimizer's %zu parameters", off,
                         off + n, opt->n);
    return step_range(opt, off, params, grads, n, "optim_step");
}

void t2__optim_advance(t2_optim *opt)
{
    if (opt) opt->step++;
}

int t2_optim_set_lr(t2_optim *opt, double lr)
{
    if (!opt) return t2_seterr(T2_EINVAL, "optim_set_lr: optimizer is NULL");
    if (!t2__optim_in_range(lr, 0.0, INFINITY, 1))
        return t2_seterr(T2_EINVAL, "optim_set_lr: lr=%g (must be finite and >= 0)", lr);
    opt->lr = lr;
    return T2_OK;
}

double t2_optim_lr(const t2_optim *opt) { return opt ? opt->lr : 0.0; }

t2_optim_kind t2_optim_get_kind(const t2_optim *opt) { return opt ? opt->kind : (t2_optim_kind)0; }

size_t t2_optim_size(const t2_optim *opt) { return opt ? opt->n : 0; }

float *t2_optim_state(t2_optim *opt, size_t *n)
{
    if (n) *n = opt ? opt->state_n : 0;
    return opt && opt->state_n ? opt->state : NULL;
}

int64_t t2_optim_step_count(const t2_optim *opt) { return opt ? opt->step : 0; }

int t2_optim_set_step_count(t2_optim *opt, int64_t step)
{
    if (!opt) return t2_seterr(T2_EINVAL, "optim_set_step_count: optimizer is NULL");
    if (step < 0)
        return t2_seterr(T2_EINVAL, "optim_set_step_count: step=%lld (must be >= 0)", (long long)step);
    opt->step = step;
    return T2_OK;
}
