/* pool_use.c — the slot pool loaded, and a trial's use of it: the slots it takes (as a hostfile of its
 * own), where it ran (its hosts history, recorded in the store), the slots it gives back (after it failed, host_check.c
 * asks which of its hosts still answer). */
#define _XOPEN_SOURCE 700
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ctl.h"
#include "dist/comm.h"
#include "host_history.h"
#include "internal.h"
#include "schedule.h"

/* Pools of more names than this say that they are being looked up (below). */
#define LOOKUP_NOTE_AT 256

int t2__ctl_load_pool(t2__ctl *c)
{
    /* Without MPI no trial could start on the allocation's hosts: the allocation is then left
     * alone and trials run here, as they would outside Slurm. */
    int rc = t2__pool_read(&c->pool, c->cfg->resources.hostfile,
                           !c->cfg->resources.slurm_off && t2__comm_have_mpi());
    if (rc) return rc;
    /* A big pool's lookups can take minutes on a resolver that drops bursts, and create said
     * nothing meanwhile (2,000 names: 60 s; probe_N): a line first, with the bound. */
    if (c->pool.nhosts > LOOKUP_NOTE_AT && c->o && c->o->out)
        t2__progress_line(c->o->out, "looking up the pool's %d host names (at most %.0f s; Ctrl-C stops)",
                          c->pool.nhosts, t2__host_lookup_deadline(c->pool.nhosts));
    return t2__pool_lookup(&c->pool, c->cfg->resources.hostfile, &t2__ctl_interrupted);
}

/* t2__sched_plan for cfg on a pool of pool_slots (as t2__sched_limits has it), with a refusal
 * said where slots_per_trial was set: "FILE:LINE:COL: resources.slots_per_trial = 8, but ...". */
int t2__ctl_fit(const t2__config *cfg, int pool_slots, int64_t expected_trials, struct t2__sched_capacity *cap)
{
    t2__sched_limits lim = {.cores = t2__ctl_cores(),
                            .pool_slots = pool_slots,
                            .slots_per_trial = cfg->resources.slots_per_trial,
                            .max_slots = cfg->resources.max_slots,
                            .max_concurrent_trials = cfg->searcher.max_concurrent_trials,
                            .expected_trials = expected_trials,
                            .max_threads_per_trial = cfg->resources.max_threads_per_trial};
    int rc = t2__sched_plan(&lim, cap);
    if (rc == T2_EINVAL && cfg->resources.slots_per_trial_at) {
        char why[1024];
        t2__fmt_fit(why, sizeof why, "%s", t2_errmsg());
        rc = t2_seterr(T2_EINVAL, "%s: %s", cfg->resources.slots_per_trial_at, why);
    }
    return rc;
}

/* create's slot check on the pool cfg names, its hosts not looked up: preview passed a quarter of
 * Determined's example configs that create then refused on a laptop (slots_per_trial 8 on 2
 * cores; probe_K D8). */
int t2__ctl_check_slots(const t2__config *cfg)
{
    t2__slot_pool pool;
    int rc = t2__pool_read(&pool, cfg->resources.hostfile, !cfg->resources.slurm_off && t2__comm_have_mpi());
    if (rc) return rc;
    t2__sched_capacity cap;
    rc = t2__ctl_fit(cfg, pool.total, 0, &cap);
    t2__pool_free(&pool);
    return rc;
}

/* Says where the pool came from when no hostfile named it, so a run inside a Slurm job shows
 * that its trials go to the allocation's hosts. */
void t2__ctl_log_pool(t2__ctl *c)
{
    if (!c->pool.origin[0]) return;
    t2__progress_line(c->o->out, "slot pool: %d slot(s) on %d host(s) from the allocation of %s", c->pool.total,
                      c->pool.nhosts, c->pool.origin);
}

/* Gives a distributed trial its slots from the hostfile's pool, written as a hostfile of its own
 * beside its log, and lowers t->threads (each rank's) to what its hosts' free slots allow. */
int t2__ctl_take_slots(t2__ctl *c, t2__ctl_trial *t, int slots, char *path, size_t len)
{
    t->host_slots = calloc((size_t)c->pool.nhosts, sizeof *t->host_slots);
    if (!t->host_slots) return t2_seterr(T2_ENOMEM, "controller: out of memory");
    int rc = t2__pool_pick(&c->pool, slots, t->host_slots);
    if (!rc) {
        t->threads = t2__pool_rank_threads(&c->pool, t->host_slots, t->threads);
        snprintf(path, len, "%s.hosts", t->log_path);
        t2__pool_hold(&c->pool, t->host_slots, t->threads, +1);
        if ((rc = t2__pool_write_hostfile(&c->pool, t->host_slots, path)))
            t2__pool_hold(&c->pool, t->host_slots, t->threads, -1);
    }
    if (rc) {
        free(t->host_slots);
        t->host_slots = NULL;
    }
    return rc;
}

void t2__ctl_release_slots(t2__ctl *c, t2__ctl_trial *t)
{
    t2__pool_hold(&c->pool, t->host_slots, t->threads, -1); /* t->threads: as held (MPI trials keep it) */
    free(t->host_slots);
    t->host_slots = NULL;
}

/* Records where t runs now, as one more placement of its history (host_history.h): on the pool,
 * "host:slots,..." in the pool's order (mpirun fills a hostfile in order, so rank 0 is on the
 * first); without one, T2__HOSTS_LOCAL. Written only when the history grows. */
int t2__ctl_record_hosts(t2__ctl *c, t2__ctl_trial *t)
{
    size_t len = sizeof T2__HOSTS_LOCAL;
    for (int h = 0; t->host_slots && h < c->pool.nhosts; h++)
        if (t->host_slots[h]) len += strlen(c->pool.hosts[h].name) + 16;
    char *s = malloc(len), *p = s, *grown = NULL;
    if (!s) return t2_seterr(T2_ENOMEM, "controller: out of memory");
    *p = '\0';
    for (int h = 0; t->host_slots && h < c->pool.nhosts; h++)
        if (t->host_slots[h]) p += sprintf(p, "%s%s:%d", p == s ? "" : ",", c->pool.hosts[h].name, t->host_slots[h]);
    if (!s[0]) strcpy(s, T2__HOSTS_LOCAL);
    int rc = t2__hosts_history_add(t->hosts, s, &grown);
    free(s);
    if (rc || !grown) return rc;
    free(t->hosts);
    t->hosts = grown;
    return t2__store_set_trial_hosts(c->st, t->id, grown);
}
