/* tpe_parzen.c — Parzen estimators for TPE, written from Optuna's documented semantics (not its
 * code): one kernel per observation plus a prior kernel; numeric kernels are normals truncated to
 * the parameter's range (an int's kernel gives each integer the mass of [k - 1/2, k + 1/2]);
 * categorical kernels put weight 1 on the observed choice and prior_weight / (n + 1) on every choice.
 *
 * Bandwidths as Optuna's defaults: univariate, each kernel's sigma is the larger distance to its
 * neighbours among the sorted centres (the prior's centre included, the range ends as the outer
 * neighbours, except that the outermost kernels look inward only: consider_endpoints=False);
 * multivariate, every kernel has sigma = 0.2 * n^(-1/(d+4)) * range. Both are clipped to
 * [range / min(100, 1 + kernels), range] (magic clip); the prior kernel is centred with sigma = range. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "tpe.h"
#include "t2exp/error.h"

#define SQRT1_2 0.70710678118654752440
#define LOG_SQRT_2PI 0.91893853320467274178

/* One group's estimator: nk kernels (the observations, then the prior). */
typedef struct pe {
    size_t nk;
    double *logw;  /* nk mixture log weights */
    double *mu, *sigma; /* np * nk, numeric parameters */
    double *lognorm;    /* np * nk: log of the kernel's mass inside the range (its truncation) */
    double *logp;  /* categorical: per parameter at offset cat_off[j], nk * nchoices log probabilities */
    size_t *cat_off;
} pe;

static void pe_free(pe *e)
{
    free(e->logw);
    free(e->mu);
    free(e->sigma);
    free(e->lognorm);
    free(e->logp);
    free(e->cat_off);
}

/* Optuna's default_weights: all 1 up to 25 observations; beyond, the 25 newest weigh 1 and the older
 * ones ramp linearly from 1/n up to 1. */
static double obs_weight(size_t i, size_t n)
{
    if (n <= 25) return 1.0;
    size_t nramp = n - 25;
    if (i >= nramp) return 1.0;
    if (nramp == 1) return 1.0 / (double)n;
    return 1.0 / (double)n + (1.0 - 1.0 / (double)n) * (double)i / (double)(nramp - 1);
}

typedef struct idxval {
    double v;
    size_t i;
} idxval;

static int cmp_idxval(const void *a, const void *b)
{
    const idxval *x = a, *y = b;
    if (x->v != y->v) return x->v < y->v ? -1 : 1;
    return x->i < y->i ? -1 : x->i > y->i;
}

/* Univariate bandwidths of the n observations of one parameter (tmp: n + 1 entries). */
static void univariate_sigmas(const double *mus, size_t n, double low, double high, idxval *tmp, double *sig)
{
    size_t m = n + 1; /* with the prior's centre */
    for (size_t k = 0; k < n; k++) tmp[k] = (idxval){mus[k], k};
    tmp[n] = (idxval){0.5 * (low + high), n};
    qsort(tmp, m, sizeof *tmp, cmp_idxval);
    for (size_t r = 0; r < m; r++) {
        double left = tmp[r].v - (r ? tmp[r - 1].v : low), right = (r + 1 < m ? tmp[r + 1].v : high) - tmp[r].v;
        double s = left > right ? left : right;
        if (m >= 2 && r == 0) s = tmp[1].v - tmp[0].v;
        if (m >= 2 && r == m - 1) s = tmp[m - 1].v - tmp[m - 2].v;
        if (tmp[r].i < n) sig[tmp[r].i] = s;
    }
}

/* log(Phi(zb) - Phi(za)) for za < zb, accurate in both tails; far out (where it underflows) the
 * density at the middle times the width, which is what the mass tends to. */
static double log_mass(double za, double zb)
{
    double mass;
    if (za > 0) mass = 0.5 * (erfc(za * SQRT1_2) - erfc(zb * SQRT1_2));
    else if (zb < 0) mass = 0.5 * (erfc(-zb * SQRT1_2) - erfc(-za * SQRT1_2));
    else mass = 1.0 - 0.5 * erfc(zb * SQRT1_2) - 0.5 * erfc(-za * SQRT1_2);
    if (mass > 1e-300) return log(mass);
    double zm = 0.5 * (za + zb);
    return -0.5 * zm * zm - LOG_SQRT_2PI + log(zb - za);
}

