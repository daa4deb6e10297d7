/* pruner.c — the pruning rules (pruner.h): the percentile rule against the completed trials, and the
 * patient and threshold rules on a trial's own values. Three structures:
 *
 * - a hash table from trial id to how the trial stands (running, with its own record; completed;
 *   forgotten), so that a trial's events cost O(1) whatever the number of trials, and a trial that
 *   ended stays ended (a late report, a second completion, a completion after forget do nothing);
 * - per running trial, its (step, value) points sorted by step and its best value;
 * - per step (a sorted array of steps, tens to hundreds of them), the completed trials' non-NaN
 *   values, sorted lazily: completions append, and the first verdict at that step afterwards puts
 *   the appended values in place (O(values at the step), only when something was added), so a
 *   verdict is otherwise a binary search and two array reads. NaN values are only counted. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "halving.h"
#include "hash64.h"
#include "pruner.h"
#include "configs/config.h"
#include "t2exp/error.h"

typedef struct pr_point {
    int64_t step;
    double value;
} pr_point;

typedef struct pr_run {
    pr_point *v; /* sorted by step, steps distinct */
    size_t n, cap;
    double best; /* NaN while every value is NaN */
    /* HALVING: the trial's bracket, the rungs it reached (rv: the value recorded at each; at most
     * 63 rungs fit below 2^63 batches), and how many of them it was judged at. */
    int64_t bracket, rungs, judged;
    double rv[64];
} pr_run;

enum { SLOT_EMPTY = 0, SLOT_RUNNING, SLOT_COMPLETED, SLOT_FORGOTTEN };

typedef struct pr_slot {
    int64_t key;
    int state;
    pr_run *run; /* SLOT_RUNNING only */
} pr_slot;

typedef struct pr_bucket {
    int64_t step;
    double *v;     /* the non-NaN values: [0, sorted) ascending, [sorted, n) appended since */
    size_t n, sorted, cap;
    int64_t nnan;  /* NaN values at this step (they count for n_min_trials) */
} pr_bucket;

struct t2__pruner {
    t2__pruner_params prm;
    pr_slot *slots; /* open addressing, linear probing; cap a power of two, at most half full */
    size_t cap, used;
    pr_bucket *b; /* sorted by step */
    size_t nb, capb;
    double *scratch; /* the tail being merged */
    size_t capscratch;
    int64_t completed;
    t2__halving *halving; /* HALVING only */
};

static int oom(void) { return t2_seterr(T2_ENOMEM, "pruner: out of memory"); }

/* *ptr holds *cap elements of `elem` bytes; makes room for at least `need`. */
static int reserve(void **ptr, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap) return T2_OK;
    size_t c = *cap ? *cap : 8;
    while (c < need) {
        if (c > SIZE_MAX / 2) return oom();
        c *= 2;
    }
    if (c > SIZE_MAX / elem) return oom();
    void *v = realloc(*ptr, c * elem);
    if (!v) return oom();
    *ptr = v;
    *cap = c;
    return T2_OK;
}

/* a better than b in the metric's direction (neither NaN). */
static int better(const t2__pruner *p, double a, double b)
{
    return p->prm.smaller_is_better ? a < b : a > b;
}

/* ---- the trial table ---- */


/* The slot holding key, or the empty slot where it would go. */
static size_t slot_find(const pr_slot *slots, size_t cap, int64_t key)
{
    size_t i = (size_t)t2__hash64((uint64_t)key) & (cap - 1);
    while (slots[i].state != SLOT_EMPTY && slots[i].key != key) i = (i + 1) & (cap - 1);
    return i;
}

/* Room for one more trial (may move every slot). */
static int slots_reserve(t2__pruner *p)
{
    if ((p->used + 1) * 2 <= p->cap) return T2_OK;
    if (p->cap > SIZE_MAX / 2 / sizeof *p->slots) return oom();
    size_t cap = p->cap * 2;
    pr_slot *s = calloc(cap, sizeof *s);
    if (!s) return oom();
    for (size_t i = 0; i < p->cap; i++)
        if (p->slots[i].state != SLOT_EMPTY) s[slot_find(s, cap, p->slots[i].key)] = p->slots[i];
    free(p->slots);
    p->slots = s;
    p->cap = cap;
    return T2_OK;
}

