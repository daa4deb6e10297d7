/* asha_tpe.c — adaptive_asha with `sampler: tpe`: ASHA decides who trains how long, TPE decides
 * what each new trial tries (the idea of BOHB, Falkner et al. 2018, with ASHA's asynchronous
 * rungs instead of synchronous Hyperband).
 *
 * Observations come from ASHA's own rungs: the results at one rung length, pooled over the
 * brackets (a length is a budget, whichever bracket trained to it). The longest length with at
 * least n_startup_trials results is used, because the longer a trial trained the more its metric
 * says about its hparams; while no length has that many, the trial gets the random sampler's draw
 * for its request id, so such trials are exactly those of sampler: random. Results that are
 * ASHA's stand-in for a failure or an early exit (the worst value) are not observations: they say
 * nothing about the hparams' quality (Optuna leaves failed trials out too).
 *
 * A trial's point cannot be recomputed later (it depends on what the rungs held when it was
 * chosen), so the points are part of the state; the draws for request R come from an rng seeded
 * from the experiment seed and R, so a restored searcher chooses as the original did. */
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "asha.h"
#include "tpe.h"
#include "t2exp/error.h"

typedef struct t2__asha_tpe {
    t2__tpe_space sp;
    t2__tpe_model model;
    double *x;  /* np per request id */
    size_t cap; /* request ids x has room for */
} t2__asha_tpe;

int t2__asha_tpe_init(t2__searcher *s)
{
    const t2__searcher_config *c = &s->cfg->searcher;
    t2__asha *a = s->impl;
    /* A config built or changed by a caller is checked here too (the parser checks the file). */
    if (c->tpe.n_startup_trials < 1)
        return t2_seterr(T2_EINVAL, "searcher.n_startup_trials: expected a positive integer, got %" PRId64,
                         c->tpe.n_startup_trials);
    if (c->tpe.n_ei_candidates < 1 || !(c->tpe.gamma > 0 && c->tpe.gamma <= 1) || !(c->tpe.prior_weight > 0))
        return t2_seterr(T2_EINVAL, "searcher: sampler tpe needs n_ei_candidates >= 1, gamma in (0, 1], "
                                    "prior_weight > 0");
    t2__asha_tpe *t = calloc(1, sizeof *t);
    if (!t) return t2_seterr(T2_ENOMEM, "searcher: out of memory");
    a->tpe = t;
    int rc = t2__tpe_space_init(s->cfg->hparams, &t->sp);
    if (rc) return rc;
    t->model = (t2__tpe_model){.p = t->sp.params, .np = t->sp.np, .prior_weight = c->tpe.prior_weight,
                               .n_candidates = c->tpe.n_ei_candidates, .multivariate = c->tpe.multivariate};
    return T2_OK;
}

void t2__asha_tpe_free(t2__asha *a)
{
    if (!a->tpe) return;
    t2__tpe_space_free(&a->tpe->sp);
    free(a->tpe->x);
    free(a->tpe);
    a->tpe = NULL;
}

static int reserve(t2__asha_tpe *t, size_t n)
{
    if (n <= t->cap) return T2_OK;
    size_t cap = t->cap ? t->cap : 64, np = t->sp.np ? t->sp.np : 1;
    while (cap < n) cap *= 2;
    double *x = realloc(t->x, cap * np * sizeof *x);
    if (!x) return t2_seterr(T2_ENOMEM, "searcher: out of memory");
    t->x = x;
    t->cap = cap;
    return T2_OK;
}

/* The results at rung length len over every bracket, one per trial (rungs clamped to length 1
 * can repeat a length within a bracket), into obs. seen: a byte per request id. */
