/* test_asha_rung.c — an ASHA rung (asha_rung.c, a tree by position) against the sorted array it
 * replaced: the same index for every insert, in both tie rules, with many equal metrics; the same
 * entries in the same order after promotions, appends and removals; and a rung of 200,000 results
 * (every insert's index, and the whole rung in metric order). Its speed is the preview's to show
 * (asha_rung.c's header), not a unit test's. */
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "searchers/asha.h"

typedef struct {
    t2__asha_entry *v;
    size_t n;
} plain;

static size_t plain_insert(plain *p, int64_t rid, double metric, int after_equal)
{
    size_t lo = 0, hi = p->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (after_equal ? p->v[mid].metric <= metric : p->v[mid].metric < metric) lo = mid + 1;
        else hi = mid;
    }
    memmove(p->v + lo + 1, p->v + lo, (p->n - lo) * sizeof *p->v);
    p->v[lo] = (t2__asha_entry){.request_id = rid, .metric = metric};
    p->n++;
    return lo;
}

static int same(t2__asha_rung *r, const plain *p)
{
    const t2__asha_entry *f = t2__asha_rung_flat(r);
    if (r->n != p->n || (p->n && !f)) return 0;
    for (size_t k = 0; k < p->n; k++) {
        const t2__asha_entry *a = t2__asha_rung_at(r, k);
        if (f[k].request_id != p->v[k].request_id || f[k].metric != p->v[k].metric || f[k].promoted != p->v[k].promoted ||
            a->request_id != p->v[k].request_id || a->promoted != p->v[k].promoted)
            return 0;
    }
    return 1;
}

static void against_array(int after_equal, unsigned seed)
{
    enum { N = 3000 };
    t2__asha_rung r = {0};
    plain p = {calloc(N, sizeof(t2__asha_entry)), 0};
    if (!p.v) return;
    srand(seed);
    int ok = 1;
    for (int64_t i = 0; i < N && ok; i++) {
        /* Few distinct values, so that most inserts meet equal metrics. */
        double m = (double)(rand() % 40) - 20.0;
        size_t want = t2__asha_rung_rank(&r, m, after_equal);
        ptrdiff_t at = t2__asha_rung_insert(&r, i, m, after_equal, 0);
        size_t pat = plain_insert(&p, i, m, after_equal);
        ok = at >= 0 && (size_t)at == pat && want == pat;
        if (ok && i % 7 == 0) {
            size_t k = (size_t)rand() % p.n;
            t2__asha_rung_promote(&r, k);
            p.v[k].promoted = 1;
        }
        if (ok && i % 97 == 0) ok = same(&r, &p);
        if (ok && i % 500 == 499) {
            /* A removal (invalid hparams), of an entry in the middle. */
            size_t k = p.n / 3;
            int64_t rid = p.v[k].request_id;
            ok = t2__asha_rung_remove(&r, rid) == T2_OK;
            memmove(p.v + k, p.v + k + 1, (p.n - k - 1) * sizeof *p.v);
            p.n--;
            ok = ok && same(&r, &p) && t2__asha_rung_remove(&r, rid) == T2_OK && r.n == p.n;
        }
    }
    CHECK(ok);
    CHECK(same(&r, &p));
    /* A restore appends in the saved order, whatever the metrics: the same rung again. */
    t2__asha_rung back = {0};
    const t2__asha_entry *f = t2__asha_rung_flat(&r);
    for (size_t k = 0; f && k < r.n; k++) CHECK_OK(t2__asha_rung_append(&back, f[k]));
    CHECK(same(&back, &p));
    t2__asha_rung_free(&back);
    t2__asha_rung_free(&r);
    CHECK(r.n == 0 && t2__asha_rung_flat(&r) == NULL);
    free(p.v);
}

static void large(void)
{
    enum { N = 200000 };
    t2__asha_rung r = {0};
    int ok = 1;
    for (int64_t i = 0; i < N && ok; i++) {
        double m = (double)((i * 7919) % N); /* a permutation: every metric once */
        ok = t2__asha_rung_insert(&r, i, m, 1, 0) == (ptrdiff_t)t2__asha_rung_rank(&r, m, 1) - 1;
    }
    CHECK(ok);
    const t2__asha_entry *f = t2__asha_rung_flat(&r);
    for (size_t k = 0; f && k < r.n && ok; k++) ok = f[k].metric == (double)k;
    CHECK(f && ok);
    t2__asha_rung_free(&r);
}

int main(void)
{
    against_array(1, 1);
    against_array(0, 2);
    against_array(1, 3);
    large();
    return check_report("test_asha_rung");
}