static void run_free(pr_run *r)
{
    if (!r) return;
    free(r->v);
    free(r);
}

/* ---- a running trial's points ---- */

_Static_assert(offsetof(pr_point, step) == 0 && offsetof(pr_bucket, step) == 0, "step_lower_bound reads the step first");

/* The first of n records (stride bytes apart, each starting with its int64_t step, ascending)
 * whose step is >= step: a running trial's points and the per-step buckets alike. */
static size_t step_lower_bound(const void *records, size_t n, size_t stride, int64_t step)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int64_t at;
        memcpy(&at, (const char *)records + mid * stride, sizeof at);
        if (at < step) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

static size_t point_find(const pr_run *r, int64_t step)
{
    return step_lower_bound(r->v, r->n, sizeof *r->v, step);
}

/* *added: 1 when the step is new to the trial (0: a repeat, ignored). */
static int run_record(const t2__pruner *p, pr_run *r, int64_t step, double value, int *added)
{
    *added = 0;
    /* Steps mostly arrive in order: the search is for a restarted trial's repeats. A repeat keeps
     * the first value, as the store keeps a step's first row (from which a resume rebuilds the
     * pruner): the live pruner and a resumed one then judge alike. */
    size_t at = r->n && r->v[r->n - 1].step >= step ? point_find(r, step) : r->n;
    if (at < r->n && r->v[at].step == step) return T2_OK;
    int rc = reserve((void **)&r->v, &r->cap, r->n + 1, sizeof *r->v);
    if (rc) return rc;
    memmove(r->v + at + 1, r->v + at, (r->n - at) * sizeof *r->v);
    r->v[at] = (pr_point){step, value};
    r->n++;
    *added = 1;
    if (!isnan(value) && (isnan(r->best) || better(p, value, r->best))) r->best = value;
    return T2_OK;
}

/* ---- the completed trials' values per step ---- */

static size_t bucket_find(const t2__pruner *p, int64_t step)
{
    return step_lower_bound(p->b, p->nb, sizeof *p->b, step);
}

/* The bucket of step, created empty if missing; its index to *at. */
static int bucket_get(t2__pruner *p, int64_t step, size_t *at)
{
    size_t i = bucket_find(p, step);
    if (i == p->nb || p->b[i].step != step) {
        int rc = reserve((void **)&p->b, &p->capb, p->nb + 1, sizeof *p->b);
        if (rc) return rc;
        memmove(p->b + i + 1, p->b + i, (p->nb - i) * sizeof *p->b);
        p->b[i] = (pr_bucket){.step = step};
        p->nb++;
    }
    *at = i;
    return T2_OK;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b; /* never NaN */
    return (x > y) - (x < y);
}

/* Sorts what completions appended since the last verdict and merges it into the sorted prefix. */
static int bucket_sort(t2__pruner *p, pr_bucket *bk)
{
    size_t m = bk->n - bk->sorted;
    if (!m) return T2_OK;
    if (m <= 4) { /* the usual case, one trial completed since: memmove beats an element-wise merge */
        for (; bk->sorted < bk->n; bk->sorted++) t2__insert_sorted(bk->v, bk->sorted, bk->v[bk->sorted]);
        return T2_OK;
    }
    int rc = reserve((void **)&p->scratch, &p->capscratch, m, sizeof *p->scratch);
    if (rc) return rc;
    memcpy(p->scratch, bk->v + bk->sorted, m * sizeof *bk->v);
    qsort(p->scratch, m, sizeof *p->scratch, cmp_double);
    size_t i = bk->sorted, j = m, k = bk->n; /* merge from the back, into the tail's room */
    while (j > 0) {
        if (i > 0 && bk->v[i - 1] > p->scratch[j - 1]) bk->v[--k] = bk->v[--i];
        else bk->v[--k] = p->scratch[--j];
    }
    bk->sorted = bk->n;
    return T2_OK;
}

/* numpy's default ("linear") percentile of v[0..n), sorted, n >= 1, q in [0, 100]: the virtual
 * index (n - 1) * (q / 100) and numpy's _lerp, so the result is bit for bit numpy's. With
 * infinities the limit is taken where numpy would compute inf - inf or 0 * inf and give NaN
 * (left -inf, right +inf stays NaN: no comparison). */
