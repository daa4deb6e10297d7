/* slurm_alloc.h — a Slurm allocation as the slot pool (internal). Inside a job (SLURM_JOB_ID
 * set) and without resources.hostfile, the allocation's nodes are the hosts and its tasks per
 * node their slots, read from the variables Slurm sets for a job: SLURM_JOB_NODELIST (or the
 * older SLURM_NODELIST) and SLURM_TASKS_PER_NODE (else SLURM_JOB_CPUS_PER_NODE). Tasks, not
 * CPUs, because Open MPI's mpirun counts an allocation's slots the same way, so a trial's ranks
 * never exceed what mpirun itself allows inside the job. The two parsers are pure so a unit test
 * covers them without Slurm. */
#ifndef T2_CONTROLLER_SLURM_ALLOC_H
#define T2_CONTROLLER_SLURM_ALLOC_H

#include <stddef.h>
#include "hostfile.h"

/* Most hosts one list may expand to: far above any real allocation, and it bounds the memory a
 * typo like "n[0-999999999]" could ask for. */
#define T2__SLURM_MAX_HOSTS 100000

/* Expands Slurm's compact host list, `what` naming it in messages: comma-separated names, each
 * with any number of bracketed ranges ("node[01-03,07]", "r[1-2]n[1-2]", a cartesian product,
 * leftmost outermost); a range keeps the width of its first number ("[08-10]": 08 09 10). Hosts
 * come in the list's order with slots 0. T2_EINVAL with "WHAT: \"LIST\" at column C: problem"
 * for bad syntax, a name outside the hostfile's alphabet, an empty list or one over
 * T2__SLURM_MAX_HOSTS; T2_ENOMEM. On error *hosts is NULL and *nhosts 0. */
int t2__slurm_nodelist(const char *list, const char *what, t2__host **hosts, int *nhosts);

/* Parses a per-node count list ("2(x3),1": 2 2 2 1) into exactly n counts, each 1..INT_MAX.
 * T2_EINVAL with "WHAT: \"SPEC\" ..." for bad syntax or a count of entries other than n. */
int t2__slurm_counts(const char *spec, const char *what, int *counts, int n);

/* The allocation from this process's environment: hosts with their slots (free with free()),
 * *total their sum, and origin a one-line description for the controller's log ("Slurm job 42:
 * SLURM_JOB_NODELIST=..., SLURM_TASKS_PER_NODE=..."). T2_EINVAL when SLURM_JOB_ID is set but
 * the variables are missing or unreadable; the message says resources.slurm: off avoids it. */
int t2__slurm_pool_env(t2__host **hosts, int *nhosts, int *total, char *origin, size_t len);

#endif
