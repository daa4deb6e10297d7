/* trial_proc.c — fork-per-trial: the child inherits the loaded trial object and libraries, so a
 * trial starts without exec or dynamic linking (ASHA and random search start many short trials). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "internal.h"
#include "parallel.h"
#include "runner/worker.h"
#include "trial_proc.h"

/* The trial guardian's pipe (proc_group.c), for the run of an experiment: -1 when none runs. One
 * controller runs in a process at a time; the forks and reaps below are its. */
static int guard_fd = -1;

void t2__trial_guard_open(void)
{
    if (guard_fd < 0) t2__trial_guard_start(&guard_fd);
}

int t2__trial_guard_fd(void) { return guard_fd; }

void t2__trial_guard_close(void)
{
    if (guard_fd >= 0) close(guard_fd);
    guard_fd = -1;
}

/* In the child: what a trial's process (or a worker) inherits from the controller is put right:
 * it leads a process group of its own (what it forks goes with it: t2__reap_group), it ends with
 * the controller (parent), Ctrl-C is the controller's to handle (it stops trials with SIGTERM),
 * the other trials' channels are closed, stdout/stderr go to out, stdin is /dev/null,
 * environment.environment_variables are set (in this process only, not the controller's) and the
 * thread pool is fresh. 0, or -1 when a descriptor or a variable cannot be set (the child exits 3).
 * Ending with the controller: a trial learned of a killed controller only when its batch ended and
 * its report found no reader, which could be minutes on, long after `t2exp resume` had started
 * the trial again beside it (its worker log interleaved with the new run's, its cores taken). The
 * resume restarts it from its latest checkpoint either way. */
static int child_setup(const t2__runner_args *args, int out, const int *close_fds, int nclose, pid_t parent)
{
    if (setpgid(0, 0) != 0) return -1;
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent) return -1;
    signal(SIGINT, SIG_IGN);
    signal(SIGTERM, SIG_DFL);
    signal(SIGPIPE, SIG_DFL);
    signal(SIGCHLD, SIG_DFL); /* the controller's counter is nothing to the trial */
    /* out first: it may be among close_fds (a worker's log, which the controller keeps). */
    if (dup2(out, STDOUT_FILENO) < 0 || dup2(out, STDERR_FILENO) < 0) return -1;
    close(out);
    for (int i = 0; i < nclose; i++)
        if (close_fds[i] >= 0 && close_fds[i] != out) close(close_fds[i]);
    int nul = open("/dev/null", O_RDONLY);
    if (nul >= 0) {
        dup2(nul, STDIN_FILENO);
        close(nul);
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    for (size_t i = 0; args->cfg && i < args->cfg->environment.nvars; i++) {
        char *v = args->cfg->environment.vars[i], *eq = strchr(v, '='); /* the loader checked the '=' */
        *eq = '\0'; /* this process's own copy of the config */
        int bad = setenv(v, eq + 1, 1);
        *eq = '=';
        if (bad) return -1;
    }
    t2__pool_reset_after_fork();
    return 0;
}

/* Forks a child with a fresh socketpair whose stdout/stderr go to out (the caller's descriptor,
 * still its own after the call), and runs body in it (worker: t2__worker_serve, else
 * t2__runner_run). */
static int fork_child(const t2__runner_args *args, int out, int worker, const int *close_fds, int nclose,
                      pid_t *pid, int *fd)
{
    const char *what = worker ? "worker" : "trial";
    long long id = worker ? 0 : (long long)args->trial_id;
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
        return t2_seterr(T2_EIO, "%s %lld: socketpair: %s", what, id, strerror(errno));
    fflush(NULL); /* the child must not flush the parent's buffered output a second time */
    pid_t parent = getpid();
    pid_t p = fork();
    if (p < 0) {
        int e = errno;
        close(sv[0]);
        close(sv[1]);
        return t2_seterr(T2_EIO, "%s %lld: fork: %s", what, id, strerror(e));
    }
    if (p == 0) {
        close(sv[0]);
        if (child_setup(args, out, close_fds, nclose, parent)) _exit(3);
        int status;
        if (worker) {
            status = t2__worker_serve(args, sv[1]);
        } else {
            t2__runner_args a = *args;
            a.fd = sv[1];
            status = t2__runner_run(&a);
        }
        fflush(stdout);
        fflush(stderr);
        _exit(status); /* no atexit handlers: they belong to the controller (store, pool) */
    }
    /* As the child does: whichever runs first, the group exists before either relies on it. */
    setpgid(p, p);
    t2__trial_guard_note(guard_fd, p, 1);
    close(sv[1]);
    *pid = p;
    *fd = sv[0];
    return T2_OK;
}

int t2__trial_proc_start(const t2__runner_args *args, const char *log_path, const int *close_fds, int nclose,
                         pid_t *pid, int *fd)
{
    /* 0600: a trial's output is the user's alone (the umask may take more, never add). */
    int out = open(log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (out < 0)
        return t2_seterr(T2_EIO, "cannot open the trial's log %s: %s", log_path, strerror(errno)); /* the caller names the trial */
    int rc = fork_child(args, out, 0, close_fds, nclose, pid, fd);
    close(out);
    return rc;
}

int t2__worker_proc_start(const t2__runner_args *base, int log_fd, const int *close_fds, int nclose, pid_t *pid,
                          int *fd)
{
    return fork_child(base, log_fd, 1, close_fds, nclose, pid, fd);
}

pid_t t2__reap_group(pid_t pid, int *status, int options)
{
    siginfo_t si;
    for (;;) {
        memset(&si, 0, sizeof si);
        if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT | (options & WNOHANG)) == 0) break;
        if (errno != EINTR) return -1;
    }
    if (si.si_pid == 0) return 0; /* WNOHANG, and it still runs */
    /* Its pid is still taken (a zombie), so the group is its own: what is left of it is what the
     * trial started (none: ESRCH). */
    kill(-pid, SIGKILL);
    t2__trial_guard_note(guard_fd, pid, 0);
    pid_t p;
    int st = 0;
    while ((p = waitpid(pid, &st, 0)) < 0 && errno == EINTR) {
    }
    if (p == pid && status) *status = st;
    return p;
}

int t2__wait_pid_for(pid_t pid, double s, int *status)
{
    double until = t2__now() + s;
    for (;;) {
        pid_t p = t2__reap_group(pid, status, WNOHANG);
        if (p == pid) return 1;
        if (p < 0 && errno != EINTR) return -1;
        if (p == 0 && t2__now() >= until) return 0;
        if (p == 0) nanosleep(&(struct timespec){.tv_nsec = 1000 * 1000}, NULL);
    }
}

const char *t2__wait_status_str(int status, char *buf, size_t len)
{
    if (WIFEXITED(status)) snprintf(buf, len, "exited with status %d", WEXITSTATUS(status));
    else if (WIFSIGNALED(status))
        snprintf(buf, len, "killed by signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
    else snprintf(buf, len, "ended with wait status %d", status);
    return buf;
}
