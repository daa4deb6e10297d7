/* tpe.c — searcher.name: tpe, the Tree-structured Parzen Estimator with Optuna's semantics and
 * defaults. Every trial trains to max_length, unless the controller's pruner (searcher.pruner)
 * stops it early after an intermediate validation; the searcher itself never stops a trial. A
 * trial's metric at max_length is one observation; a pruned trial is one too, as in Optuna's
 * TPESampler: its metric at the step it was pruned, ranked after every completed trial (deeper
 * steps first, then by metric). The first n_startup_trials results (completed or pruned) come from
 * random draws (the random searcher's, request for request); after that each new trial splits the
 * results into the best n_below = min(ceil(gamma * n), 25) and the rest, fits a Parzen estimator to
 * each (tpe_parzen.c) and takes the best of n_ei_candidates draws from the good one by l(x)/g(x).
 *
 * Trials are requested as places free up: at most max_concurrent_trials at once (16 when it is 0:
 * this searcher cannot see the slot pool, and every trial asked for early is one chosen knowing
 * less). Trials still running when a new one is chosen count, with their hparams, as results worse
 * than any observed (Optuna's constant_liar), so concurrent trials spread out instead of piling onto
 * the same point.
 *
 * Under a hyperband pruner each trial is sampled from its own bracket's trials alone (their count
 * against n_startup_trials, their results in the split, their running ones as liars), as Optuna's
 * TPESampler does under a HyperbandPruner: a bracket's trials are judged at other steps than
 * another's, and a trial pruned early there says little about one in a patient bracket. The
 * bracket is the pruner's, a hash of the request id (t2__pruner_bracket), known before the draw.
 *
 * Determinism: the draws for request R come from an rng seeded from the experiment seed and R (as
 * every searcher's do), so the state is just the trials' points and results: a restored searcher
 * makes the same choices as the original given the same events. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "pruner.h"
#include "searcher_internal.h"
#include "tpe.h"
#include "t2exp/error.h"

/* running; has its result; ended without one; pruned (its result is the metric at step[r]);
 * reported invalid hparams. The values are the snapshot's: the newer come last so that older
 * snapshots read the same. */
enum { PENDING = 0, DONE = 1, GONE = 2, PRUNED = 3, INVALID = 4 };

typedef struct tpe {
    t2__tpe_model model;
    t2__tpe_space sp;
    int64_t limit;   /* trials asked for at once */
    int64_t invalid; /* trials that reported invalid hparams: replaced, not counted */
    t2__pruner *hyperband; /* searcher.pruner when it is hyperband, for its brackets only; else NULL */
    /* per request id */
    signed char *state;
    double *loss;    /* DONE, PRUNED: the metric as a loss (smaller is better; +inf for NaN/inf) */
    int64_t *step;   /* PRUNED: the length of the validation it was pruned after */
    double *x;       /* np per trial */
    size_t cap;
} tpe;

#define TPE(s) ((tpe *)(s)->impl)

static void destroy(t2__searcher *s)
{
    tpe *t = TPE(s);
    if (!t) return;
    t2__tpe_space_free(&t->sp);
    t2__pruner_free(t->hyperband);
    free(t->state);
    free(t->loss);
    free(t->step);
    free(t->x);
    free(t);
    s->impl = NULL;
}

static int reserve(tpe *t, size_t n)
{
    if (n <= t->cap) return T2_OK;
    size_t cap = t->cap ? t->cap : 16, np = t->model.np ? t->model.np : 1;
    while (cap < n) cap *= 2;
    signed char *st = realloc(t->state, cap);
    if (st) t->state = st;
    double *loss = st ? realloc(t->loss, cap * sizeof *loss) : NULL;
    if (loss) t->loss = loss;
    int64_t *step = loss ? realloc(t->step, cap * sizeof *step) : NULL;
    if (step) t->step = step;
    double *x = step ? realloc(t->x, cap * np * sizeof *x) : NULL;
    if (!x) return t2_seterr(T2_ENOMEM, "searcher: out of memory");
    t->x = x;
    t->cap = cap;
    return T2_OK;
}

