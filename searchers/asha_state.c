/* asha_state.c — adaptive ASHA's state as a value tree and back. The layout (brackets, rungs,
 * lengths, trials per bracket) comes from the config and is not stored; restoring checks that
 * the stored state fits it, so a state saved under another config is refused, not misread. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "asha.h"
#include "t2exp/error.h"

void t2__asha_clear(t2__asha *a)
{
    if (!a) return;
    for (size_t i = 0; a->b && i < a->nbrackets; i++) {
        t2__asha_bracket *b = &a->b[i];
        for (int64_t r = 0; b->rungs && r < b->nrungs; r++) {
            t2__asha_rung_free(&b->rungs[r]);
            b->rungs[r].outstanding = 0;
        }
        b->ntrials = b->invalid = b->completed = 0;
    }
    free(a->trials);
    a->trials = NULL;
    a->ntrials = a->cap = 0;
}

static t2__val *triple(int64_t x, t2__val *y, int64_t z)
{
    t2__val *l = t2__val_list();
    if (!l) {
        t2__val_free(y);
        return NULL;
    }
    if (t2__val_list_append(l, t2__val_int(x)) || t2__val_list_append(l, y) || t2__val_list_append(l, t2__val_int(z))) {
        t2__val_free(l);
        return NULL;
    }
    return l;
}

/* Not const: a rung's entries are read from its flat cache (asha_rung.c), made here if stale. The
 * snapshot runs on the controller's thread only (searcher_link.c), as every searcher call. */
static t2__val *bracket_val(t2__asha_bracket *b)
{
    t2__val *m = t2__val_map(), *rungs = t2__val_list();
    int rc = m && rungs ? T2_OK : T2_ENOMEM;
    for (int64_t r = 0; !rc && r < b->nrungs; r++) {
        t2__asha_rung *rung = &b->rungs[r];
        t2__val *rm = t2__val_map(), *metrics = t2__val_list();
        const t2__asha_entry *v = t2__asha_rung_flat(rung);
        rc = rm && metrics && (v || !rung->n) ? T2_OK : T2_ENOMEM;
        for (size_t k = 0; !rc && k < rung->n; k++)
            rc = t2__val_list_append(metrics, triple(v[k].request_id, t2__val_double(v[k].metric), v[k].promoted));
        if (!rc) rc = t2__val_map_set(rm, "outstanding", t2__val_int(rung->outstanding));
        if (!rc) {
            rc = t2__val_map_set(rm, "metrics", metrics);
            metrics = NULL;
        }
        t2__val_free(metrics);
        if (!rc) rc = t2__val_list_append(rungs, rm);
        else t2__val_free(rm);
    }
    if (!rc) rc = t2__val_map_set(m, "ntrials", t2__val_int(b->ntrials));
    if (!rc) rc = t2__val_map_set(m, "invalid", t2__val_int(b->invalid));
    if (!rc) rc = t2__val_map_set(m, "completed", t2__val_int(b->completed));
    if (!rc) {
        rc = t2__val_map_set(m, "rungs", rungs);
        rungs = NULL;
    }
    t2__val_free(rungs);
    if (rc) {
        t2__val_free(m);
        return NULL;
    }
    return m;
}

int t2__asha_snapshot(const t2__searcher *s, t2__val **out)
{
    const t2__asha *a = s->impl;
    t2__val *m = t2__val_map(), *trials = t2__val_list(), *brackets = t2__val_list();
    int rc = m && trials && brackets ? T2_OK : T2_ENOMEM;
    for (size_t k = 0; !rc && k < a->ntrials; k++)
        rc = t2__val_list_append(trials, triple(a->trials[k].bracket, t2__val_int(a->trials[k].rung), a->trials[k].flags));
    for (size_t i = 0; !rc && i < a->nbrackets; i++) rc = t2__val_list_append(brackets, bracket_val(&a->b[i]));
    if (!rc) {
        rc = t2__val_map_set(m, "trials", trials);
        trials = NULL;
    }
    if (!rc) {
        rc = t2__val_map_set(m, "brackets", brackets);
        brackets = NULL;
    }
    if (!rc && a->tpe) rc = t2__asha_tpe_snapshot(s, m); /* only then: sampler random's state is unchanged */
    t2__val_free(trials);
    t2__val_free(brackets);
    if (rc) {
        t2__val_free(m);
        return t2_seterr(T2_ENOMEM, "searcher: out of memory");
    }
    *out = m;
    return T2_OK;
}

/* A list of three numbers; the first and last integers, the middle one returned as a double. */
static int read_triple(const t2__val *v, const char *what, int64_t *x, double *y, int64_t *z)
{
    if (v->kind != T2__VAL_LIST || v->n != 3 || v->items[0]->kind != T2__VAL_INT || v->items[2]->kind != T2__VAL_INT)
        return t2_seterr(T2_EFORMAT, "searcher state: each of %s must be a list of three numbers", what);
    *x = v->items[0]->i;
    *z = v->items[2]->i;
    return t2__state_num(v->items[1], what, y);
}

static int fail_format(const char *what)
{
    return t2_seterr(T2_EFORMAT, "searcher state: %s does not fit this config's adaptive_asha layout", what);
}