static double percentile(const double *v, size_t n, double q)
{
    double h = (double)(n - 1) * (q / 100.0);
    if (h >= (double)(n - 1)) return v[n - 1];
    if (!(h > 0)) return v[0];
    size_t lo = (size_t)floor(h);
    double t = h - (double)lo, a = v[lo], b = v[lo + 1];
    if (t == 0) return a;
    if (isinf(a) || isinf(b)) {
        if (isinf(a) && isinf(b)) return a == b ? a : NAN;
        return isinf(a) ? a : b;
    }
    double d = b - a;
    return t < 0.5 ? a + d * t : b - d * (1 - t);
}

/* ---- the API ---- */

int t2__pruner_create(const t2__pruner_params *prm, t2__pruner **out)
{
    if (!out) return t2_seterr(T2_EINVAL, "pruner: NULL argument");
    *out = NULL;
    if (!prm) return t2_seterr(T2_EINVAL, "pruner: NULL argument");
    int pct = prm->rule == T2__PRUNE_PERCENTILE;
    if (pct && !(prm->percentile > 0 && prm->percentile <= 100))
        return t2_seterr(T2_EINVAL, "pruner: percentile %g is not in (0, 100]", prm->percentile);
    if (pct && prm->n_startup_trials < 0)
        return t2_seterr(T2_EINVAL, "pruner: n_startup_trials %lld is negative", (long long)prm->n_startup_trials);
    if (pct && prm->n_min_trials < 1)
        return t2_seterr(T2_EINVAL, "pruner: n_min_trials %lld is not >= 1", (long long)prm->n_min_trials);
    if (prm->patient_wrap && prm->rule == T2__PRUNE_PATIENT)
        return t2_seterr(T2_EINVAL, "pruner: a patient rule cannot wrap another patient rule");
    if ((prm->rule == T2__PRUNE_PATIENT || prm->patient_wrap) && (prm->patience < 0 || !(prm->min_delta >= 0)))
        return t2_seterr(T2_EINVAL, "pruner: patience %lld and min_delta %g must not be negative",
                         (long long)prm->patience, prm->min_delta);
    if (prm->rule == T2__PRUNE_THRESHOLD && !(prm->lower <= prm->upper))
        return t2_seterr(T2_EINVAL, "pruner: the bounds [%g, %g] are not a range", prm->lower, prm->upper);
    if (prm->rule != T2__PRUNE_PERCENTILE && prm->rule != T2__PRUNE_PATIENT && prm->rule != T2__PRUNE_THRESHOLD &&
        prm->rule != T2__PRUNE_HALVING)
        return t2_seterr(T2_EINVAL, "pruner: no rule %d", (int)prm->rule);
    t2__pruner *p = calloc(1, sizeof *p);
    if (!p) return oom();
    p->prm = *prm;
    p->prm.smaller_is_better = prm->smaller_is_better != 0;
    p->cap = 64;
    p->slots = calloc(p->cap, sizeof *p->slots);
    int rc = p->slots ? T2_OK : oom();
    if (!rc && prm->rule == T2__PRUNE_HALVING) {
        t2__halving_params hp = {.reduction_factor = prm->reduction_factor,
                                 .min_early_stopping_rate = prm->min_early_stopping_rate,
                                 .bootstrap_count = prm->bootstrap_count, .n_brackets = prm->n_brackets,
                                 .smaller_is_better = p->prm.smaller_is_better};
        rc = t2__halving_create(&hp, &p->halving);
    }
    if (rc) {
        t2__pruner_free(p);
        return rc;
    }
    *out = p;
    return T2_OK;
}

int t2__pruner_from_config(const t2__pruner_config *pc, int smaller_is_better, t2__pruner **out)
{
    if (!pc) return t2_seterr(T2_EINVAL, "pruner: NULL argument");
    t2__pruner_params p = {.percentile = pc->percentile, .n_startup_trials = pc->n_startup_trials,
                           .n_min_trials = pc->n_min_trials, .smaller_is_better = smaller_is_better,
                           .rule = (t2__prune_rule)pc->rule, .patience = pc->patience, .min_delta = pc->min_delta,
                           .lower = pc->lower, .upper = pc->upper, .reduction_factor = pc->reduction_factor,
                           .min_early_stopping_rate = pc->min_early_stopping_rate,
                           .bootstrap_count = pc->bootstrap_count, .n_brackets = pc->n_brackets,
                           .patient_wrap = pc->patient_wrap};
    return t2__pruner_create(&p, out);
}

