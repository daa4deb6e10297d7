/* asha.c — the decisions of one ASHA bracket: where a validation goes in its rung, who is
 * promoted (or, with stop_once, who goes on and who stops), when a new trial is requested and
 * when the trials left behind in the rungs are closed. The rules are Determined's; the comments
 * say which. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "asha.h"
#include "t2exp/error.h"

#define WORST DBL_MAX /* Determined's ashaExitedMetricValue */

static t2__asha *A(const t2__searcher *s) { return s->impl; }

int t2__asha_new_trial(t2__searcher *s, size_t bracket, t2__ops *ops)
{
    t2__asha *a = A(s);
    t2__asha_bracket *b = &a->b[bracket];
    if (a->ntrials == a->cap) {
        size_t cap = a->cap ? a->cap * 2 : 64;
        t2__asha_trial *t = realloc(a->trials, cap * sizeof *t);
        if (!t) return t2_seterr(T2_ENOMEM, "searcher: out of memory");
        a->trials = t;
        a->cap = cap;
    }
    t2__val *hp = NULL; /* NULL: the random sampler's draw */
    int rc = a->tpe ? t2__asha_tpe_hparams(s, s->next_request, &hp) : T2_OK;
    if (rc) return rc;
    rc = t2__searcher_new_trial(s, hp, b->rungs[0].length, ops, NULL);
    if (rc) return rc;
    a->trials[a->ntrials++] = (t2__asha_trial){.bracket = (int32_t)bracket, .rung = 0, .flags = T2__AT_PENDING};
    b->ntrials++;
    b->rungs[0].outstanding++;
    return T2_OK;
}

static ptrdiff_t rung_insert(t2__asha_rung *r, int64_t rid, double metric, int after_equal, int promoted)
{
    return t2__asha_rung_insert(r, rid, metric, after_equal, promoted);
}

static int64_t trunc_div(size_t n, double divisor)
{
    return (int64_t)((double)n / divisor); /* Go's int(float64(n) / divisor) */
}

/* Promotion ASHA (asha.go promotionsAsync): with one more result in the rung, the number of
 * trials that should have gone on, floor(n / divisor), stays or grows by one. The new trial goes
 * on at once if it ranks inside that number; otherwise, if the number grew, the trial now at the
 * edge goes on unless it already has. Returns the request id to promote, -1 for none, or
 * T2_ENOMEM (< -1). */
static int64_t promotion(t2__asha_rung *r, int64_t rid, double metric, double divisor)
{
    int64_t old_num = trunc_div(r->n, divisor), num = trunc_div(r->n + 1, divisor);
    /* The index first, to know whether it is promoted before inserting. */
    int now = (int64_t)t2__asha_rung_rank(r, metric, 1) < num;
    if (rung_insert(r, rid, metric, 1, now) < 0) return T2_ENOMEM;
    if (now) return rid;
    if (num != old_num && !t2__asha_rung_at(r, (size_t)old_num)->promoted) {
        t2__asha_rung_promote(r, (size_t)old_num);
        return t2__asha_rung_at(r, (size_t)old_num)->request_id;
    }
    return -1;
}

/* asha.go closeOutRungs: once every trial of the bracket has reported at rung 0, a rung whose
 * lower rungs and itself have nothing outstanding can promote no one else, so its unpromoted
 * trials are closed. It runs after every result from then on: a rung unchanged since it was last
 * gone through is skipped (what it closed then stays closed, and a trial's flags only ever add
 * reasons to skip it), which made the last third of a large search quadratic before. */
static int close_out(t2__searcher *s, t2__asha_bracket *b, t2__ops *ops)
{
    t2__asha *a = A(s);
    for (int64_t r = 0; r < b->nrungs; r++) {
        t2__asha_rung *rung = &b->rungs[r];
        if (rung->outstanding > 0) break;
        if (rung->closed_gen == rung->gen) continue;
        const t2__asha_entry *v = t2__asha_rung_flat(rung);
        if (!v && rung->n) return t2_seterr(T2_ENOMEM, "searcher: out of memory");
        for (size_t k = 0; k < rung->n; k++) {
            t2__asha_trial *t = &a->trials[v[k].request_id];
            if (v[k].promoted || (t->flags & (T2__AT_CLOSE_SENT | T2__AT_ENDED | T2__AT_EARLY_EXIT))) continue;
            int rc = t2__ops_close(ops, v[k].request_id);
            if (rc) return rc;
            t->flags |= T2__AT_CLOSE_SENT;
        }
        rung->closed_gen = rung->gen;
    }
    return T2_OK;
}

