/* host_probe.c — does a pool host still answer? Asked after a trial on it failed, so that a dead
 * host's slots leave the pool instead of failing every trial given to them (host_probe.h). */
#define _POSIX_C_SOURCE 200809L
#include "host_probe.h"
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include "internal.h"
#include "slot_pool.h"
#include "trial_proc.h"

extern char **environ;

/* Where a probe's mpirun writes its messages: beside its session directory (which mpirun makes). */
static void err_path_of(const char *session, char *out, size_t len) { snprintf(out, len, "%s.err", session); }

int t2__host_probe_start(t2__host_probe *p, const char *name, double timeout_s, char *const *env, size_t nenv)
{
    char host[T2__HOST_NAME_MAX + 8];
    snprintf(host, sizeof host, "%s:1", name);
    const char *argv[] = {"mpirun", "-np", "1", "--host", host, geteuid() == 0 ? "--allow-run-as-root" : "-q",
                          "true", NULL};
    memset(p, 0, sizeof *p);
    int rc = t2__mpi_session_new(p->session, sizeof p->session);
    if (rc) return rc;
    /* A session directory of its own, which the controller can remove after a timeout; and the
     * trials' launch environment: an OMPI_MCA_plm_rsh_agent set there is how they reach the host
     * (without it the probe went through ssh and found every such host dead). */
    char session_var[PATH_MAX + 40];
    snprintf(session_var, sizeof session_var, "OMPI_MCA_orte_top_session_dir=%s", p->session);
    const char **set = malloc((nenv + 1) * sizeof *set);
    char **envp = NULL;
    rc = set ? T2_OK : t2_seterr(T2_ENOMEM, "controller: out of memory");
    if (set) {
        set[0] = session_var;
        for (size_t k = 0; k < nenv; k++) set[k + 1] = env[k];
        rc = t2__launch_env(set, nenv + 1, &envp);
        free(set);
    }
    if (rc) {
        t2__mpi_session_remove(p->session); /* nothing started: its directory goes (review) */
        return rc;
    }
    fflush(NULL);
    pid_t parent = getpid();
    pid_t pid = fork();
    int fork_errno = errno;
    if (pid != 0) t2__launch_env_free(envp); /* the child's copy is its own */
    if (pid < 0) {
        t2__mpi_session_remove(p->session);
        return t2_seterr(T2_EIO, "controller: fork: %s", strerror(fork_errno));
    }
    char err_path[PATH_MAX + 16];
    err_path_of(p->session, err_path, sizeof err_path);
    if (pid == 0) {
        int null = open("/dev/null", O_RDWR);
        /* Its messages are kept for the verdict (probe_err_line): a broken launcher, not the
         * host, failed every probe, and only the trial's log said so (probe_N). */
        int err = open(err_path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (null >= 0) {
            dup2(null, STDIN_FILENO);
            dup2(null, STDOUT_FILENO);
            dup2(err >= 0 ? err : null, STDERR_FILENO);
        }
        setpgid(0, 0); /* so that a timeout ends mpirun and its launcher together */
        /* It ends with the controller, by mpirun's own teardown, as a trial's mpirun does (it
         * outlived a SIGKILLed controller for good on a host that hangs). */
        if (prctl(PR_SET_PDEATHSIG, SIGTERM) != 0 || getppid() != parent) _exit(127);
        environ = envp;
        execvp("mpirun", (char *const *)argv);
        _exit(127);
    }
    setpgid(pid, pid);
    t2__trial_guard_note(t2__trial_guard_fd(), pid, 1); /* the guardian ends its group with the controller */
    p->pid = pid;
    p->deadline = t2__now() + timeout_s;
    p->timeout_s = timeout_s;
    return T2_OK;
}

/* The first paragraph of what the probe's mpirun wrote (Open MPI frames its messages in lines of
 * dashes and wraps them), as one printable line into line ("" if none). */
static void probe_err_line(const char *session, char *line, size_t len)
{
    char path[PATH_MAX + 16], buf[4096];
    line[0] = '\0';
    err_path_of(session, path, sizeof path);
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return;
    buf[n] = '\0';
    size_t k = 0;
    for (char *s = buf, *e; *s; s = e + (*e != '\0')) {
        e = s + strcspn(s, "\n");
        while (s < e && (*s == ' ' || *s == '\t' || *s == '-')) s++;
        if (s == e) {
            if (k) break; /* the paragraph ended */
            continue;
        }
        if (k && k + 1 < len) line[k++] = ' ';
        for (; s < e && k + 1 < len; s++) line[k++] = (*s >= 0x20 && *s < 0x7f) ? *s : '?';
    }
    while (k > 0 && (line[k - 1] == ' ' || line[k - 1] == ':')) k--;
    line[k] = '\0';
}

/* After p's mpirun was reaped: its launcher processes (noted in tree) and session directory. */
static void clear_after(t2__host_probe *p, t2__proc_tree *tree)
{
    p->pid = 0;
    if (tree) t2__proc_tree_end(tree);
    t2__mpi_session_remove(p->session);
    char err_path[PATH_MAX + 16];
    err_path_of(p->session, err_path, sizeof err_path);
    unlink(err_path); /* its messages (probe_err_line) */
}

void t2__host_probe_stop(t2__host_probe *p)
{
    if (p->pid <= 0) return;
    t2__proc_tree *tree = calloc(1, sizeof *tree);
    if (tree) t2__proc_tree_note(tree, p->pid);
    kill(p->pid, SIGKILL);
    t2__reap_group(p->pid, NULL, 0);
    clear_after(p, tree);
    free(tree);
}

int t2__host_probe_check(t2__host_probe *p, double now, char *why, size_t len)
{
    if (p->pid <= 0) {
        snprintf(why, len, "the probe was stopped");
        return 0;
    }
    int status = 0;
    pid_t r = t2__reap_group(p->pid, &status, WNOHANG);
    if (r == 0 && now <= p->deadline) return 2;
    if (r == 0) {
        t2__host_probe_stop(p);
        snprintf(why, len, "no answer within %.0f s", p->timeout_s);
        return 0;
    }
    if (r < 0) {
        snprintf(why, len, "cannot wait for the probe: %s", strerror(errno));
        clear_after(p, NULL); /* not ours to wait for any more */
        return 0;
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
        clear_after(p, NULL);
        return 1;
    }
    char st[96], line[160];
    probe_err_line(p->session, line, sizeof line);
    clear_after(p, NULL);
    snprintf(why, len, "mpirun on it %s%s%s", t2__wait_status_str(status, st, sizeof st), line[0] ? ": " : "", line);
    return 0;
}