static size_t collect(const t2__asha *a, int64_t len, t2__tpe_obs *obs, unsigned char *seen)
{
    size_t n = 0, np = a->tpe->sp.np;
    memset(seen, 0, a->ntrials ? a->ntrials : 1);
    for (size_t i = 0; i < a->nbrackets; i++)
        for (int64_t r = 0; r < a->b[i].nrungs; r++) {
            const t2__asha_rung *rung = &a->b[i].rungs[r];
            if (rung->length != len) continue;
            const t2__asha_entry *v = rung->flat; /* made by flatten_rungs */
            for (size_t k = 0; k < rung->n; k++) {
                int64_t rid = v[k].request_id;
                if (v[k].metric >= DBL_MAX || seen[rid]) continue;
                seen[rid] = 1;
                obs[n++] = (t2__tpe_obs){.id = rid, .loss = v[k].metric, .x = a->tpe->x + (size_t)rid * np};
            }
        }
    return n;
}

/* Trials with a result below length len and none at it were stopped (or not yet promoted)
 * because ASHA ranked them below those that went on: they join the other group as results worse
 * than any at len, as tpe's running trials do. Without them every observation at a long rung is
 * an already good trial, and l(x)/g(x) would steer away from the good region that g then covers. */
static size_t add_stopped(const t2__asha *a, int64_t len, t2__tpe_obs *obs, size_t n, unsigned char *seen)
{
    size_t np = a->tpe->sp.np;
    for (size_t i = 0; i < a->nbrackets; i++)
        for (int64_t r = 0; r < a->b[i].nrungs; r++) {
            const t2__asha_rung *rung = &a->b[i].rungs[r];
            if (rung->length >= len) continue;
            const t2__asha_entry *v = rung->flat; /* made by flatten_rungs */
            for (size_t k = 0; k < rung->n; k++) {
                int64_t rid = v[k].request_id;
                if (v[k].metric >= DBL_MAX || seen[rid]) continue;
                seen[rid] = 1;
                obs[n++] = (t2__tpe_obs){.id = rid, .loss = INFINITY, .x = a->tpe->x + (size_t)rid * np, .running = 1};
            }
        }
    return n;
}

/* Trials that reported invalid hparams (they left the rungs) join the other group too: without
 * them the invalid part of the space looked as good as the rest to l(x)/g(x), and a search where
 * a third of the space was invalid proposed it until 100 replacements in a row ended it. */
static size_t add_invalid(const t2__asha *a, t2__tpe_obs *obs, size_t n, unsigned char *seen)
{
    size_t np = a->tpe->sp.np;
    for (size_t rid = 0; rid < a->ntrials; rid++)
        if ((a->trials[rid].flags & T2__AT_INVALID) && !seen[rid]) {
            seen[rid] = 1;
            obs[n++] = (t2__tpe_obs){.id = (int64_t)rid, .loss = INFINITY, .x = a->tpe->x + rid * np, .running = 1};
        }
    return n;
}

/* The observations at the longest rung length with at least `need` results, the trials stopped
 * below it and the invalid ones; *ndone: the results at that length (fewer than `need` when no
 * length has enough). */
static size_t observations(const t2__asha *a, int64_t need, t2__tpe_obs *obs, unsigned char *seen, size_t *ndone)
{
    int64_t below = INT64_MAX;
    for (;;) {
        int64_t len = -1;
        for (size_t i = 0; i < a->nbrackets; i++)
            for (int64_t r = 0; r < a->b[i].nrungs; r++)
                if (a->b[i].rungs[r].length < below && a->b[i].rungs[r].length > len) len = a->b[i].rungs[r].length;
        *ndone = 0;
        if (len < 0) return 0;
        size_t n = collect(a, len, obs, seen);
        if ((int64_t)n >= need) {
            *ndone = n;
            return add_invalid(a, obs, add_stopped(a, len, obs, n, seen), seen);
        }
        below = len;
    }
}

/* Every rung's entries in order (asha_rung.c), for collect and add_stopped. T2_ENOMEM. */
static int flatten_rungs(t2__asha *a)
{
    for (size_t i = 0; i < a->nbrackets; i++)
        for (int64_t r = 0; r < a->b[i].nrungs; r++)
            if (!t2__asha_rung_flat(&a->b[i].rungs[r]) && a->b[i].rungs[r].n)
                return t2_seterr(T2_ENOMEM, "searcher: out of memory");
    return T2_OK;
}

