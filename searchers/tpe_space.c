/* tpe_space.c — what the tpe searcher and adaptive_asha's `sampler: tpe` share: the search space
 * as points (one double per searchable leaf), hparams maps to points and back, and the split of
 * observations into the good and the other group before tpe_parzen.c's choice. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "tpe.h"
#include "t2exp/error.h"

/* The factor a double leaf's values are fitted at. A range wider than DBL_MAX (-1.7e308 to
 * 1.7e308) would make the estimators' widths, centres and bandwidths infinite, so TPE fits such a
 * leaf at half its values, where the width is finite; a power of two scales exactly. Any other
 * leaf is fitted as it is, so points of ordinary ranges are unchanged. */
static double fit_scale(const t2__hparam *h)
{
    return h->kind == T2__HP_DOUBLE && !isfinite(h->maxval - h->minval) ? 0.5 : 1.0;
}

void t2__tpe_space_free(t2__tpe_space *sp)
{
    free(sp->params);
    free(sp->leaves);
    memset(sp, 0, sizeof *sp);
}

int t2__tpe_space_init(const t2__hparam *root, t2__tpe_space *sp)
{
    memset(sp, 0, sizeof *sp);
    sp->nleaves = t2__hparam_leaves(root, NULL, 0);
    sp->leaves = calloc(sp->nleaves ? sp->nleaves : 1, sizeof *sp->leaves);
    sp->params = calloc(sp->nleaves ? sp->nleaves : 1, sizeof *sp->params);
    if (!sp->leaves || !sp->params) return t2_seterr(T2_ENOMEM, "searcher: out of memory");
    t2__hparam_leaves(root, sp->leaves, sp->nleaves);
    for (size_t k = 0; k < sp->nleaves; k++) {
        const t2__hparam *h = sp->leaves[k];
        if (strchr(h->path, '.'))
            return t2_seterr(T2_EINVAL, "hyperparameters.%.*s: tpe does not support nested hyperparameters yet",
                             (int)(strchr(h->path, '.') - h->path), h->path);
        if (!t2__hparam_searchable(h)) continue;
        t2__tpe_param *p = &sp->params[sp->np++];
        p->kind = h->kind;
        if (h->kind == T2__HP_INT) {
            p->imin = h->imin;
            p->imax = h->imax;
            p->low = (double)h->imin - 0.5;
            p->high = (double)h->imax + 0.5;
        } else if (h->kind == T2__HP_CATEGORICAL) {
            p->nchoices = (int64_t)h->vals->n;
        } else {
            p->low = h->minval * fit_scale(h);
            p->high = h->maxval * fit_scale(h);
        }
    }
    return T2_OK;
}

void t2__tpe_point_of(const t2__tpe_space *sp, const t2__val *hp, double *x)
{
    size_t j = 0;
    for (size_t k = 0; k < sp->nleaves; k++) {
        const t2__hparam *h = sp->leaves[k];
        if (!t2__hparam_searchable(h)) continue;
        double d = 0;
        if (!t2__hparam_coordinate(h, t2__val_lookup(hp, h->path), &d)) d = 0;
        if (h->kind == T2__HP_LOG) d = fmin(fmax(d, h->minval), h->maxval); /* rounding at the ends */
        x[j++] = d * fit_scale(h);
    }
}