int64_t t2__pruner_bracket(const t2__pruner *p, int64_t trial)
{
    if (!p || p->prm.rule != T2__PRUNE_HALVING || p->prm.n_brackets < 2) return -1;
    return t2__halving_bracket(p->halving, trial);
}

void t2__pruner_free(t2__pruner *p)
{
    if (!p) return;
    for (size_t i = 0; p->slots && i < p->cap; i++)
        if (p->slots[i].state == SLOT_RUNNING) run_free(p->slots[i].run);
    for (size_t i = 0; i < p->nb; i++) free(p->b[i].v);
    t2__halving_free(p->halving);
    free(p->slots);
    free(p->b);
    free(p->scratch);
    free(p);
}

/* The best (direction) of values [from, to) of r, NaN ones skipped; NaN when all are. */
static double best_of(const t2__pruner *p, const pr_run *r, size_t from, size_t to)
{
    double b = NAN;
    for (size_t k = from; k < to; k++)
        if (!isnan(r->v[k].value) && (isnan(b) || better(p, r->v[k].value, b))) b = r->v[k].value;
    return b;
}

/* PATIENT (pruner.h): no better by min_delta in the last patience + 1 values than before them. */
static void judge_patient(const t2__pruner *p, const pr_run *r, t2__prune_verdict *out)
{
    size_t window = (size_t)p->prm.patience + 1;
    if ((uint64_t)p->prm.patience >= SIZE_MAX - 1 || r->n <= window) return;
    double before = best_of(p, r, 0, r->n - window), after = best_of(p, r, r->n - window, r->n);
    out->best = after;
    out->threshold = before;
    /* NaN on either side compares false: no verdict, as numpy's nanmin of all-NaN gives NaN. */
    out->prune = p->prm.smaller_is_better ? before + p->prm.min_delta < after : before - p->prm.min_delta > after;
}

/* THRESHOLD (pruner.h): the value at this step outside [lower, upper], or NaN. */
static void judge_threshold(const t2__pruner *p, const pr_run *r, int64_t step, t2__prune_verdict *out)
{
    size_t i = point_find(r, step);
    double v = i < r->n && r->v[i].step == step ? r->v[i].value : NAN;
    out->best = v;
    if (isnan(v)) out->prune = 1;
    else if (v < p->prm.lower) out->prune = 1, out->threshold = p->prm.lower;
    else if (v > p->prm.upper) out->prune = 1, out->threshold = p->prm.upper;
}

/* The verdict for a running trial at step (pruner.h, the rule). */
static int judge(t2__pruner *p, const pr_run *r, int64_t step, t2__prune_verdict *out)
{
    if (p->prm.rule != T2__PRUNE_PERCENTILE) {
        *out = (t2__prune_verdict){.prune = 0, .best = r->best, .threshold = NAN, .compared = 0};
        if (p->prm.rule == T2__PRUNE_PATIENT) judge_patient(p, r, out);
        else judge_threshold(p, r, step, out);
        return T2_OK;
    }
    *out = (t2__prune_verdict){.prune = 0, .best = r->best, .threshold = NAN, .compared = 0};
    size_t i = bucket_find(p, step);
    pr_bucket *bk = i < p->nb && p->b[i].step == step ? &p->b[i] : NULL;
    if (bk) out->compared = (int64_t)bk->n + bk->nnan;
    /* Optuna returns early when no trial completed, whatever n_startup_trials says. */
    if (p->completed == 0 || p->completed < p->prm.n_startup_trials) return T2_OK;
    if (isnan(r->best)) {
        out->prune = 1; /* every value NaN: diverged */
        return T2_OK;
    }
    if (out->compared < p->prm.n_min_trials || !bk || bk->n == 0) return T2_OK;
    int rc = bucket_sort(p, bk);
    if (rc) return rc;
    double q = p->prm.smaller_is_better ? p->prm.percentile : 100 - p->prm.percentile;
    double thr = percentile(bk->v, bk->n, q);
    if (isnan(thr)) return T2_OK;
    out->threshold = thr;
    out->prune = p->prm.smaller_is_better ? r->best > thr : r->best < thr;
    return T2_OK;
}

