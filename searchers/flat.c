/* flat.c — single, grid and random: a fixed plan of trials, each trained to max_length once (or
 * until the controller's pruner stops it: grid and random) and then closed (Determined's
 * random.go/grid.go). The whole plan is requested at start; how many run at once is the
 * controller's business (max_concurrent_trials, slots), so the trials and their hparams do not
 * depend on it. The state is a few counters, so that a snapshot after every event stays cheap with
 * 10,000 trials. */
#include <stdlib.h>
#include <string.h>
#include "searcher_internal.h"
#include "t2exp/error.h"

#define FLAT(s) ((t2__flat *)(s)->impl)

int t2__flat_init(t2__searcher *s, int64_t total, int replace_invalid,
                  int (*point)(const t2__searcher *, int64_t, t2__val **))
{
    t2__flat *f = calloc(1, sizeof *f);
    if (!f) return t2_seterr(T2_ENOMEM, "searcher: out of memory");
    f->total = total;
    f->replace_invalid = replace_invalid;
    f->point = point;
    s->impl = f;
    return T2_OK;
}

void t2__flat_destroy(t2__searcher *s)
{
    t2__flat *f = FLAT(s);
    if (!f) return;
    if (f->data_free) f->data_free(f->data);
    free(f->closing);
    free(f);
    s->impl = NULL;
}

int t2__flat_start(t2__searcher *s, t2__ops *ops)
{
    t2__flat *f = FLAT(s);
    for (int64_t i = 0; i < f->total; i++) {
        t2__val *hp = NULL;
        int rc = f->point(s, s->next_request, &hp);
        if (!rc) rc = t2__searcher_new_trial(s, hp, s->cfg->searcher.max_length.n, ops, NULL);
        if (rc) return rc;
    }
    return T2_OK;
}

static size_t closing_find(const t2__flat *f, int64_t id)
{
    size_t lo = 0, hi = f->nclosing;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (f->closing[mid] < id) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* Sends CLOSE to a trial that is done (once: a repeated report finds it on the closing list). */
static int close_trial(t2__flat *f, int64_t request_id, t2__ops *ops)
{
    size_t at = closing_find(f, request_id);
    if (at < f->nclosing && f->closing[at] == request_id) return T2_OK; /* already closing */
    if (f->nclosing == f->capclosing) {
        size_t cap = f->capclosing ? f->capclosing * 2 : 16;
        int64_t *v = realloc(f->closing, cap * sizeof *v);
        if (!v) return t2_seterr(T2_ENOMEM, "searcher: out of memory");
        f->closing = v;
        f->capclosing = cap;
    }
    int rc = t2__ops_close(ops, request_id);
    if (rc) return rc;
    memmove(f->closing + at + 1, f->closing + at, (f->nclosing - at) * sizeof *f->closing);
    f->closing[at] = request_id;
    f->nclosing++;
    return T2_OK;
}

int t2__flat_validation(t2__searcher *s, int64_t request_id, double metric, int64_t length, t2__ops *ops)
{
    (void)metric; /* nothing here depends on how good a trial is */
    /* Validations before max_length (min_validation_period) need no answer. */
    if (length < s->cfg->searcher.max_length.n) return T2_OK;
    return close_trial(FLAT(s), request_id, ops);
}

/* A pruned trial is done as one that reached max_length: closed, counted when it ends, and not
 * replaced (the plan is max_trials trials, however long each ran). single: its one trial stopped
 * by a rule that needs no other trial (the config allows only those there). */
int t2__flat_pruned(t2__searcher *s, int64_t request_id, double metric, int64_t length, t2__ops *ops)
{
    (void)metric;
    (void)length;
    return close_trial(FLAT(s), request_id, ops);
}

static void closing_remove(t2__flat *f, int64_t id)
{
    size_t at = closing_find(f, id);
    if (at < f->nclosing && f->closing[at] == id) {
        memmove(f->closing + at, f->closing + at + 1, (f->nclosing - at - 1) * sizeof *f->closing);
        f->nclosing--;
    }
}

int t2__flat_exited(t2__searcher *s, int64_t request_id, t2__ops *ops)
{
    (void)ops;
    closing_remove(FLAT(s), request_id);
    return T2_OK;
}

int t2__flat_failed(t2__searcher *s, int64_t request_id, int invalid_hparams, t2__ops *ops)
{
    t2__flat *f = FLAT(s);
    closing_remove(f, request_id);
    if (!invalid_hparams) return T2_OK;
    f->invalid++;
    /* Random search: the trial does not count against max_trials; draw another point. Grid and
     * single have nothing to draw (a grid point is the point), as in Determined. */
    if (!f->replace_invalid) return T2_OK;
    return t2__searcher_new_trial(s, NULL, s->cfg->searcher.max_length.n, ops, NULL);
}

double t2__flat_progress(const t2__searcher *s)
{
    const t2__flat *f = FLAT(s);
    int64_t done = t2__idset_count(&s->ended);
    if (f->replace_invalid) done -= f->invalid; /* replaced trials are not part of the plan */
    return f->total > 0 ? (double)done / (double)f->total : 1.0;
}

int64_t t2__flat_total(const t2__searcher *s)
{
    return FLAT(s)->total;
}

int t2__flat_snapshot(const t2__searcher *s, t2__val **out)
{
    const t2__flat *f = FLAT(s);
    t2__val *m = t2__val_map(), *closing = t2__val_list();
    int rc = m && closing ? T2_OK : T2_ENOMEM;
    for (size_t k = 0; !rc && k < f->nclosing; k++) rc = t2__val_list_append(closing, t2__val_int(f->closing[k]));
    if (!rc) rc = t2__val_map_set(m, "invalid", t2__val_int(f->invalid));
    if (!rc) {
        rc = t2__val_map_set(m, "closing", closing);
        closing = NULL;
    }
    t2__val_free(closing);
    if (rc) {
        t2__val_free(m);
        return t2_seterr(T2_ENOMEM, "searcher: out of memory");
    }
    *out = m;
    return T2_OK;
}

int t2__flat_restore(t2__searcher *s, const t2__val *state)
{
    t2__flat *f = FLAT(s);
    const t2__val *closing;
    int64_t invalid;
    int rc;
    if ((rc = t2__state_int(state, "invalid", 0, s->next_request, "state", &invalid)) ||
        (rc = t2__state_list(state, "closing", "state", &closing)))
        return rc;
    int64_t *v = calloc(closing->n ? closing->n : 1, sizeof *v);
    if (!v) return t2_seterr(T2_ENOMEM, "searcher: out of memory");
    for (size_t k = 0; k < closing->n; k++) {
        const t2__val *e = closing->items[k];
        if (e->kind != T2__VAL_INT || e->i < 0 || e->i >= s->next_request || (k && e->i <= v[k - 1])) {
            free(v);
            return t2_seterr(T2_EFORMAT, "searcher state: state.closing must be increasing request ids");
        }
        v[k] = e->i;
    }
    free(f->closing);
    f->closing = v;
    f->capclosing = closing->n ? closing->n : 1;
    f->nclosing = closing->n;
    f->invalid = invalid;
    return T2_OK;
}
