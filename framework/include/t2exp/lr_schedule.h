/* t2exp/lr_schedule.h — learning-rate schedules.
 *
 * A schedule is a step counter t (0 at creation) and a rule lr(t); t2_lr_schedule_step() advances
 * t by one. The values follow PyTorch's schedulers: t2_lr_schedule_lr() after k steps equals the
 * optimizer's lr after a torch scheduler was constructed and stepped k times. Closed forms are
 * used (in double), so long runs do not accumulate rounding like torch's recursive updates.
 *
 *   CONSTANT     lr = base_lr
 *   STEP         base_lr * gamma^floor(t / step_size)                       (torch StepLR)
 *   MULTISTEP    base_lr * gamma^(number of milestones <= t)                (torch MultiStepLR)
 *   EXPONENTIAL  base_lr * gamma^t                                          (torch ExponentialLR)
 *   COSINE       eta_min + (base_lr - eta_min) * (1 + cos(pi * t / t_max)) / 2
 *                (torch CosineAnnealingLR; past t_max it continues periodically like torch)
 *   ONECYCLE     torch OneCycleLR, two phases, cycle_momentum=False: from max_lr/div_factor up to
 *                max_lr over pct_start*total_steps steps, then down to
 *                max_lr/(div_factor*final_div_factor) at total_steps-1; base_lr is not used.
 *                Stepping past t = total_steps is an error (T2_ESTATE), as in torch.
 *   PLATEAU      torch ReduceLROnPlateau: advanced by t2_lr_schedule_step_metric() with a metric;
 *                after more than `patience` steps without improvement the lr is multiplied by
 *                factor (not below min_lr), then `cooldown` steps ignore bad metrics.
 *
 * Linear warmup (warmup_steps W > 0) goes in front of any kind: for t < W
 *   lr = L0 * (s + (1 - s) * t / W),  s = warmup_start_factor, L0 = the wrapped schedule's lr(0)
 * (base_lr; max_lr/div_factor for ONECYCLE), and for t >= W the wrapped schedule runs with its
 * own step count t - W (so multistep milestones, t_max, total_steps count after the warmup). This
 * is torch's SequentialLR([LinearLR(start_factor=s, total_iters=W), X], milestones=[W]).
 * For PLATEAU the warmup is advanced by t2_lr_schedule_step_metric() too and the metrics
 * passed during warmup are ignored.
 *
 * The step mode is stored for the training runner, which decides when to call step (after every
 * batch, after every epoch, or only when the trial asks); the schedule itself does not look at it. */
#ifndef T2EXP_LR_SCHEDULE_H
#define T2EXP_LR_SCHEDULE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct t2_lr_schedule t2_lr_schedule;

typedef enum t2_lr_kind {
    T2_LR_CONSTANT = 1,
    T2_LR_STEP = 2,
    T2_LR_MULTISTEP = 3,
    T2_LR_EXPONENTIAL = 4,
    T2_LR_COSINE = 5,
    T2_LR_ONECYCLE = 6,
    T2_LR_PLATEAU = 7,
} t2_lr_kind;

typedef enum t2_lr_step_mode {
    T2_LR_STEP_BATCH = 0,   /* the runner steps after every training batch */
    T2_LR_STEP_EPOCH = 1,   /* after every epoch (for PLATEAU: after every validation) */
    T2_LR_STEP_MANUAL = 2,  /* only the trial calls step */
} t2_lr_step_mode;

typedef enum t2_lr_plateau_mode {
    T2_LR_PLATEAU_MIN = 0,  /* lower metric is better (a loss) */
    T2_LR_PLATEAU_MAX = 1,  /* higher metric is better (an accuracy) */
} t2_lr_plateau_mode;

typedef enum t2_lr_threshold_mode {
    T2_LR_THRESHOLD_REL = 0, /* improvement: metric < best*(1-threshold) (min) / > best*(1+threshold) (max) */
    T2_LR_THRESHOLD_ABS = 1, /* improvement: metric < best-threshold (min) / > best+threshold (max) */
} t2_lr_threshold_mode;

typedef enum t2_lr_anneal {
    T2_LR_ANNEAL_COS = 0,
    T2_LR_ANNEAL_LINEAR = 1,
} t2_lr_anneal;

#define T2_LR_MAX_MILESTONES 16

/* All schedule parameters; only the fields of `kind` (and the warmup fields) are used. Start from
 * t2_lr_default(). Parameters PyTorch requires (step_size, milestones, exponential gamma, t_max,
 * total_steps) default to 0 and must be set, or creation fails naming them. */