/* What a report that is not judged says: the trial's best so far, no rung. */
static t2__prune_verdict no_verdict(double best)
{
    return (t2__prune_verdict){.prune = 0, .best = best, .threshold = NAN, .compared = 0, .rung = -1, .rung_batches = -1};
}

/* HALVING (halving.h). A step new to the trial records its value at each rung it reaches (nothing
 * for a NaN value). A judged step (ask) then judges every rung the trial reached since it was last
 * judged, each with the value recorded there, and prunes at the first it fails: with a patient
 * rule around halving, that catches up on the rungs reached while the trial still improved (Optuna
 * judges them on the first verdict after too, with the value of that moment). A step seen before (a
 * restarted trial) is judged again at the rungs it reached, as the other rules judge a repeat
 * again. A NaN value past the next rung prunes. Recording depends on the trial's values alone and
 * judging on its own verdicts, so a resume that replays the store's validations with the same
 * decide flags rebuilds everything (prune_link.c). */
static int judge_halving(t2__pruner *p, pr_run *r, int64_t batches, const t2__halving_unit *u, int added, int ask,
                         t2__prune_verdict *out)
{
    t2__halving *h = p->halving;
    int64_t b = r->bracket, lo, hi, next = t2__halving_rung_batches(h, b, r->rungs, u);
    size_t i = point_find(r, batches);
    double value = r->v[i].value; /* the step's first value */
    if (added) {
        for (; next >= 0 && batches >= next && !isnan(value) && r->rungs < 64;
             next = t2__halving_rung_batches(h, b, r->rungs, u)) {
            int rc = t2__halving_add(h, b, r->rungs, value);
            if (rc) return rc;
            r->rv[r->rungs++] = value;
        }
        lo = r->judged;
        hi = r->rungs;
    } else { /* the rungs this step reached when it was new: past the step before it */
        int64_t prev = i > 0 ? r->v[i - 1].step : 0;
        for (lo = 0; lo < r->rungs && t2__halving_rung_batches(h, b, lo, u) <= prev;) lo++;
        for (hi = lo; hi < r->rungs && t2__halving_rung_batches(h, b, hi, u) <= batches;) hi++;
    }
    if (!ask) return T2_OK;
    *out = no_verdict(value);
    out->bracket = b;
    for (int64_t k = lo; k < hi && !out->prune; k++) {
        t2__halving_verdict hv;
        t2__halving_judge(h, b, k, r->rv[k], &hv);
        out->prune = hv.prune;
        out->bootstrap = hv.bootstrap;
        out->best = r->rv[k];
        out->threshold = hv.threshold;
        out->compared = hv.compared;
        out->keep = hv.keep;
        out->rung = k;
        out->rung_batches = t2__halving_rung_batches(h, b, k, u);
    }
    if (!out->prune && isnan(value) && next >= 0 && batches >= next) { /* diverged past a rung */
        *out = no_verdict(NAN);
        out->prune = 1;
        out->bracket = b;
        out->rung = r->rungs;
        out->rung_batches = next;
    }
    if (added) r->judged = hi;
    return T2_OK;
}