static int init(t2__searcher *s)
{
    const t2__searcher_config *c = &s->cfg->searcher;
    if (c->max_trials < 1 || c->max_trials > T2__MAX_TRIALS)
        return t2_seterr(T2_EINVAL, "searcher.max_trials: the tpe searcher needs max_trials in [1, %d], got %" PRId64,
                         T2__MAX_TRIALS, c->max_trials);
    if (c->tpe.n_startup_trials < 1)
        return t2_seterr(T2_EINVAL, "searcher.n_startup_trials: expected a positive integer, got %" PRId64,
                         c->tpe.n_startup_trials);
    if (c->tpe.n_ei_candidates < 1 || !(c->tpe.gamma > 0 && c->tpe.gamma <= 1) || !(c->tpe.prior_weight > 0))
        return t2_seterr(T2_EINVAL, "searcher: tpe needs n_ei_candidates >= 1, gamma in (0, 1], prior_weight > 0");
    tpe *t = calloc(1, sizeof *t);
    if (!t) return t2_seterr(T2_ENOMEM, "searcher: out of memory");
    s->impl = t;
    int rc = t2__tpe_space_init(s->cfg->hparams, &t->sp);
    if (rc) return rc;
    t->model = (t2__tpe_model){.p = t->sp.params, .np = t->sp.np, .prior_weight = c->tpe.prior_weight,
                               .n_candidates = c->tpe.n_ei_candidates, .multivariate = c->tpe.multivariate};
    t->limit = c->max_concurrent_trials > 0 ? c->max_concurrent_trials : 16;
    if (c->pruner.on && c->pruner.hyperband && c->pruner.n_brackets > 1)
        rc = t2__pruner_from_config(&c->pruner, c->smaller_is_better, &t->hyperband);
    return rc;
}

/* Whether request r's result counts for request rid: always, but under hyperband only within
 * rid's bracket b (the caller's t2__pruner_bracket(t->hyperband, rid)). */
static int same_bracket(const tpe *t, int64_t b, int64_t r)
{
    return b < 0 || t2__pruner_bracket(t->hyperband, r) == b;
}

/* The point for request rid from the model: split, fit, choose (into x). */
static int model_point(const t2__searcher *s, tpe *t, int64_t rid, double *x)
{
    size_t n = 0, np = t->model.np;
    t2__tpe_obs *obs = malloc((size_t)(rid ? rid : 1) * sizeof *obs);
    if (!obs) return t2_seterr(T2_ENOMEM, "searcher: out of memory");
    int64_t b = t2__pruner_bracket(t->hyperband, rid);
    for (int64_t r = 0; r < rid; r++)
        if (t->state[r] != GONE && same_bracket(t, b, r)) /* a running or invalid trial: worse than any result */
            obs[n++] = (t2__tpe_obs){.id = r, .loss = t->loss[r], .x = t->x + (size_t)r * np,
                                     .running = t->state[r] == PENDING || t->state[r] == INVALID,
                                     .pruned = t->state[r] == PRUNED,
                                     .step = t->state[r] == PRUNED ? t->step[r] : 0};
    t2_rng rng;
    t2_rng_seed(&rng, t2_hash64(t2__trial_seed(s->seed, rid) ^ UINT64_C(0x7470652d70617273)));
    int rc = t2__tpe_propose(&t->model, s->cfg->searcher.tpe.gamma, obs, n, &rng, x);
    free(obs);
    return rc;
}

/* Requests the next trial: a random draw until n_startup_trials results exist (completed or pruned,
 * as Optuna counts them), the model after. */
