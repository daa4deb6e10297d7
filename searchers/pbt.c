/* pbt.c — population-based training (Jaderberg et al. 2017; the semantics of Ray Tune's
 * PopulationBasedTraining, synchronous variant). A population of population_size trials trains in
 * rounds: in round r every live member trains to r x length_per_round and validates. When the
 * whole population has reported round r, the bottom quantile is closed and each closed member is
 * replaced by a new trial that starts from the latest checkpoint of a top-quantile member (its
 * parent: full state, so it continues at the parent's length exactly as the parent would) with the
 * parent's hparams explored: every numeric one multiplied by one of perturb_factors (int rounded,
 * all clamped to their range) or, with resample_probability, drawn again from its distribution;
 * categorical ones drawn again with that probability, else kept. Everyone then trains to the next
 * round. After num_rounds every member is closed.
 *
 * Waiting for the whole round makes the search independent of the order in which validations
 * arrive: the same seed gives the same search at any max_concurrent_trials. Every random choice
 * of round r comes from an rng seeded by the experiment seed and r, so the state needs no rng.
 * A member that fails (or stops by itself) counts as the worst result of the round it was in, so
 * it is one of the bottom quantile and replaced (without a CLOSE); global_batch_size is never perturbed (a checkpoint's loader
 * position is in batches of the parent's size). */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "searcher_internal.h"
#include "t2exp/error.h"
#include "t2exp/rng.h"

typedef struct member {
    int64_t rid;
    t2__val *hparams; /* the member's hparams (for its children) */
    double metric;    /* this round's result, smaller is better (NAN: failed) */
    int reported;     /* reported this round (or ended, counting as NAN) */
    int dead;         /* ended without being closed: replaced at the round's end */
} member;

typedef struct pbt {
    int64_t pop, rounds, round; /* round: the one being trained (1-based); rounds + 1 when done */
    member *m;
} pbt;

static const double DEFAULT_FACTORS[] = {0.8, 1.2};

static int64_t quantile_count(const t2__searcher *s)
{
    const t2__searcher_config *sc = &s->cfg->searcher;
    int64_t pop = sc->pbt.population_size, q = (int64_t)ceil((double)pop * sc->pbt.quantile_fraction);
    if (q > pop / 2) q = pop / 2; /* top and bottom never overlap */
    return q < 1 ? 1 : q;
}

static int64_t round_len(const t2__searcher *s, int64_t r)
{
    return s->cfg->searcher.pbt.length_per_round.n * r;
}

static int init(t2__searcher *s)
{
    const t2__searcher_config *sc = &s->cfg->searcher;
    if (sc->pbt.population_size < 2 || sc->pbt.population_size > 10000)
        return t2_seterr(T2_EINVAL, "searcher.population_size: pbt needs 2 to 10000 members, got %" PRId64,
                         sc->pbt.population_size);
    if (sc->pbt.num_rounds < 1) return t2_seterr(T2_EINVAL, "searcher.num_rounds: pbt needs num_rounds >= 1, got %" PRId64, sc->pbt.num_rounds);
    if (sc->pbt.length_per_round.n < 1)
        return t2_seterr(T2_EINVAL, "searcher.length_per_round: expected a positive length, got %" PRId64,
                         sc->pbt.length_per_round.n);
    if (sc->max_length.unit != sc->pbt.length_per_round.unit ||
        sc->max_length.n != sc->pbt.length_per_round.n * sc->pbt.num_rounds)
        return t2_seterr(T2_EINVAL, "searcher.max_length: pbt needs max_length = num_rounds x length_per_round");
    for (size_t k = 0; k < s->cfg->hparams->nchildren; k++)
        if (s->cfg->hparams->children[k].kind == T2__HP_NESTED)
            return t2_seterr(T2_EINVAL, "hyperparameters.%s: pbt does not support nested hyperparameters yet",
                             s->cfg->hparams->children[k].path);
    pbt *p = calloc(1, sizeof *p);
    if (p) p->m = calloc((size_t)sc->pbt.population_size, sizeof *p->m);
    if (!p || !p->m) {
        free(p);
        return t2_seterr(T2_ENOMEM, "searcher: out of memory");
    }
    p->pop = sc->pbt.population_size;
    p->rounds = sc->pbt.num_rounds;
    p->round = 1;
    s->impl = p;
    return T2_OK;
}

static void destroy(t2__searcher *s)
{
    pbt *p = s->impl;
    if (!p) return;
    for (int64_t k = 0; k < p->pop; k++) t2__val_free(p->m[k].hparams);
    free(p->m);
    free(p);
    s->impl = NULL;
}

