/* halving.c — successive halving's and hyperband's rungs (halving.h). Each rung keeps its values
 * sorted (a binary search and a memmove per value: a rung holds at most one value a trial), so a
 * verdict reads the promotion bound directly. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "halving.h"
#include "hash64.h"
#include "t2exp/error.h"

typedef struct hv_rung {
    double *v; /* ascending, never NaN */
    size_t n, cap;
} hv_rung;

typedef struct hv_bracket {
    hv_rung *r;
    size_t n; /* rungs that exist (some values or none) */
} hv_bracket;

struct t2__halving {
    t2__halving_params prm;
    hv_bracket *b;      /* n_brackets of them */
    uint64_t *budget;   /* each bracket's share of trials (hyperband) */
    uint64_t total;
};

static int oom(void) { return t2_seterr(T2_ENOMEM, "pruner: out of memory"); }

int t2__halving_create(const t2__halving_params *p, t2__halving **out)
{
    if (!p || !out) return t2_seterr(T2_EINVAL, "pruner: NULL argument");
    *out = NULL;
    if (p->reduction_factor < 2 || p->min_early_stopping_rate < 0 || p->bootstrap_count < 0 || p->n_brackets < 1 ||
        p->n_brackets > 64)
        return t2_seterr(T2_EINVAL, "pruner: halving params out of range (reduction_factor %lld, "
                                    "min_early_stopping_rate %lld, bootstrap_count %lld, %lld brackets)",
                         (long long)p->reduction_factor, (long long)p->min_early_stopping_rate,
                         (long long)p->bootstrap_count, (long long)p->n_brackets);
    t2__halving *h = calloc(1, sizeof *h);
    if (!h) return oom();
    h->prm = *p;
    h->b = calloc((size_t)p->n_brackets, sizeof *h->b);
    h->budget = calloc((size_t)p->n_brackets, sizeof *h->budget);
    if (!h->b || !h->budget) {
        t2__halving_free(h);
        return oom();
    }
    /* Optuna's math.ceil(n_brackets * rf**s / (s + 1)), in doubles as there; a budget too large to
     * count in (the config refuses such bracket counts) is capped, which only skews the shares. */
    for (int64_t i = 0; i < p->n_brackets; i++) {
        double s = (double)(p->n_brackets - 1 - i);
        double b = ceil((double)p->n_brackets * pow((double)p->reduction_factor, s) / (s + 1));
        h->budget[i] = b < 0x1p52 ? (uint64_t)b : (uint64_t)1 << 52;
        h->total += h->budget[i];
    }
    *out = h;
    return T2_OK;
}

void t2__halving_free(t2__halving *h)
{
    if (!h) return;
    for (int64_t i = 0; h->b && i < h->prm.n_brackets; i++) {
        for (size_t k = 0; k < h->b[i].n; k++) free(h->b[i].r[k].v);
        free(h->b[i].r);
    }
    free(h->b);
    free(h->budget);
    free(h);
}

int64_t t2__halving_bracket(const t2__halving *h, int64_t trial)
{
    if (!h || h->prm.n_brackets == 1) return 0;
    uint64_t n = t2__hash64((uint64_t)trial) % h->total;
    for (int64_t i = 0; i < h->prm.n_brackets; i++) {
        if (n < h->budget[i]) return i;
        n -= h->budget[i];
    }
    return h->prm.n_brackets - 1; /* not reached: the budgets sum to total */
}

/* unit * rf^e, or -1 past INT64_MAX (a rung no trial reaches). */
static int64_t promotion_step(int64_t unit, int64_t rf, int64_t e)
{
    int64_t s = unit;
    for (int64_t k = 0; k < e; k++) {
        if (s > INT64_MAX / rf) return -1;
        s *= rf;
    }
    return s;
}

/* Rung k of bracket bk, created (empty) with those below it if missing. */
static int rung_at(hv_bracket *bk, int64_t k, hv_rung **out)
{
    if ((size_t)k >= bk->n) {
        hv_rung *r = realloc(bk->r, ((size_t)k + 1) * sizeof *r);
        if (!r) return oom();
        memset(r + bk->n, 0, ((size_t)k + 1 - bk->n) * sizeof *r);
        bk->r = r;
        bk->n = (size_t)k + 1;
    }
    *out = &bk->r[k];
    return T2_OK;
}

void t2__insert_sorted(double *v, size_t n, double x)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (v[mid] <= x) lo = mid + 1;
        else hi = mid;
    }
    memmove(v + lo + 1, v + lo, (n - lo) * sizeof *v);
    v[lo] = x;
}

static int rung_insert(hv_rung *r, double x)
{
    if (r->n == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 16;
        double *v = realloc(r->v, cap * sizeof *v);
        if (!v) return oom();
        r->v = v;
        r->cap = cap;
    }
    t2__insert_sorted(r->v, r->n++, x);
    return T2_OK;
}

/* Optuna's _is_trial_promotable_to_next_rung on rung r, which holds x already. */
static void judge(const t2__halving *h, const hv_rung *r, double x, t2__halving_verdict *out)
{
    int64_t n = (int64_t)r->n, keep = n / h->prm.reduction_factor;
    if (keep < 1) keep = 1; /* Optuna: the first rf - 1 trials go on only when best so far */
    out->compared = n;
    out->keep = keep;
    if (n <= h->prm.bootstrap_count) {
        out->prune = out->bootstrap = 1;
        out->threshold = NAN;
        return;
    }
    double bound = h->prm.smaller_is_better ? r->v[keep - 1] : r->v[n - keep];
    out->threshold = bound;
    out->prune = h->prm.smaller_is_better ? x > bound : x < bound;
}

int t2__halving_step(t2__halving *h, int64_t bracket, int64_t *rungs, int64_t step, int64_t unit, double value,
                     int decide, t2__halving_verdict *out)
{
    if (!h || !rungs || (decide && !out)) return t2_seterr(T2_EINVAL, "pruner: NULL argument");
    if (bracket < 0 || bracket >= h->prm.n_brackets) return t2_seterr(T2_EINVAL, "pruner: no bracket %lld", (long long)bracket);
    if (out) *out = (t2__halving_verdict){.threshold = NAN, .rung = -1, .rung_batches = -1};
    if (unit <= 0) return T2_OK;
    hv_bracket *bk = &h->b[bracket];
    int64_t mesr = h->prm.min_early_stopping_rate + bracket;
    for (;;) {
        int64_t at = *rungs > INT64_MAX - mesr ? -1 : promotion_step(unit, h->prm.reduction_factor, mesr + *rungs);
        if (at < 0 || step < at) return T2_OK;
        if (out && !out->prune) { /* a verdict that pruned names its rung */
            out->rung = *rungs;
            out->rung_batches = at;
        }
        if (isnan(value)) { /* diverged: pruned, nothing recorded (Optuna's order) */
            if (decide) out->prune = 1;
            return T2_OK;
        }
        hv_rung *r = NULL;
        int rc = rung_at(bk, *rungs, &r);
        if (!rc) rc = rung_insert(r, value);
        if (rc) return rc;
        (*rungs)++;
        if (decide && !out->prune) judge(h, r, value, out); /* a prune stands; the rungs above still record */
    }
}
