/* slot_pool.h — the slots trials run on (internal): resources.hostfile's hosts, or else those of
 * the Slurm allocation t2exp runs in (slurm_alloc.h), each with its slots and how many running
 * trials hold. A trial takes its slots (on one host where one holds them all) and gets them as a
 * hostfile of its own, so no host ever runs more ranks than it has slots. Without a pool, trials
 * use this machine's cores (schedule.h counts them). */
#ifndef T2_CONTROLLER_SLOT_POOL_H
#define T2_CONTROLLER_SLOT_POOL_H

#include <signal.h>
#include <stddef.h>
#include "hostfile.h"

typedef struct t2__slot_pool {
    t2__host *hosts; /* NULL: no pool (trials run here) */
    int nhosts;
    int total;       /* sum of the slots of the hosts not dead */
    char origin[512]; /* where the hosts came from when not from a hostfile (the Slurm job), for
                         the controller's log; "" otherwise */
} t2__slot_pool;

/* Reads resources.hostfile; without one (path NULL), and with `slurm` set inside a Slurm job
 * (SLURM_JOB_ID in the environment), the job's allocation; else an empty pool (trials run
 * here). Checked before anything runs, so a bad one is a usage error with its file:line (or the
 * Slurm variable), not a failed experiment. T2_ESTOPPED when *stop (may be NULL) became set while
 * the hostfile's names were looked up. */
int t2__pool_load(t2__slot_pool *p, const char *path, int slurm, const volatile sig_atomic_t *stop);
/* The same pool without looking its hosts up (preview's slot check): slots and names only. */
int t2__pool_read(t2__slot_pool *p, const char *path, int slurm);
/* The second half of t2__pool_load: p (from t2__pool_read with the same path) looked up and
 * checked; p freed on an error. */
int t2__pool_lookup(t2__slot_pool *p, const char *path, const volatile sig_atomic_t *stop);
/* T2_EINVAL naming both when two of the n hosts are one machine as Open MPI counts them (this
 * machine under two names; two names of one address): host_alias.c. Names that do not resolve
 * now (or within 12 s for each 256 of them, looked up side by side) are not compared. Each host's ipv4 gets its first
 * address. `what` names the pool in the message ("resources.hostfile PATH"; NULL: look the names
 * up for their addresses only, refusing nothing, as for a Slurm allocation); T2_ESTOPPED, nothing
 * checked, when *stop (may be NULL) became set meanwhile. */
int t2__pool_check_aliases(t2__host *h, int n, const char *what, const volatile sig_atomic_t *stop);
/* How long t2__pool_check_aliases waits for n names' lookups: 12 s for each 256 of them. */
double t2__host_lookup_deadline(int names);
void t2__pool_free(t2__slot_pool *p);

/* Which slots a trial wanting `slots` gets: take[h] of host h; all on the host with the most free
 * slots where one holds them all, else filling hosts in order. Pure: the pool is not changed.
 * T2_ESTATE if the pool has not that many free. */
int t2__pool_pick(const t2__slot_pool *p, int slots, int *take);
/* The most threads a rank may run (t2_set_num_threads' limit, and P's). */
#define T2__MAX_RANK_THREADS 64
/* Threads for each rank of a trial about to hold take[] (not held yet): want, but on each of its
 * hosts at most the slots there that no running rank's threads take, over the trial's ranks there
 * (a slot is a core: a trial given the whole pool's share put 8 threads on a 4-slot host, and more
 * than 64 failed it), and 1..T2__MAX_RANK_THREADS. */
int t2__pool_rank_threads(const t2__slot_pool *p, const int *take, int want);
/* Marks take[] as held (+1) or given back (-1), each rank with `threads` threads (the same count
 * both ways). */
void t2__pool_hold(t2__slot_pool *p, const int *take, int threads, int sign);
/* Takes host h out of the pool for good (its slots no longer count, no trial gets them). */
void t2__pool_kill(t2__slot_pool *p, int h);

/* Writes the hosts of take[] as an Open MPI hostfile at path (0600). */
int t2__pool_write_hostfile(const t2__slot_pool *p, const int *take, const char *path);

#endif
