/* loader.c — batches from a dataset: per-epoch permutation, rank sharding, transforms, and
 * optional prefetch threads feeding a bounded ring of batch slots.
 *
 * Every batch is a pure function of (dataset, params, epoch, batch index), so batches can be built
 * by any thread in any order; the ring only decides when. Batches are numbered by a sequence seq
 * counted from the position the pipeline started at. Workers claim seq in order while
 * seq < released + nslots; the consumer takes seq in order, and "releases" the batch it handed out
 * last time when it is called again, which is what keeps the slot the caller holds untouched. */
#define _DEFAULT_SOURCE /* POSIX: O_CLOEXEC, mkstemp, fchmod, madvise, strdup */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "data_internal.h"
#include "internal.h"

#define MAX_WORKERS 256
#define MAX_PREFETCH 1024

typedef struct slot {
    float *x;
    int32_t *labels;
    float *targets;     /* batch_size * target_width, or NULL */
    uint32_t *indices;
    t2_batch batch;
    int64_t seq;
    int ready;
    int rc;
    char err[512];
} slot;

/* One epoch's permutation, cached per thread so workers never share or lock it. */
typedef struct perm_cache {
    uint32_t *perm;
    int64_t epoch;
} perm_cache;

typedef struct worker {
    t2_loader *l;
    pthread_t th;
    perm_cache pc;
    float *scratch;
} worker;

struct t2_loader {
    t2_dataset *ds;
    t2_loader_params p;
    t2__xform xf;
    int64_t nb;         /* batches per epoch */
    int64_t G;          /* global batch size */
    int64_t epoch, batch; /* position of the next batch handed out */

    int nslots;
    slot *slots;
    worker *workers;    /* num_workers entries, or one for synchronous mode */
    int running;
    pthread_mutex_t mu;
    pthread_cond_t cv_work, cv_ready;
    int sync_ok;        /* mutex and conditions initialised */
    int stop;
    int64_t base_epoch, base_batch; /* position of seq 0 */
    int64_t next_claim, next_deliver, released;
};

t2_loader_params t2_loader_params_default(void)
{
    t2_loader_params p;
    memset(&p, 0, sizeof p);
    p.batch_size = 32;
    p.world_size = 1;
    p.prefetch = 2;
    p.repeat = 1;
    for (int c = 0; c < T2_LOADER_MAX_CHANNELS; c++) p.std[c] = 1.0f;
    return p;
}

static const uint32_t *get_perm(const t2_loader *l, perm_cache *pc, int64_t epoch)
{
    if (!l->p.shuffle) return NULL;
    if (pc->epoch != epoch) {
        uint32_t n = l->ds->n;
        for (uint32_t i = 0; i < n; i++) pc->perm[i] = i;
        t2_rng r;
        t2_rng_seed(&r, t2__epoch_seed(l->p.seed, epoch));
        t2_rng_shuffle_u32(&r, pc->perm, n);
        pc->epoch = epoch;
    }
    return pc->perm;
}

/* This rank's share of global batch k: positions [*off, *off + *cnt) of the epoch's order. */
static void shard(const t2_loader *l, int64_t k, int64_t *off, int64_t *cnt)
{
    int64_t start = k * l->G, m = (int64_t)l->ds->n - start, W = l->p.world_size, r = l->p.rank;
    if (m >= l->G) {
        *off = start + r * l->p.batch_size;
        *cnt = l->p.batch_size;
    } else {
        int64_t q = m / W, rem = m % W;
        *off = start + r * q + (r < rem ? r : rem);
        *cnt = q + (r < rem);
    }
}

