/* flow_graph.c — the stage graph: edges from after: and from outputs used as inputs, cycles,
 * a topological order, ancestors and descendants, and the checks of ${...} references that need
 * the graph. Pure: no file is looked at. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "configs/config_internal.h"
#include "flow_internal.h"
#include "t2exp/error.h"

/* a and b name the same file, or one is a directory holding the other (lexically). */
static int overlap(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b), l = la < lb ? la : lb;
    if (strncmp(a, b, l) != 0) return 0;
    if (la == lb) return 1;
    const char *longer = la > lb ? a : b;
    return longer[l] == '/' || l == 1; /* l == 1: one of them is "/" */
}

/* Adds the data edges to deps (after: ones are there already). */
static int data_edges(t2__flow_ctx *c)
{
    t2__flow *f = c->f;
    unsigned char *dep = calloc(f->n, 1);
    if (!dep) return T2_ENOMEM;
    for (size_t i = 0; i < f->n; i++) {
        t2__flow_stage *s = &f->stages[i];
        memset(dep, 0, f->n);
        for (size_t k = 0; k < s->ndeps; k++) dep[s->deps[k]] = 1;
        for (size_t a = 0; a < s->ninputs; a++)
            for (size_t j = 0; j < f->n; j++)
                for (size_t b = 0; b < f->stages[j].noutputs; b++) {
                    if (!overlap(s->inputs[a].abs, f->stages[j].outputs[b].abs)) continue;
                    if (j == i)
                        t2__flow_err(c, &s->inputs[a].mark, "stages.%s.inputs: '%s' is also an output of stage '%s' "
                                     "itself (its own output would make it stale on every run)", s->name,
                                     s->inputs[a].text, s->name);
                    else dep[j] = 1;
                }
        size_t m = 0;
        for (size_t j = 0; j < f->n; j++) m += dep[j];
        if (m == s->ndeps) continue;
        size_t *d = realloc(s->deps, m * sizeof *d);
        if (!d) {
            free(dep);
            return T2_ENOMEM;
        }
        /* after: order first (it reads as written), then data edges in file order */
        size_t n = s->ndeps;
        for (size_t k = 0; k < s->ndeps; k++) dep[d[k]] = 0;
        for (size_t j = 0; j < f->n; j++)
            if (dep[j]) d[n++] = j;
        s->deps = d;
        s->ndeps = n;
    }
    free(dep);
    /* Two stages writing one path would race and make the cache meaningless. */
    for (size_t i = 0; i < f->n; i++)
        for (size_t a = 0; a < f->stages[i].noutputs; a++)
            for (size_t j = i; j < f->n; j++)
                for (size_t b = j == i ? a + 1 : 0; b < f->stages[j].noutputs; b++)
                    if (overlap(f->stages[i].outputs[a].abs, f->stages[j].outputs[b].abs))
                        t2__flow_err(c, &f->stages[j].outputs[b].mark, "stages.%s.outputs: '%s' overlaps output '%s' of "
                                     "stage '%s'; every output belongs to one stage", f->stages[j].name,
                                     f->stages[j].outputs[b].text, f->stages[i].outputs[a].text, f->stages[i].name);
    return 0;
}

/* Depth-first search from every stage along deps; a stage met again while still on the path
 * closes a cycle, which is reported from that stage round to itself and sets *cyclic. */
static int find_cycle(t2__flow_ctx *c, int *cyclic)
{
    t2__flow *f = c->f;
    unsigned char *color = calloc(f->n, 1); /* 0 new, 1 on the path, 2 done */
    size_t *stack = calloc(f->n, sizeof *stack), *edge = calloc(f->n, sizeof *edge);
    int rc = 0;
    if (!color || !stack || !edge) {
        rc = T2_ENOMEM;
        goto done;
    }
    for (size_t root = 0; root < f->n; root++) {
        if (color[root]) continue;
        size_t sp = 0;
        stack[sp] = root;
        edge[sp++] = 0;
        color[root] = 1;
        while (sp) {
            size_t v = stack[sp - 1];
            if (edge[sp - 1] == f->stages[v].ndeps) {
                color[v] = 2;
                sp--;
                continue;
            }
            size_t w = f->stages[v].deps[edge[sp - 1]++];
            if (color[w] == 0) {
                color[w] = 1;
                stack[sp] = w;
                edge[sp++] = 0;
            } else if (color[w] == 1) {
                /* stack holds ... w ... v, each needing the next; print it in run order: w's
                 * dependencies come first, so walk from v back down to w. */
                size_t at = sp;
                while (at > 0 && stack[at - 1] != w) at--;
                char msg[900];
                size_t n = 0;
                for (size_t k = sp; k-- > at - 1 && n < sizeof msg - 1;)
                    n += (size_t)snprintf(msg + n, sizeof msg - n, "%s -> ", f->stages[stack[k]].name);
                if (n < sizeof msg) snprintf(msg + n, sizeof msg - n, "%s", f->stages[v].name);
                t2__flow_err(c, &f->stages[v].mark, "stages form a cycle: %s (each runs after the one before it, "
                             "through after: or an output used as an input); nothing was run", msg);
                *cyclic = 1;
                goto done;
            }
        }
    }
done:
    free(color);
    free(stack);
    free(edge);
    return rc;
}

