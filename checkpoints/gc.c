/* gc.c — which checkpoints garbage collection keeps: the union of save_experiment_best,
 * save_trial_best and save_trial_latest (Determined's checkpoint_storage semantics). A pure
 * function of the store's rows, so the controller decides and the policy is tested alone. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "ckpt.h"
#include "t2exp/error.h"

typedef struct rank_item {
    double key;    /* metric, negated when larger is better: ascending = best first */
    int64_t trial;
    int64_t order;
    size_t idx;
} rank_item;

static int cmp_i64(int64_t a, int64_t b) { return (a > b) - (a < b); }

/* Best first; equal metrics: the newer first. */
static int by_metric(const void *pa, const void *pb)
{
    const rank_item *a = pa, *b = pb;
    if (a->key != b->key) return a->key < b->key ? -1 : 1;
    return -cmp_i64(a->order, b->order);
}

static int by_trial_metric(const void *pa, const void *pb)
{
    const rank_item *a = pa, *b = pb;
    int c = cmp_i64(a->trial, b->trial);
    return c ? c : by_metric(pa, pb);
}

static int by_trial_newest(const void *pa, const void *pb)
{
    const rank_item *a = pa, *b = pb;
    int c = cmp_i64(a->trial, b->trial);
    return c ? c : -cmp_i64(a->order, b->order);
}

/* Marks the first `per_group` items of each trial (all items as one group if !per_trial). */
static void keep_firsts(const rank_item *r, size_t m, int64_t count, int per_trial, unsigned char *keep)
{
    int64_t taken = 0;
    for (size_t i = 0; i < m; i++) {
        if (per_trial && i > 0 && r[i].trial != r[i - 1].trial) taken = 0;
        if (taken < count) {
            keep[r[i].idx] = 1;
            taken++;
        }
    }
}

int t2__ckpt_gc_select(const t2__ckpt_gc_item *items, size_t n, const t2__ckpt_gc_params *p,
                       unsigned char *keep)
{
    if (!p || (n && (!items || !keep))) return t2_seterr(T2_EINVAL, "checkpoint gc: NULL argument");
    if (p->save_experiment_best < 0 || p->save_trial_best < 0 || p->save_trial_latest < 0)
        return t2_seterr(T2_EINVAL, "checkpoint gc: negative save_* count (%lld, %lld, %lld)",
                         (long long)p->save_experiment_best, (long long)p->save_trial_best,
                         (long long)p->save_trial_latest);
    if (n == 0) return T2_OK;
    memset(keep, 0, n);
    rank_item *r = malloc(n * sizeof *r);
    if (!r) return t2_seterr(T2_ENOMEM, "checkpoint gc: out of memory for %zu checkpoints", n);
    size_t m = 0; /* the ones with a metric, for the two "best" policies */
    for (size_t i = 0; i < n; i++) {
        if (isnan(items[i].metric)) continue;
        r[m++] = (rank_item){p->smaller_is_better ? items[i].metric : -items[i].metric, items[i].trial_id,
                             items[i].order, i};
    }
    qsort(r, m, sizeof *r, by_metric);
    keep_firsts(r, m, p->save_experiment_best, 0, keep);
    qsort(r, m, sizeof *r, by_trial_metric);
    keep_firsts(r, m, p->save_trial_best, 1, keep);
    for (size_t i = 0; i < n; i++) r[i] = (rank_item){0, items[i].trial_id, items[i].order, i};
    qsort(r, n, sizeof *r, by_trial_newest);
    keep_firsts(r, n, p->save_trial_latest, 1, keep);
    free(r);
    return T2_OK;
}
