/* host_history.h — where a trial ran, run after run: the `hosts` column (internal, no I/O).
 *
 * The column held only the latest run's hosts, so a trial that restarted on another host after
 * its first one died named only the second (probe_L finding 7). It now lists every placement the
 * controller launched the trial on, in order of first use and each once, separated by "; ":
 * "10.78.0.2:1; 10.78.0.1:1". A placement is one run's "host:slots,host:slots" (rank 0 on the
 * first host), or T2__HOSTS_LOCAL for a run on the controller's machine without a pool. A trial
 * that only ever ran locally has no history (the column stays empty, as before); one that ran on
 * a pool and then locally (resumed outside its Slurm job) says so: "vm:1; local". */
#ifndef T2_CONTROLLER_HOST_HISTORY_H
#define T2_CONTROLLER_HOST_HISTORY_H

#define T2__HOSTS_LOCAL "local"
#define T2__HOSTS_SEP "; "

/* The history after one more run placed at `run` (non-empty). history: the column so far (NULL
 * or "": none). *out: the new history, malloc'd, or NULL when the run adds nothing (a placement
 * already listed, or a local run with no history). T2_OK, T2_EINVAL, T2_ENOMEM. */
int t2__hosts_history_add(const char *history, const char *run, char **out);

#endif