/* Kahn's algorithm, always taking the first ready stage in file order. */
static int topo(t2__flow *f)
{
    size_t *indeg = calloc(f->n, sizeof *indeg);
    if (!indeg || !(f->order = calloc(f->n, sizeof *f->order))) {
        free(indeg);
        return T2_ENOMEM;
    }
    unsigned char *used = calloc(f->n, 1);
    if (!used) {
        free(indeg);
        return T2_ENOMEM;
    }
    for (size_t i = 0; i < f->n; i++) indeg[i] = f->stages[i].ndeps;
    for (size_t k = 0; k < f->n; k++) {
        size_t pick = f->n;
        for (size_t i = 0; i < f->n && pick == f->n; i++)
            if (!used[i] && indeg[i] == 0) pick = i;
        if (pick == f->n) break; /* a cycle; reported before */
        used[pick] = 1;
        f->order[k] = pick;
        for (size_t i = 0; i < f->n; i++)
            for (size_t d = 0; d < f->stages[i].ndeps; d++)
                if (f->stages[i].deps[d] == pick) indeg[i]--;
    }
    free(indeg);
    free(used);
    return 0;
}

void t2__flow_descendants(const t2__flow *f, const unsigned char *seed, unsigned char *mark)
{
    /* In topological order one pass suffices: a stage is marked when a dependency is. */
    for (size_t i = 0; i < f->n; i++) mark[i] = seed[i] ? 1 : 0;
    for (size_t k = 0; k < f->n; k++) {
        size_t i = f->order[k];
        for (size_t d = 0; !mark[i] && d < f->stages[i].ndeps; d++) mark[i] = mark[f->stages[i].deps[d]];
    }
}

int t2__flow_is_ancestor(const t2__flow *f, size_t a, size_t b)
{
    /* Walk b's dependencies backwards in reverse topological order. */
    unsigned char *need = calloc(f->n, 1);
    if (!need) return 0;
    need[b] = 1;
    int found = 0;
    for (size_t k = f->n; k-- > 0 && !found;) {
        size_t i = f->order[k];
        if (!need[i]) continue;
        for (size_t d = 0; d < f->stages[i].ndeps; d++) {
            need[f->stages[i].deps[d]] = 1;
            found |= f->stages[i].deps[d] == a;
        }
    }
    free(need);
    return found;
}

/* Checks every ${...} reference. With a cycle there is no order, so "does it run before" cannot be
 * asked (ordered == 0); the checks that need only the stage names and kinds still run, so that
 * every problem in the file is reported at once. */
static void check_refs(t2__flow_ctx *c, int ordered)
{
    t2__flow *f = c->f;
    const char **names = calloc(f->n + 1, sizeof *names);
    if (!names) {
        c->oom = 1;
        return;
    }
    for (size_t i = 0; i < f->n; i++) names[i] = f->stages[i].name;
    for (size_t k = 0; k < c->nrefs; k++) {
        const t2__flow_pending_ref *p = &c->refs[k];
        const char *field = t2__ref_field_name(p->ref.field), *user = f->stages[p->stage].name;
        long j = t2__flow_find(f, p->ref.stage);
        if (j < 0) {
            const char *near = t2__cfg_closest(p->ref.stage, names);
            t2__flow_err(c, &p->mark, "%s: ${%s.%s}: no stage '%s'%s%s%s", p->where, p->ref.stage, field, p->ref.stage,
                         near ? " (did you mean '" : "", near ? near : "", near ? "'?)" : "");
        } else if ((size_t)j == p->stage) {
            t2__flow_err(c, &p->mark, "%s: ${%s.%s}: a stage cannot use its own results", p->where, p->ref.stage,
                         field);
        } else if (f->stages[j].kind != T2__STAGE_EXPERIMENT) {
            t2__flow_err(c, &p->mark, "%s: ${%s.%s}: stage '%s' is a command stage; only experiment stages have "
                         "results", p->where, p->ref.stage, field, p->ref.stage);
        } else if (!ordered) {
            continue; /* the cycle is reported already; nothing will run, so no ref is recorded */
        } else if (!t2__flow_is_ancestor(f, (size_t)j, p->stage)) {
            t2__flow_err(c, &p->mark, "%s: ${%s.%s}: stage '%s' does not run before stage '%s'; add it to "
                         "stages.%s.after (a reference does not order stages by itself)", p->where, p->ref.stage, field,
                         p->ref.stage, user, user);
        } else {
            t2__flow_stage *s = &f->stages[p->stage];
            int dup = 0;
            for (size_t q = 0; q < s->nrefs; q++) dup |= s->refs[q] == (size_t)j;
            if (dup) continue;
            size_t *g = realloc(s->refs, (s->nrefs + 1) * sizeof *g);
            if (!g) {
                c->oom = 1;
                break;
            }
            s->refs = g;
            s->refs[s->nrefs++] = (size_t)j;
        }
    }
    free(names);
}

int t2__flow_build_graph(t2__flow_ctx *c)
{
    int cyclic = 0;
    if (data_edges(c) || find_cycle(c, &cyclic)) {
        c->oom = 1;
        return T2_ENOMEM;
    }
    /* No order without a DAG: topo would leave f->order part-filled, so skip it and check refs
     * without it. */
    if (!cyclic && topo(c->f)) {
        c->oom = 1;
        return T2_ENOMEM;
    }
    check_refs(c, !cyclic);
    return 0;
}
