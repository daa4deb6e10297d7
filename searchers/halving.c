/* halving.c — successive halving's and hyperband's rungs (halving.h). Each rung keeps its values
 * sorted (a binary search and a memmove per value: a rung holds at most one value a trial), so a
 * verdict reads the promotion bound directly. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "halving.h"
#include "hash64.h"
#include "internal.h"
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

int64_t t2__halving_rung_batches(const t2__halving *h, int64_t bracket, int64_t k, const t2__halving_unit *u)
{
    if (!h || !u || u->n <= 0 || u->mul <= 0 || u->div <= 0 || bracket < 0 || k < 0) return -1;
    int64_t e = h->prm.min_early_stopping_rate + bracket, rf = h->prm.reduction_factor;
    if (k > INT64_MAX - e) return -1;
    e += k;
    int64_t s = u->n;
    for (int64_t i = 0; i < e; i++) {
        if (s > INT64_MAX / rf) return -1;
        s *= rf;
    }
    if (s > INT64_MAX / u->mul) return -1;
    s *= u->mul;
    return s / u->div + (s % u->div != 0); /* ceil: the first batch at or past the length */
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
    double *v = t2__grow_array(r->v, &r->cap, r->n, sizeof *v, 16);
    if (!v) return oom();
    r->v = v;
    t2__insert_sorted(r->v, r->n++, x);
    return T2_OK;
}

int t2__halving_add(t2__halving *h, int64_t bracket, int64_t k, double value)
{
    if (!h || bracket < 0 || bracket >= h->prm.n_brackets || k < 0 || k > 64 || isnan(value))
        return t2_seterr(T2_EINVAL, "pruner: no rung %lld of bracket %lld for %g", (long long)k, (long long)bracket,
                         value);
    hv_rung *r = NULL;
    int rc = rung_at(&h->b[bracket], k, &r);
    return rc ? rc : rung_insert(r, value);
}

/* Optuna's _is_trial_promotable_to_next_rung on rung k, which holds x already. */
void t2__halving_judge(const t2__halving *h, int64_t bracket, int64_t k, double x, t2__halving_verdict *out)
{
    const hv_rung *r = h && bracket >= 0 && bracket < h->prm.n_brackets && k >= 0 && (size_t)k < h->b[bracket].n
                           ? &h->b[bracket].r[k]
                           : NULL;
    out->prune = out->bootstrap = 0;
    out->threshold = NAN;
    out->compared = r ? (int64_t)r->n : 0;
    out->keep = 0;
    if (!r || r->n == 0) return; /* not recorded: nothing to compare */
    int64_t n = (int64_t)r->n, keep = n / h->prm.reduction_factor;
    if (keep < 1) keep = 1; /* Optuna: the first rf - 1 trials go on only when best so far */
    out->keep = keep;
    if (n <= h->prm.bootstrap_count) {
        out->prune = out->bootstrap = 1;
        return;
    }
    double bound = h->prm.smaller_is_better ? r->v[keep - 1] : r->v[n - keep];
    out->threshold = bound;
    out->prune = h->prm.smaller_is_better ? x > bound : x < bound;
}
