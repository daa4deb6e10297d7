/* host_probe.h — does a pool host still answer? One probe is one `mpirun -np 1 --host NAME true`
 * through the launcher Open MPI uses (ssh, or the agent set by OMPI_MCA_plm_rsh_agent), started
 * and then looked at without waiting: the controller's loop goes on meanwhile (host_check.c). */
#ifndef T2_CONTROLLER_HOST_PROBE_H
#define T2_CONTROLLER_HOST_PROBE_H

#include <limits.h>
#include <stddef.h>
#include <sys/types.h>

typedef struct t2__host_probe {
    pid_t pid;              /* its mpirun (0: ended and reaped) */
    double deadline;        /* t2__now() by which the host must have answered */
    double timeout_s;
    char session[PATH_MAX]; /* its mpirun's own session directory (trial_proc.h) */
} t2__host_probe;

/* Starts probing host `name`, to answer within timeout_s seconds, with env[0..nenv) ("NAME=value",
 * environment.environment_variables) in mpirun's environment as a trial's launch has them: the
 * launcher they name is the one the trials reached the host through. T2_EIO if fork fails. */
int t2__host_probe_start(t2__host_probe *p, const char *name, double timeout_s, char *const *env, size_t nenv);
/* Never waits: 2 while the probe runs and has time left, 1 when the host answered, 0 when it did
 * not (why gets the reason; a probe past its deadline is ended here). */
int t2__host_probe_check(t2__host_probe *p, double now, char *why, size_t len);
/* Ends a probe still running (its launcher too) and leaves nothing of it behind. */
void t2__host_probe_stop(t2__host_probe *p);

#endif
