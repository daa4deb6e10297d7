/* searcher.c — the part of every searcher that is the same: the op list, request ids and trial
 * seeds, event checks, the SHUTDOWN rule, and the envelope of state snapshots. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "searcher_internal.h"
#include "t2exp/error.h"
#include "t2exp/rng.h"

#define STATE_VERSION 1
#define IDSET_SPREAD_MAX (1 << 26) /* ids above a snapshot's watermark: 8 MiB of window at most */

/* Trials that call their hyperparameters invalid are replaced by new draws (Determined's
 * InvalidHP), which do not count against max_trials. When nothing in the space passes the trial's
 * checks that would draw forever (it drew thousands of trials a second), so this many
 * replacements in a row, with no trial in between that validated or ended otherwise, end the
 * search with an error instead. */
#define INVALID_STREAK_MAX 100

/* ---------- op list ---------- */

int t2__ops_push(t2__ops *ops, t2__search_op op)
{
    if (!ops) {
        t2__val_free(op.hparams);
        return t2_seterr(T2_EINVAL, "searcher: NULL op list");
    }
    if (ops->n == ops->cap) {
        size_t cap = ops->cap ? ops->cap * 2 : 16;
        t2__search_op *v = cap > SIZE_MAX / sizeof *v ? NULL : realloc(ops->v, cap * sizeof *v);
        if (!v) {
            t2__val_free(op.hparams);
            return t2_seterr(T2_ENOMEM, "searcher: out of memory");
        }
        ops->v = v;
        ops->cap = cap;
    }
    ops->v[ops->n++] = op;
    return T2_OK;
}

/* Drops the ops appended after `n` (an event that failed half-way must not leave half its answer). */
static void ops_truncate(t2__ops *ops, size_t n)
{
    while (ops->n > n) t2__val_free(ops->v[--ops->n].hparams);
}

void t2__ops_clear(t2__ops *ops)
{
    if (ops) ops_truncate(ops, 0);
}

void t2__ops_free(t2__ops *ops)
{
    if (!ops) return;
    t2__ops_clear(ops);
    free(ops->v);
    ops->v = NULL;
    ops->cap = 0;
}

int t2__ops_train(t2__ops *ops, int64_t request_id, int64_t length)
{
    return t2__ops_push(ops, (t2__search_op){.kind = T2__OP_TRAIN, .request_id = request_id, .length = length});
}

int t2__ops_close(t2__ops *ops, int64_t request_id)
{
    return t2__ops_push(ops, (t2__search_op){.kind = T2__OP_CLOSE, .request_id = request_id});
}

/* ---------- id sets ---------- */

static int bit_at(const t2__idset *set, int64_t id)
{
    uint64_t off = (uint64_t)(id - set->base);
    return off / 64 < set->nwords && (set->bits[off / 64] >> (off % 64) & 1);
}

int t2__idset_has(const t2__idset *set, int64_t id)
{
    return id < set->low || bit_at(set, id);
}

int t2__idset_add(t2__idset *set, int64_t id)
{
    if (t2__idset_has(set, id)) return 0;
    uint64_t off = (uint64_t)(id - set->base);
    if (off / 64 >= set->nwords) {
        size_t need = (size_t)(off / 64) + 1, cap = set->nwords ? set->nwords * 2 : 4;
        if (cap < need) cap = need;
        uint64_t *b = cap > SIZE_MAX / sizeof *b ? NULL : realloc(set->bits, cap * sizeof *b);
        if (!b) return t2_seterr(T2_ENOMEM, "searcher: out of memory");
        memset(b + set->nwords, 0, (cap - set->nwords) * sizeof *b);
        set->bits = b;
        set->nwords = cap;
    }
    set->bits[off / 64] |= (uint64_t)1 << (off % 64);
    set->n++;
    /* The watermark swallows the run of ids from it; the window drops the words below it once they
     * are half of it (so each word is moved a bounded number of times). */
    while (bit_at(set, set->low)) {
        set->low++;
        set->n--;
    }
    size_t below = (size_t)((set->low - set->base) / 64);
    if (below >= 16 && below * 2 >= set->nwords) {
        memmove(set->bits, set->bits + below, (set->nwords - below) * sizeof *set->bits);
        memset(set->bits + set->nwords - below, 0, below * sizeof *set->bits);
        set->base += (int64_t)below * 64;
    }
    return 1;
}