static int next_trial(t2__searcher *s, t2__ops *ops)
{
    tpe *t = TPE(s);
    int64_t rid = s->next_request, ndone = 0;
    size_t np = t->model.np;
    int rc = reserve(t, (size_t)rid + 1);
    if (rc) return rc;
    double *x = t->x + (size_t)rid * np;
    t2__val *hp = NULL;
    int64_t b = t2__pruner_bracket(t->hyperband, rid);
    for (int64_t r = 0; r < rid; r++) ndone += (t->state[r] == DONE || t->state[r] == PRUNED) && same_bracket(t, b, r);
    if (ndone < s->cfg->searcher.tpe.n_startup_trials || t2__searcher_point_given(s, rid)) {
        if (!(rc = t2__searcher_sample(s, rid, &hp))) t2__tpe_point_of(&t->sp, hp, x);
    } else if (!(rc = model_point(s, t, rid, x))) {
        rc = t2__tpe_hparams_of(s->cfg->hparams, &t->sp, x, &hp);
    }
    if (rc) return rc;
    t->state[rid] = PENDING;
    t->loss[rid] = 0;
    t->step[rid] = 0;
    return t2__searcher_new_trial(s, hp, s->cfg->searcher.max_length.n, ops, NULL);
}

/* Requests trials while places are free and the plan is not used up. `ending`: the trial whose
 * exit is being handled (not yet in s->ended), or -1. */
static int fill(t2__searcher *s, int ending, t2__ops *ops)
{
    tpe *t = TPE(s);
    int64_t target = s->cfg->searcher.max_trials + t->invalid;
    int rc = T2_OK;
    while (!rc && s->next_request < target && s->next_request - t2__idset_count(&s->ended) - ending < t->limit)
        rc = next_trial(s, ops);
    return rc;
}

static int start(t2__searcher *s, t2__ops *ops)
{
    return fill(s, 0, ops);
}

/* A running trial's result: CLOSE, and the metric as a loss kept under `state`. */
static int record(t2__searcher *s, int64_t request_id, double metric, int state, t2__ops *ops)
{
    tpe *t = TPE(s);
    int rc = t2__ops_close(ops, request_id);
    if (rc) return rc;
    double loss = s->cfg->searcher.smaller_is_better ? metric : -metric;
    t->loss[request_id] = isfinite(loss) ? loss : INFINITY; /* NaN (or inf) is the worst result */
    t->state[request_id] = (signed char)state;
    return T2_OK;
}

static int validation(t2__searcher *s, int64_t request_id, double metric, int64_t length, t2__ops *ops)
{
    tpe *t = TPE(s);
    if (length < s->cfg->searcher.max_length.n || t->state[request_id] != PENDING) return T2_OK;
    return record(s, request_id, metric, DONE, ops);
}

/* Optuna keeps a pruned trial's last intermediate value as its result; the next trial is requested
 * when it exits, as after a completed one. */
static int pruned(t2__searcher *s, int64_t request_id, double metric, int64_t length, t2__ops *ops)
{
    tpe *t = TPE(s);
    if (t->state[request_id] != PENDING) return T2_OK; /* it has its result (CLOSE sent) already */
    int rc = record(s, request_id, metric, PRUNED, ops);
    if (!rc) t->step[request_id] = length;
    return rc;
}

static int exited(t2__searcher *s, int64_t request_id, t2__ops *ops)
{
    tpe *t = TPE(s);
    /* Stopped before max_length without a result; a pruned trial keeps its own. */
    if (t->state[request_id] == PENDING) t->state[request_id] = GONE;
    return fill(s, 1, ops);
}

/* A trial that reported invalid hparams stays in the model as a point worse than every result (as
 * a running trial counts, for good): with nothing there, l(x)/g(x) was largest in the invalid part
 * of the space, which tpe then proposed again and again until 100 replacements in a row ended the
 * experiment (Optuna ranks a pruned trial without values last, in the other group, too). It is
 * not a result: n_startup_trials still counts completed and pruned trials only. */
static int failed(t2__searcher *s, int64_t request_id, int invalid_hparams, t2__ops *ops)
{
    tpe *t = TPE(s);
    if (t->state[request_id] == PENDING) t->state[request_id] = invalid_hparams ? INVALID : GONE;
    if (invalid_hparams) t->invalid++; /* a replacement is drawn: it does not count against max_trials */
    return fill(s, 1, ops);
}

