/* adaptive.c — adaptive ASHA: the brackets a config gives (Determined's adaptive_asha.go) and the
 * searcher around them. Each event goes to the bracket of its trial; the searcher is done when
 * every trial of every bracket has ended. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include "asha.h"
#include "t2exp/error.h"

int64_t t2__asha_rung_length(int64_t max_length, double divisor, int64_t nrungs, int64_t r)
{
    double units = (double)max_length / pow(divisor, (double)(nrungs - 1 - r));
    return units < 1 ? 1 : (int64_t)units;
}

/* Determined's rung cap: int(log(x) / log(divisor)) + 1 in doubles. It loses a rung at exact
 * powers whose logarithms round down (log(1000)/log(10) = 2.9999999999999996 gives 3 rungs,
 * 10/100/1000, not 4); that is kept so that a config gives the same brackets as in Determined.
 * bracket_rungs sets the rungs exactly. */
static int64_t rung_cap(int64_t x, double divisor)
{
    double k = log((double)x) / log(divisor);
    return k >= 62 ? 63 : (int64_t)k + 1;
}

static int cmp_desc(const void *pa, const void *pb)
{
    int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
    return (a < b) - (a > b);
}

int t2__asha_layout_of(const t2__searcher_config *sc, t2__asha_layout *out)
{
    t2__asha_layout L = {0};
    double d = sc->divisor;
    if (!(d > 1)) return t2_seterr(T2_EINVAL, "searcher.divisor: expected a number greater than 1, got %g", d);
    if (sc->max_trials < 1)
        return t2_seterr(T2_EINVAL, "searcher.max_trials: the adaptive_asha searcher needs max_trials >= 1");
    if (sc->max_trials > T2__MAX_TRIALS)
        return t2_seterr(T2_EINVAL, "searcher.max_trials: at most %d trials, got %" PRId64, T2__MAX_TRIALS,
                         sc->max_trials);
    if (sc->max_length.n < 1) return t2_seterr(T2_EINVAL, "searcher.max_length: expected a positive length");
    if (sc->nbracket_rungs) {
        if (sc->nbracket_rungs > T2__ASHA_MAX_BRACKETS)
            return t2_seterr(T2_EINVAL, "searcher.bracket_rungs: at most %d brackets", T2__ASHA_MAX_BRACKETS);
        for (size_t k = 0; k < sc->nbracket_rungs; k++) {
            if (sc->bracket_rungs[k] < 1 || sc->bracket_rungs[k] > 62)
                return t2_seterr(T2_EINVAL, "searcher.bracket_rungs.%zu: expected 1 to 62 rungs, got %" PRId64, k,
                                 sc->bracket_rungs[k]);
            L.rungs[k] = sc->bracket_rungs[k];
            if (L.rungs[k] > L.max_rungs) L.max_rungs = L.rungs[k];
        }
        L.nbrackets = sc->nbracket_rungs;
    } else {
        /* Cap the rungs so that the top rung can hold a trial: divisor^(rungs-1) must fit in both
         * max_length and max_trials (as Determined computes it: rung_cap). */
        int64_t mr = sc->max_rungs < 1 ? 1 : sc->max_rungs;
        int64_t by_len = rung_cap(sc->max_length.n, d), by_trials = rung_cap(sc->max_trials, d);
        if (by_len < mr) mr = by_len;
        if (by_trials < mr) mr = by_trials;
        if (mr > T2__ASHA_MAX_BRACKETS) mr = T2__ASHA_MAX_BRACKETS;
        L.max_rungs = mr;
        switch (sc->mode) {
        case T2__ASHA_AGGRESSIVE: /* one bracket, all the early stopping */
            L.rungs[L.nbrackets++] = mr;
            break;
        case T2__ASHA_STANDARD: /* the upper half of the bracket sizes */
            for (int64_t r = (mr - 1) / 2 + 1; r <= mr; r++) L.rungs[L.nbrackets++] = r;
            break;
        case T2__ASHA_CONSERVATIVE: /* every size down to plain random search (1 rung) */
            for (int64_t r = 1; r <= mr; r++) L.rungs[L.nbrackets++] = r;
            break;
        }
    }
    /* Most early stopping first, to get speedups early on. */
    qsort(L.rungs, L.nbrackets, sizeof *L.rungs, cmp_desc);
    /* Trials per bracket: roughly the same total training per bracket. A bracket of n rungs
     * spends about n * max_length to evaluate divisor^(n-1) configurations, so its weight is
     * divisor^(n-1) / n; each gets at least one trial and the rounding remainder goes to the
     * first bracket. */
    double w[T2__ASHA_MAX_BRACKETS], total = 0;
    for (size_t i = 0; i < L.nbrackets; i++) total += w[i] = pow(d, (double)(L.rungs[i] - 1)) / (double)L.rungs[i];
    if (!isfinite(total)) {
        /* A huge divisor to a high power overflows (and inf / inf would be NaN): the same weights
         * relative to the largest one, in logarithms. */
        double lw[T2__ASHA_MAX_BRACKETS], top = -INFINITY;
        for (size_t i = 0; i < L.nbrackets; i++) {
            lw[i] = (double)(L.rungs[i] - 1) * log(d) - log((double)L.rungs[i]);
            if (lw[i] > top) top = lw[i];
        }
        total = 0;
        for (size_t i = 0; i < L.nbrackets; i++) total += w[i] = exp(lw[i] - top);
    }
    int64_t allocated = 0;
    for (size_t i = 0; i < L.nbrackets; i++) {
        int64_t n = (int64_t)(w[i] / total * (double)sc->max_trials);
        allocated += L.max_trials[i] = n < 1 ? 1 : n;
    }
    if (sc->max_trials > allocated) L.max_trials[0] += sc->max_trials - allocated;
    /* Trials a bracket starts with (its concurrency in Determined): max_concurrent_trials split
     * evenly, the remainder to the first brackets; without it, max(the last bracket's trials,
     * int(divisor)), capped by the bracket's own max_trials. */
    int64_t each, rem = 0, mct = sc->max_concurrent_trials;
    if (mct <= 0) {
        each = L.max_trials[L.nbrackets - 1];
        if (d > (double)each) each = d < 0x1p62 ? (int64_t)d : INT64_MAX; /* capped below anyway */
    } else {
        if (mct < (int64_t)L.nbrackets) mct = (int64_t)L.nbrackets;
        each = mct / (int64_t)L.nbrackets;
        rem = mct % (int64_t)L.nbrackets;
    }
    for (size_t i = 0; i < L.nbrackets; i++) {
        int64_t c = each + ((int64_t)i < rem);
        L.initial[i] = c < L.max_trials[i] ? c : L.max_trials[i];
    }
    *out = L;
    return T2_OK;
}