static int assemble(const t2_loader *l, slot *s, int64_t epoch, int64_t k, worker *w)
{
    const t2_dataset *ds = l->ds;
    int64_t off, cnt;
    shard(l, k, &off, &cnt);
    const uint32_t *perm = get_perm(l, &w->pc, epoch);
    uint64_t es = t2__epoch_seed(l->p.seed, epoch);
    size_t tw = (size_t)ds->target_width;
    for (int64_t i = 0; i < cnt; i++) {
        uint32_t idx = perm ? perm[off + i] : (uint32_t)(off + i);
        s->indices[i] = idx;
        int rc = t2__xform_sample(&l->xf, ds, idx, t2__sample_seed(es, idx), s->x + (size_t)i * ds->numel,
                                  &s->labels[i], s->targets ? s->targets + (size_t)i * tw : NULL, w->scratch);
        if (rc) return rc;
    }
    int shape[4] = {(int)cnt, ds->shape[0], ds->shape[1], ds->shape[2]};
    s->batch.x = t2_tensor_view(s->x, 1 + ds->ndim, shape);
    s->batch.labels = ds->num_classes > 0 ? s->labels : NULL;
    s->batch.indices = s->indices;
    s->batch.targets = s->targets;
    s->batch.target_width = ds->target_width;
    s->batch.n = (int)cnt;
    s->batch.epoch = epoch;
    s->batch.index = k;
    return T2_OK;
}

static void seq_pos(const t2_loader *l, int64_t seq, int64_t *epoch, int64_t *k)
{
    int64_t abs = l->base_batch + seq;
    *epoch = l->base_epoch + abs / l->nb;
    *k = abs % l->nb;
}

static void *worker_main(void *arg)
{
    worker *w = arg;
    t2_loader *l = w->l;
    pthread_mutex_lock(&l->mu);
    for (;;) {
        while (!l->stop && l->next_claim >= l->released + l->nslots) pthread_cond_wait(&l->cv_work, &l->mu);
        if (l->stop) break;
        int64_t seq = l->next_claim++, epoch, k;
        slot *s = &l->slots[seq % l->nslots];
        seq_pos(l, seq, &epoch, &k);
        pthread_mutex_unlock(&l->mu);
        int rc = assemble(l, s, epoch, k, w);
        if (rc) snprintf(s->err, sizeof s->err, "%s", t2_errmsg()); /* the message is per thread */
        pthread_mutex_lock(&l->mu);
        s->seq = seq;
        s->rc = rc;
        s->ready = 1;
        pthread_cond_broadcast(&l->cv_ready);
    }
    pthread_mutex_unlock(&l->mu);
    return NULL;
}

static void stop_workers(t2_loader *l)
{
    if (!l->running) return;
    pthread_mutex_lock(&l->mu);
    l->stop = 1;
    pthread_cond_broadcast(&l->cv_work);
    pthread_mutex_unlock(&l->mu);
    for (int i = 0; i < l->running; i++) pthread_join(l->workers[i].th, NULL);
    l->running = 0;
}

static int start_workers(t2_loader *l)
{
    l->stop = 0;
    l->base_epoch = l->epoch;
    l->base_batch = l->batch;
    l->next_claim = l->next_deliver = l->released = 0;
    for (int i = 0; i < l->nslots; i++) l->slots[i].ready = 0;
    for (int i = 0; i < l->p.num_workers; i++) {
        int e = pthread_create(&l->workers[i].th, NULL, worker_main, &l->workers[i]);
        if (e) {
            stop_workers(l);
            return t2_seterr(T2_ENOMEM, "loader: cannot start worker thread %d: %s", i, strerror(e));
        }
        l->running = i + 1;
    }
    return T2_OK;
}

