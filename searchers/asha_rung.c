/* asha_rung.c — an ASHA rung's results in metric order (see asha.h): a treap whose in-order
 * sequence is the rung, each node knowing its subtree's size, so that an insert at a metric's
 * place, its rank and the k-th entry cost O(log n) where a sorted array moved half the rung on
 * every insert. The order is the sorted array's exactly: a metric's place is found by the same
 * comparison (a rung's metrics are finite numbers, NaN having been made the worst before), and
 * equal metrics keep the order their inserts asked. Priorities come from a hash of the node's
 * index, so the tree's shape, which nothing observes, is the same on every run. */
#include <stdlib.h>
#include <string.h>
#include "asha.h"
#include "t2exp/error.h"

static uint32_t prio_of(uint64_t i)
{
    uint64_t z = i * 0x9E3779B97F4A7C15ull; /* splitmix64's finaliser */
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return (uint32_t)(z ^ (z >> 31));
}

static uint32_t size_of(const t2__asha_node *v, uint32_t t) { return t ? v[t].size : 0; }

static void update(t2__asha_node *v, uint32_t t) { v[t].size = size_of(v, v[t].left) + size_of(v, v[t].right) + 1; }

static int goes_before(double have, double metric, int after_equal)
{
    return after_equal ? have <= metric : have < metric;
}

/* t's entries whose metric goes before `metric` into *l, the rest into *r. */
static void split(t2__asha_node *v, uint32_t t, double metric, int after_equal, uint32_t *l, uint32_t *r)
{
    if (!t) {
        *l = *r = 0;
        return;
    }
    if (goes_before(v[t].e.metric, metric, after_equal)) {
        split(v, v[t].right, metric, after_equal, &v[t].right, r);
        *l = t;
    } else {
        split(v, v[t].left, metric, after_equal, l, &v[t].left);
        *r = t;
    }
    update(v, t);
}

/* a's entries, then b's. */
static uint32_t merge(t2__asha_node *v, uint32_t a, uint32_t b)
{
    if (!a || !b) return a ? a : b;
    if (v[a].prio > v[b].prio) {
        v[a].right = merge(v, v[a].right, b);
        update(v, a);
        return a;
    }
    v[b].left = merge(v, a, v[b].left);
    update(v, b);
    return b;
}

/* A new node for e (not yet in the tree), or 0 when out of memory. */
static uint32_t new_node(t2__asha_rung *r, t2__asha_entry e)
{
    if (r->n + 2 > r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 16;
        if (cap > UINT32_MAX) return 0;
        t2__asha_node *v = realloc(r->node, cap * sizeof *v);
        if (!v) return 0;
        r->node = v;
        r->cap = cap;
    }
    uint32_t t = (uint32_t)++r->n;
    r->node[t] = (t2__asha_node){.e = e, .size = 1, .prio = prio_of(t)};
    r->gen++;
    return t;
}

size_t t2__asha_rung_rank(const t2__asha_rung *r, double metric, int after_equal)
{
    size_t k = 0;
    for (uint32_t t = r->root; t;) {
        if (goes_before(r->node[t].e.metric, metric, after_equal)) {
            k += size_of(r->node, r->node[t].left) + 1;
            t = r->node[t].right;
        } else {
            t = r->node[t].left;
        }
    }
    return k;
}

ptrdiff_t t2__asha_rung_insert(t2__asha_rung *r, int64_t rid, double metric, int after_equal, int promoted)
{
    uint32_t t = new_node(r, (t2__asha_entry){.request_id = rid, .metric = metric, .promoted = promoted});
    if (!t) return -1;
    uint32_t a, b;
    split(r->node, r->root, metric, after_equal, &a, &b);
    ptrdiff_t at = (ptrdiff_t)size_of(r->node, a);
    r->root = merge(r->node, merge(r->node, a, t), b);
    return at;
}

int t2__asha_rung_append(t2__asha_rung *r, t2__asha_entry e)
{
    uint32_t t = new_node(r, e);
    if (!t) return t2_seterr(T2_ENOMEM, "searcher: out of memory");
    r->root = merge(r->node, r->root, t);
    return T2_OK;
}

static uint32_t node_at(const t2__asha_rung *r, size_t k)
{
    uint32_t t = r->root;
    while (t) {
        size_t left = size_of(r->node, r->node[t].left);
        if (k < left) {
            t = r->node[t].left;
        } else if (k == left) {
            return t;
        } else {
            k -= left + 1;
            t = r->node[t].right;
        }
    }
    return 0;
}

const t2__asha_entry *t2__asha_rung_at(const t2__asha_rung *r, size_t k)
{
    return &r->node[node_at(r, k)].e; /* k < n: a node */
}

void t2__asha_rung_promote(t2__asha_rung *r, size_t k)
{
    r->node[node_at(r, k)].e.promoted = 1;
    r->gen++;
}

/* In order into out (which has room for the subtree). */
static size_t flatten(const t2__asha_node *v, uint32_t t, t2__asha_entry *out)
{
    size_t n = 0;
    while (t) {
        n += flatten(v, v[t].left, out + n);
        out[n++] = v[t].e;
        t = v[t].right; /* the right side as a loop: recursion only as deep as the left spines */
    }
    return n;
}

const t2__asha_entry *t2__asha_rung_flat(t2__asha_rung *r)
{
    if (!r->n) return r->flat;
    if (r->flat && r->flat_gen == r->gen) return r->flat;
    t2__asha_entry *f = realloc(r->flat, r->n * sizeof *f);
    if (!f) return NULL;
    r->flat = f;
    flatten(r->node, r->root, f);
    r->flat_gen = r->gen;
    return f;
}

int t2__asha_rung_remove(t2__asha_rung *r, int64_t rid)
{
    const t2__asha_entry *f = t2__asha_rung_flat(r);
    if (!f && r->n) return t2_seterr(T2_ENOMEM, "searcher: out of memory");
    size_t k = 0;
    while (k < r->n && f[k].request_id != rid) k++;
    if (k == r->n) return T2_OK;
    /* Rebuilt from the order without it: rare (a trial with invalid hparams), so O(n) is fine. */
    size_t n = r->n;
    t2__asha_entry *keep = malloc(n * sizeof *keep);
    if (!keep) return t2_seterr(T2_ENOMEM, "searcher: out of memory");
    memcpy(keep, f, k * sizeof *keep);
    memcpy(keep + k, f + k + 1, (n - k - 1) * sizeof *keep);
    r->n = 0;
    r->root = 0;
    int rc = T2_OK;
    for (size_t i = 0; i + 1 < n && !rc; i++) rc = t2__asha_rung_append(r, keep[i]); /* room is there: no failure */
    free(keep);
    r->gen++;
    return rc;
}

void t2__asha_rung_free(t2__asha_rung *r)
{
    free(r->node);
    free(r->flat);
    r->node = NULL;
    r->flat = NULL;
    r->n = r->cap = 0;
    r->root = 0;
    r->gen++;
    r->flat_gen = r->closed_gen = 0;
}