int t2__tpe_hparams_of(const t2__hparam *root, const t2__tpe_space *sp, const double *x, t2__val **out)
{
    const t2__val **vals = calloc(sp->nleaves ? sp->nleaves : 1, sizeof *vals);
    t2__val **owned = calloc(sp->nleaves ? sp->nleaves : 1, sizeof *owned);
    int rc = vals && owned ? T2_OK : T2_ENOMEM;
    size_t j = 0;
    for (size_t k = 0; !rc && k < sp->nleaves; k++) {
        const t2__hparam *h = sp->leaves[k];
        if (!t2__hparam_searchable(h)) continue;
        double d = x[j++];
        if (h->kind == T2__HP_CATEGORICAL) {
            vals[k] = h->vals->items[(size_t)d];
            continue;
        }
        /* An int's point is a whole number in [imin, imax] already; the ends are taken as they are
         * because (double)imax may not convert back into int64. */
        owned[k] = h->kind == T2__HP_INT ? t2__val_int(d <= (double)h->imin   ? h->imin
                                                       : d >= (double)h->imax ? h->imax
                                                                              : (int64_t)d)
                   : h->kind == T2__HP_LOG ? t2__val_double(pow(h->base, d))
                                           : t2__val_double(fmin(fmax(d / fit_scale(h), h->minval), h->maxval));
        if (!(vals[k] = owned[k])) rc = T2_ENOMEM;
    }
    if (!rc) rc = t2__hparam_build(root, vals, out);
    for (size_t k = 0; owned && k < sp->nleaves; k++) t2__val_free(owned[k]);
    free(owned);
    free(vals);
    if (rc == T2_ENOMEM) return t2_seterr(T2_ENOMEM, "searcher: out of memory");
    return rc;
}

int t2__tpe_point_valid(const t2__tpe_space *sp, const double *x)
{
    for (size_t j = 0; j < sp->np; j++) {
        const t2__tpe_param *p = &sp->params[j];
        double d = x[j];
        int whole = p->kind == T2__HP_INT || p->kind == T2__HP_CATEGORICAL;
        double lo = p->kind == T2__HP_CATEGORICAL ? 0 : p->kind == T2__HP_INT ? (double)p->imin : p->low;
        double hi = p->kind == T2__HP_CATEGORICAL ? (double)(p->nchoices - 1)
                    : p->kind == T2__HP_INT       ? (double)p->imax
                                                  : p->high;
        if (!(d >= lo && d <= hi) || (whole && d != floor(d))) return 0;
    }
    return 1;
}

/* Completed first, then pruned, then running ones (Optuna's _split_trials). */
static int obs_rank(const t2__tpe_obs *o)
{
    return o->running ? 2 : o->pruned ? 1 : 0;
}

/* Optuna's order within each rank: completed by loss, pruned by step (deeper first) then loss,
 * then by request id: a total order, so qsort's lack of stability cannot change a choice. */
static int cmp_loss(const void *a, const void *b)
{
    const t2__tpe_obs *x = a, *y = b;
    int rx = obs_rank(x), ry = obs_rank(y);
    if (rx != ry) return rx - ry;
    if (rx == 1 && x->step != y->step) return x->step > y->step ? -1 : 1;
    if (rx != 2 && x->loss != y->loss) return x->loss < y->loss ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

static int cmp_id(const void *a, const void *b)
{
    const t2__tpe_obs *x = a, *y = b;
    return x->id < y->id ? -1 : x->id > y->id;
}

int t2__tpe_propose(const t2__tpe_model *m, double gamma, t2__tpe_obs *obs, size_t n, t2_rng *rng, double *x)
{
    size_t ndone = 0;
    for (size_t k = 0; k < n; k++) ndone += !obs[k].running;
    if (!ndone) return t2_seterr(T2_EINVAL, "tpe: no finished observations to fit");
    /* Optuna's gamma over every trial in the split, running ones included. */
    size_t nbelow = (size_t)ceil(gamma * (double)n);
    if (nbelow > 25) nbelow = 25;
    if (nbelow > ndone) nbelow = ndone;
    if (nbelow < 1) nbelow = 1;
    qsort(obs, n, sizeof *obs, cmp_loss);
    /* Each group in request order: the weights favour newer trials once a group is large. */
    qsort(obs, nbelow, sizeof *obs, cmp_id);
    qsort(obs + nbelow, n - nbelow, sizeof *obs, cmp_id);
    const double **pts = malloc((n ? n : 1) * sizeof *pts);
    if (!pts) return t2_seterr(T2_ENOMEM, "searcher: out of memory");
    for (size_t k = 0; k < n; k++) pts[k] = obs[k].x;
    int rc = t2__tpe_suggest(m, pts, nbelow, pts + nbelow, n - nbelow, rng, x);
    free(pts);
    return rc;
}
