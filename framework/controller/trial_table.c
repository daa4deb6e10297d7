/* trial_table.c — the controller's table of trials and its indices (see trial_table.h). */
#include "trial_table.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"

static int push_index(size_t **v, size_t *n, size_t *cap, size_t i)
{
    if (*n == *cap) {
        size_t nc = *cap ? 2 * *cap : 16;
        size_t *g = realloc(*v, nc * sizeof *g);
        if (!g) return t2_seterr(T2_ENOMEM, "controller: out of memory");
        *v = g;
        *cap = nc;
    }
    (*v)[(*n)++] = i;
    return T2_OK;
}

int t2__tt_add(t2__trial_table *tt, int64_t rid, t2__val *hparams, uint64_t seed, t2__ctl_trial **out)
{
    if (tt->nt == tt->cap) {
        size_t cap = tt->cap ? 2 * tt->cap : 16;
        t2__ctl_trial *g = realloc(tt->t, cap * sizeof *g);
        if (!g) {
            t2__val_free(hparams);
            return t2_seterr(T2_ENOMEM, "controller: out of memory");
        }
        tt->t = g;
        tt->cap = cap;
    }
    t2__ctl_trial *t = &tt->t[tt->nt++];
    memset(t, 0, sizeof *t);
    t->rid = rid;
    t->hparams = hparams;
    t->seed = seed;
    t->state = T2__CTL_QUEUED;
    t->fd = -1;
    t->pending = t->sent = -1;
    t->metric = t->loss = NAN;
    t->gb = 1;
    *out = t;
    return T2_OK;
}

t2__ctl_trial *t2__tt_find(t2__trial_table *tt, int64_t rid)
{
    /* Searchers number requests 0, 1, 2, ... in creation order, so the index is the usual answer. */
    if (rid >= 0 && (size_t)rid < tt->nt && tt->t[rid].rid == rid) return &tt->t[rid];
    for (size_t i = 0; i < tt->nt; i++)
        if (tt->t[i].rid == rid) return &tt->t[i];
    return NULL;
}

/* A queued trial whose work differs from the common case must be found without a full scan. */
int t2__tt_note_special(t2__trial_table *tt, t2__ctl_trial *t)
{
    if (t->listed || t->state != T2__CTL_QUEUED) return T2_OK;
    if (t->pending == tt->full_length && !t->closing && !t->restarts && t->batches == 0) return T2_OK;
    t->listed = 1;
    return push_index(&tt->special, &tt->nspecial, &tt->capspecial, (size_t)(t - tt->t));
}

int t2__tt_set_state(t2__trial_table *tt, t2__ctl_trial *t, int state)
{
    size_t i = (size_t)(t - tt->t);
    if (t->state == T2__CTL_RUNNING || t->state == T2__CTL_LAUNCHING)
        for (size_t k = 0; k < tt->nrun; k++)
            if (tt->run[k] == i) {
                tt->run[k] = tt->run[--tt->nrun];
                break;
            }
    if (t->state == T2__CTL_DONE || t->state == T2__CTL_ERRORED) tt->ndone--;
    t->state = state;
    if (state == T2__CTL_DONE || state == T2__CTL_ERRORED) tt->ndone++;
    if (state == T2__CTL_RUNNING || state == T2__CTL_LAUNCHING) return push_index(&tt->run, &tt->nrun, &tt->caprun, i);
    if (state == T2__CTL_QUEUED) {
        if (i < tt->sched_from) tt->sched_from = i;
        return t2__tt_note_special(tt, t);
    }
    return T2_OK;
}

void t2__tt_prune_special(t2__trial_table *tt)
{
    size_t keep = 0;
    for (size_t k = 0; k < tt->nspecial; k++) {
        t2__ctl_trial *t = &tt->t[tt->special[k]];
        if (t->state == T2__CTL_QUEUED) tt->special[keep++] = tt->special[k];
        else t->listed = 0;
    }
    tt->nspecial = keep;
}

void t2__tt_free(t2__trial_table *tt)
{
    for (size_t i = 0; i < tt->nt; i++) {
        t2__val_free(tt->t[i].hparams);
        free(tt->t[i].hparams_json);
        free(tt->t[i].error);
        free(tt->t[i].pruned_why);
        free(tt->t[i].ckpt);
        free(tt->t[i].log_path);
        free(tt->t[i].session_dir);
        free(tt->t[i].tree);
        free(tt->t[i].report_at);
        free(tt->t[i].host_slots);
        free(tt->t[i].hosts);
    }
    free(tt->t);
    free(tt->run);
    free(tt->special);
    memset(tt, 0, sizeof *tt);
}
