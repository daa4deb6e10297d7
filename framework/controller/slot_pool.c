/* slot_pool.c — the pool's slots (resources.hostfile's or the Slurm allocation's), given to
 * trials (see slot_pool.h). */
#define _XOPEN_SOURCE 700
#include "slot_pool.h"
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "internal.h"
#include "slurm_alloc.h"

int t2__pool_read(t2__slot_pool *p, const char *path, int slurm)
{
    memset(p, 0, sizeof *p);
    if (path) return t2__hostfile_load(path, &p->hosts, &p->nhosts, &p->total);
    if (slurm && getenv("SLURM_JOB_ID")) return t2__slurm_pool_env(&p->hosts, &p->nhosts, &p->total, p->origin, sizeof p->origin);
    return T2_OK;
}

int t2__pool_lookup(t2__slot_pool *p, const char *path, const volatile sig_atomic_t *stop)
{
    char what[PATH_MAX + 32] = "";
    if (path) snprintf(what, sizeof what, "resources.hostfile %s", path);
    /* The hosts are looked up here, before anything is recorded, and never in the event loop. An
     * allocation's names are looked up for their addresses only (what NULL). */
    int rc = p->nhosts ? t2__pool_check_aliases(p->hosts, p->nhosts, what[0] ? what : NULL, stop) : T2_OK;
    if (rc) t2__pool_free(p);
    return rc;
}

int t2__pool_load(t2__slot_pool *p, const char *path, int slurm, const volatile sig_atomic_t *stop)
{
    int rc = t2__pool_read(p, path, slurm);
    return rc ? rc : t2__pool_lookup(p, path, stop);
}

void t2__pool_free(t2__slot_pool *p)
{
    free(p->hosts);
    memset(p, 0, sizeof *p);
}

int t2__pool_pick(const t2__slot_pool *p, int slots, int *take)
{
    /* One host that holds the whole trial, the one with the most free slots (the first of equals):
     * its ranks then talk in shared memory (a trial split over hosts needlessly went over the
     * network: probe_N), and single-slot trials spread over the pool instead of piling onto its
     * first host, each with the most cores to use (t2__pool_rank_threads). Else hosts in the pool's
     * order, each filled. */
    int best = -1, best_free = 0;
    for (int h = 0; h < p->nhosts; h++) {
        int n = p->hosts[h].dead ? 0 : p->hosts[h].slots - p->hosts[h].used;
        take[h] = 0;
        if (n >= slots && n > best_free) best = h, best_free = n;
    }
    if (best >= 0) {
        take[best] = slots;
        return T2_OK;
    }
    int need = slots;
    for (int h = 0; h < p->nhosts; h++) {
        int n = p->hosts[h].dead ? 0 : p->hosts[h].slots - p->hosts[h].used;
        if (n > need) n = need;
        take[h] = n > 0 ? n : 0;
        need -= take[h];
    }
    if (need > 0)
        return t2_seterr(T2_ESTATE, "controller: %d free slots wanted, the pool has fewer free", slots);
    return T2_OK;
}

int t2__pool_rank_threads(const t2__slot_pool *p, const int *take, int want)
{
    int n = want;
    for (int h = 0; h < p->nhosts; h++) {
        if (!take[h]) continue;
        /* (threads >= used: t2__pool_hold gives each rank at least one.) */
        int free_here = p->hosts[h].slots - p->hosts[h].threads, per_rank = free_here / take[h];
        if (per_rank < n) n = per_rank;
    }
    if (n > T2__MAX_RANK_THREADS) n = T2__MAX_RANK_THREADS;
    return n > 0 ? n : 1;
}

void t2__pool_hold(t2__slot_pool *p, const int *take, int threads, int sign)
{
    if (threads < 1) threads = 1;
    for (int h = 0; take && h < p->nhosts; h++) {
        p->hosts[h].used += sign * take[h];
        p->hosts[h].threads += sign * take[h] * threads;
    }
}

void t2__pool_kill(t2__slot_pool *p, int h)
{
    if (h < 0 || h >= p->nhosts || p->hosts[h].dead) return;
    p->hosts[h].dead = 1;
    p->total -= p->hosts[h].slots;
}

int t2__pool_write_hostfile(const t2__slot_pool *p, const int *take, const char *path)
{
    /* 0600 like the trial log beside it: host names are nobody else's business. */
    int hfd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    FILE *f = hfd >= 0 ? fdopen(hfd, "w") : NULL;
    if (!f && hfd >= 0) close(hfd);
    int rc = f ? T2_OK : t2_seterr(T2_EIO, "%s: %s", path, strerror(errno));
    for (int h = 0; !rc && h < p->nhosts; h++)
        if (take[h] && fprintf(f, "%s slots=%d\n", p->hosts[h].name, take[h]) < 0)
            rc = t2_seterr(T2_EIO, "%s: %s", path, strerror(errno));
    if (f && fclose(f) != 0 && !rc) rc = t2_seterr(T2_EIO, "%s: %s", path, strerror(errno));
    return rc;
}