int t2__asha_restore(t2__searcher *s, const t2__val *state)
{
    t2__asha *a = s->impl;
    t2__asha tmp = *a; /* same layout, fresh per-trial and per-rung state */
    const t2__val *trials, *brackets;
    int rc;
    size_t nb = a->nbrackets;
    if ((rc = t2__state_list(state, "trials", "state", &trials)) ||
        (rc = t2__state_list(state, "brackets", "state", &brackets)))
        return rc;
    if ((int64_t)trials->n != s->next_request) return fail_format("state.trials (one per request id)");
    if (brackets->n != nb) return fail_format("state.brackets");
    double *points = NULL; /* sampler tpe's, taken only once the whole state is good */
    if (a->tpe && (rc = t2__asha_tpe_read(s, state, &points))) return rc;
    tmp.trials = NULL;
    tmp.ntrials = tmp.cap = 0;
    tmp.b = calloc(nb, sizeof *tmp.b);
    if (!tmp.b || !(tmp.trials = calloc(trials->n ? trials->n : 1, sizeof *tmp.trials))) {
        rc = t2_seterr(T2_ENOMEM, "searcher: out of memory");
        goto fail;
    }
    tmp.cap = trials->n ? trials->n : 1;
    for (size_t i = 0; i < nb; i++) {
        tmp.b[i] = a->b[i];
        tmp.b[i].ntrials = tmp.b[i].invalid = tmp.b[i].completed = 0;
        if (!(tmp.b[i].rungs = calloc((size_t)a->b[i].nrungs, sizeof *tmp.b[i].rungs))) {
            rc = t2_seterr(T2_ENOMEM, "searcher: out of memory");
            goto fail;
        }
        for (int64_t r = 0; r < a->b[i].nrungs; r++) tmp.b[i].rungs[r].length = a->b[i].rungs[r].length;
    }
    for (size_t k = 0; k < trials->n; k++) {
        int64_t b = 0, f = 0; /* read_triple sets them; zeros keep -O3's maybe-uninitialized quiet */
        double r = 0;
        if ((rc = read_triple(trials->items[k], "state.trials", &b, &r, &f))) goto fail;
        if (b < 0 || b >= (int64_t)nb || r < 0 || r >= (double)a->b[b].nrungs || r != (double)(int64_t)r || f < 0 ||
            f > T2__AT_ALL) {
            rc = fail_format("state.trials");
            goto fail;
        }
        tmp.trials[k] = (t2__asha_trial){.bracket = (int32_t)b, .rung = (int32_t)r, .flags = (uint32_t)f};
    }
    tmp.ntrials = trials->n;
    for (size_t i = 0; i < nb; i++) {
        const t2__val *bv = brackets->items[i], *rungs;
        t2__asha_bracket *b = &tmp.b[i];
        if (bv->kind != T2__VAL_MAP) {
            rc = fail_format("state.brackets");
            goto fail;
        }
        if ((rc = t2__state_int(bv, "ntrials", 0, s->next_request, "state.brackets", &b->ntrials)) ||
            (rc = t2__state_int(bv, "invalid", 0, s->next_request, "state.brackets", &b->invalid)) ||
            (rc = t2__state_int(bv, "completed", 0, s->next_request, "state.brackets", &b->completed)) ||
            (rc = t2__state_list(bv, "rungs", "state.brackets", &rungs)))
            goto fail;
        if ((int64_t)rungs->n != b->nrungs) {
            rc = fail_format("state.brackets.rungs");
            goto fail;
        }
        for (int64_t r = 0; r < b->nrungs; r++) {
            const t2__val *rv = rungs->items[r], *metrics;
            t2__asha_rung *rung = &b->rungs[r];
            if (rv->kind != T2__VAL_MAP) {
                rc = fail_format("state.brackets.rungs");
                goto fail;
            }
            if ((rc = t2__state_int(rv, "outstanding", 0, s->next_request, "state.brackets.rungs", &rung->outstanding)) ||
                (rc = t2__state_list(rv, "metrics", "state.brackets.rungs", &metrics)))
                goto fail;
            for (size_t k = 0; k < metrics->n; k++) {
                int64_t rid = 0, promoted = 0;
                double m = 0;
                if ((rc = read_triple(metrics->items[k], "state.brackets.rungs.metrics", &rid, &m, &promoted))) goto fail;
                if (rid < 0 || rid >= s->next_request || tmp.trials[rid].bracket != (int32_t)i || promoted < 0 ||
                    promoted > 1) {
                    rc = fail_format("state.brackets.rungs.metrics");
                    goto fail;
                }
                if ((rc = t2__asha_rung_append(rung, (t2__asha_entry){.request_id = rid, .metric = m, .promoted = (int)promoted})))
                    goto fail;
            }
        }
    }
    /* Swap in the new state. */
    t2__asha_clear(a);
    for (size_t i = 0; i < nb; i++) free(a->b[i].rungs);
    free(a->b);
    *a = tmp;
    if (a->tpe) t2__asha_tpe_take(a, points, trials->n);
    return T2_OK;
fail:
    for (size_t i = 0; tmp.b && i < nb; i++) {
        for (int64_t r = 0; tmp.b[i].rungs && r < tmp.b[i].nrungs; r++) t2__asha_rung_free(&tmp.b[i].rungs[r]);
        free(tmp.b[i].rungs);
    }
    free(tmp.b);
    free(tmp.trials);
    free(points);
    return rc;
}
