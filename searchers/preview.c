/* preview.c — `t2exp preview`: the trials and lengths a search would run, found by running the
 * searcher against a pretend controller, and their text form. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "searcher_internal.h"
#include "t2exp/error.h"
#include "t2exp/rng.h"

/* A guard against a searcher that never finishes (a bug, not a big search: a million-point grid
 * takes three million ops). */
#define MAX_OPS (INT64_C(1) << 32)

/* The pretend metric: fixed per request id, uniform in [0, 1), independent of the length so a
 * trial keeps its rank from rung to rung (the shape ASHA is built for). */
static double pseudo_metric(uint64_t seed, int64_t rid)
{
    return (double)(t2_hash64(seed ^ t2_hash64((uint64_t)rid) ^ UINT64_C(0x7072657669657721)) >> 11) * 0x1p-53;
}

/* A pbt child also gets "parent" and "start" (the parent's length then: where it continues). */
static int add_trial(t2__val *list, t2__search_op *op)
{
    t2__val *m = t2__val_map();
    int rc = m ? T2_OK : T2_ENOMEM;
    if (!rc) rc = t2__val_map_set(m, "request_id", t2__val_int(op->request_id));
    if (!rc && op->parent_request_id >= 0 && op->parent_request_id < (int64_t)list->n) {
        const t2__val *pl = t2__val_map_get(list->items[op->parent_request_id], "lengths");
        int64_t start = pl && pl->n ? pl->items[pl->n - 1]->i : 0;
        rc = t2__val_map_set(m, "parent", t2__val_int(op->parent_request_id));
        if (!rc) rc = t2__val_map_set(m, "start", t2__val_int(start));
    }
    if (!rc) {
        rc = t2__val_map_set(m, "hparams", op->hparams); /* moved out of the op */
        op->hparams = NULL;
    }
    if (!rc) rc = t2__val_map_set(m, "lengths", t2__val_list());
    if (!rc) return t2__val_list_append(list, m);
    t2__val_free(m);
    return rc;
}

int t2__searcher_preview(const t2__config *cfg, uint64_t experiment_seed, t2__val **out)
{
    t2__searcher *s = NULL;
    t2__ops q = {0};
    t2__val *list = NULL;
    size_t head = 0;
    int64_t handled = 0;
    int rc, done = 0;
    if (!out) return t2_seterr(T2_EINVAL, "preview: NULL argument");
    *out = NULL;
    if ((rc = t2__searcher_create(cfg, experiment_seed, &s))) return rc;
    if (!(list = t2__val_list())) {
        rc = t2_seterr(T2_ENOMEM, "preview: out of memory");
        goto fail;
    }
    if ((rc = t2__searcher_start(s, &q))) goto fail;
    /* Ops are handled in the order they were issued; each answer is appended to the queue. */
    while (!done && head < q.n) {
        if (++handled > MAX_OPS) {
            rc = t2_seterr(T2_ESTATE, "preview: the search did not finish after %" PRId64 " operations", MAX_OPS);
            goto fail;
        }
        t2__search_op *op = &q.v[head++];
        int64_t rid = op->request_id;
        switch (op->kind) {
        case T2__OP_CREATE:
            if (rid != (int64_t)list->n) {
                rc = t2_seterr(T2_ESTATE, "preview: request %" PRId64 " created out of order", rid);
                goto fail;
            }
            if ((rc = add_trial(list, op)) || (rc = t2__searcher_on_trial_created(s, rid, &q))) goto fail;
            break;
        case T2__OP_TRAIN: {
            int64_t length = op->length;
            if (rid < 0 || rid >= (int64_t)list->n) {
                rc = t2_seterr(T2_ESTATE, "preview: TRAIN for unknown request %" PRId64, rid);
                goto fail;
            }
            t2__val *lengths = t2__val_map_get(list->items[rid], "lengths");
            if ((rc = t2__val_list_append(lengths, t2__val_int(length))) ||
                (rc = t2__searcher_on_validation(s, rid, pseudo_metric(experiment_seed, rid), length, &q)))
                goto fail;
            break;
        }
        case T2__OP_CLOSE:
            if ((rc = t2__searcher_on_trial_exited(s, rid, &q))) goto fail;
            break;
        case T2__OP_SHUTDOWN: done = 1; break;
        }
        /* Handled ops are dropped now and then so a long search keeps a short queue. */
        if (head > 4096 && head * 2 > q.n) {
            for (size_t k = 0; k < head; k++) t2__val_free(q.v[k].hparams);
            memmove(q.v, q.v + head, (q.n - head) * sizeof *q.v);
            q.n -= head;
            head = 0;
        }
    }
    if (!done) {
        rc = t2_seterr(T2_ESTATE, "preview: the searcher stopped giving work without shutting down");
        goto fail;
    }
    *out = list;
    list = NULL;
fail:
    if (rc == T2_ENOMEM) t2_seterr(T2_ENOMEM, "preview: out of memory");
    t2__val_free(list);
    t2__ops_free(&q);
    t2__searcher_free(s);
    return rc;
}