int64_t t2__idset_count(const t2__idset *set)
{
    return set->low + (int64_t)set->n;
}

void t2__idset_free(t2__idset *set)
{
    if (!set) return;
    free(set->bits);
    *set = (t2__idset){0};
}

int t2__idset_to_val(const t2__idset *set, t2__val **out)
{
    t2__val *m = t2__val_map(), *ids = t2__val_list();
    int rc = m && ids ? T2_OK : T2_ENOMEM;
    /* Word by word, from the set bits: an id near INT64_MAX is no end of a loop to overflow. */
    for (size_t w = 0; !rc && w < set->nwords; w++)
        for (uint64_t b = set->bits[w]; !rc && b; b &= b - 1) {
            int64_t id = set->base + (int64_t)(64 * w) + __builtin_ctzll(b);
            if (id > set->low) rc = t2__val_list_append(ids, t2__val_int(id));
        }
    if (!rc && !(rc = t2__val_map_set(m, "low", t2__val_int(set->low)))) {
        rc = t2__val_map_set(m, "ids", ids);
        ids = NULL;
    }
    t2__val_free(ids);
    if (rc) {
        t2__val_free(m);
        return t2_seterr(T2_ENOMEM, "searcher: out of memory");
    }
    *out = m;
    return T2_OK;
}

int t2__idset_from_val(const t2__val *v, int64_t limit, const char *what, t2__idset *out)
{
    t2__idset set = {0};
    const t2__val *ids;
    int64_t low;
    int rc;
    if ((rc = t2__state_int(v, "low", 0, limit, what, &low)) || (rc = t2__state_list(v, "ids", what, &ids))) return rc;
    set.low = low;
    set.base = low - low % 64;
    for (size_t k = 0; k < ids->n; k++) {
        const t2__val *e = ids->items[k];
        /* The window's memory follows the ids' spread above the watermark: a snapshot's one id of
         * 2^33 took 1 GiB (review). A search leaves at most its max_trials (and their invalid
         * draws' replacements) open above it, far fewer than IDSET_SPREAD_MAX. */
        if (e->kind != T2__VAL_INT || e->i <= low || e->i >= limit || e->i - low > IDSET_SPREAD_MAX ||
            (k && e->i <= ids->items[k - 1]->i)) {
            t2__idset_free(&set);
            return t2_seterr(T2_EFORMAT, "searcher state: %s.ids must be increasing request ids in (%" PRId64
                                         ", %" PRId64 "), at most %d above the first", what, low, limit, IDSET_SPREAD_MAX);
        }
        if ((rc = t2__idset_add(&set, e->i)) < 0) {
            t2__idset_free(&set);
            return rc;
        }
    }
    *out = set;
    return T2_OK;
}

/* ---------- state helpers ---------- */

int t2__state_int(const t2__val *map, const char *key, int64_t min, int64_t max, const char *what, int64_t *out)
{
    const t2__val *v = t2__val_map_get(map, key);
    if (!v || v->kind != T2__VAL_INT || v->i < min || v->i > max)
        return t2_seterr(T2_EFORMAT, "searcher state: %s.%s must be an integer in [%" PRId64 ", %" PRId64 "]", what,
                         key, min, max);
    *out = v->i;
    return T2_OK;
}

int t2__state_list(const t2__val *map, const char *key, const char *what, const t2__val **out)
{
    const t2__val *v = t2__val_map_get(map, key);
    if (!v || v->kind != T2__VAL_LIST) return t2_seterr(T2_EFORMAT, "searcher state: %s.%s must be a list", what, key);
    *out = v;
    return T2_OK;
}

int t2__state_num(const t2__val *v, const char *what, double *out)
{
    if (!v || t2__val_as_double(v, out) || !isfinite(*out))
        return t2_seterr(T2_EFORMAT, "searcher state: %s must be a finite number", what);
    return T2_OK;
}

/* ---------- trials ---------- */

uint64_t t2__trial_seed(uint64_t experiment_seed, int64_t request_id)
{
    return t2_hash64(experiment_seed ^ t2_hash64((uint64_t)request_id));
}

