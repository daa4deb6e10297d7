/* lr_schedule.c — schedule lifecycle, lr(t), stepping and checkpoint state. Formulas and their
 * PyTorch counterparts are listed in t2exp/lr_schedule.h. */
#include <math.h>
#include <stdlib.h>
#include "t2exp/error.h"
#include "lr_internal.h"

/* PI is POSIX, not C11. */
static const double PI = 3.14159265358979323846;

struct t2_lr_schedule {
    t2_lr_params p;      /* milestones sorted ascending */
    int64_t step;        /* steps taken, warmup included */
    double lr;           /* lr(step), cached */
    /* PLATEAU only: its lr is history-dependent, so it is state rather than a formula. */
    double plateau_lr;
    double best;
    int64_t num_bad;
    int64_t cooldown_counter;
};

static double onecycle_initial(const t2_lr_params *p) { return p->max_lr / p->div_factor; }

static double anneal(const t2_lr_params *p, double start, double end, double pct)
{
    if (p->anneal == T2_LR_ANNEAL_LINEAR) return (end - start) * pct + start;
    return end + (start - end) / 2.0 * (cos(PI * pct) + 1.0);
}

/* torch OneCycleLR.get_lr, two phases; phase 1 ends at the (fractional) step pct*total - 1. */
static double onecycle_lr(const t2_lr_params *p, int64_t k)
{
    const double initial = onecycle_initial(p), min_lr = initial / p->final_div_factor;
    const double end1 = p->pct_start * (double)p->total_steps - 1.0, end2 = (double)(p->total_steps - 1);
    const double t = (double)k;
    if (t <= end1) return anneal(p, initial, p->max_lr, t / end1);
    return anneal(p, p->max_lr, min_lr, (t - end1) / (end2 - end1));
}

/* The wrapped schedule's lr after k of its own steps. */
static double wrapped_lr(const t2_lr_schedule *s, int64_t k)
{
    const t2_lr_params *p = &s->p;
    switch (p->kind) {
    case T2_LR_CONSTANT: return p->base_lr;
    case T2_LR_STEP: return p->base_lr * pow(p->gamma, (double)(k / p->step_size));
    case T2_LR_MULTISTEP: {
        int passed = 0;
        while (passed < p->n_milestones && p->milestones[passed] <= k) passed++;
        return p->base_lr * pow(p->gamma, passed);
    }
    case T2_LR_EXPONENTIAL: return p->base_lr * pow(p->gamma, (double)k);
    case T2_LR_COSINE:
        return p->eta_min + (p->base_lr - p->eta_min) * (1.0 + cos(PI * (double)k / (double)p->t_max)) / 2.0;
    case T2_LR_ONECYCLE: return onecycle_lr(p, k);
    case T2_LR_PLATEAU: return s->plateau_lr;
    }
    return 0.0;
}

static double current_lr(const t2_lr_schedule *s)
{
    const int64_t w = s->p.warmup_steps;
    if (s->step < w) {
        const double l0 = s->p.kind == T2_LR_ONECYCLE ? onecycle_initial(&s->p) : s->p.base_lr;
        const double f = s->p.warmup_start_factor;
        return l0 * (f + (1.0 - f) * (double)s->step / (double)w);
    }
    return wrapped_lr(s, s->step - w);
}

static void plateau_reset(t2_lr_schedule *s)
{
    s->plateau_lr = s->p.base_lr;
    s->best = s->p.mode == T2_LR_PLATEAU_MIN ? INFINITY : -INFINITY;
    s->num_bad = 0;
    s->cooldown_counter = 0;
}

int t2_lr_schedule_create(t2_lr_schedule **out, const t2_lr_params *p)
{
    if (out) *out = NULL;
    if (!p || !out) return t2_seterr(T2_EINVAL, "lr_schedule_create: %s is NULL", p ? "out" : "params");
    int rc = t2__lr_validate(p);
    if (rc) return rc;
    t2_lr_schedule *s = calloc(1, sizeof *s);
    if (!s) return t2_seterr(T2_ENOMEM, "lr_schedule_create: out of memory");
    s->p = *p;
    /* Insertion sort: torch counts milestones regardless of the order they were given in. */
    for (int i = 1; i < s->p.n_milestones; i++) {
        int64_t v = s->p.milestones[i];
        int j = i;
        for (; j > 0 && s->p.milestones[j - 1] > v; j--) s->p.milestones[j] = s->p.milestones[j - 1];
        s->p.milestones[j] = v;
    }
    plateau_reset(s);
    s->lr = current_lr(s);
    *out = s;
    return T2_OK;
}

void t2_lr_schedule_free(t2_lr_schedule *s) { free(s); }

double t2_lr_schedule_lr(const t2_lr_schedule *s) { return s ? s->lr : 0.0; }

t2_lr_step_mode t2_lr_schedule_step_mode(const t2_lr_schedule *s)
{
    return s ? s->p.step_mode : T2_LR_STEP_MANUAL;
}