/* The trial can take no more work: it failed or exited, or was closed. Determined only has the
 * first case here; a closed trial can be picked for promotion too when an invalid-hparams trial
 * leaves a rung after it was closed out (the rung's count drops and grows again), and gets the
 * same treatment. */
static int gone(const t2__asha_trial *t)
{
    return (t->flags & (T2__AT_EARLY_EXIT | T2__AT_CLOSE_SENT | T2__AT_ENDED)) != 0;
}

static int64_t valid_trials(const t2__asha_bracket *b)
{
    return b->ntrials - b->invalid;
}

/* asha.go promoteAsync: the trial reported `metric` at its rung. */
static int promote(t2__searcher *s, int64_t rid, double metric, t2__ops *ops)
{
    t2__asha *a = A(s);
    t2__asha_trial *t = &a->trials[rid];
    t2__asha_bracket *b = &a->b[t->bracket];
    int64_t r = t->rung;
    int rc, trained = 0;
    b->rungs[r].outstanding--;
    t->flags &= ~(uint32_t)T2__AT_PENDING;
    if (r == b->nrungs - 1) {
        if (rung_insert(&b->rungs[r], rid, metric, 1, 0) < 0) return t2_seterr(T2_ENOMEM, "searcher: out of memory");
        if (!gone(t)) {
            if ((rc = t2__ops_close(ops, rid))) return rc;
            t->flags |= T2__AT_CLOSE_SENT;
        }
    } else {
        int64_t pid = promotion(&b->rungs[r], rid, metric, a->divisor);
        if (pid < -1) return t2_seterr(T2_ENOMEM, "searcher: out of memory");
        if (pid >= 0) {
            t2__asha_trial *p = &a->trials[pid];
            p->rung = (int32_t)(r + 1);
            b->rungs[r + 1].outstanding++;
            /* A promoted trial that is gone behaves as if it had run and reported the worst metric. */
            if (gone(p)) return promote(s, pid, WORST, ops);
            if ((rc = t2__ops_train(ops, pid, b->rungs[r + 1].length))) return rc;
            p->flags |= T2__AT_PENDING;
            trained = 1;
        }
    }
    /* Every result that does not send a trial on frees a place: fill it until max_trials. */
    if (!trained && valid_trials(b) < b->max_trials && (rc = t2__asha_new_trial(s, (size_t)t->bracket, ops)))
        return rc;
    if ((int64_t)b->rungs[0].n == b->max_trials) return close_out(s, b, ops);
    return T2_OK;
}

/* asha_stopping.go: the trial is ranked in its rung as soon as it reports; it goes on (without
 * pausing) while it is in the top floor(n / divisor) of the results so far — at least the best
 * one — and stops otherwise. A validation past several rung lengths is ranked in each. */
static int stop_or_continue(t2__searcher *s, int64_t rid, double metric, int64_t length, t2__ops *ops)
{
    t2__asha *a = A(s);
    t2__asha_trial *t = &a->trials[rid];
    t2__asha_bracket *b = &a->b[t->bracket];
    int rc;
    b->rungs[t->rung].outstanding--;
    t->flags &= ~(uint32_t)T2__AT_PENDING;
    for (;;) {
        t2__asha_rung *rung = &b->rungs[t->rung];
        ptrdiff_t at = rung_insert(rung, rid, metric, 0, 0);
        if (at < 0) return t2_seterr(T2_ENOMEM, "searcher: out of memory");
        int64_t go_on = trunc_div(rung->n, a->divisor);
        if (go_on < 1) go_on = 1;
        if (t->rung == b->nrungs - 1 || at >= go_on) break;
        t2__asha_rung_promote(rung, (size_t)at);
        t->rung++;
        if (length < b->rungs[t->rung].length) {
            if ((rc = t2__ops_train(ops, rid, b->rungs[t->rung].length))) return rc;
            b->rungs[t->rung].outstanding++;
            t->flags |= T2__AT_PENDING;
            return T2_OK;
        }
    }
    if ((rc = t2__ops_close(ops, rid))) return rc;
    t->flags |= T2__AT_CLOSE_SENT;
    if (valid_trials(b) < b->max_trials) return t2__asha_new_trial(s, (size_t)t->bracket, ops);
    return T2_OK;
}