/* Sets into map every value of point (nested maps merged key by key), copies. */
static int overlay(t2__val *map, const t2__val *point)
{
    int rc = T2_OK;
    for (size_t k = 0; !rc && k < point->n; k++) {
        const t2__val *v = point->items[k];
        t2__val *at = t2__val_map_get(map, point->keys[k]);
        if (v->kind == T2__VAL_MAP && at && at->kind == T2__VAL_MAP) {
            rc = overlay(at, v);
            continue;
        }
        t2__val *c = t2__val_copy(v);
        rc = c ? t2__val_map_set(map, point->keys[k], c) : t2_seterr(T2_ENOMEM, "searcher: out of memory");
    }
    return rc;
}

int t2__searcher_point_given(const t2__searcher *s, int64_t request_id)
{
    const t2__val *p = s->cfg->searcher.points;
    return p && request_id >= 0 && (uint64_t)request_id < (uint64_t)p->n;
}

int t2__searcher_sample(const t2__searcher *s, int64_t request_id, t2__val **out)
{
    t2_rng rng;
    /* A different stream from the trial's own seed, so the trial's first draws (weight init) are
     * not the same numbers that picked its hparams. */
    t2_rng_seed(&rng, t2_hash64(t2__trial_seed(s->seed, request_id) ^ UINT64_C(0x68706172616d7321)));
    int rc = t2__hparam_sample(s->cfg->hparams, &rng, out);
    /* searcher.points_to_evaluate: the first trials take the given values; what a point leaves out
     * is the draw above, so a trial's values never depend on how many points there are. */
    if (!rc && t2__searcher_point_given(s, request_id) &&
        (rc = overlay(*out, s->cfg->searcher.points->items[request_id]))) {
        t2__val_free(*out);
        *out = NULL;
    }
    return rc;
}

/* CREATE for the next request id (hparams taken over; NULL: sampled), then TRAIN to length when it
 * is >= 0. The id is taken only when every op is in. */
static int push_create(t2__searcher *s, t2__val *hparams, int64_t parent, int64_t length, t2__ops *ops,
                       int64_t *request_id)
{
    int64_t rid = s->next_request;
    int rc;
    if (!hparams && (rc = t2__searcher_sample(s, rid, &hparams))) return rc;
    rc = t2__ops_push(ops, (t2__search_op){.kind = T2__OP_CREATE, .request_id = rid, .hparams = hparams,
                                           .seed = t2__trial_seed(s->seed, rid), .parent_request_id = parent});
    if (!rc && length >= 0) rc = t2__ops_train(ops, rid, length);
    if (rc) return rc;
    s->next_request++;
    if (request_id) *request_id = rid;
    return T2_OK;
}

int t2__searcher_new_request(t2__searcher *s, t2__val *hparams, t2__ops *ops, int64_t *request_id)
{
    return push_create(s, hparams, -1, -1, ops, request_id);
}

int t2__searcher_new_trial(t2__searcher *s, t2__val *hparams, int64_t length, t2__ops *ops, int64_t *request_id)
{
    return push_create(s, hparams, -1, length, ops, request_id);
}

int t2__searcher_new_child(t2__searcher *s, t2__val *hparams, int64_t parent, int64_t length, t2__ops *ops,
                           int64_t *request_id)
{
    return push_create(s, hparams, parent, length, ops, request_id);
}

/* ---------- lifecycle ---------- */

int t2__searcher_create(const t2__config *cfg, uint64_t experiment_seed, t2__searcher **out)
{
    const t2__searcher_vt *vt = NULL;
    if (!out) return t2_seterr(T2_EINVAL, "searcher: NULL argument");
    *out = NULL;
    if (!cfg || !cfg->hparams) return t2_seterr(T2_EINVAL, "searcher: NULL config");
    switch (cfg->searcher.name) {
    case T2__SEARCH_SINGLE: vt = &t2__single_vt; break;
    case T2__SEARCH_GRID: vt = &t2__grid_vt; break;
    case T2__SEARCH_RANDOM: vt = &t2__random_vt; break;
    case T2__SEARCH_ADAPTIVE_ASHA: vt = &t2__asha_vt; break;
    case T2__SEARCH_TPE: vt = &t2__tpe_vt; break;
    case T2__SEARCH_PBT: vt = &t2__pbt_vt; break;
    case T2__SEARCH_CUSTOM: vt = &t2__custom_vt; break;
    }
    if (!vt) return t2_seterr(T2_EINVAL, "searcher.name: unknown searcher %d", (int)cfg->searcher.name);
    if (cfg->searcher.max_length.n < 1)
        return t2_seterr(T2_EINVAL, "searcher.max_length: expected a positive length, got %" PRId64,
                         cfg->searcher.max_length.n);
    t2__searcher *s = calloc(1, sizeof *s);
    if (!s) return t2_seterr(T2_ENOMEM, "searcher: out of memory");
    s->cfg = cfg;
    s->seed = experiment_seed;
    s->vt = vt;
    int rc = vt->init(s);
    if (rc) {
        t2__searcher_free(s);
        return rc;
    }
    *out = s;
    return T2_OK;
}