static int pe_fit(pe *e, const t2__tpe_model *m, const double *const *obs, size_t n)
{
    size_t np = m->np, nk = n + 1, ncat = 0;
    memset(e, 0, sizeof *e);
    e->nk = nk;
    for (size_t j = 0; j < np; j++)
        if (m->p[j].kind == T2__HP_CATEGORICAL) ncat += (size_t)m->p[j].nchoices;
    e->logw = malloc(nk * sizeof *e->logw);
    e->mu = malloc((np ? np : 1) * nk * sizeof *e->mu);
    e->sigma = malloc((np ? np : 1) * nk * sizeof *e->sigma);
    e->lognorm = malloc((np ? np : 1) * nk * sizeof *e->lognorm);
    e->logp = malloc((ncat ? ncat : 1) * nk * sizeof *e->logp);
    e->cat_off = malloc((np ? np : 1) * sizeof *e->cat_off);
    idxval *tmp = malloc(nk * sizeof *tmp);
    if (!e->logw || !e->mu || !e->sigma || !e->lognorm || !e->logp || !e->cat_off || !tmp) {
        free(tmp);
        pe_free(e);
        return t2_seterr(T2_ENOMEM, "tpe: out of memory");
    }
    double total = m->prior_weight;
    for (size_t k = 0; k < n; k++) total += obs_weight(k, n);
    for (size_t k = 0; k < n; k++) e->logw[k] = log(obs_weight(k, n) / total);
    e->logw[n] = log(m->prior_weight / total);
    size_t off = 0;
    for (size_t j = 0; j < np; j++) {
        const t2__tpe_param *p = &m->p[j];
        double *mu = e->mu + j * nk, *sg = e->sigma + j * nk;
        if (p->kind == T2__HP_CATEGORICAL) {
            size_t c = (size_t)p->nchoices;
            double *lp = e->logp + off * nk;
            e->cat_off[j] = off * nk;
            off += c;
            /* Each observation's kernel: prior_weight / (n + 1) on every choice, +1 on its own,
             * normalised (Optuna's rule). The smoothing shrinks as the group grows, so a choice the
             * many "above" trials rarely took keeps a small g and a large l/g: it gets tried again.
             * (Spreading prior_weight / c instead kept g near uniform, and TPE locked onto the
             * first good choice.) */
            double v = m->prior_weight / (double)(n + 1), norm = (double)c * v + 1.0;
            double base = log(v / norm), hit = log((v + 1.0) / norm);
            for (size_t k = 0; k < nk; k++)
                for (size_t q = 0; q < c; q++)
                    lp[k * c + q] = k == n ? -log((double)c) : (size_t)obs[k][j] == q ? hit : base;
            continue;
        }
        double range = p->high - p->low;
        for (size_t k = 0; k < n; k++) mu[k] = obs[k][j];
        if (m->multivariate) {
            double s = 0.2 * pow((double)(n ? n : 1), -1.0 / ((double)np + 4.0)) * range;
            for (size_t k = 0; k < n; k++) sg[k] = s;
        } else {
            univariate_sigmas(mu, n, p->low, p->high, tmp, sg);
        }
        double minsig = range / fmin(100.0, 1.0 + (double)nk);
        for (size_t k = 0; k < n; k++) sg[k] = fmin(fmax(sg[k], minsig), range);
        mu[n] = 0.5 * (p->low + p->high);
        sg[n] = range;
        for (size_t k = 0; range > 0 && k < nk; k++)
            e->lognorm[j * nk + k] = log_mass((p->low - mu[k]) / sg[k], (p->high - mu[k]) / sg[k]);
    }
    free(tmp);
    return T2_OK;
}

/* log of kernel k of parameter j at value v. */
static double kernel_log(const pe *e, const t2__tpe_param *p, size_t j, size_t k, double v)
{
    if (p->kind == T2__HP_CATEGORICAL) return e->logp[e->cat_off[j] + k * (size_t)p->nchoices + (size_t)v];
    if (!(p->high > p->low)) return 0.0; /* minval == maxval: a constant, every kernel agrees */
    double mu = e->mu[j * e->nk + k], s = e->sigma[j * e->nk + k], norm = e->lognorm[j * e->nk + k];
    if (p->kind == T2__HP_INT) return log_mass((v - 0.5 - mu) / s, (v + 0.5 - mu) / s) - norm;
    /* No -log(s): Optuna 3.1 scores a kernel by the standard normal at z (its truncnorm.logpdf
     * leaves out the 1/sigma of a scaled density), so in l(x) and g(x) each kernel weighs in
     * proportion to its bandwidth: the prior and the kernels of isolated points count for more
     * than a tight cluster's. Draws still pick kernels by their plain weights. Measured on the
     * bench functions, this is what makes its search better (docs/config-reference.md, tpe). */
    double z = (v - mu) / s;
    return -0.5 * z * z - LOG_SQRT_2PI - norm;
}