/* "62, 250, 1000" into buf (truncated with "..." if it does not fit). */
static void lengths_text(const t2__val *lengths, char *buf, size_t size)
{
    size_t at = 0;
    buf[0] = '\0';
    for (size_t k = 0; lengths && k < lengths->n; k++) {
        int n = snprintf(buf + at, size - at, "%s%" PRId64, k ? ", " : "", lengths->items[k]->i);
        if (n < 0 || (size_t)n >= size - at) {
            if (size > 4) strcpy(buf + size - 4, "...");
            return;
        }
        at += (size_t)n;
    }
}

/* The lengths, and a pbt child's parent: "200, 300 (from #1)". */
static void entry_text(const t2__val *e, char *buf, size_t size)
{
    lengths_text(t2__val_map_get(e, "lengths"), buf, size);
    const t2__val *parent = t2__val_map_get(e, "parent");
    size_t at = strlen(buf);
    if (parent && parent->kind == T2__VAL_INT && at < size)
        snprintf(buf + at, size - at, " (from #%" PRId64 ")", parent->i);
}

static int valid_entry(const t2__val *e)
{
    const t2__val *rid = t2__val_map_get(e, "request_id"), *lengths = t2__val_map_get(e, "lengths");
    if (!rid || rid->kind != T2__VAL_INT || !lengths || lengths->kind != T2__VAL_LIST || !t2__val_map_get(e, "hparams"))
        return 0;
    for (size_t k = 0; k < lengths->n; k++)
        if (lengths->items[k]->kind != T2__VAL_INT) return 0;
    return 1;
}

int t2__preview_print(const t2__val *preview, FILE *f)
{
    char buf[256];
    int width = 7; /* strlen("lengths") */
    int64_t longest = 0, total = 0, reached = 0;
    if (!preview || !f || preview->kind != T2__VAL_LIST) return t2_seterr(T2_EINVAL, "preview: expected a list of trials");
    for (size_t i = 0; i < preview->n; i++) {
        const t2__val *e = preview->items[i];
        if (!valid_entry(e)) return t2_seterr(T2_EINVAL, "preview: entry %zu is not a trial", i);
        const t2__val *lengths = t2__val_map_get(e, "lengths");
        entry_text(e, buf, sizeof buf);
        if ((int)strlen(buf) > width) width = (int)strlen(buf);
        int64_t last = lengths->n ? lengths->items[lengths->n - 1]->i : 0;
        if (last > longest) longest = last;
        const t2__val *start = t2__val_map_get(e, "start");
        /* a TRAIN target is a total, so the last one is what the trial trains (a pbt child
         * trains from its parent's length on) */
        total += last - (start && start->kind == T2__VAL_INT ? start->i : 0);
    }
    int bad = fprintf(f, "%7s  %-*s  %s\n", "trial", width, "lengths", "hparams") < 0;
    for (size_t i = 0; !bad && i < preview->n; i++) {
        const t2__val *e = preview->items[i], *lengths = t2__val_map_get(e, "lengths");
        char *json = NULL;
        int rc = t2__val_to_json(t2__val_map_get(e, "hparams"), &json, NULL);
        if (rc) return rc; /* its own message: out of memory, or a value JSON cannot write */
        entry_text(e, buf, sizeof buf);
        if (lengths->n && lengths->items[lengths->n - 1]->i == longest) reached++;
        bad = fprintf(f, "%7" PRId64 "  %-*s  %s\n", t2__val_map_get(e, "request_id")->i, width, buf, json) < 0;
        free(json);
    }
    if (!bad)
        bad = fprintf(f, "%zu trial%s, %" PRId64 " trained to %" PRId64 ", %" PRId64 " stopped earlier; length trained %" PRId64
                         " in total\n",
                      preview->n, preview->n == 1 ? "" : "s", reached, longest, (int64_t)preview->n - reached,
                      total) < 0;
    if (bad || fflush(f)) return t2_seterr(T2_EIO, "preview: writing the table failed");
    return T2_OK;
}