static double progress(const t2__searcher *s)
{
    int64_t done = t2__idset_count(&s->ended) - TPE(s)->invalid;
    return (double)done / (double)s->cfg->searcher.max_trials;
}

static int64_t total(const t2__searcher *s)
{
    return s->cfg->searcher.max_trials;
}

/* [[request id, step], ...] of the pruned trials in request order, or NULL when there are none
 * (*out stays NULL): then the snapshot is written exactly as before pruning existed. T2_ENOMEM. */
static int pruned_steps(const t2__searcher *s, t2__val **out)
{
    const tpe *t = TPE(s);
    t2__val *list = NULL;
    *out = NULL;
    for (int64_t r = 0; r < s->next_request; r++) {
        if (t->state[r] != PRUNED) continue;
        t2__val *pair = t2__val_list();
        int rc = pair && (list || (list = t2__val_list())) ? T2_OK : T2_ENOMEM;
        if (!rc) rc = t2__val_list_append(pair, t2__val_int(r));
        if (!rc) rc = t2__val_list_append(pair, t2__val_int(t->step[r]));
        if (rc) t2__val_free(pair);
        else rc = t2__val_list_append(list, pair);
        if (rc) {
            t2__val_free(list);
            return T2_ENOMEM;
        }
    }
    *out = list;
    return T2_OK;
}

/* {"invalid": N, "trials": [[state, loss or null, x...], ...]} by request id, and, only when some
 * trial was pruned (state 3), "pruned": [[request id, step], ...]. A snapshot written before
 * pruning existed is one without pruned trials, so it reads the same. */
static int snapshot(const t2__searcher *s, t2__val **out)
{
    const tpe *t = TPE(s);
    size_t np = t->model.np;
    t2__val *m = t2__val_map(), *list = t2__val_list(), *steps = NULL;
    int rc = m && list ? T2_OK : T2_ENOMEM;
    for (int64_t r = 0; !rc && r < s->next_request; r++) {
        t2__val *row = t2__val_list();
        if (!row) rc = T2_ENOMEM;
        if (!rc) rc = t2__val_list_append(row, t2__val_int(t->state[r]));
        int result = (t->state[r] == DONE || t->state[r] == PRUNED) && isfinite(t->loss[r]);
        if (!rc) rc = t2__val_list_append(row, result ? t2__val_double(t->loss[r]) : t2__val_null());
        for (size_t j = 0; !rc && j < np; j++) rc = t2__val_list_append(row, t2__val_double(t->x[(size_t)r * np + j]));
        if (rc) t2__val_free(row);
        else rc = t2__val_list_append(list, row);
    }
    if (!rc) rc = t2__val_map_set(m, "invalid", t2__val_int(t->invalid));
    if (!rc) {
        rc = t2__val_map_set(m, "trials", list);
        list = NULL;
    }
    if (!rc && !(rc = pruned_steps(s, &steps)) && steps) {
        rc = t2__val_map_set(m, "pruned", steps);
        steps = NULL;
    }
    t2__val_free(list);
    t2__val_free(steps);
    if (rc) {
        t2__val_free(m);
        return t2_seterr(T2_ENOMEM, "searcher: out of memory");
    }
    *out = m;
    return T2_OK;
}

