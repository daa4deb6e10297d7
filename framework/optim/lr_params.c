/* lr_params.c — schedule parameter defaults, kind names and validation. */
#include <math.h>
#include <string.h>
#include "t2exp/error.h"
#include "lr_internal.h"

t2_lr_params t2_lr_default(t2_lr_kind kind, double base_lr)
{
    t2_lr_params p;
    memset(&p, 0, sizeof p);
    p.kind = kind;
    p.step_mode = kind == T2_LR_PLATEAU ? T2_LR_STEP_EPOCH : T2_LR_STEP_BATCH;
    p.base_lr = base_lr;
    p.warmup_steps = 0;
    p.warmup_start_factor = 1.0 / 3.0;   /* torch LinearLR's default */
    /* torch's StepLR/MultiStepLR default; ExponentialLR has no default, so it stays 0 (unset). */
    p.gamma = kind == T2_LR_EXPONENTIAL ? 0.0 : 0.1;
    p.eta_min = 0.0;
    p.max_lr = base_lr;
    p.pct_start = 0.3;
    p.anneal = T2_LR_ANNEAL_COS;
    p.div_factor = 25.0;
    p.final_div_factor = 1e4;
    p.mode = T2_LR_PLATEAU_MIN;
    p.factor = 0.1;
    p.patience = 10;
    p.threshold = 1e-4;
    p.threshold_mode = T2_LR_THRESHOLD_REL;
    p.cooldown = 0;
    p.min_lr = 0.0;
    p.plateau_eps = 1e-8;
    return p;
}

const char *t2_lr_kind_name(t2_lr_kind kind)
{
    switch (kind) {
    case T2_LR_CONSTANT: return "constant";
    case T2_LR_STEP: return "step";
    case T2_LR_MULTISTEP: return "multistep";
    case T2_LR_EXPONENTIAL: return "exponential";
    case T2_LR_COSINE: return "cosine";
    case T2_LR_ONECYCLE: return "onecycle";
    case T2_LR_PLATEAU: return "plateau";
    }
    return "?";
}

static int nonneg(double v) { return isfinite(v) && v >= 0.0; }
static int positive(double v) { return isfinite(v) && v > 0.0; }

#define BAD(...) t2_seterr(T2_EINVAL, __VA_ARGS__)