int t2_lr_schedule_step(t2_lr_schedule *s)
{
    if (!s) return t2_seterr(T2_EINVAL, "lr_schedule_step: schedule is NULL");
    if (s->p.kind == T2_LR_PLATEAU)
        return t2_seterr(T2_EINVAL, "lr_schedule_step: a plateau schedule needs a metric "
                                    "(use t2_lr_schedule_step_metric)");
    if (s->p.kind == T2_LR_ONECYCLE && s->step + 1 - s->p.warmup_steps > s->p.total_steps)
        return t2_seterr(T2_ESTATE, "lr_schedule_step: onecycle stepped past total_steps=%lld (warmup %lld)",
                         (long long)s->p.total_steps, (long long)s->p.warmup_steps);
    s->step++;
    s->lr = current_lr(s);
    return T2_OK;
}

static int plateau_better(const t2_lr_params *p, double a, double best)
{
    if (p->mode == T2_LR_PLATEAU_MIN)
        return p->threshold_mode == T2_LR_THRESHOLD_REL ? a < best * (1.0 - p->threshold) : a < best - p->threshold;
    return p->threshold_mode == T2_LR_THRESHOLD_REL ? a > best * (p->threshold + 1.0) : a > best + p->threshold;
}

/* torch ReduceLROnPlateau.step, statement for statement. */
int t2_lr_schedule_step_metric(t2_lr_schedule *s, double metric)
{
    if (!s) return t2_seterr(T2_EINVAL, "lr_schedule_step_metric: schedule is NULL");
    const t2_lr_params *p = &s->p;
    if (p->kind != T2_LR_PLATEAU)
        return t2_seterr(T2_EINVAL, "lr_schedule_step_metric: a %s schedule takes no metric "
                                    "(use t2_lr_schedule_step)", t2_lr_kind_name(p->kind));
    const int warming = s->step < p->warmup_steps;
    s->step++;
    if (!warming) {
        if (plateau_better(p, metric, s->best)) {
            s->best = metric;
            s->num_bad = 0;
        } else {
            s->num_bad++;
        }
        if (s->cooldown_counter > 0) {
            s->cooldown_counter--;
            s->num_bad = 0;
        }
        if (s->num_bad > p->patience) {
            double reduced = fmax(s->plateau_lr * p->factor, p->min_lr);
            if (s->plateau_lr - reduced > p->plateau_eps) s->plateau_lr = reduced;
            s->cooldown_counter = p->cooldown;
            s->num_bad = 0;
        }
    }
    s->lr = current_lr(s);
    return T2_OK;
}

int t2_lr_schedule_get_state(const t2_lr_schedule *s, t2_lr_state *st)
{
    if (!s || !st) return t2_seterr(T2_EINVAL, "lr_schedule_get_state: %s is NULL", s ? "state" : "schedule");
    st->kind = (int32_t)s->p.kind;
    st->step = s->step;
    st->lr = s->lr;
    st->best = s->best;
    st->num_bad_epochs = s->num_bad;
    st->cooldown_counter = s->cooldown_counter;
    return T2_OK;
}

int t2_lr_schedule_set_state(t2_lr_schedule *s, const t2_lr_state *st)
{
    if (!s || !st) return t2_seterr(T2_EINVAL, "lr_schedule_set_state: %s is NULL", s ? "state" : "schedule");
    const t2_lr_params *p = &s->p;
    if (st->kind != (int32_t)p->kind)
        return t2_seterr(T2_EINVAL, "lr_schedule_set_state: state of kind %d, schedule is %s", (int)st->kind,
                         t2_lr_kind_name(p->kind));
    if (st->step < 0 || st->num_bad_epochs < 0 || st->cooldown_counter < 0)
        return t2_seterr(T2_EINVAL, "lr_schedule_set_state: negative counter (step=%lld, num_bad_epochs=%lld, "
                                    "cooldown_counter=%lld)", (long long)st->step,
                         (long long)st->num_bad_epochs, (long long)st->cooldown_counter);
    if (p->kind == T2_LR_ONECYCLE && st->step - p->warmup_steps > p->total_steps)
        return t2_seterr(T2_EINVAL, "lr_schedule_set_state: step=%lld is past onecycle total_steps=%lld "
                                    "(warmup %lld)", (long long)st->step, (long long)p->total_steps,
                         (long long)p->warmup_steps);
    if (p->kind == T2_LR_PLATEAU) {
        if (!isfinite(st->lr) || st->lr < 0)
            return t2_seterr(T2_EINVAL, "lr_schedule_set_state: plateau lr=%g (must be finite and >= 0)", st->lr);
        if (isnan(st->best)) return t2_seterr(T2_EINVAL, "lr_schedule_set_state: plateau best is NaN");
    }
    s->step = st->step;
    if (p->kind == T2_LR_PLATEAU) {
        /* During warmup the plateau part has not started: its lr is still base_lr. */
        s->plateau_lr = st->step >= p->warmup_steps ? st->lr : p->base_lr;
        s->best = st->best;
        s->num_bad = st->num_bad_epochs;
        s->cooldown_counter = st->cooldown_counter;
    }
    s->lr = current_lr(s);
    return T2_OK;
}