/* One row of the snapshot, checked against the search space. */
static int restore_row(tpe *t, int64_t r, const t2__val *row)
{
    size_t np = t->model.np;
    if (row->kind != T2__VAL_LIST || row->n != np + 2 || row->items[0]->kind != T2__VAL_INT ||
        row->items[0]->i < PENDING || row->items[0]->i > INVALID)
        return t2_seterr(T2_EFORMAT, "searcher state: state.trials[%" PRId64 "] must be [state, loss, point...]", r);
    t->state[r] = (signed char)row->items[0]->i;
    t->loss[r] = INFINITY;
    t->step[r] = 0; /* a pruned trial's comes from state.pruned */
    if (row->items[1]->kind != T2__VAL_NULL && t2__state_num(row->items[1], "a trial's loss", &t->loss[r]))
        return T2_EFORMAT;
    for (size_t j = 0; j < np; j++) {
        int rc = t2__state_num(row->items[2 + j], "a trial's point", &t->x[(size_t)r * np + j]);
        if (rc) return rc;
    }
    if (!t2__tpe_point_valid(&t->sp, t->x + (size_t)r * np))
        return t2_seterr(T2_EFORMAT, "searcher state: state.trials[%" PRId64 "] has a point outside the search space", r);
    return T2_OK;
}

/* state.pruned (absent: no trial was pruned): one [request id, step] per trial whose row says
 * PRUNED, in request order, and nothing else. */
static int restore_steps(tpe *t, int64_t n, const t2__val *state)
{
    const t2__val *list = t2__val_map_get(state, "pruned");
    int64_t npruned = 0, last = -1;
    for (int64_t r = 0; r < n; r++) npruned += t->state[r] == PRUNED;
    if (!list && !npruned) return T2_OK;
    if (!list || list->kind != T2__VAL_LIST || (int64_t)list->n != npruned)
        return t2_seterr(T2_EFORMAT, "searcher state: state.pruned must list the step of each of the %" PRId64
                         " pruned trials", npruned);
    for (size_t k = 0; k < list->n; k++) {
        const t2__val *e = list->items[k];
        if (e->kind != T2__VAL_LIST || e->n != 2 || e->items[0]->kind != T2__VAL_INT ||
            e->items[1]->kind != T2__VAL_INT || e->items[0]->i <= last || e->items[0]->i >= n ||
            t->state[e->items[0]->i] != PRUNED || e->items[1]->i < 0)
            return t2_seterr(T2_EFORMAT, "searcher state: state.pruned[%zu] must be [request id, step] of a pruned "
                             "trial, in request order, with a step >= 0", k);
        last = e->items[0]->i;
        t->step[last] = e->items[1]->i;
    }
    return T2_OK;
}

/* Builds the trials into fresh arrays and swaps them in only when every row is good, so that a
 * refused state leaves the searcher as it was. */
static int restore(t2__searcher *s, const t2__val *state)
{
    tpe *t = TPE(s), fresh = *t;
    const t2__val *list;
    int64_t invalid;
    int rc;
    if ((rc = t2__state_int(state, "invalid", 0, s->next_request, "state", &invalid)) ||
        (rc = t2__state_list(state, "trials", "state", &list)))
        return rc;
    if ((int64_t)list->n != s->next_request)
        return t2_seterr(T2_EFORMAT, "searcher state: state.trials must have one entry per requested trial");
    fresh.state = NULL;
    fresh.loss = fresh.x = NULL;
    fresh.step = NULL;
    fresh.cap = 0;
    rc = reserve(&fresh, list->n + 1);
    for (size_t r = 0; !rc && r < list->n; r++) rc = restore_row(&fresh, (int64_t)r, list->items[r]);
    if (!rc) rc = restore_steps(&fresh, (int64_t)list->n, state);
    if (rc) {
        free(fresh.state);
        free(fresh.loss);
        free(fresh.step);
        free(fresh.x);
        return rc;
    }
    free(t->state);
    free(t->loss);
    free(t->step);
    free(t->x);
    t->state = fresh.state;
    t->loss = fresh.loss;
    t->step = fresh.step;
    t->x = fresh.x;
    t->cap = fresh.cap;
    t->invalid = invalid;
    return T2_OK;
}

const t2__searcher_vt t2__tpe_vt = {
    .name = "tpe", .init = init, .destroy = destroy, .start = start, .validation = validation,
    .pruned = pruned, .exited = exited, .failed = failed, .progress = progress, .total = total,
    .snapshot = snapshot, .restore = restore,
};