void t2__searcher_free(t2__searcher *s)
{
    if (!s) return;
    if (s->vt && s->vt->destroy) s->vt->destroy(s);
    t2__idset_free(&s->ended);
    free(s);
}

/* Every event ends here: on failure the ops it appended are dropped; on success, if every trial
 * requested so far has ended, the search is over. Implementations always request the next trial
 * in the same event that frees a place, so "all ended" cannot happen while work remains. */
static int finish(t2__searcher *s, t2__ops *ops, size_t mark, int rc)
{
    if (rc) {
        ops_truncate(ops, mark);
        return rc;
    }
    if (s->started && !s->shutdown && t2__idset_count(&s->ended) == s->next_request) {
        if ((rc = t2__ops_push(ops, (t2__search_op){.kind = T2__OP_SHUTDOWN, .request_id = -1}))) {
            ops_truncate(ops, mark);
            return rc;
        }
        s->shutdown = 1;
    }
    return T2_OK;
}

/* 1: go on; 0: the trial has ended, ignore the event; <0: error. */
static int check_event(const t2__searcher *s, int64_t request_id, const t2__ops *ops, const char *event)
{
    if (!s || !ops) return t2_seterr(T2_EINVAL, "searcher: NULL argument");
    if (!s->started) return t2_seterr(T2_ESTATE, "searcher: %s before the search started", event);
    if (request_id < 0 || request_id >= s->next_request)
        return t2_seterr(T2_EINVAL, "searcher: %s for request %" PRId64 ", which the searcher never created", event,
                         request_id);
    return !t2__idset_has(&s->ended, request_id);
}

/* Where a searcher with rollback goes back to if the event fails (NULL for the others). */
static int save_point(t2__searcher *s, t2__val **before)
{
    *before = NULL;
    s->rolled_back = 0;
    return s->vt->rollback ? t2__searcher_snapshot(s, before) : T2_OK;
}

/* After an event: on failure, the state before it again (the event's message kept). */
static int roll_back(t2__searcher *s, t2__val *before, int rc)
{
    if (rc && before) {
        char msg[1400];
        snprintf(msg, sizeof msg, "%s", t2_errmsg());
        s->rolled_back = t2__searcher_restore(s, before) == T2_OK;
        t2_seterr(rc, "%s", msg);
    }
    t2__val_free(before);
    return rc;
}

int t2__searcher_rolled_back(const t2__searcher *s)
{
    return s && s->rolled_back;
}

void t2__searcher_mark_rolled_back(t2__searcher *s)
{
    if (s) s->rolled_back = 1;
}

int t2__searcher_started(const t2__searcher *s)
{
    return s && s->started;
}

int t2__searcher_start(t2__searcher *s, t2__ops *ops)
{
    if (!s || !ops) return t2_seterr(T2_EINVAL, "searcher: NULL argument");
    if (s->started) return t2_seterr(T2_ESTATE, "searcher: started twice");
    size_t mark = ops->n;
    t2__val *before;
    int rc = save_point(s, &before);
    if (rc) return rc;
    s->started = 1;
    rc = s->vt->start(s, ops);
    if (rc) s->started = 0;
    return roll_back(s, before, finish(s, ops, mark, rc));
}

int t2__searcher_on_trial_created(t2__searcher *s, int64_t request_id, t2__ops *ops)
{
    int rc = check_event(s, request_id, ops, "trial created");
    return rc < 0 ? rc : T2_OK; /* no searcher here needs it: trials are counted when requested */
}

int t2__searcher_on_validation(t2__searcher *s, int64_t request_id, double metric, int64_t length, t2__ops *ops)
{
    int rc = check_event(s, request_id, ops, "validation");
    if (rc <= 0) return rc;
    size_t mark = ops->n;
    t2__val *before;
    if ((rc = save_point(s, &before))) return rc;
    s->invalid_streak = 0;
    return roll_back(s, before, finish(s, ops, mark, s->vt->validation(s, request_id, metric, length, ops)));
}