int t2__pruner_report(t2__pruner *p, int64_t trial, int64_t batches, const t2__halving_unit *unit, double value,
                      int decide, t2__prune_verdict *out)
{
    if (!p || (decide && !out)) return t2_seterr(T2_EINVAL, "pruner: NULL argument");
    size_t i = slot_find(p->slots, p->cap, trial);
    pr_run *r;
    int added, rc;
    if (p->slots[i].state == SLOT_COMPLETED || p->slots[i].state == SLOT_FORGOTTEN) {
        if (out) *out = no_verdict(NAN);
        return T2_OK;
    }
    if (p->slots[i].state == SLOT_RUNNING) {
        r = p->slots[i].run;
        if ((rc = run_record(p, r, batches, value, &added))) return rc;
    } else {
        r = calloc(1, sizeof *r);
        if (!r) return oom();
        r->best = NAN;
        r->bracket = t2__halving_bracket(p->halving, trial);
        rc = run_record(p, r, batches, value, &added);
        if (!rc) rc = slots_reserve(p);
        if (rc) {
            run_free(r);
            return rc;
        }
        i = slot_find(p->slots, p->cap, trial); /* the table may have grown */
        p->slots[i] = (pr_slot){.key = trial, .state = SLOT_RUNNING, .run = r};
        p->used++;
    }
    if (!decide && out) *out = no_verdict(r->best);
    t2__prune_verdict patient = {.prune = 1};
    if (decide && p->prm.patient_wrap) {
        /* Optuna's PatientPruner around another: that one is asked only once the trial has stopped
         * improving (halving still records the value at its rungs). */
        patient = no_verdict(r->best);
        judge_patient(p, r, &patient);
        if (!patient.prune) {
            *out = no_verdict(r->best);
            decide = 0;
        }
    }
    rc = p->prm.rule == T2__PRUNE_HALVING ? judge_halving(p, r, batches, unit, added, decide, out)
         : decide                        ? judge(p, r, batches, out)
                                         : T2_OK;
    if (!rc && decide && p->prm.patient_wrap) {
        out->patient = 1;
        out->patient_best = patient.best;
        out->patient_before = patient.threshold;
    }
    return rc;
}

/* A completed trial's values join the per-step reference. First make room for every value (steps
 * are distinct within a trial, so each bucket gains at most one); an empty bucket left by a failure
 * here is harmless. Then nothing can fail. */
static int add_reference(t2__pruner *p, const pr_run *r)
{
    for (size_t k = 0; k < r->n; k++) {
        size_t at;
        int rc = bucket_get(p, r->v[k].step, &at);
        if (!rc && !isnan(r->v[k].value))
            rc = reserve((void **)&p->b[at].v, &p->b[at].cap, p->b[at].n + 1, sizeof *p->b[at].v);
        if (rc) return rc;
    }
    for (size_t k = 0; k < r->n; k++) {
        pr_bucket *bk = &p->b[bucket_find(p, r->v[k].step)];
        if (isnan(r->v[k].value)) bk->nnan++;
        else bk->v[bk->n++] = r->v[k].value;
    }
    return T2_OK;
}

int t2__pruner_completed(t2__pruner *p, int64_t trial)
{
    if (!p) return t2_seterr(T2_EINVAL, "pruner: NULL argument");
    size_t i = slot_find(p->slots, p->cap, trial);
    int state = p->slots[i].state;
    if (state == SLOT_COMPLETED || state == SLOT_FORGOTTEN) return T2_OK;
    if (state == SLOT_EMPTY) { /* completed without a validation: counts for n_startup_trials */
        int rc = slots_reserve(p);
        if (rc) return rc;
        i = slot_find(p->slots, p->cap, trial);
        p->slots[i] = (pr_slot){.key = trial, .state = SLOT_COMPLETED};
        p->used++;
        p->completed++;
        return T2_OK;
    }
    pr_run *r = p->slots[i].run;
    /* The halving rule's reference is its rungs, recorded as the values came: nothing to add. */
    int rc = p->prm.rule == T2__PRUNE_HALVING ? T2_OK : add_reference(p, r);
    if (rc) return rc;
    run_free(r);
    p->slots[i].run = NULL;
    p->slots[i].state = SLOT_COMPLETED;
    p->completed++;
    return T2_OK;
}

void t2__pruner_forget(t2__pruner *p, int64_t trial)
{
    if (!p) return;
    size_t i = slot_find(p->slots, p->cap, trial);
    if (p->slots[i].state == SLOT_RUNNING) {
        run_free(p->slots[i].run);
        p->slots[i].run = NULL;
        p->slots[i].state = SLOT_FORGOTTEN;
        return;
    }
    if (p->slots[i].state != SLOT_EMPTY) return; /* already ended */
    if (slots_reserve(p)) return; /* not remembered: it has no values (pruner.h) */
    i = slot_find(p->slots, p->cap, trial);
    p->slots[i] = (pr_slot){.key = trial, .state = SLOT_FORGOTTEN};
    p->used++;
}

int64_t t2__pruner_completed_count(const t2__pruner *p)
{
    return p ? p->completed : 0;
}