/* log density of the mixture at x: of parameter j alone, or (j == np) of the whole point. */
static double pe_log(const pe *e, const t2__tpe_model *m, size_t j, const double *x, double *terms)
{
    double best = -INFINITY, sum = 0;
    for (size_t k = 0; k < e->nk; k++) {
        double t = e->logw[k];
        if (j < m->np) t += kernel_log(e, &m->p[j], j, k, x[j]);
        else
            for (size_t q = 0; q < m->np; q++) t += kernel_log(e, &m->p[q], q, k, x[q]);
        terms[k] = t;
        if (t > best) best = t;
    }
    if (best == -INFINITY) return best;
    for (size_t k = 0; k < e->nk; k++) sum += exp(terms[k] - best);
    return best + log(sum);
}

static size_t pick_kernel(const pe *e, t2_rng *rng)
{
    double u = t2_rng_uniform_double(rng), acc = 0;
    for (size_t k = 0; k < e->nk; k++) {
        acc += exp(e->logw[k]);
        if (u < acc) return k;
    }
    return e->nk - 1;
}

static double normal(t2_rng *rng)
{
    double u1 = 1.0 - t2_rng_uniform_double(rng), u2 = t2_rng_uniform_double(rng);
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

/* Draws parameter j from kernel k. Truncation by rejection: the centre lies in the range and sigma
 * is at most the range, so at least a third of the draws land inside. */
static double kernel_draw(const pe *e, const t2__tpe_param *p, size_t j, size_t k, t2_rng *rng)
{
    if (p->kind == T2__HP_CATEGORICAL) {
        const double *lp = e->logp + e->cat_off[j] + k * (size_t)p->nchoices;
        double u = t2_rng_uniform_double(rng), acc = 0;
        for (int64_t q = 0; q < p->nchoices; q++) {
            acc += exp(lp[q]);
            if (u < acc) return (double)q;
        }
        return (double)(p->nchoices - 1);
    }
    double mu = e->mu[j * e->nk + k], s = e->sigma[j * e->nk + k], v = mu;
    for (int tries = 0; tries < 100; tries++) {
        double d = mu + s * normal(rng);
        if (d >= p->low && d <= p->high) {
            v = d;
            break;
        }
    }
    if (p->kind == T2__HP_INT) {
        v = floor(v + 0.5);
        v = fmin(fmax(v, (double)p->imin), (double)p->imax);
    }
    return v;
}

int t2__tpe_suggest(const t2__tpe_model *m, const double *const *below, size_t nb, const double *const *above,
                    size_t na, t2_rng *rng, double *x)
{
    pe l, g;
    int rc;
    if (nb < 1) return t2_seterr(T2_EINVAL, "tpe: no observations to fit");
    if ((rc = pe_fit(&l, m, below, nb))) return rc;
    if ((rc = pe_fit(&g, m, above, na))) {
        pe_free(&l);
        return rc;
    }
    size_t np = m->np, nterms = l.nk > g.nk ? l.nk : g.nk;
    double *cand = malloc((np ? np : 1) * sizeof *cand), *terms = malloc(nterms * sizeof *terms);
    double *best = malloc((np + 1) * sizeof *best);
    if (!cand || !terms || !best) {
        rc = t2_seterr(T2_ENOMEM, "tpe: out of memory");
        goto out;
    }
    for (size_t j = 0; j <= np; j++) best[j] = -INFINITY;
    for (int64_t c = 0; c < m->n_candidates; c++) {
        if (m->multivariate) {
            size_t k = pick_kernel(&l, rng);
            for (size_t j = 0; j < np; j++) cand[j] = kernel_draw(&l, &m->p[j], j, k, rng);
            double score = pe_log(&l, m, np, cand, terms) - pe_log(&g, m, np, cand, terms);
            if (c == 0 || score > best[np]) {
                best[np] = score;
                memcpy(x, cand, np * sizeof *x);
            }
            continue;
        }
        for (size_t j = 0; j < np; j++) { /* independent draws and choices per parameter */
            cand[j] = kernel_draw(&l, &m->p[j], j, pick_kernel(&l, rng), rng);
            double score = pe_log(&l, m, j, cand, terms) - pe_log(&g, m, j, cand, terms);
            if (c == 0 || score > best[j]) {
                best[j] = score;
                x[j] = cand[j];
            }
        }
    }
    rc = T2_OK;
out:
    free(cand);
    free(terms);
    free(best);
    pe_free(&l);
    pe_free(&g);
    return rc;
}