static void destroy(t2__searcher *s)
{
    t2__asha *a = s->impl;
    if (!a) return;
    t2__asha_clear(a);
    t2__asha_tpe_free(a);
    for (size_t i = 0; a->b && i < a->nbrackets; i++) free(a->b[i].rungs);
    free(a->b);
    free(a);
    s->impl = NULL;
}

static int init(t2__searcher *s)
{
    const t2__searcher_config *sc = &s->cfg->searcher;
    t2__asha_layout L;
    int rc = t2__asha_layout_of(sc, &L);
    if (rc) return rc;
    t2__asha *a = calloc(1, sizeof *a);
    if (!a) return t2_seterr(T2_ENOMEM, "searcher: out of memory");
    s->impl = a;
    a->stop_once = sc->stop_once;
    a->divisor = sc->divisor;
    a->nbrackets = L.nbrackets;
    if (!(a->b = calloc(L.nbrackets, sizeof *a->b))) return t2_seterr(T2_ENOMEM, "searcher: out of memory");
    for (size_t i = 0; i < L.nbrackets; i++) {
        t2__asha_bracket *b = &a->b[i];
        b->nrungs = L.rungs[i];
        b->max_trials = L.max_trials[i];
        b->initial = L.initial[i];
        if (!(b->rungs = calloc((size_t)b->nrungs, sizeof *b->rungs)))
            return t2_seterr(T2_ENOMEM, "searcher: out of memory");
        for (int64_t r = 0; r < b->nrungs; r++)
            b->rungs[r].length = t2__asha_rung_length(sc->max_length.n, sc->divisor, b->nrungs, r);
    }
    return sc->sampler == T2__SAMPLER_TPE ? t2__asha_tpe_init(s) : T2_OK;
}

static int start(t2__searcher *s, t2__ops *ops)
{
    t2__asha *a = s->impl;
    for (size_t i = 0; i < a->nbrackets; i++)
        for (int64_t k = 0; k < a->b[i].initial; k++) {
            int rc = t2__asha_new_trial(s, i, ops);
            if (rc) return rc;
        }
    return T2_OK;
}

/* asha.go progress, averaged over the brackets as tournament.go does: trials that reported at
 * rung 0 over 1.2 * max_trials (room for the promotions still to come), and once all have,
 * at least the fraction of trials that ended. */
static double progress(const t2__searcher *s)
{
    const t2__asha *a = s->impl;
    double sum = 0;
    for (size_t i = 0; i < a->nbrackets; i++) {
        const t2__asha_bracket *b = &a->b[i];
        double p = (double)b->rungs[0].n / (1.2 * (double)b->max_trials);
        if ((int64_t)b->rungs[0].n >= b->max_trials) {
            double done = (double)b->completed / (double)b->max_trials;
            if (done > p) p = done;
        }
        sum += p > 1 ? 1 : p;
    }
    return a->nbrackets ? sum / (double)a->nbrackets : 1.0;
}

static int64_t total(const t2__searcher *s)
{
    const t2__asha *a = s->impl;
    int64_t n = 0;
    for (size_t i = 0; i < a->nbrackets; i++) n += a->b[i].max_trials;
    return n;
}

const t2__searcher_vt t2__asha_vt = {
    .name = "adaptive_asha",
    .init = init,
    .destroy = destroy,
    .start = start,
    .validation = t2__asha_validation,
    .exited = t2__asha_exited,
    .failed = t2__asha_failed,
    .progress = progress,
    .total = total,
    .snapshot = t2__asha_snapshot,
    .restore = t2__asha_restore,
};