int t2__searcher_no_pruner(const t2__searcher *s)
{
    return t2_seterr(T2_EINVAL, "searcher: the %s searcher does not take a pruner (searcher.pruner: only single, "
                     "grid, random and tpe do)", s->vt->name);
}

/* A searcher without a pruner refuses the event only after the checks every event gets, so that a
 * report about an ended trial is ignored as always. A pruned trial validated, so it ends a streak
 * of invalid ones (as on_validation does). */
int t2__searcher_on_trial_pruned(t2__searcher *s, int64_t request_id, double metric, int64_t length, t2__ops *ops)
{
    int rc = check_event(s, request_id, ops, "trial pruned");
    if (rc <= 0) return rc;
    if (!s->vt->pruned) return t2__searcher_no_pruner(s);
    if (length < 0)
        return t2_seterr(T2_EINVAL, "searcher: trial pruned for request %" PRId64 " at length %" PRId64
                         ", which is negative", request_id, length);
    size_t mark = ops->n;
    s->invalid_streak = 0;
    return finish(s, ops, mark, s->vt->pruned(s, request_id, metric, length, ops));
}

int t2__searcher_on_trial_exited(t2__searcher *s, int64_t request_id, t2__ops *ops)
{
    int rc = check_event(s, request_id, ops, "trial exited");
    if (rc <= 0) return rc;
    size_t mark = ops->n;
    t2__val *before;
    if ((rc = save_point(s, &before))) return rc;
    s->invalid_streak = 0;
    rc = s->vt->exited(s, request_id, ops);
    if (!rc && (rc = t2__idset_add(&s->ended, request_id)) > 0) rc = T2_OK;
    return roll_back(s, before, finish(s, ops, mark, rc));
}

int t2__searcher_on_trial_failed(t2__searcher *s, int64_t request_id, int invalid_hparams, t2__ops *ops)
{
    int rc = check_event(s, request_id, ops, "trial failed");
    if (rc <= 0) return rc;
    size_t mark = ops->n;
    t2__val *before;
    if ((rc = save_point(s, &before))) return rc;
    rc = s->vt->failed(s, request_id, invalid_hparams != 0, ops);
    if (!rc && (rc = t2__idset_add(&s->ended, request_id)) > 0) rc = T2_OK;
    int replaced = 0;
    for (size_t i = mark; i < ops->n; i++) replaced |= ops->v[i].kind == T2__OP_CREATE;
    s->invalid_streak = invalid_hparams && replaced ? s->invalid_streak + 1 : 0;
    if (!rc && s->invalid_streak >= INVALID_STREAK_MAX)
        rc = t2_seterr(T2_EHPARAM,
                       "searcher: %d trials in a row called their hyperparameters invalid (T2_EHPARAM) and were "
                       "replaced by new draws; stopping instead of drawing forever: no point of the search space "
                       "seems to pass the trial's checks (each trial's log says what it refused)",
                       INVALID_STREAK_MAX);
    return roll_back(s, before, finish(s, ops, mark, rc));
}

int t2__searcher_has_ended(const t2__searcher *s, int64_t request_id)
{
    return s && t2__idset_has(&s->ended, request_id);
}

double t2__searcher_progress(const t2__searcher *s)
{
    if (!s || !s->started) return 0.0;
    if (s->shutdown) return 1.0;
    double p = s->vt->progress(s);
    return p < 0 ? 0.0 : p > 1 ? 1.0 : p;
}

int64_t t2__searcher_total_trials(const t2__searcher *s)
{
    return s ? s->vt->total(s) : 0;
}

/* ---------- snapshot / restore ---------- */