int t2_loader_next(t2_loader *l, const t2_batch **out)
{
    if (!out) return t2_seterr(T2_EINVAL, "t2_loader_next: NULL out");
    *out = NULL;
    if (!l) return t2_seterr(T2_EINVAL, "t2_loader_next: NULL loader");
    if (l->batch == l->nb) { /* end of an epoch without repeat: one NULL, then the next epoch */
        l->epoch++;
        l->batch = 0;
        return T2_OK;
    }
    slot *s;
    if (l->p.num_workers == 0) {
        s = &l->slots[0];
        int rc = assemble(l, s, l->epoch, l->batch, &l->workers[0]);
        if (rc) return rc;
    } else {
        if (!l->running) {
            int rc = start_workers(l);
            if (rc) return rc;
        }
        pthread_mutex_lock(&l->mu);
        l->released = l->next_deliver;
        pthread_cond_broadcast(&l->cv_work);
        s = &l->slots[l->next_deliver % l->nslots];
        while (!(s->ready && s->seq == l->next_deliver)) pthread_cond_wait(&l->cv_ready, &l->mu);
        s->ready = 0;
        int rc = s->rc;
        if (rc == 0) l->next_deliver++;
        pthread_mutex_unlock(&l->mu);
        if (rc) {
            /* Restart the pipeline from this position on the next call, so it retries. */
            stop_workers(l);
            return t2_seterr(rc, "%s", s->err);
        }
    }
    *out = &s->batch;
    if (++l->batch == l->nb && l->p.repeat) {
        l->epoch++;
        l->batch = 0;
    }
    return T2_OK;
}

int64_t t2_loader_batches_per_epoch(const t2_loader *l) { return l ? l->nb : 0; }

int t2_loader_state_get(const t2_loader *l, t2_loader_state *st)
{
    if (!l || !st) return t2_seterr(T2_EINVAL, "t2_loader_state_get: NULL argument");
    st->epoch = l->epoch;
    st->batch = l->batch;
    return T2_OK;
}

int t2_loader_restore(t2_loader *l, const t2_loader_state *st)
{
    if (!l || !st) return t2_seterr(T2_EINVAL, "t2_loader_restore: NULL argument");
    if (st->epoch < 0 || st->batch < 0 || st->batch > l->nb)
        return t2_seterr(T2_EINVAL, "t2_loader_restore: position epoch %lld batch %lld outside 0..%lld",
                         (long long)st->epoch, (long long)st->batch, (long long)l->nb);
    stop_workers(l);
    l->epoch = st->epoch;
    l->batch = st->batch;
    if (l->batch == l->nb && l->p.repeat) {
        l->epoch++;
        l->batch = 0;
    }
    return T2_OK;
}

void t2_loader_free(t2_loader *l)
{
    if (!l) return;
    stop_workers(l);
    for (int i = 0; l->slots && i < l->nslots; i++) {
        t2__free_aligned(l->slots[i].x);
        free(l->slots[i].labels);
        free(l->slots[i].targets);
        free(l->slots[i].indices);
    }
    free(l->slots);
    int nw = l->p.num_workers > 0 ? l->p.num_workers : 1;
    for (int i = 0; l->workers && i < nw; i++) {
        free(l->workers[i].pc.perm);
        t2__free_aligned(l->workers[i].scratch);
    }
    free(l->workers);
    t2__xform_free(&l->xf);
    if (l->sync_ok) {
        pthread_cond_destroy(&l->cv_ready);
        pthread_cond_destroy(&l->cv_work);
        pthread_mutex_destroy(&l->mu);
    }
    if (l->p.own_dataset) t2_dataset_free(l->ds);
    free(l);
}

static int check_params(const t2_dataset *ds, const t2_loader_params *p)
{
    if (p->batch_size < 1) return t2_seterr(T2_EINVAL, "loader: batch_size %d (must be >= 1)", p->batch_size);
    if (p->world_size < 1 || p->world_size > T2__MAX_DIM)
        return t2_seterr(T2_EINVAL, "loader: world_size %d (must be 1..%d)", p->world_size, T2__MAX_DIM);
    if (p->rank < 0 || p->rank >= p->world_size)
        return t2_seterr(T2_EINVAL, "loader: rank %d outside 0..%d", p->rank, p->world_size - 1);
    if (p->num_workers < 0 || p->num_workers > MAX_WORKERS)
        return t2_seterr(T2_EINVAL, "loader: num_workers %d (must be 0..%d)", p->num_workers, MAX_WORKERS);
    if (p->prefetch < 1 || p->prefetch > MAX_PREFETCH)
        return t2_seterr(T2_EINVAL, "loader: prefetch %d (must be 1..%d)", p->prefetch, MAX_PREFETCH);
    if (p->repeat != 0 && p->repeat != 1) return t2_seterr(T2_EINVAL, "loader: repeat %d (must be 0 or 1)", p->repeat);
    if ((int64_t)p->batch_size * (int64_t)ds->numel > ((int64_t)1 << 40))
        return t2_seterr(T2_EINVAL, "loader: batch_size %d of %zu values is too large", p->batch_size, ds->numel);
    return T2_OK;
}