/* Lower is better inside; NaN (a diverged trial) is the worst and infinities are clamped, so
 * every stored metric is a finite number JSON can hold. */
static double internal_metric(const t2__searcher *s, double metric)
{
    if (isnan(metric)) return WORST;
    double m = s->cfg->searcher.smaller_is_better ? metric : -metric;
    return m > WORST ? WORST : m < -WORST ? -WORST : m;
}

int t2__asha_validation(t2__searcher *s, int64_t rid, double metric, int64_t length, t2__ops *ops)
{
    t2__asha *a = A(s);
    t2__asha_trial *t = &a->trials[rid];
    /* Only the validation that completes the trial's TRAIN op counts; earlier ones
     * (min_validation_period) and repeats after it carry no decision. */
    if (!(t->flags & T2__AT_PENDING) || length < a->b[t->bracket].rungs[t->rung].length) return T2_OK;
    double m = internal_metric(s, metric);
    return a->stop_once ? stop_or_continue(s, rid, m, length, ops) : promote(s, rid, m, ops);
}

/* A trial that is gone without a decision from us (failed, or exited on its own). */
static int early_exit(t2__searcher *s, int64_t rid, t2__ops *ops)
{
    t2__asha *a = A(s);
    t2__asha_trial *t = &a->trials[rid];
    t2__asha_bracket *b = &a->b[t->bracket];
    t->flags |= T2__AT_EARLY_EXIT;
    if (!(t->flags & T2__AT_PENDING)) return T2_OK; /* already ranked where it stopped */
    if (!a->stop_once) return promote(s, rid, WORST, ops);
    /* asha_stopping.go: ranked last in its rung, never sent further; its place is refilled. */
    t->flags &= ~(uint32_t)T2__AT_PENDING;
    b->rungs[t->rung].outstanding--;
    if (rung_insert(&b->rungs[t->rung], rid, WORST, 0, 0) < 0) return t2_seterr(T2_ENOMEM, "searcher: out of memory");
    if (valid_trials(b) < b->max_trials) return t2__asha_new_trial(s, (size_t)t->bracket, ops);
    return T2_OK;
}

int t2__asha_exited(t2__searcher *s, int64_t rid, t2__ops *ops)
{
    t2__asha *a = A(s);
    t2__asha_trial *t = &a->trials[rid];
    int rc = T2_OK;
    if (!(t->flags & T2__AT_CLOSE_SENT)) rc = early_exit(s, rid, ops);
    t = &a->trials[rid]; /* early_exit may have grown the table */
    t->flags |= T2__AT_ENDED;
    a->b[t->bracket].completed++;
    return rc;
}

static int remove_from_rungs(t2__asha_bracket *b, int64_t rid, int64_t top)
{
    int rc = T2_OK;
    for (int64_t r = 0; r <= top && r < b->nrungs && !rc; r++) rc = t2__asha_rung_remove(&b->rungs[r], rid);
    return rc;
}

int t2__asha_failed(t2__searcher *s, int64_t rid, int invalid_hparams, t2__ops *ops)
{
    t2__asha *a = A(s);
    t2__asha_trial *t = &a->trials[rid];
    if (!invalid_hparams) {
        int rc = early_exit(s, rid, ops);
        t = &a->trials[rid];
        t->flags |= T2__AT_ENDED;
        a->b[t->bracket].completed++;
        return rc;
    }
    /* Determined's InvalidHP: the trial leaves no trace in the rungs and does not count against
     * max_trials; a replacement is drawn in the same bracket. */
    t2__asha_bracket *b = &a->b[t->bracket];
    size_t bracket = (size_t)t->bracket;
    if (t->flags & T2__AT_PENDING) b->rungs[t->rung].outstanding--;
    t->flags = (t->flags & ~(uint32_t)T2__AT_PENDING) | T2__AT_INVALID | T2__AT_EARLY_EXIT | T2__AT_ENDED;
    b->invalid++;
    int rc = remove_from_rungs(b, rid, t->rung);
    return rc ? rc : t2__asha_new_trial(s, bracket, ops);
}