int t2__asha_tpe_hparams(t2__searcher *s, int64_t rid, t2__val **out)
{
    t2__asha *a = s->impl;
    t2__asha_tpe *t = a->tpe;
    int64_t need = s->cfg->searcher.tpe.n_startup_trials;
    int rc = reserve(t, (size_t)rid + 1);
    if (!rc) rc = flatten_rungs(a);
    if (rc) return rc;
    double *x = t->x + (size_t)rid * t->sp.np;
    t2__tpe_obs *obs = malloc((a->ntrials ? a->ntrials : 1) * sizeof *obs);
    unsigned char *seen = malloc(a->ntrials ? a->ntrials : 1);
    if (!obs || !seen) {
        free(obs);
        free(seen);
        return t2_seterr(T2_ENOMEM, "searcher: out of memory");
    }
    size_t ndone, n = observations(a, need, obs, seen, &ndone);
    if ((int64_t)ndone < need || t2__searcher_point_given(s, rid)) {
        if (!(rc = t2__searcher_sample(s, rid, out))) t2__tpe_point_of(&t->sp, *out, x);
    } else {
        t2_rng rng;
        /* The tpe searcher's stream for the same request id: the two make the same draws from the
         * same observations. */
        t2_rng_seed(&rng, t2_hash64(t2__trial_seed(s->seed, rid) ^ UINT64_C(0x7470652d70617273)));
        rc = t2__tpe_propose(&t->model, s->cfg->searcher.tpe.gamma, obs, n, &rng, x);
        if (!rc) rc = t2__tpe_hparams_of(s->cfg->hparams, &t->sp, x, out);
    }
    free(obs);
    free(seen);
    return rc;
}

/* "points": [[x...], ...], one per request id. */
int t2__asha_tpe_snapshot(const t2__searcher *s, t2__val *map)
{
    const t2__asha *a = s->impl;
    size_t np = a->tpe->sp.np;
    t2__val *list = t2__val_list();
    int rc = list ? T2_OK : T2_ENOMEM;
    for (size_t r = 0; !rc && r < a->ntrials; r++) {
        t2__val *row = t2__val_list();
        if (!row) rc = T2_ENOMEM;
        for (size_t j = 0; !rc && j < np; j++) rc = t2__val_list_append(row, t2__val_double(a->tpe->x[r * np + j]));
        if (rc) t2__val_free(row);
        else rc = t2__val_list_append(list, row);
    }
    if (rc) {
        t2__val_free(list);
        return T2_ENOMEM;
    }
    return t2__val_map_set(map, "points", list);
}

int t2__asha_tpe_read(const t2__searcher *s, const t2__val *state, double **points)
{
    const t2__asha *a = s->impl;
    const t2__val *list;
    size_t np = a->tpe->sp.np;
    int rc = t2__state_list(state, "points", "state", &list);
    if (rc) return rc;
    if ((int64_t)list->n != s->next_request)
        return t2_seterr(T2_EFORMAT, "searcher state: state.points must have one entry per requested trial");
    double *x = malloc((list->n ? list->n : 1) * (np ? np : 1) * sizeof *x);
    if (!x) return t2_seterr(T2_ENOMEM, "searcher: out of memory");
    for (size_t r = 0; r < list->n; r++) {
        const t2__val *row = list->items[r];
        if (row->kind != T2__VAL_LIST || row->n != np) {
            free(x);
            return t2_seterr(T2_EFORMAT, "searcher state: state.points[%zu] must list %zu numbers", r, np);
        }
        for (size_t j = 0; j < np; j++)
            if ((rc = t2__state_num(row->items[j], "a trial's point", &x[r * np + j]))) {
                free(x);
                return rc;
            }
        if (!t2__tpe_point_valid(&a->tpe->sp, x + r * np)) {
            free(x);
            return t2_seterr(T2_EFORMAT, "searcher state: state.points[%zu] lies outside the search space", r);
        }
    }
    *points = x;
    return T2_OK;
}

void t2__asha_tpe_take(t2__asha *a, double *points, size_t n)
{
    free(a->tpe->x);
    a->tpe->x = points;
    a->tpe->cap = n ? n : 1;
}