int t2__searcher_snapshot(const t2__searcher *s, t2__val **state)
{
    char seed[24];
    t2__val *m = NULL, *ended = NULL, *impl = NULL;
    int rc;
    if (!s || !state) return t2_seterr(T2_EINVAL, "searcher: NULL argument");
    *state = NULL;
    /* The seed as hex text: JSON readers elsewhere (SQLite, Python) lose bits above 2^53. */
    snprintf(seed, sizeof seed, "%016" PRIx64, s->seed);
    if ((rc = t2__idset_to_val(&s->ended, &ended)) || (rc = s->vt->snapshot(s, &impl))) goto fail;
    rc = T2_ENOMEM;
    if (!(m = t2__val_map())) goto fail;
    if ((rc = t2__val_map_set(m, "version", t2__val_int(STATE_VERSION))) ||
        (rc = t2__val_map_set(m, "searcher", t2__val_string(s->vt->name))) ||
        (rc = t2__val_map_set(m, "experiment_seed", t2__val_string(seed))) ||
        (rc = t2__val_map_set(m, "started", t2__val_bool(s->started))) ||
        (rc = t2__val_map_set(m, "shutdown", t2__val_bool(s->shutdown))) ||
        (rc = t2__val_map_set(m, "next_request", t2__val_int(s->next_request))) ||
        (rc = t2__val_map_set(m, "invalid_streak", t2__val_int(s->invalid_streak))))
        goto fail;
    rc = t2__val_map_set(m, "ended", ended);
    ended = NULL;
    if (rc) goto fail;
    rc = t2__val_map_set(m, "state", impl);
    impl = NULL;
    if (rc) goto fail;
    *state = m;
    return T2_OK;
fail:
    if (rc == T2_ENOMEM) t2_seterr(T2_ENOMEM, "searcher: out of memory");
    t2__val_free(m);
    t2__val_free(ended);
    t2__val_free(impl);
    return rc;
}

static int state_bool(const t2__val *map, const char *key, int *out)
{
    const t2__val *v = t2__val_map_get(map, key);
    if (!v || v->kind != T2__VAL_BOOL) return t2_seterr(T2_EFORMAT, "searcher state: %s must be true or false", key);
    *out = v->b;
    return T2_OK;
}

int t2__searcher_restore(t2__searcher *s, const t2__val *state)
{
    char seed[24];
    int64_t version, next, streak = 0;
    int started = 0, shutdown = 0, rc; /* set by state_bool on success; zero for -Wmaybe-uninitialized */
    t2__idset ended = {0};
    if (!s || !state) return t2_seterr(T2_EINVAL, "searcher: NULL argument");
    if (state->kind != T2__VAL_MAP) return t2_seterr(T2_EFORMAT, "searcher state: expected a map");
    if ((rc = t2__state_int(state, "version", STATE_VERSION, STATE_VERSION, "state", &version))) return rc;
    const t2__val *name = t2__val_map_get(state, "searcher"), *sd = t2__val_map_get(state, "experiment_seed");
    if (!name || name->kind != T2__VAL_STRING || strcmp(name->s, s->vt->name) != 0)
        return t2_seterr(T2_EINVAL, "searcher state: saved by the %s searcher, but the config names %s",
                         name && name->kind == T2__VAL_STRING ? name->s : "(unknown)", s->vt->name);
    snprintf(seed, sizeof seed, "%016" PRIx64, s->seed);
    if (!sd || sd->kind != T2__VAL_STRING || strcmp(sd->s, seed) != 0)
        return t2_seterr(T2_EINVAL, "searcher state: saved with experiment seed %s, but this searcher has %s",
                         sd && sd->kind == T2__VAL_STRING ? sd->s : "(unknown)", seed);
    if ((rc = state_bool(state, "started", &started)) || (rc = state_bool(state, "shutdown", &shutdown)) ||
        (rc = t2__state_int(state, "next_request", 0, INT64_MAX - 1, "state", &next)))
        return rc;
    /* Absent from snapshots written before the limit existed: a streak of 0. */
    if (t2__val_map_get(state, "invalid_streak") &&
        (rc = t2__state_int(state, "invalid_streak", 0, INVALID_STREAK_MAX, "state", &streak)))
        return rc;
    const t2__val *ev = t2__val_map_get(state, "ended"), *impl = t2__val_map_get(state, "state");
    if (!ev || ev->kind != T2__VAL_MAP || !impl || impl->kind != T2__VAL_MAP)
        return t2_seterr(T2_EFORMAT, "searcher state: missing the ended set or the searcher's own state");
    if ((rc = t2__idset_from_val(ev, next, "ended", &ended))) return rc;
    /* next_request first: the implementation checks its request ids against it. */
    int64_t old_next = s->next_request;
    s->next_request = next;
    if ((rc = s->vt->restore(s, impl))) {
        s->next_request = old_next;
        t2__idset_free(&ended);
        return rc;
    }
    t2__idset_free(&s->ended);
    s->ended = ended;
    s->started = started;
    s->shutdown = shutdown;
    s->invalid_streak = streak;
    return T2_OK;
}
