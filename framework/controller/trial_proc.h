/* trial_proc.h — starting a local trial runner as a forked child and reaping it (internal). */
#ifndef T2_CONTROLLER_TRIAL_PROC_H
#define T2_CONTROLLER_TRIAL_PROC_H

#include <sys/types.h>
#include "runner/channel_auth.h"
#include "runner/runner.h"

/* Forks a child that writes its stdout/stderr to log_path (appending), closes the descriptors in
 * close_fds[0..nclose) it inherited, and runs t2__runner_run(args) with args->fd set to its end of
 * a fresh socketpair. *pid gets the child, *fd the controller's end. T2_EIO if fork or the
 * socketpair fails, or the log cannot be opened. */
int t2__trial_proc_start(const t2__runner_args *args, const char *log_path, const int *close_fds, int nclose,
                         pid_t *pid, int *fd);

/* Forks a long-lived worker (resources.isolation: worker) that serves trials on its channel
 * (runner/worker.h) with base's config, trial object and checkpoint directory; its stdout/stderr
 * go to log_fd (the worker's log, opened O_APPEND by the caller, who keeps it). close_fds as
 * above. *pid and *fd as above. T2_EIO as above. */
int t2__worker_proc_start(const t2__runner_args *base, int log_fd, const int *close_fds, int nclose, pid_t *pid,
                          int *fd);

/* The trial guardian for this run of an experiment (proc_group.c): started by open, told of every
 * trial and worker group the calls below start and reap, and ended by close. If the controller is
 * killed instead, the guardian ends the groups still live: what the trials started dies with them.
 * t2__trial_guard_fd: its pipe's descriptor, which every child must close (-1: none runs). */
void t2__trial_guard_open(void);
int t2__trial_guard_fd(void);
void t2__trial_guard_close(void);

/* Reaps the child pid, a process group's leader (a trial's process, a worker, mpirun), as
 * waitpid(pid, status, options) does (WNOHANG: 0 while it runs; EINTR retried), and ends the rest
 * of its group first: the processes the trial started that outlived it (a helper, a server it
 * spawned), which would otherwise run on with nobody to end them.
 * Its end is seen before it is reaped (WNOWAIT), so the group id cannot yet be another's. */
pid_t t2__reap_group(pid_t pid, int *status, int options);

/* Describes a wait status: "exited with status 1", "killed by signal 11 (Segmentation fault)". */
const char *t2__wait_status_str(int status, char *buf, size_t len);
/* Waits up to s seconds for child pid to end, looking every millisecond: 1 with its wait status in
 * *status once it has (reaped by t2__reap_group), 0 while it still runs, -1 (errno set) when it cannot be waited for (not a
 * child of this process, or already reaped). */
int t2__wait_pid_for(pid_t pid, double s, int *status);

/* The processes an mpirun started, noted while it runs (proc_tree.c): ending mpirun and its group
 * left the ssh it starts for a remote host (a group of its own) running for good. */
#define T2__PROC_TREE_MAX 64
typedef struct {
    pid_t pid;
    unsigned long long start; /* its start time, so that a reused pid is never signalled */
} t2__proc_id;
typedef struct t2__proc_tree {
    t2__proc_id v[T2__PROC_TREE_MAX];
    size_t n;
} t2__proc_tree;
/* Adds root's descendants to those t noted before (t starts zeroed; up to T2__PROC_TREE_MAX in all;
 * none if root is gone). */
void t2__proc_tree_note(t2__proc_tree *t, pid_t root);
/* SIGKILLs each noted process that is still the same process (and the group it leads); empties t.
 * After root was reaped: those still there outlived it. */
void t2__proc_tree_end(t2__proc_tree *t);

/* An Open MPI session directory of its own for one mpirun: $TMPDIR/ompi.t2exp.<16 hex digits>
 * (trial_mpi.c says why). The controller removes it once that mpirun is reaped
 * (t2__mpi_session_remove): an mpirun that is killed cannot, and left 8 MB behind each time. */
int t2__mpi_session_new(char *out, size_t cap);
/* *out: this process's environment with set[0..nset) ("NAME=value") set, the last of a name winning,
 * for a child to exec with (environ = *out; execvp): built before fork (launch_env.c). Freed with
 * t2__launch_env_free. */
int t2__launch_env(const char *const *set, size_t nset, char ***out);
void t2__launch_env_free(char **env);
/* Removes session directory path and what is in it, if it is one of t2__mpi_session_new's names. */
void t2__mpi_session_remove(const char *path);

/* A distributed trial: mpirun -np slots [--hostfile F] runs `self_exe run-trial` on every slot;
 * rank 0 connects back to listen_fd (at connect_addr), where the controller's event loop takes the
 * call (launch.c). stdout/stderr of all ranks go to log_path. */
typedef struct t2__mpi_launch {
    int slots;
    const char *hostfile;     /* NULL: this machine */
    const char *self_exe;     /* the t2exp program */
    const char *connect_addr; /* HOST:PORT the ranks reach the controller's listening socket at */
    int64_t trial_id;
    const char *log_path;
    const int *close_fds;
    int nclose;
    char *const *env; /* environment.environment_variables ("NAME=value"): set for mpirun, -x NAME to ranks */
    size_t nenv;
    char *session_out; /* gets the launch's session directory (t2__mpi_session_new) */
    size_t session_cap;
} t2__mpi_launch;

/* Forks mpirun with a fresh channel key for this launch (in its environment, never on a command
 * line) and returns at once: *pid is mpirun, key_out the key rank 0 must prove it holds. T2_EIO
 * if the log cannot be opened or fork fails, T2_EINVAL for a bad environment variable. A trial
 * whose start then fails (mpirun exits, no call back) is launch.c's to settle. */
int t2__trial_mpi_start(const t2__mpi_launch *l, pid_t *pid, unsigned char key_out[T2__AUTH_KEY_BYTES]);

/* A listening TCP socket on addr (e.g. "127.0.0.1", "0.0.0.0") with a free port; non-blocking. */
int t2__listen_tcp(const char *addr, int *fd, int *port);

#endif