typedef struct t2_lr_params {
    t2_lr_kind kind;
    t2_lr_step_mode step_mode;
    double base_lr;                 /* >= 0: the lr at step 0 (unused by ONECYCLE) */

    int64_t warmup_steps;           /* >= 0; 0 = no warmup */
    double warmup_start_factor;     /* in [0, 1] (torch LinearLR needs > 0); default 1/3 */

    double gamma;                   /* STEP, MULTISTEP, EXPONENTIAL: > 0 */
    int64_t step_size;              /* STEP: >= 1 */
    int n_milestones;               /* MULTISTEP: 1..T2_LR_MAX_MILESTONES */
    int64_t milestones[T2_LR_MAX_MILESTONES]; /* MULTISTEP: >= 0, any order, repeats count twice */

    int64_t t_max;                  /* COSINE: >= 1 */
    double eta_min;                 /* COSINE: >= 0 */

    double max_lr;                  /* ONECYCLE: > 0 */
    int64_t total_steps;            /* ONECYCLE: >= 2 */
    double pct_start;               /* ONECYCLE: in (0, 1) with pct_start*total_steps > 1 */
    t2_lr_anneal anneal;            /* ONECYCLE */
    double div_factor;              /* ONECYCLE: > 0 */
    double final_div_factor;        /* ONECYCLE: > 0 */

    t2_lr_plateau_mode mode;        /* PLATEAU */
    double factor;                  /* PLATEAU: in (0, 1) */
    int64_t patience;               /* PLATEAU: >= 0 */
    double threshold;               /* PLATEAU: >= 0 */
    t2_lr_threshold_mode threshold_mode; /* PLATEAU */
    int64_t cooldown;               /* PLATEAU: >= 0 */
    double min_lr;                  /* PLATEAU: >= 0 */
    double plateau_eps;             /* PLATEAU: reductions smaller than this are skipped; 1e-8 */
} t2_lr_params;

/* Schedule state for checkpoints: a plain value. Restoring it into a schedule created with the
 * same parameters continues the lr sequence exactly. */
typedef struct t2_lr_state {
    int32_t kind;              /* t2_lr_kind of the schedule it came from (checked on restore) */
    int64_t step;              /* steps taken, warmup included */
    double lr;                 /* current lr (the only source of truth for PLATEAU) */
    double best;               /* PLATEAU: best metric so far (+-inf before the first) */
    int64_t num_bad_epochs;    /* PLATEAU */
    int64_t cooldown_counter;  /* PLATEAU */
} t2_lr_state;

/* Parameters with PyTorch's defaults for `kind` and the given base lr: step mode BATCH (EPOCH for
 * PLATEAU), no warmup (start factor 1/3 when enabled), gamma 0.1 for STEP/MULTISTEP (0, i.e. unset,
 * for EXPONENTIAL), eta_min 0; ONECYCLE max_lr = base_lr, pct_start 0.3, cos, div_factor 25,
 * final_div_factor 1e4; PLATEAU min, factor 0.1, patience 10, threshold 1e-4 rel, cooldown 0,
 * min_lr 0, eps 1e-8. */
t2_lr_params t2_lr_default(t2_lr_kind kind, double base_lr);

/* A short lower-case name for a kind ("cosine", "onecycle", ...), "?" if unknown. */
const char *t2_lr_kind_name(t2_lr_kind kind);

/* Validates *p and creates a schedule at step 0 in *out (NULL on failure). T2_EINVAL for NULL
 * arguments or an invalid parameter (the message names it and its value); T2_ENOMEM. */
int t2_lr_schedule_create(t2_lr_schedule **out, const t2_lr_params *p);

/* Frees a schedule. Accepts NULL. */
void t2_lr_schedule_free(t2_lr_schedule *s);

/* The learning rate for the current step; 0 for NULL. */
double t2_lr_schedule_lr(const t2_lr_schedule *s);

/* Advances one step. T2_EINVAL for NULL or a PLATEAU schedule (it needs a metric:
 * t2_lr_schedule_step_metric); T2_ESTATE when a ONECYCLE schedule would pass total_steps (the
 * schedule is left unchanged). */
int t2_lr_schedule_step(t2_lr_schedule *s);

/* Advances a PLATEAU schedule by one step with the latest metric (e.g. validation loss). NaN
 * counts as "no improvement", as in torch. T2_EINVAL for NULL or any other kind. */
int t2_lr_schedule_step_metric(t2_lr_schedule *s, double metric);

/* The step mode given at creation; T2_LR_STEP_MANUAL for NULL. */
t2_lr_step_mode t2_lr_schedule_step_mode(const t2_lr_schedule *s);

/* Writes the schedule's state to *st. T2_EINVAL for NULL arguments. */
int t2_lr_schedule_get_state(const t2_lr_schedule *s, t2_lr_state *st);

/* Restores a state taken from a schedule with the same parameters. T2_EINVAL for NULL arguments,
 * a different kind, a negative step or counter, a step past a ONECYCLE schedule's end, or a
 * PLATEAU lr that is negative or not finite; the schedule is unchanged on error. */
int t2_lr_schedule_set_state(t2_lr_schedule *s, const t2_lr_state *st);

#ifdef __cplusplus
}
#endif
#endif
