/* plan.c — the pipeline's pure scheduler (plan.h). */
#include <stdlib.h>
#include <string.h>
#include "plan.h"
#include "t2exp/error.h"

struct t2__plan {
    const t2__flow *f;
    t2__pstate *st;
    int64_t *slots;
    unsigned char *forced;
    size_t *cause;
    int64_t pool, free;
    int stopped;
};

int t2__plan_new(const t2__flow *f, const int64_t *slots, const unsigned char *forced, int64_t pool,
                 t2__plan **out)
{
    *out = NULL;
    if (!f || !f->order || !slots || pool < 1) return t2_seterr(T2_EINVAL, "plan: bad arguments");
    t2__plan *p = calloc(1, sizeof *p);
    if (!p) return t2_seterr(T2_ENOMEM, "plan: out of memory");
    p->st = calloc(f->n, sizeof *p->st);
    p->slots = calloc(f->n, sizeof *p->slots);
    p->forced = calloc(f->n, 1);
    p->cause = calloc(f->n, sizeof *p->cause);
    if (!p->st || !p->slots || !p->forced || !p->cause) {
        t2__plan_free(p);
        return t2_seterr(T2_ENOMEM, "plan: out of memory");
    }
    p->f = f;
    p->pool = p->free = pool;
    for (size_t i = 0; i < f->n; i++) {
        p->slots[i] = slots[i] < 1 ? 1 : slots[i] > pool ? pool : slots[i];
        p->forced[i] = forced ? forced[i] : 0;
    }
    *out = p;
    return 0;
}

void t2__plan_free(t2__plan *p)
{
    if (!p) return;
    free(p->st);
    free(p->slots);
    free(p->forced);
    free(p->cause);
    free(p);
}

static int unsuccessful(t2__pstate s) { return s == T2__PS_FAILED || s == T2__PS_BLOCKED || s == T2__PS_CANCELED; }

void t2__plan_next(t2__plan *p, t2__plan_op *ops, size_t *nops)
{
    const t2__flow *f = p->f;
    size_t n = 0;
    /* In topological order a block reaches every descendant in one pass. */
    for (size_t k = 0; k < f->n; k++) {
        size_t i = f->order[k];
        if (p->st[i] != T2__PS_WAITING) continue;
        const t2__flow_stage *s = &f->stages[i];
        int all_ok = 1, bad = 0;
        size_t cause = 0;
        for (size_t d = 0; d < s->ndeps; d++) {
            t2__pstate ds = p->st[s->deps[d]];
            if (unsuccessful(ds) && !bad) {
                bad = 1;
                cause = ds == T2__PS_BLOCKED ? p->cause[s->deps[d]] : s->deps[d];
            }
            all_ok &= ds == T2__PS_DONE || ds == T2__PS_SKIPPED;
        }
        if (bad) {
            p->st[i] = T2__PS_BLOCKED;
            p->cause[i] = cause;
            ops[n++] = (t2__plan_op){.kind = T2__OP_BLOCK, .stage = i, .cause = cause};
        } else if (all_ok && !p->stopped) {
            p->st[i] = T2__PS_CHECKING;
            ops[n++] = (t2__plan_op){.kind = T2__OP_CHECK, .stage = i};
        }
    }
    for (size_t k = 0; k < f->n && !p->stopped; k++) {
        size_t i = f->order[k];
        if (p->st[i] != T2__PS_READY || p->slots[i] > p->free) continue;
        p->st[i] = T2__PS_RUNNING;
        p->free -= p->slots[i];
        ops[n++] = (t2__plan_op){.kind = T2__OP_START, .stage = i};
    }
    *nops = n;
}

int t2__plan_checked(t2__plan *p, size_t stage, int up_to_date)
{
    if (stage >= p->f->n || p->st[stage] != T2__PS_CHECKING)
        return t2_seterr(T2_ESTATE, "plan: stage %zu was not being checked", stage);
    if (p->stopped) {
        p->st[stage] = T2__PS_CANCELED;
        return 0;
    }
    /* A dependency that ran in this run may have changed what this stage sees in ways its
     * hash cannot (an after: edge carries no file), so it runs too. */
    int upstream_ran = 0;
    const t2__flow_stage *s = &p->f->stages[stage];
    for (size_t d = 0; d < s->ndeps; d++) upstream_ran |= p->st[s->deps[d]] == T2__PS_DONE;
    p->st[stage] = up_to_date && !p->forced[stage] && !upstream_ran ? T2__PS_SKIPPED : T2__PS_READY;
    return 0;
}

int t2__plan_finished(t2__plan *p, size_t stage, int ok)
{
    if (stage >= p->f->n || p->st[stage] != T2__PS_RUNNING)
        return t2_seterr(T2_ESTATE, "plan: stage %zu was not running", stage);
    p->st[stage] = ok ? T2__PS_DONE : T2__PS_FAILED;
    p->free += p->slots[stage];
    return 0;
}

int t2__plan_check_failed(t2__plan *p, size_t stage)
{
    if (stage >= p->f->n || p->st[stage] != T2__PS_CHECKING)
        return t2_seterr(T2_ESTATE, "plan: stage %zu was not being checked", stage);
    p->st[stage] = T2__PS_FAILED;
    return 0;
}

void t2__plan_stop(t2__plan *p)
{
    p->stopped = 1;
    for (size_t i = 0; i < p->f->n; i++)
        if (p->st[i] == T2__PS_WAITING || p->st[i] == T2__PS_READY || p->st[i] == T2__PS_CHECKING)
            p->st[i] = T2__PS_CANCELED;
}

t2__pstate t2__plan_state(const t2__plan *p, size_t stage) { return p->st[stage]; }

const char *t2__pstate_name(t2__pstate s)
{
    static const char *const names[] = {"waiting", "checking", "ready", "running", "done",
                                        "skipped", "failed", "blocked", "canceled"};
    return (unsigned)s < sizeof names / sizeof *names ? names[s] : "?";
}

int64_t t2__plan_free_slots(const t2__plan *p) { return p->free; }

int t2__plan_finished_all(const t2__plan *p)
{
    for (size_t i = 0; i < p->f->n; i++)
        if (p->st[i] <= T2__PS_RUNNING) return 0;
    return 1;
}

size_t t2__plan_unsuccessful(const t2__plan *p)
{
    size_t n = 0;
    for (size_t i = 0; i < p->f->n; i++) n += unsuccessful(p->st[i]);
    return n;
}