static int start(t2__searcher *s, t2__ops *ops)
{
    pbt *p = s->impl;
    for (int64_t k = 0; k < p->pop; k++) {
        t2__val *hp = NULL, *copy;
        int rc = t2__searcher_sample(s, s->next_request, &hp);
        if (rc) return rc;
        if (!(copy = t2__val_copy(hp))) {
            t2__val_free(hp);
            return t2_seterr(T2_ENOMEM, "searcher: out of memory");
        }
        if ((rc = t2__searcher_new_trial(s, hp, round_len(s, 1), ops, &p->m[k].rid))) {
            t2__val_free(copy);
            return rc;
        }
        p->m[k] = (member){.rid = p->m[k].rid, .hparams = copy, .metric = NAN};
    }
    return T2_OK;
}

static member *find(pbt *p, int64_t rid)
{
    for (int64_t k = 0; k < p->pop; k++)
        if (p->m[k].rid == rid) return &p->m[k];
    return NULL; /* a member closed earlier */
}

/* One explored value for leaf h from the parent's value pv. fresh: a whole new draw, of which
 * the leaf's value is taken when resampling (so every draw sequence has a fixed shape). */
static t2__val *explore_leaf(const t2__searcher *s, const t2__hparam *h, const t2__val *pv, const t2__val *fresh,
                             t2_rng *rng)
{
    const t2__searcher_config *sc = &s->cfg->searcher;
    const double *f = sc->pbt.nperturb_factors ? sc->pbt.perturb_factors : DEFAULT_FACTORS;
    size_t nf = sc->pbt.nperturb_factors ? sc->pbt.nperturb_factors : 2;
    int resample = t2_rng_uniform_double(rng) < sc->pbt.resample_probability;
    double factor = f[t2_rng_below(rng, nf)];
    const t2__val *fv = t2__val_map_get(fresh, h->name);
    double v;
    if (h->kind == T2__HP_CONST || strcmp(h->path, "global_batch_size") == 0 || !pv) return t2__val_copy(pv ? pv : fv);
    if (resample || h->kind == T2__HP_CATEGORICAL) return t2__val_copy(resample ? fv : pv);
    if (t2__val_as_double(pv, &v)) return t2__val_copy(pv); /* not a number (cannot happen for a sampled value) */
    v *= factor;
    if (h->kind == T2__HP_INT) {
        /* The ends are taken as integers: (double)INT64_MAX is 2^63, which converts back to no int64. */
        v = round(v);
        return t2__val_int(v <= (double)h->imin ? h->imin : v >= (double)h->imax ? h->imax : (int64_t)v);
    }
    double lo = h->minval, hi = h->maxval;
    if (h->kind == T2__HP_LOG) { /* a base below 1 turns the ends round */
        lo = fmin(pow(h->base, h->minval), pow(h->base, h->maxval));
        hi = fmax(pow(h->base, h->minval), pow(h->base, h->maxval));
    }
    return t2__val_double(v < lo ? lo : v > hi ? hi : v);
}

static int explore(const t2__searcher *s, const t2__val *parent, t2_rng *rng, t2__val **out)
{
    const t2__hparam *root = s->cfg->hparams;
    t2__val *fresh = NULL, *hp = t2__val_map();
    int rc = hp ? t2__hparam_sample(root, rng, &fresh) : t2_seterr(T2_ENOMEM, "searcher: out of memory");
    for (size_t k = 0; !rc && k < root->nchildren; k++) {
        const t2__hparam *h = &root->children[k];
        t2__val *v = explore_leaf(s, h, t2__val_map_get(parent, h->name), fresh, rng);
        rc = v ? t2__val_map_set(hp, h->name, v) : t2_seterr(T2_ENOMEM, "searcher: out of memory");
    }
    t2__val_free(fresh);
    if (rc) {
        t2__val_free(hp);
        return rc;
    }
    *out = hp;
    return T2_OK;
}

/* a ranks before b: smaller metric, failed (NaN or dead) last, ties by slot (deterministic). */
static int before(const pbt *p, int64_t a, int64_t b)
{
    const member *x = &p->m[a], *y = &p->m[b];
    int xn = isnan(x->metric) || x->dead, yn = isnan(y->metric) || y->dead;
    if (xn != yn) return xn < yn;
    if (!xn && x->metric != y->metric) return x->metric < y->metric;
    return a < b;
}