int t2__lr_validate(const t2_lr_params *p)
{
    const char *k = t2_lr_kind_name(p->kind);
    if (strcmp(k, "?") == 0) return BAD("lr_schedule: kind=%d is not a t2_lr_kind", (int)p->kind);
    if (p->step_mode != T2_LR_STEP_BATCH && p->step_mode != T2_LR_STEP_EPOCH &&
        p->step_mode != T2_LR_STEP_MANUAL)
        return BAD("lr_schedule %s: step_mode=%d is not a t2_lr_step_mode", k, (int)p->step_mode);
    if (p->kind != T2_LR_ONECYCLE && !nonneg(p->base_lr))
        return BAD("lr_schedule %s: base_lr=%g (must be finite and >= 0)", k, p->base_lr);
    if (p->warmup_steps < 0)
        return BAD("lr_schedule %s: warmup_steps=%lld (must be >= 0)", k, (long long)p->warmup_steps);
    if (p->warmup_steps > 0 && !(isfinite(p->warmup_start_factor) && p->warmup_start_factor >= 0.0 &&
                                 p->warmup_start_factor <= 1.0))
        return BAD("lr_schedule %s: warmup_start_factor=%g (must be in [0, 1])", k, p->warmup_start_factor);

    switch (p->kind) {
    case T2_LR_CONSTANT: break;
    case T2_LR_STEP:
        if (p->step_size < 1)
            return BAD("lr_schedule step: step_size=%lld (must be >= 1)", (long long)p->step_size);
        if (!positive(p->gamma)) return BAD("lr_schedule step: gamma=%g (must be finite and > 0)", p->gamma);
        break;
    case T2_LR_EXPONENTIAL:
        if (!positive(p->gamma)) return BAD("lr_schedule exponential: gamma=%g (must be finite and > 0)", p->gamma);
        break;
    case T2_LR_MULTISTEP:
        if (!positive(p->gamma)) return BAD("lr_schedule multistep: gamma=%g (must be finite and > 0)", p->gamma);
        if (p->n_milestones < 1 || p->n_milestones > T2_LR_MAX_MILESTONES)
            return BAD("lr_schedule multistep: n_milestones=%d (must be 1..%d)", p->n_milestones,
                       T2_LR_MAX_MILESTONES);
        for (int i = 0; i < p->n_milestones; i++)
            if (p->milestones[i] < 0)
                return BAD("lr_schedule multistep: milestones[%d]=%lld (must be >= 0)", i,
                           (long long)p->milestones[i]);
        break;
    case T2_LR_COSINE:
        if (p->t_max < 1) return BAD("lr_schedule cosine: t_max=%lld (must be >= 1)", (long long)p->t_max);
        if (!nonneg(p->eta_min)) return BAD("lr_schedule cosine: eta_min=%g (must be finite and >= 0)", p->eta_min);
        break;
    case T2_LR_ONECYCLE:
        if (!positive(p->max_lr)) return BAD("lr_schedule onecycle: max_lr=%g (must be finite and > 0)", p->max_lr);
        if (p->total_steps < 2)
            return BAD("lr_schedule onecycle: total_steps=%lld (must be >= 2)", (long long)p->total_steps);
        /* Both phases need a positive length or torch's pct divides by zero. */
        if (!(isfinite(p->pct_start) && p->pct_start > 0.0 && p->pct_start < 1.0 &&
              p->pct_start * (double)p->total_steps > 1.0))
            return BAD("lr_schedule onecycle: pct_start=%g (must be in (0, 1) with pct_start*total_steps > 1; "
                       "total_steps=%lld)", p->pct_start, (long long)p->total_steps);
        if (p->anneal != T2_LR_ANNEAL_COS && p->anneal != T2_LR_ANNEAL_LINEAR)
            return BAD("lr_schedule onecycle: anneal=%d is not a t2_lr_anneal", (int)p->anneal);
        if (!positive(p->div_factor)) return BAD("lr_schedule onecycle: div_factor=%g (must be > 0)", p->div_factor);
        if (!positive(p->final_div_factor))
            return BAD("lr_schedule onecycle: final_div_factor=%g (must be > 0)", p->final_div_factor);
        break;
    case T2_LR_PLATEAU:
        if (p->mode != T2_LR_PLATEAU_MIN && p->mode != T2_LR_PLATEAU_MAX)
            return BAD("lr_schedule plateau: mode=%d is not a t2_lr_plateau_mode", (int)p->mode);
        if (!(isfinite(p->factor) && p->factor > 0.0 && p->factor < 1.0))
            return BAD("lr_schedule plateau: factor=%g (must be in (0, 1))", p->factor);
        if (p->patience < 0) return BAD("lr_schedule plateau: patience=%lld (must be >= 0)", (long long)p->patience);
        if (!nonneg(p->threshold)) return BAD("lr_schedule plateau: threshold=%g (must be finite and >= 0)", p->threshold);
        if (p->threshold_mode != T2_LR_THRESHOLD_REL && p->threshold_mode != T2_LR_THRESHOLD_ABS)
            return BAD("lr_schedule plateau: threshold_mode=%d is not a t2_lr_threshold_mode", (int)p->threshold_mode);
        if (p->cooldown < 0) return BAD("lr_schedule plateau: cooldown=%lld (must be >= 0)", (long long)p->cooldown);
        if (!nonneg(p->min_lr)) return BAD("lr_schedule plateau: min_lr=%g (must be finite and >= 0)", p->min_lr);
        if (!nonneg(p->plateau_eps))
            return BAD("lr_schedule plateau: plateau_eps=%g (must be finite and >= 0)", p->plateau_eps);
        break;
    }
    return T2_OK;
}