int t2_loader_create(t2_loader **out, t2_dataset *ds, const t2_loader_params *p)
{
    int rc;
    t2_loader *l = NULL;
    if (!out || !ds || !p) {
        rc = t2_seterr(T2_EINVAL, "t2_loader_create: NULL argument");
        goto fail;
    }
    *out = NULL;
    if ((rc = check_params(ds, p)) != 0) goto fail;
    int64_t G = (int64_t)p->batch_size * p->world_size, N = ds->n;
    int64_t nb = N / G + (!p->drop_last && N % G >= p->world_size);
    if (nb == 0) {
        rc = t2_seterr(T2_EINVAL, "loader: %lld samples make no batch of %d x %d ranks%s", (long long)N,
                       p->batch_size, p->world_size, p->drop_last ? " with drop_last" : "");
        goto fail;
    }
    if (!(l = calloc(1, sizeof *l))) goto nomem;
    l->ds = ds;
    l->p = *p;
    l->G = G;
    l->nb = nb;
    if ((rc = t2__xform_init(&l->xf, ds, p)) != 0) goto fail;
    int nw = p->num_workers > 0 ? p->num_workers : 1;
    l->nslots = p->num_workers == 0 ? 1 : (p->prefetch > p->num_workers ? p->prefetch : p->num_workers) + 1;
    if (!(l->slots = calloc((size_t)l->nslots, sizeof *l->slots))) goto nomem;
    for (int i = 0; i < l->nslots; i++) {
        slot *s = &l->slots[i];
        s->x = t2__alloc_aligned((size_t)p->batch_size * ds->numel, sizeof(float));
        s->labels = malloc((size_t)p->batch_size * sizeof(int32_t));
        s->indices = malloc((size_t)p->batch_size * sizeof(uint32_t));
        if (!s->x || !s->labels || !s->indices) goto nomem;
        if (ds->target_width > 0 &&
            !(s->targets = malloc((size_t)p->batch_size * (size_t)ds->target_width * sizeof(float))))
            goto nomem;
    }
    if (!(l->workers = calloc((size_t)nw, sizeof *l->workers))) goto nomem;
    for (int i = 0; i < nw; i++) {
        worker *w = &l->workers[i];
        w->l = l;
        w->pc.epoch = -1;
        if (p->shuffle && !(w->pc.perm = malloc((size_t)ds->n * sizeof(uint32_t)))) goto nomem;
        if (ds->pix_type == T2__PIX_NONE && !(w->scratch = t2__alloc_aligned(ds->numel, sizeof(float)))) goto nomem;
    }
    if (pthread_mutex_init(&l->mu, NULL) != 0) goto nomem;
    if (pthread_cond_init(&l->cv_work, NULL) != 0) {
        pthread_mutex_destroy(&l->mu);
        goto nomem;
    }
    if (pthread_cond_init(&l->cv_ready, NULL) != 0) {
        pthread_cond_destroy(&l->cv_work);
        pthread_mutex_destroy(&l->mu);
        goto nomem;
    }
    l->sync_ok = 1;
    *out = l;
    return T2_OK;
nomem:
    rc = t2_seterr(T2_ENOMEM, "t2_loader_create: out of memory");
fail:
    if (l) {
        t2_loader_free(l); /* frees ds too when it owns it */
    } else if (p && p->own_dataset) {
        t2_dataset_free(ds);
    }
    return rc;
}