/* The whole population has reported the current round: exploit and explore, then train on. */
static int end_round(t2__searcher *s, t2__ops *ops)
{
    pbt *p = s->impl;
    int rc = T2_OK;
    if (p->round >= p->rounds) {
        for (int64_t k = 0; k < p->pop && !rc; k++)
            if (!p->m[k].dead) rc = t2__ops_close(ops, p->m[k].rid);
        p->round = p->rounds + 1;
        return rc;
    }
    int64_t *order = malloc((size_t)p->pop * sizeof *order), q = quantile_count(s), live = 0;
    if (!order) return t2_seterr(T2_ENOMEM, "searcher: out of memory");
    for (int64_t k = 0; k < p->pop; k++) {
        order[k] = k;
        live += !p->m[k].dead && !isnan(p->m[k].metric);
    }
    /* Insertion sort: a population is tens of members, and this needs no comparator global. */
    for (int64_t i = 1; i < p->pop; i++)
        for (int64_t j = i; j > 0 && before(p, order[j], order[j - 1]); j--) {
            int64_t t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    if (live == 0) { /* nobody left to learn from: the search is over */
        free(order);
        for (int64_t k = 0; k < p->pop && !rc; k++)
            if (!p->m[k].dead) rc = t2__ops_close(ops, p->m[k].rid);
        p->round = p->rounds + 1;
        return rc;
    }
    int64_t top = q < live ? q : live;
    t2_rng rng;
    t2_rng_seed(&rng, t2_hash64(s->seed ^ t2_hash64((uint64_t)p->round ^ UINT64_C(0x7062742d726f756e))));
    int64_t next = round_len(s, p->round + 1);
    /* The replacements first, then the survivors' next round: a parent's op list then still
     * ends at the length its child starts from (what preview and the tests read). */
    for (int64_t i = 0; i < p->pop && !rc; i++) {
        member *m = &p->m[order[i]];
        if (!(m->dead || isnan(m->metric) || i >= p->pop - q)) continue;
        const member *parent = &p->m[order[t2_rng_below(&rng, (uint64_t)top)]];
        t2__val *hp = NULL, *copy = NULL;
        int64_t rid;
        if (!m->dead && (rc = t2__ops_close(ops, m->rid))) break;
        if ((rc = explore(s, parent->hparams, &rng, &hp))) break;
        if (!(copy = t2__val_copy(hp))) {
            t2__val_free(hp);
            rc = t2_seterr(T2_ENOMEM, "searcher: out of memory");
            break;
        }
        if ((rc = t2__searcher_new_child(s, hp, parent->rid, next, ops, &rid))) {
            t2__val_free(copy);
            break;
        }
        t2__val_free(m->hparams);
        *m = (member){.rid = rid, .hparams = copy, .reported = 2}; /* 2: new, not a survivor */
    }
    for (int64_t i = 0; i < p->pop && !rc; i++)
        if (p->m[order[i]].reported != 2) rc = t2__ops_train(ops, p->m[order[i]].rid, next);
    free(order);
    if (rc) return rc;
    for (int64_t k = 0; k < p->pop; k++) {
        p->m[k].reported = 0;
        p->m[k].metric = NAN;
    }
    p->round++;
    return T2_OK;
}

static int round_complete(const pbt *p)
{
    for (int64_t k = 0; k < p->pop; k++)
        if (!p->m[k].reported) return 0;
    return 1;
}

static int validation(t2__searcher *s, int64_t request_id, double metric, int64_t length, t2__ops *ops)
{
    pbt *p = s->impl;
    member *m = find(p, request_id);
    if (!m || m->reported || p->round > p->rounds || length < round_len(s, p->round)) return T2_OK;
    m->reported = 1;
    m->metric = s->cfg->searcher.smaller_is_better ? metric : -metric;
    return round_complete(p) ? end_round(s, ops) : T2_OK;
}

/* A member that ended without a CLOSE: the worst of its round, replaced at the round's end. */
static int ended(t2__searcher *s, int64_t request_id, t2__ops *ops)
{
    pbt *p = s->impl;
    member *m = find(p, request_id);
    if (!m || p->round > p->rounds) return T2_OK;
    m->dead = 1;
    m->metric = NAN;
    if (m->reported) return T2_OK; /* its round was complete for it already */
    m->reported = 1;
    return round_complete(p) ? end_round(s, ops) : T2_OK;
}

static int exited(t2__searcher *s, int64_t request_id, t2__ops *ops)
{
    return ended(s, request_id, ops);
}

static int failed(t2__searcher *s, int64_t request_id, int invalid_hparams, t2__ops *ops)
{
    (void)invalid_hparams;
    return ended(s, request_id, ops);
}

static double progress(const t2__searcher *s)
{
    const pbt *p = s->impl;
    if (p->round > p->rounds) return 1.0;
    int64_t n = 0;
    for (int64_t k = 0; k < p->pop; k++) n += p->m[k].reported;
    return ((double)(p->round - 1) + (double)n / (double)p->pop) / (double)p->rounds;
}

static int64_t total(const t2__searcher *s)
{
    const pbt *p = s->impl;
    return p->pop + (p->rounds - 1) * quantile_count(s);
}

/* {"round": r, "members": [{"rid", "reported", "dead", "metric" (null: none or NaN), "hparams"}]} */
static int snapshot(const t2__searcher *s, t2__val **out)
{
    const pbt *p = s->impl;
    t2__val *st = t2__val_map(), *list = t2__val_list();
    int rc = st && list ? T2_OK : T2_ENOMEM;
    for (int64_t k = 0; !rc && k < p->pop; k++) {
        const member *m = &p->m[k];
        t2__val *e = t2__val_map(), *hp = m->hparams ? t2__val_copy(m->hparams) : t2__val_null();
        if (!e || !hp) {
            t2__val_free(e);
            t2__val_free(hp);
            rc = T2_ENOMEM;
            break;
        }
        if ((rc = t2__val_map_set(e, "rid", t2__val_int(m->rid))) ||
            (rc = t2__val_map_set(e, "reported", t2__val_bool(m->reported))) ||
            (rc = t2__val_map_set(e, "dead", t2__val_bool(m->dead))) ||
            (rc = t2__val_map_set(e, "metric", isnan(m->metric) ? t2__val_null() : t2__val_double(m->metric)))) {
            t2__val_free(hp);
            t2__val_free(e);
            break;
        }
        if ((rc = t2__val_map_set(e, "hparams", hp)) || (rc = t2__val_list_append(list, e))) {
            if (rc) t2__val_free(e);
            break;
        }
    }
    if (!rc && !(rc = t2__val_map_set(st, "round", t2__val_int(p->round)))) {
        rc = t2__val_map_set(st, "members", list);
        list = NULL;
    }
    t2__val_free(list);
    if (rc) {
        t2__val_free(st);
        return t2_seterr(T2_ENOMEM, "searcher: out of memory");
    }
    *out = st;
    return T2_OK;
}

static int restore(t2__searcher *s, const t2__val *state)
{
    pbt *p = s->impl;
    const t2__val *list;
    int64_t round;
    int rc;
    if ((rc = t2__state_int(state, "round", 1, p->rounds + 1, "pbt", &round)) ||
        (rc = t2__state_list(state, "members", "pbt", &list)))
        return rc;
    if ((int64_t)list->n != p->pop)
        return t2_seterr(T2_EFORMAT, "searcher state: pbt.members must list %" PRId64 " members, got %zu", p->pop,
                         list->n);
    member *m = calloc((size_t)p->pop, sizeof *m);
    if (!m) return t2_seterr(T2_ENOMEM, "searcher: out of memory");
    for (int64_t k = 0; !rc && k < p->pop; k++) {
        const t2__val *e = list->items[k];
        const t2__val *rep = e->kind == T2__VAL_MAP ? t2__val_map_get(e, "reported") : NULL;
        const t2__val *dead = e->kind == T2__VAL_MAP ? t2__val_map_get(e, "dead") : NULL;
        const t2__val *met = e->kind == T2__VAL_MAP ? t2__val_map_get(e, "metric") : NULL;
        const t2__val *hp = e->kind == T2__VAL_MAP ? t2__val_map_get(e, "hparams") : NULL;
        if (e->kind != T2__VAL_MAP || !rep || rep->kind != T2__VAL_BOOL || !dead || dead->kind != T2__VAL_BOOL ||
            !met || !hp || (hp->kind != T2__VAL_MAP && hp->kind != T2__VAL_NULL)) {
            rc = t2_seterr(T2_EFORMAT, "searcher state: pbt.members.%" PRId64 " is malformed", k);
            break;
        }
        if ((rc = t2__state_int(e, "rid", 0, s->next_request > 0 ? s->next_request - 1 : 0, "pbt.members", &m[k].rid))) break;
        m[k].reported = rep->b;
        m[k].dead = dead->b;
        m[k].metric = NAN;
        if (met->kind != T2__VAL_NULL && (rc = t2__state_num(met, "pbt.members.metric", &m[k].metric))) break;
        if (hp->kind == T2__VAL_MAP && !(m[k].hparams = t2__val_copy(hp))) rc = t2_seterr(T2_ENOMEM, "searcher: out of memory");
    }
    if (rc) {
        for (int64_t k = 0; k < p->pop; k++) t2__val_free(m[k].hparams);
        free(m);
        return rc;
    }
    for (int64_t k = 0; k < p->pop; k++) t2__val_free(p->m[k].hparams);
    free(p->m);
    p->m = m;
    p->round = round;
    return T2_OK;
}

const t2__searcher_vt t2__pbt_vt = {
    .name = "pbt", .init = init, .destroy = destroy, .start = start, .validation = validation,
    .exited = exited, .failed = failed, .progress = progress, .total = total, .snapshot = snapshot,
    .restore = restore,
};
